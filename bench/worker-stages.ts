/**
 * `npm run bench:stages`: where one worker's cost goes, stage by stage, on the
 * real pinned claude against the rehearsal server: the process's start (until
 * it waits for `initialize`), `initialize`, the first turn, `/clear`, a turn in
 * the reused process, and its close. Per stage, the wall time and the claude
 * process's own CPU (utime + stime from /proc/<pid>/stat), and its RSS after;
 * /clear and the reused turn are the mean of BENCH_REUSES of them (default 10).
 *
 * Then cadre's additions, one at a time over a lean worker (what a task with no
 * agent, no hooks and no connections gets): the built-in peer MCP server, routed
 * hooks, Claude Code's dynamic prompt sections moved out of the system prompt
 * (`excludeDynamicSections`, what keeps the prompt prefix shared), the settings
 * files and CLAUDE.md the CLI reads (`settingSources`), and the CLI's session
 * transcript (`persistSession`), and for scale the CLI's `--bare` (three tools,
 * API keys only: not a default). Variants alternate within each round, so that
 * the load of a shared machine hits them alike; medians of BENCH_ROUNDS (default 5).
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPeerServer, PEER_SERVER_NAME } from "../src/orchestrator/peers/peer-server.ts";
import { offlineClaudeEnv } from "../src/rehearsal/env.ts";
import { startRehearsalServer } from "../src/rehearsal/server.ts";
import { resetConversation, Worker, type WorkerOptions } from "../src/worker/index.ts";
import { startProcessTransport } from "../src/worker/process-transport.ts";
import type { TransportFactory } from "../src/worker/transport.ts";
import { processUsage, reapedChildrenCpuMs } from "./proc.ts";
import { CLAUDE_BIN, CLAUDE_VERSION, load } from "./sides.ts";

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5) || 5);
/** Reused tasks per worker (BENCH_REUSES, default 10): /clear and the reused turn are their mean, finer than one tick of CPU time. */
const REUSES = Math.max(1, Number(process.env.BENCH_REUSES ?? 10) || 10);
const SCRIPT = "stages";
const STAGES = ["start", "initialize", "first turn", "/clear", "reused turn", "close"] as const;
type Stage = (typeof STAGES)[number];
type Measure = { wallMs: number; cpuMs: number; rssMb: number };

/** A peer server with no one to reach: what the tool list and the MCP handshake cost, not what a peer answers. */
const peerServer = () =>
  createPeerServer(() => ({ name: "bench", waitChain: [] }), {
    listPeers: () => [],
    canReach: () => false,
    ask: async () => "",
    tell: () => {},
    readInbox: () => [],
    spawn: async () => ({ taskId: "", text: "", costUsd: 0 }),
  });

