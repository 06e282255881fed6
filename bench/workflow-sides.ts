/**
 * One run of a fan-out through one runtime, as a whole process against the rehearsal server here (for
 * bench/workflow-runtime.ts): Claude Code's own workflow runtime (`claude -p` calling its Workflow tool), `cadre run`
 * of the same workflow script, or `cadre run` of the same tasks as a swarm file. Each run gets a fresh HOME and
 * working directory, is timed from spawn to exit, and throws unless every agent asked the model and the run came back
 * with every agent's answer.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { execa } from "execa";
import { offlineClaudeEnv } from "../src/rehearsal/env.ts";
import type { RecordedRequest, RehearsalServer } from "../src/rehearsal/server.ts";
import { CADRE_AGENTS_SCRIPT, claudeWorkflowArgs, type WorkflowOutcome, workflowOutcome } from "../test/support/workflow-cli.ts";
import { BIN } from "./fleet.ts";
import { CLAUDE_BIN } from "./sides.ts";

export const WORKFLOW_RUNTIMES = ["claude-workflow", "cadre-script", "cadre-swarm"] as const;
export type WorkflowRuntime = (typeof WORKFLOW_RUNTIMES)[number];

/** A run of `agents` one-turn agents in one parallel(); each replies with its task, so the result shows who answered. */
export const FAN_OUT_SCRIPT = `export const meta = { name: "bench-fan-out", description: "args.agents one-turn agents in one parallel()" }
return await parallel(Array.from({ length: args.agents }, (_, i) => () => agent("task " + i, { label: "agent-" + i })))
`;
/** What every agent says: its task. */
export const AGENT_REPLY = "did: {{task}}";
const expected = (agents: number) => Array.from({ length: agents }, (_, i) => `did: task ${i}`);

/** The same tasks as a swarm file: one for_each, nothing but cadre's defaults. */
const fanOutSwarm = (agents: number) =>
  `name: bench-fan-out\ntasks:\n  - { name: "agent-{{item}}", for_each: [${Array.from({ length: agents }, (_, i) => i).join(", ")}], prompt: "task {{item}}" }\n`;

const RUN_TIMEOUT_MS = 900_000;

/** Spawn to exit of `file args`, with the offline environment of `home`; rejects on a non-zero exit. */
async function timed(file: string, args: string[], cwd: string, home: string, baseUrl: string): Promise<{ ms: number; stdout: string }> {
  const env = { ...offlineClaudeEnv({ baseUrl, home }), TMPDIR: join(home, "tmp") };
  await mkdir(env.TMPDIR, { recursive: true });
  const started = performance.now();
  const run = await execa(file, args, {
    cwd,
    env,
    extendEnv: false,
    input: "",
    reject: false,
    timeout: RUN_TIMEOUT_MS,
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = performance.now() - started;
  if (run.exitCode !== 0) throw new Error(`${file} ${args.slice(0, 3).join(" ")} exited ${run.exitCode}: ${run.stderr.slice(-2000)}`);
  return { ms, stdout: run.stdout };
}

/** The swarm's answers, in its task order. */
async function swarmTexts(out: string): Promise<string[]> {
  const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as { tasks: { name: string; status: string; text: string }[] };
  return summary.tasks.filter((task) => /^agent-\d+$/.test(task.name)).map((task) => (task.status === "succeeded" ? task.text : `${task.status}`));
}

/**
 * Runs `agents` agents through `runtime` once; its wall time, spawn to exit. The server must play the CLI's main
 * loop launching FAN_OUT_SCRIPT with `{ agents }` (workflowModel in test/support/workflow-cli.ts).
 */
export async function runWorkflowOnce(server: RehearsalServer, runtime: WorkflowRuntime, agents: number): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), `cadre-bench-${runtime}-`));
  const home = join(dir, "home");
  const cwd = join(dir, "work");
  const out = join(dir, "run");
  await mkdir(cwd, { recursive: true });
  const since = Date.now();
  try {
    let ms: number;
    let answers: unknown;
    if (runtime === "claude-workflow") {
      const run = await timed(CLAUDE_BIN, claudeWorkflowArgs(), cwd, home, server.url);
      ms = run.ms;
      answers = ((await workflowOutcome(run.stdout)) as WorkflowOutcome | undefined)?.result;
    } else if (runtime === "cadre-script") {
      const script = join(cwd, "fan-out.js");
      await writeFile(script, FAN_OUT_SCRIPT);
      const run = await timed(
        process.execPath,
        [BIN, "run", script, "--args", JSON.stringify({ agents }), "--out", out],
        cwd,
        home,
        server.baseUrlFor(CADRE_AGENTS_SCRIPT),
      );
      ms = run.ms;
      answers = (JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as WorkflowOutcome).result;
    } else {
      const swarm = join(cwd, "fan-out.yaml");
      await writeFile(swarm, fanOutSwarm(agents));
      ms = (await timed(process.execPath, [BIN, "run", swarm, "--out", out], cwd, home, server.baseUrlFor(CADRE_AGENTS_SCRIPT))).ms;
      answers = await swarmTexts(out);
    }
    const played = agentTurns(server, since);
    if (played !== agents || !isDeepStrictEqual(answers, expected(agents))) {
      throw new Error(`${runtime}: ${played} of ${agents} agents asked the model; the run gave ${JSON.stringify(answers)?.slice(0, 500)}`);
    }
    return ms;
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** Agent turns the model played since `since`: the CLI's subagents and cadre's workers (the CLI's main loop is neither). */
function agentTurns(server: RehearsalServer, since: number): number {
  const isAgent = (request: RecordedRequest) => request.agentId !== undefined || request.script === CADRE_AGENTS_SCRIPT;
  return server.requests.filter((request) => request.at >= since && request.outcome === "played" && isAgent(request)).length;
}
