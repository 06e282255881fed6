/**
 * The cadre side of `npm run bench:load`, in its own process so that its
 * memory and CPU are its own (the scripted model lives in the parent, which
 * runs this file bundled, as dist/cli is):
 *
 *   load-run.ts <workers> <rehearsal base URL> [peer-tools]
 *
 * Runs `workers` one-turn tasks at concurrency `workers`. Each task's model
 * first asks for a Write, which needs a permission: cadre holds every answer
 * until all the workers have asked, so all of them are live at once, then
 * denies them all (nothing is written); each model then answers. Prints one
 * JSON line (LoadReport).
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Orchestrator } from "../src/orchestrator/index.ts";
import { offlineClaudeEnv } from "../src/rehearsal/env.ts";
import type { PermissionDecision } from "../src/worker/index.ts";
import { claudeChildren, claudeChildrenReaped, peakRssMb, reapedChildrenCpuMs } from "./proc.ts";

export interface LoadReport {
  workers: number;
  /** How many workers held a permission request at the same moment (all of them, unless some failed first). */
  liveAtOnce: number;
  wallMs: number;
  /** CPU of this process during the run (user + system). */
  ownCpuMs: number;
  /** CPU of the reaped claude processes (and what they started) during the run. */
  workersCpuMs: number;
  /** Peak resident set of this process over its life (includes loading the code). */
  maxRssMb: number;
  /** Resident set of all the workers together while all of them were live. */
  workersRssMb: number;
  /** This process's resident set and V8 heap in use while all the workers were live. */
  liveRssMb: number;
  liveHeapMb: number;
  /** Tasks that did not come back with the scripted answer. */
  failures: string[];
}

/** How long the permission barrier waits for the last worker before letting the others go. */
const BARRIER_TIMEOUT_MS = 10 * 60_000;

export const expectedText = (prompt: string) => `done ${prompt}`;

/** Holds each permission request until `count` are held (or the time is up), then denies them all. */
function permissionBarrier(count: number, onFull: (held: number) => Promise<void>) {
  const waiting: ((decision: PermissionDecision) => void)[] = [];
  let release: (() => void) | undefined;
  const full = new Promise<void>((resolve) => {
    release = resolve;
    setTimeout(resolve, BARRIER_TIMEOUT_MS).unref();
  });
  void full.then(async () => {
    await onFull(waiting.length);
    for (const answer of waiting.splice(0)) answer({ behavior: "deny", message: "the load bench writes nothing" });
  });
  return () =>
    new Promise<PermissionDecision>((resolve) => {
      waiting.push(resolve);
      if (waiting.length === count) release?.();
    });
}

async function main(): Promise<void> {
  const [workersArg, baseUrl, peerTools] = process.argv.slice(2);
  const workers = Number(workersArg);
  if (!Number.isInteger(workers) || workers < 1 || !baseUrl) throw new Error("usage: load-run.ts <workers> <rehearsal base URL>");
  const home = await mkdtemp(join(tmpdir(), "cadre-bench-load-"));
  const cwd = join(home, "work");
  const env = { ...offlineClaudeEnv({ baseUrl, home }), TMPDIR: join(home, "tmp") };
  await Promise.all([mkdir(cwd), mkdir(env.TMPDIR)]);
  let liveAtOnce = 0;
  let workersRssMb = 0;
  let live = { rss: 0, heapUsed: 0 };
  const barrier = permissionBarrier(workers, async (held) => {
    liveAtOnce = held;
    workersRssMb = [...(await claudeChildren()).values()].reduce((sum, bytes) => sum + bytes, 0) / 2 ** 20;
    live = process.memoryUsage();
  });
  const orchestrator = new Orchestrator({
    concurrency: workers,
    // With "peer-tools", every worker gets the built-in peer MCP server (one McpServer each, in this process).
    ...(peerTools === "peer-tools" && { peerTools: true }),
    defaults: { cwd },
    workerOptions: () => ({ inheritEnv: false, env }),
    canUseTool: barrier,
  });
  const failures: string[] = [];
  try {
    const cpuBefore = process.cpuUsage();
    const childrenBefore = await reapedChildrenCpuMs();
    const started = performance.now();
    const prompts = Array.from({ length: workers }, (_, i) => `load-${i}`);
    for await (const result of orchestrator.map(prompts.map((prompt) => ({ name: prompt, prompt })))) {
      if (result.status !== "succeeded" || result.text !== expectedText(result.name)) {
        failures.push(`${result.name}: ${result.status} ${result.error?.message ?? JSON.stringify(result.text)}`);
      }
    }
    const wallMs = performance.now() - started;
    await orchestrator.close();
    const own = process.cpuUsage(cpuBefore);
    await claudeChildrenReaped();
    const report: LoadReport = {
      workers,
      liveAtOnce,
      wallMs,
      ownCpuMs: (own.user + own.system) / 1000,
      workersCpuMs: (await reapedChildrenCpuMs()) - childrenBefore,
      maxRssMb: await peakRssMb(),
      workersRssMb,
      liveRssMb: live.rss / 2 ** 20,
      liveHeapMb: live.heapUsed / 2 ** 20,
      failures,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await orchestrator.close();
    await rm(home, { recursive: true, force: true, maxRetries: 3 });
  }
}

await main();