/** Each variant over the lean worker: one of cadre's additions on, or one of the CLI's own reads off. */
const VARIANTS: Record<string, () => Partial<WorkerOptions>> = {
  lean: () => ({}),
  "+ peer MCP server": () => ({ sdkMcpServers: { [PEER_SERVER_NAME]: peerServer() } }),
  "+ hooks (PreToolUse, Stop)": () => ({
    hooks: { PreToolUse: [{ matcher: "Bash", hooks: [() => ({})] }], Stop: [{ hooks: [() => ({})] }] },
  }),
  "+ excludeDynamicSections": () => ({ excludeDynamicSections: true }),
  "- settings and CLAUDE.md (settingSources: [])": () => ({ settingSources: [] }),
  "- session transcript (persistSession: false)": () => ({ persistSession: false }),
  "--bare (Bash, Edit and Read only; API keys only)": () => ({ extraArgs: { bare: null } }),
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The process's own CPU (ms) and RSS (MB) now; zero once it is gone. */
async function usage(pid: number): Promise<{ cpuMs: number; rssMb: number }> {
  const now = await processUsage(pid);
  return { cpuMs: now?.cpuMs ?? 0, rssMb: now?.rssMb ?? 0 };
}

/**
 * A process transport that holds what the worker writes (its `initialize`) until the
 * process has started and gone quiet: its CPU unchanged for 100 ms, so that the start
 * and `initialize` are measured apart.
 */
function gatedTransport(onQuiet: (pid: number) => void): TransportFactory {
  return (spec, handlers) => {
    const transport = startProcessTransport(spec, handlers);
    const held: unknown[] = [];
    let open = false;
    void (async () => {
      let last = -1;
      let still = 0;
      while (still < 5 && !transport.hasExited) {
        await new Promise((r) => setTimeout(r, 20));
        const { cpuMs } = await usage(transport.pid!);
        still = cpuMs === last ? still + 1 : 0;
        last = cpuMs;
      }
      onQuiet(transport.pid!);
      open = true;
      for (const message of held.splice(0)) transport.write(message);
    })();
    return {
      exited: transport.exited,
      get pid() {
        return transport.pid;
      },
      get hasExited() {
        return transport.hasExited;
      },
      write: (message: unknown) => {
        if (open) return transport.write(message);
        held.push(message);
        return true;
      },
      endInput: () => transport.endInput(),
      terminate: (options) => transport.terminate(options),
      kill: () => transport.kill(),
    };
  };
}

async function oneWorker(variant: Partial<WorkerOptions>, base: WorkerOptions): Promise<Record<Stage, Measure>> {
  const stages = {} as Record<Stage, Measure>;
  let pid = 0;
  const reapedBefore = await reapedChildrenCpuMs();
  let mark = { at: performance.now(), cpuMs: 0 };
  const step = async (stage: Stage) => {
    const now = await usage(pid);
    stages[stage] = { wallMs: performance.now() - mark.at, cpuMs: now.cpuMs - mark.cpuMs, rssMb: now.rssMb };
    mark = { at: performance.now(), cpuMs: now.cpuMs };
  };
  let quiet!: () => void;
  const started = new Promise<void>((resolve) => {
    quiet = resolve;
  });
  const starting = Worker.start(
    { ...base, ...variant },
    undefined,
    gatedTransport((p) => {
      pid = p;
      quiet();
    }),
  );
  await started;
  await step("start");
  const worker = await starting;
  await step("initialize");
  const first = await worker.run("first");
  if (first.text !== "done first") throw new Error(`the first turn said ${JSON.stringify(first.text)}`);
  await step("first turn");
  const reuse = { clear: { wallMs: 0, cpuMs: 0, rssMb: 0 }, turn: { wallMs: 0, cpuMs: 0, rssMb: 0 } };
  const add = (into: Measure, stage: Stage) => {
    into.wallMs += stages[stage].wallMs / REUSES;
    into.cpuMs += stages[stage].cpuMs / REUSES;
    into.rssMb = stages[stage].rssMb;
  };
  for (let i = 0; i < REUSES; i++) {
    await resetConversation(worker);
    await step("/clear");
    add(reuse.clear, "/clear");
    const reused = await worker.run("again");
    if (reused.text !== "done again") throw new Error(`the reused turn said ${JSON.stringify(reused.text)}`);
    await step("reused turn");
    add(reuse.turn, "reused turn");
  }
  stages["/clear"] = reuse.clear;
  stages["reused turn"] = reuse.turn;
  const beforeClose = mark.cpuMs;
  await worker.close();
  // Its last CPU counts once it has been reaped: the CPU of reaped children, less what it had spent before the close.
  const reaped = (await reapedChildrenCpuMs()) - reapedBefore;
  stages.close = { wallMs: performance.now() - mark.at, cpuMs: Math.max(0, reaped - beforeClose), rssMb: 0 };
  return stages;
}

async function main(): Promise<void> {
  const server = await startRehearsalServer({ scripts: { [SCRIPT]: [{ text: "done {{prompt}}" }] } });
  const home = await mkdtemp(join(tmpdir(), "cadre-bench-stages-"));
  const cwd = join(home, "work");
  await Promise.all([mkdir(cwd), mkdir(join(home, "tmp"))]);
  const base: WorkerOptions = {
    claudePath: CLAUDE_BIN,
    cwd,
    inheritEnv: false,
    env: { ...offlineClaudeEnv({ baseUrl: server.baseUrlFor(SCRIPT), home }), TMPDIR: join(home, "tmp") },
  };
  const names = Object.keys(VARIANTS);
  const runs = new Map<string, Record<Stage, Measure>[]>(names.map((name) => [name, []]));
  const loadBefore = load();
  try {
    await oneWorker({}, base); // warm-up: the binary into the disk cache
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of names.map((_, i) => names[(i + round) % names.length]!)) runs.get(name)!.push(await oneWorker(VARIANTS[name]!(), base));
    }
  } finally {
    await server.close();
    await rm(home, { recursive: true, force: true, maxRetries: 3 });
  }
  const stat = (name: string, stage: Stage, pick: (m: Measure) => number) => median(runs.get(name)!.map((r) => pick(r[stage])));
  console.log(
    `one worker, stage by stage: claude ${CLAUDE_VERSION}, rehearsal server, median of ${ROUNDS} (a reused task: the mean of ${REUSES}; load ${loadBefore} → ${load()})\n`,
  );
  console.log("| stage | wall | claude CPU | RSS after |\n| --- | --- | --- | --- |");
  for (const stage of STAGES) {
    const rss = stat("lean", stage, (m) => m.rssMb);
    console.log(
      `| ${stage} | ${Math.round(stat("lean", stage, (m) => m.wallMs))} ms | ${Math.round(stat("lean", stage, (m) => m.cpuMs))} ms | ${rss > 0 ? `${Math.round(rss)} MB` : "–"} |`,
    );
  }
  const total = (name: string, pick: (m: Measure) => number, stages: readonly Stage[]) =>
    median(runs.get(name)!.map((r) => stages.reduce((sum, stage) => sum + pick(r[stage]), 0)));
  const cold: Stage[] = ["start", "initialize", "first turn"];
  const warm: Stage[] = ["/clear", "reused turn"];
  console.log("\nagainst the lean worker: CPU to the first answer (start + initialize + first turn), CPU of a reused task (/clear + turn), RSS\n");
  console.log("| variant | CPU to first answer | Δ | CPU per reused task | Δ | RSS | Δ |\n| --- | --- | --- | --- | --- | --- | --- |");
  const lean = {
    cold: total("lean", (m) => m.cpuMs, cold),
    warm: total("lean", (m) => m.cpuMs, warm),
    rss: stat("lean", "reused turn", (m) => m.rssMb),
  };
  const signed = (value: number, unit: string) => `${value >= 0 ? "+" : ""}${Math.round(value)} ${unit}`;
  for (const name of names) {
    const c = total(name, (m) => m.cpuMs, cold);
    const w = total(name, (m) => m.cpuMs, warm);
    const r = stat(name, "reused turn", (m) => m.rssMb);
    console.log(
      `| ${name} | ${Math.round(c)} ms | ${signed(c - lean.cold, "ms")} | ${Math.round(w)} ms | ${signed(w - lean.warm, "ms")} | ${Math.round(r)} MB | ${signed(r - lean.rss, "MB")} |`,
    );
  }
}

await main();
