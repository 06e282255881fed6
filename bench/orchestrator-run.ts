/**
 * One side of the orchestrator benchmark, in its own process so that its CPU
 * and memory are its own (the rehearsal server lives in the parent):
 *
 *   orchestrator-run.ts <cadre|cadre-nopeer|cadre-reuse|cadre-cold|sdk> <tasks> <concurrency> <rehearsal base URL>
 *
 * "cadre-nopeer" is cadre without its built-in "cadre" MCP server (peerTools: false);
 * "cadre-reuse" is cadre with process reuse (reuse: true); "cadre-cold" is cadre with its
 * defaults but for one cold process per task (reuse: false), whatever the defaults become.
 *
 * Runs the tasks to their end and prints one JSON line (RunReport). Workers'
 * CPU is read from /proc/self/stat (cutime + cstime): the CPU of every child
 * this process has reaped, the claude processes and whatever they started.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { Orchestrator } from "../src/orchestrator/index.ts";
import { offlineClaudeEnv } from "../src/rehearsal/env.ts";
import { locateClaude } from "../src/worker/index.ts";
import { claudeChildrenReaped, peakRssMb, reapedChildrenCpuMs } from "./proc.ts";

export const SIDES = ["cadre", "cadre-nopeer", "cadre-reuse", "cadre-cold", "sdk"] as const;
export type Side = (typeof SIDES)[number];

export interface RunReport {
  side: Side;
  tasks: number;
  concurrency: number;
  wallMs: number;
  /** CPU of this process during the run (user + system). */
  ownCpuMs: number;
  /** CPU of the reaped children during the run. */
  workersCpuMs: number;
  /** Peak resident set of this process over its life (includes loading the code). */
  maxRssMb: number;
  /** Tasks that did not come back with the scripted answer. */
  failures: string[];
}

/** The claude cadre finds, the pinned one in a clone: both sides run it. */
const CLAUDE_BIN = locateClaude();
/** At most `limit` calls of `fn` at once. */
async function limited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

const expected = (prompt: string) => `done ${prompt}`;

async function runCadre(prompts: string[], concurrency: number, env: Record<string, string>, cwd: string, side: Side): Promise<string[]> {
  const failures: string[] = [];
  const orchestrator = new Orchestrator({
    concurrency,
    ...(side === "cadre-cold" ? {} : { peerTools: side !== "cadre-nopeer" }),
    reuse: side === "cadre-reuse",
    defaults: { cwd, claudePath: CLAUDE_BIN },
    workerOptions: () => ({ inheritEnv: false, env }),
  });
  try {
    for await (const result of orchestrator.map(prompts.map((prompt) => ({ name: prompt, prompt })))) {
      if (result.status !== "succeeded" || result.text !== expected(result.name)) {
        failures.push(`${result.name}: ${result.status} ${result.error?.message ?? JSON.stringify(result.text)}`);
      }
    }
  } finally {
    await orchestrator.close();
  }
  return failures;
}

async function runSdk(prompts: string[], concurrency: number, env: Record<string, string>, cwd: string): Promise<string[]> {
  const failures: string[] = [];
  await limited(prompts, concurrency, async (prompt) => {
    let text: string | undefined;
    try {
      for await (const message of query({ prompt, options: { pathToClaudeCodeExecutable: CLAUDE_BIN, env, cwd } })) {
        if (message.type === "result") text = message.subtype === "success" ? message.result : `error: ${message.subtype}`;
      }
    } catch (error) {
      text = `threw: ${(error as Error).message}`;
    }
    if (text !== expected(prompt)) failures.push(`${prompt}: ${JSON.stringify(text)}`);
  });
  return failures;
}

async function main(): Promise<void> {
  const [sideArg, tasksArg, concurrencyArg, baseUrl] = process.argv.slice(2);
  if (!SIDES.includes(sideArg as Side) || !baseUrl) {
    throw new Error(`usage: orchestrator-run.ts <${SIDES.join("|")}> <tasks> <concurrency> <rehearsal base URL>`);
  }
  const side = sideArg as Side;
  const tasks = Number(tasksArg);
  const concurrency = Number(concurrencyArg);
  const home = await mkdtemp(join(tmpdir(), `cadre-bench-${side}-`));
  const cwd = join(home, "work");
  await mkdir(cwd);
  const env = { ...offlineClaudeEnv({ baseUrl, home }), TMPDIR: join(home, "tmp") };
  await mkdir(env.TMPDIR);
  const prompts = Array.from({ length: tasks }, (_, i) => `${side}-task-${i}`);
  try {
    const cpuBefore = process.cpuUsage();
    const childrenBefore = await reapedChildrenCpuMs();
    const started = performance.now();
    const failures = side === "sdk" ? await runSdk(prompts, concurrency, env, cwd) : await runCadre(prompts, concurrency, env, cwd, side);
    const wallMs = performance.now() - started;
    const own = process.cpuUsage(cpuBefore);
    await claudeChildrenReaped();
    const report: RunReport = {
      side,
      tasks,
      concurrency,
      wallMs,
      ownCpuMs: (own.user + own.system) / 1000,
      workersCpuMs: (await reapedChildrenCpuMs()) - childrenBefore,
      maxRssMb: await peakRssMb(),
      failures,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await rm(home, { recursive: true, force: true, maxRetries: 3 });
  }
}

await main();
