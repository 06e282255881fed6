/**
 * Claude Code's own workflow runtime against cadre (npm run bench:workflow): the same fan-outs, the same pinned
 * claude binary, the same scripted model (a rehearsal server in this process), whole processes timed from spawn to
 * exit, the runtimes taking turns run by run so that load drifting on a shared machine hits them alike; medians.
 *
 * Shapes (BENCH_SHAPES, comma-separated; default all):
 * - one-turn-32: 32 one-turn agents in one parallel(): `claude -p` whose model calls its Workflow tool with the script
 *   (the run ends with the turn that answers the task's notification, and the process with it), `cadre run script.js`
 *   with its defaults, and the same 32 tasks as a swarm file through `cadre run` (for reference).
 * - wait-48: 48 agents in one parallel() that each wait 5 s for the model's reply: the CLI's runtime and `cadre run`.
 * - query-16: 16 one-turn tasks at concurrency 8, a cold process each: the Agent SDK's query() against cadre's
 *   Orchestrator with its defaults and reuse off, each a node process of bench/orchestrator-run.ts (which loads both
 *   libraries whichever it runs, so both pay the same to start).
 *
 * BENCH_RUNS=n runs each runtime n times per shape (default 3). One warm-up run of each runtime first fills the disk
 * cache. The 1-minute load average before each run is printed beside it: wall times on a shared machine move with it.
 * The targets printed are those set for lean workers (cadre's cost per agent); they are reported, not asserted.
 */
import { loadavg } from "node:os";
import type { RehearsalScriptsInput } from "../src/rehearsal/index.ts";
import { type RehearsalServer, startRehearsalServer } from "../src/rehearsal/server.ts";
import buildIfStale from "../test/support/build.ts";
import { workflowModel } from "../test/support/workflow-cli.ts";
import { BIN } from "./fleet.ts";
import { CLAUDE_VERSION, runSide, SCRIPTS } from "./sides.ts";
import { AGENT_REPLY, FAN_OUT_SCRIPT, runWorkflowOnce } from "./workflow-sides.ts";

/** One runtime in a shape: how it is called in the table, and one timed run of it (ms, spawn to exit). */
interface Runtime {
  label: string;
  run: (server: RehearsalServer) => Promise<number>;
  /** The most this runtime's median should be, as a multiple of the shape's first runtime's (the lean-workers targets). */
  target?: number;
}

interface Shape {
  title: string;
  /** The scripted model for this shape; the first runtime is the reference the others are divided by. */
  model: RehearsalScriptsInput;
  runtimes: Runtime[];
  /** A small run of every runtime, untimed: the disk cache, the first-run work of a fresh binary. */
  warmUp: (server: RehearsalServer) => Promise<unknown>;
}

const fanOut = (agents: number, delayMs = 0) =>
  workflowModel([{ text: AGENT_REPLY, ...(delayMs > 0 ? { delay_ms: delayMs } : {}) }], FAN_OUT_SCRIPT, { agents });

const workflowWarmUp = (server: RehearsalServer) => {
  for (const [name, steps] of Object.entries(fanOut(2))) server.setScript(name, steps);
  return runWorkflowOnce(server, "claude-workflow", 2).then(() => runWorkflowOnce(server, "cadre-script", 2));
};

const SHAPES: Record<string, Shape> = {
  "one-turn-32": {
    title: "32 one-turn agents in one `parallel()`",
    model: fanOut(32),
    runtimes: [
      { label: "Claude Code's `Workflow`", run: (server) => runWorkflowOnce(server, "claude-workflow", 32) },
      { label: "`cadre run script.js`", run: (server) => runWorkflowOnce(server, "cadre-script", 32), target: 1.5 },
      { label: "`cadre run swarm.yaml` (same tasks)", run: (server) => runWorkflowOnce(server, "cadre-swarm", 32) },
    ],
    warmUp: workflowWarmUp,
  },
  "wait-48": {
    title: "48 agents that each wait 5 s for the model",
    model: fanOut(48, 5_000),
    runtimes: [
      { label: "Claude Code's `Workflow`", run: (server) => runWorkflowOnce(server, "claude-workflow", 48) },
      { label: "`cadre run script.js`", run: (server) => runWorkflowOnce(server, "cadre-script", 48), target: 0.5 },
    ],
    warmUp: workflowWarmUp,
  },
  "query-16": {
    title: "16 one-turn tasks at concurrency 8, a cold process each",
    model: SCRIPTS,
    runtimes: [
      { label: "Agent SDK's `query()`", run: async (server) => (await runSide(server, "sdk", 16, 8)).processMs },
      { label: "cadre's `Orchestrator`", run: async (server) => (await runSide(server, "cadre-cold", 16, 8)).processMs, target: 1.0 },
    ],
    warmUp: async (server) => {
      await runSide(server, "sdk", 2, 2);
      await runSide(server, "cadre-cold", 2, 2);
    },
  },
};

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3) || 3);
const CHOSEN = (process.env.BENCH_SHAPES ?? Object.keys(SHAPES).join(",")).split(",").map((name) => name.trim());

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const ratio = (value: number) => `${value.toFixed(2)}×`;
const load = () => loadavg()[0]!;

interface Measured {
  shape: Shape;
  /** Per runtime, its runs in order: wall ms and the load average before it. */
  runs: { ms: number; load: number }[][];
}

async function measure(server: RehearsalServer, shape: Shape): Promise<Measured> {
  await shape.warmUp(server);
  for (const [name, steps] of Object.entries(shape.model)) server.setScript(name, steps);
  const runs: Measured["runs"] = shape.runtimes.map(() => []);
  for (let round = 0; round < RUNS; round++) {
    // Rotate who goes first.
    for (let turn = 0; turn < shape.runtimes.length; turn++) {
      const index = (turn + round) % shape.runtimes.length;
      const before = load();
      const ms = await shape.runtimes[index]!.run(server);
      runs[index]!.push({ ms, load: before });
      console.log(`  ${shape.runtimes[index]!.label.padEnd(38)} ${s(ms).padStart(8)}   (load ${before.toFixed(1)})`);
    }
  }
  return { shape, runs };
}

/** The short table (the README's): each shape's reference against cadre, the ratio and the target. */
function summaryTable(results: Measured[]): string {
  const rows = ["| shape | reference | cadre | cadre / reference | target |", "| --- | --- | --- | --- | --- |"];
  for (const { shape, runs } of results) {
    const medians = runs.map((cell) => median(cell.map((run) => run.ms)));
    const reference = `${shape.runtimes[0]!.label} ${s(medians[0]!)}`;
    for (let i = 1; i < shape.runtimes.length; i++) {
      const runtime = shape.runtimes[i]!;
      const target = runtime.target === undefined ? "" : `≤ ${ratio(runtime.target)}`;
      rows.push(
        `| ${i === 1 ? shape.title : ""} | ${i === 1 ? reference : ""} | ${runtime.label} ${s(medians[i]!)} | ${ratio(medians[i]! / medians[0]!)} | ${target} |`,
      );
    }
  }
  return rows.join("\n");
}

/** Every figure: each run's wall time and the load before it. */
function detailTable(results: Measured[]): string {
  const rows = ["| shape | runtime | median | runs | load (1 min) before each |", "| --- | --- | --- | --- | --- |"];
  for (const { shape, runs } of results) {
    shape.runtimes.forEach((runtime, i) => {
      const cell = runs[i]!;
      const times = cell.map((run) => s(run.ms)).join(", ");
      const loads = cell.map((run) => run.load.toFixed(1)).join(", ");
      rows.push(`| ${i === 0 ? shape.title : ""} | ${runtime.label} | ${s(median(cell.map((run) => run.ms)))} | ${times} | ${loads} |`);
    });
  }
  return rows.join("\n");
}

async function main(): Promise<void> {
  const unknown = CHOSEN.filter((name) => !(name in SHAPES));
  if (unknown.length > 0) throw new Error(`BENCH_SHAPES: unknown shape ${unknown.join(", ")}; the shapes are ${Object.keys(SHAPES).join(", ")}`);
  // `cadre run` runs dist/, as an installed cadre does: built from the sources here unless it already is.
  await buildIfStale();
  const server = await startRehearsalServer({ scripts: SCRIPTS });
  const started = Date.now();
  try {
    console.log(`claude ${CLAUDE_VERSION} against a rehearsal server on loopback; cadre as ${BIN} runs it (dist/); ${RUNS} run(s) per runtime`);
    console.log(`(the CPUs here are shared: the 1-minute load average before each run is shown)\n`);
    const results: Measured[] = [];
    for (const name of CHOSEN) {
      console.log(`${name}: ${SHAPES[name]!.title}`);
      results.push(await measure(server, SHAPES[name]!));
    }
    console.log(`\nmedians of ${RUNS} alternating whole-process runs:\n\n${summaryTable(results)}\n\n${detailTable(results)}`);
    console.log(`\nbench took ${s(Date.now() - started)}`);
  } finally {
    await server.close();
  }
}

await main();
