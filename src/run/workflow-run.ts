/**
 * Running a workflow script end to end, without a terminal: each agent() call
 * is a task of the run's engine (the orchestrator here, or the hosts of a
 * --redis run), and the record is a swarm run's (summary.json and its journal,
 * one row per call) with the script's `result`, `error` and `logs` beside the rows.
 * A resumed run replays the calls its record holds (see workflow/calls.ts).
 */
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { type BudgetUse, emptyUsage, type OrchestratorEvent, type TaskInfo, type TaskResult } from "../orchestrator/index.ts";
import type { RehearsalScripts } from "../rehearsal/index.ts";
import { discoverAgents, newRunId, type ResolvedSwarmConfig, type ResolvedTask } from "../swarm/index.ts";
import {
  type AgentCall,
  checkWorkflowScript,
  plainCallSpec,
  type RecordedCall,
  RecordedCallSchema,
  runWorkflowScript,
  type SandboxLimits,
  type SavedWorkflowPlaces,
  taskSpecForCall,
  type WorkflowEvent,
  type WorkflowOutcome,
} from "../workflow/index.ts";
import { type RunEngine, startEngine } from "./engine.ts";
import { RunJournal } from "./record/journal-appender.ts";
import { SUMMARY_FILE, type Summary, type SummaryTask, WORKFLOW_SCRIPT_FILE } from "./record/schema.ts";
import { buildSummary, prepareOutDir, RecordWriteError, type RunStop } from "./record/summary.ts";
import type { WorkflowReplayPlan } from "./replay/plan.ts";
import { ResumeError, recordToResume } from "./resume.ts";
import { WorkflowWorktrees } from "./workflow-worktrees.ts";

export interface WorkflowFileRunOptions {
  /** Where the record and transcripts go (for a resumed run: its own directory). */
  outDir: string;
  /** The script's file, named in the record (and used to find the latest run to resume). */
  file?: string;
  /** The script's `args`, verbatim. */
  args?: unknown;
  /** The project directory: the agents' working directory and where agent files and saved workflows are found. */
  cwd?: string;
  /** The user's home, for saved workflows and agent files (default: os.homedir()). */
  home?: string;
  /** Play scripted replies, by agent label, on a scripted model. */
  rehearsal?: RehearsalScripts;
  /** Workers running at once (default: the orchestrator's, 4). */
  concurrency?: number;
  /** budget.total, in output tokens. */
  budgetTokens?: number;
  /** The run's dollar budget (budget_usd): every agent of the script together; budget.usd.remaining() reads what is left. */
  budgetUsd?: number;
  /** agent() calls per run (default 1,000). */
  maxAgents?: number;
  /** The sandbox's CPU-time and memory limits (default 30 s of the script's own computation, 256 MiB). */
  limits?: Partial<SandboxLimits>;
  /** Resume the run recorded in `outDir`: its calls replay positionally. */
  resume?: boolean;
  /**
   * Let the agents' claude processes write their session files (~/.claude/projects), so that `claude --resume
   * <session_id>` can open an agent's conversation. Default false: cadre never continues an agent() call's session
   * (a call that did not end runs again from the start) and keeps each one's transcript itself, and the session
   * file costs a reused task a tenth to a fifth of its CLI's CPU (docs/performance.md).
   */
  sessionFiles?: boolean;
  /** Run the agents on the hosts of this Redis. */
  redis?: string;
  /** Stops the run: the script and its running agents; the record is still written. */
  signal?: AbortSignal;
  /** Each event of the run as it happens (the start, phases, logs, each agent's start and end, the end). */
  onEvent?: (event: WorkflowRunEvent) => void;
  /** Each event of the engine's tasks (the agent calls' queueing, turns, messages, ends), as a swarm run's: for telemetry and the dashboard. */
  onEngineEvent?: (event: OrchestratorEvent) => void;
  /** For a traced --redis run: the trace context each agent's job carries to its host. */
  traceContext?: (task: TaskInfo) => string | undefined;
  /** The exit code a stop by `signal` gives (default 130). */
  stopExitCode?: number;
  /**
   * Replay a recorded run (planWorkflowReplay): its replies instead of the
   * model, offline, in this process. Its budgets count what the recorded calls
   * spent, not the scripted model's simulated costs.
   */
  replay?: Pick<WorkflowReplayPlan, "of" | "replies" | "spent">;
}

/** A workflow event as the run tells it: an agent call's events name its row (its task's name). */
export type WorkflowRunEvent =
  | Exclude<WorkflowEvent, { type: "agent_started" | "agent_ended" }>
  | (Extract<WorkflowEvent, { type: "agent_started" | "agent_ended" }> & { name: string });

/** A workflow run's record: a swarm run's, with the script's outcome. */
export type WorkflowSummary = Summary & {
  /** The script and what it was run with: a replay runs it again with these (the script's copy is WORKFLOW_SCRIPT_FILE). */
  workflow: {
    name: string;
    description: string;
    args: unknown;
    /** Where its agents worked. */
    cwd: string;
    budget_tokens: number | null;
    max_agents: number | null;
  };
  result: unknown;
  error: { code: string; message: string } | null;
  logs: string[];
  agent_count: number;
};

export interface WorkflowRunResult {
  summary: WorkflowSummary;
  path: string;
  /** 0 the script returned, 1 it threw or hit a limit, `stopExitCode` when the signal stopped it. */
  exitCode: number;
  outcome: WorkflowOutcome;
  warnings: readonly string[];
}

/** A record row's name: the label, and `label#n` for its n-th use (which plays the label's rehearsal script). */
class RowNames {
  readonly #uses = new Map<string, number>();

  next(label: string): string {
    const n = (this.#uses.get(label) ?? 0) + 1;
    this.#uses.set(label, n);
    return n === 1 ? label : `${label}#${n}`;
  }
}

/** The earlier record in `dir`, brought up to date by its journal. */
async function earlierRecord(dir: string): Promise<Summary> {
  const record = await recordToResume(dir);
  if (record === undefined) throw new ResumeError(`no run to resume in ${dir} (it has no ${SUMMARY_FILE})`);
  return record;
}

/** The calls an earlier record holds, for replay. */
function recordedCalls(record: Summary): RecordedCall[] {
  return record.tasks.flatMap((row) => {
    const parsed = RecordedCallSchema.safeParse({
      index: row.call_index,
      key: row.call_key,
      status: row.status,
      value: row.result,
      output_tokens: row.usage.output_tokens,
    });
    return parsed.success ? [parsed.data] : [];
  });
}

/** The agent files a call's agentType may name (the project's, its .claude's, the user's, cadre's own). */
async function agentsOf(cwd: string, home: string | undefined): Promise<ResolvedSwarmConfig["agents"]> {
  const agents: ResolvedSwarmConfig["agents"] = {};
  for (const found of await discoverAgents({ cwd, ...(home !== undefined && { home }) })) {
    if (found.ok && found.shadowedBy === undefined) agents[found.name] = found.definition;
  }
  return agents;
}

/** The result of a call refused before it became a task (an unknown agent type). */
function refused(name: string, error: { code: string; message: string } | undefined): TaskResult {
  return {
    id: name,
    name,
    status: "failed",
    text: "",
    costUsd: 0,
    usage: emptyUsage(),
    numTurns: 0,
    queuedMs: 0,
    finishedAt: Date.now(),
    durationMs: 0,
    attempts: 0,
    ...(error !== undefined && { error }),
  };
}

/** Writes a file of the record (summary.json, the script's copy) whole or not at all. */
function writeWhole(outDir: string, name: string, text: string): string {
  const path = join(outDir, name);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new RecordWriteError(`cannot write ${path}: ${(error as Error).message}`, error);
  }
  return path;
}

function writeRecord(outDir: string, summary: WorkflowSummary): string {
  return writeWhole(outDir, SUMMARY_FILE, `${JSON.stringify(summary, null, 2)}\n`);
}

/** The config's agents without their dollar budgets: a replay counts the recorded costs instead (see WorkflowFileRunOptions.replay). */
function withoutBudgets(agents: ResolvedSwarmConfig["agents"]): ResolvedSwarmConfig["agents"] {
  return Object.fromEntries(Object.entries(agents).map(([name, { budget_usd: _, ...agent }]) => [name, agent]));
}

/**
 * Runs a workflow script to its end and writes its record. A script refused
 * before launch rejects with a WorkflowScriptError before any engine starts.
 */
export async function runWorkflow(source: string, options: WorkflowFileRunOptions): Promise<WorkflowRunResult> {
  const checked = await checkWorkflowScript(source);
  const cwd = resolve(options.cwd ?? process.cwd());
  const places: SavedWorkflowPlaces = { cwd, ...(options.home !== undefined && { home: options.home }) };
  const outDir = resolve(options.outDir);
  const earlier = options.resume ? await earlierRecord(outDir) : undefined;
  const { replay } = options;
  await prepareOutDir(outDir);
  // The script as it ran, beside its record: a replay runs this copy, whatever has become of the file since.
  writeWhole(outDir, WORKFLOW_SCRIPT_FILE, source);
  const runId = earlier?.run_id ?? newRunId();
  const attempt = (earlier?.attempt ?? 0) + 1;
  const config: ResolvedSwarmConfig = {
    name: checked.meta.name,
    ...(options.file !== undefined && { file: resolve(options.file) }),
    base_dir: cwd,
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    defaults: { cwd },
    agents: replay ? withoutBudgets(await agentsOf(cwd, options.home)) : await agentsOf(cwd, options.home),
    tasks: [],
    keep_worktrees: false,
    hooks: {},
    connections: {},
    // Agents of a script talk through the script, never to each other: no peer server in their processes.
    peer_tools: false,
    ...(options.sessionFiles !== true && { session_persistence: false }),
    rehearsal: options.rehearsal ?? {},
  };
  const engine: RunEngine = await startEngine(
    config,
    {
      rehearse: options.rehearsal !== undefined,
      ...(replay && { replay: replay.replies }),
      concurrency: options.concurrency,
      budgetUsd: replay ? undefined : options.budgetUsd,
      redis: options.redis === undefined ? undefined : { url: options.redis, runId },
      ...(options.traceContext && { traceContext: options.traceContext }),
    },
    outDir,
    runId,
  );
  // The process the script's first plain call takes starts while the sandbox loads (not in a resumed run: its calls may all come from the record).
  if (checked.makesPlainCalls && earlier === undefined) engine.prepare?.(plainCallSpec());
  const journal = new RunJournal(outDir);
  const worktrees = new WorkflowWorktrees(runId, cwd);
  const names = new RowNames();
  const tasks: ResolvedTask[] = [];
  const rows = new Map<string, { call: AgentCall; value: unknown }>();
  const results = new Map<string, TaskResult>();
  const running = new Map<string, { startedAt: number; sessionId: string | undefined }>();
  const carriedOver = new Map<string, SummaryTask>();
  const earlierRows = new Map((earlier?.tasks ?? []).map((row) => [row.call_index as number | undefined, row]));
  const nameOf = new Map<number, string>();
  const startedAt = Date.now();

  const rowInput = () => ({
    config: { ...config, tasks },
    results,
    running,
    carriedOver,
    transcripts: engine.transcriptPaths,
    ...(engine.hosts && { hosts: engine.hosts }),
    worktrees: worktrees.outcomes,
    outDir,
  });
  /** A row of the record: the run layer's, with what the call was. */
  const rowOf = (row: SummaryTask, name: string): SummaryTask => {
    const entry = rows.get(name);
    if (entry === undefined || row.carried_over) return row;
    const { call, value } = entry;
    return {
      ...row,
      label: call.label,
      phase: call.phase ?? null,
      workflow: call.workflow ?? null,
      prompt: call.prompt,
      call_index: call.index,
      call_key: call.key,
      result: value ?? null,
    };
  };
  const journalRow = (name: string) => {
    const summary = buildSummary({ ...rowInput(), config: { ...config, tasks: tasks.filter((task) => task.name === name) }, ...totalsInput() });
    journal.append(attempt, rowOf(summary.tasks[0]!, name), startedAt);
  };
  const totalsInput = () => ({
    totals: engine.totals,
    sessions: engine.sessionRecords,
    runId,
    rehearsal: options.rehearsal !== undefined || replay !== undefined,
    budgetUsd: options.budgetUsd,
    startedAt,
    finishedAt: Date.now(),
    attempt,
    ...(earlier && { previous: earlier }),
    stop: undefined as RunStop | undefined,
  });
  const stopEvents = engine.on((event) => {
    if (event.type === "task_started" && running.has(event.task.name)) running.get(event.task.name)!.startedAt = event.startedAt;
    options.onEngineEvent?.(event);
  });

  const onEvent = (event: WorkflowEvent) => {
    if (event.type === "agent_started") {
      const name = names.next(event.call.label);
      nameOf.set(event.call.index, name);
      tasks.push({ name, template: name, index: event.call.index, prompt: event.call.prompt, depends_on: [], priority: 0, settings: {} });
      rows.set(name, { call: event.call, value: undefined });
      if (event.replayed) {
        const row = earlierRows.get(event.call.index);
        if (row !== undefined) carriedOver.set(name, { ...row, name });
      } else {
        running.set(name, { startedAt: Date.now(), sessionId: undefined });
        journalRow(name);
      }
    } else if (event.type === "agent_ended" && !event.replayed) {
      const name = nameOf.get(event.call.index)!;
      rows.get(name)!.value = event.value;
      running.delete(name);
      results.set(
        name,
        event.result ? { ...event.result, status: event.status === "running" ? "failed" : event.status } : refused(name, event.error),
      );
      journalRow(name);
    }
    options.onEvent?.(event.type === "agent_started" || event.type === "agent_ended" ? { ...event, name: nameOf.get(event.call.index)! } : event);
  };

  const agents = {
    run: async (call: AgentCall, prompt: string, signal: AbortSignal): Promise<TaskResult> => {
      const name = nameOf.get(call.index)!;
      if (call.options.agentType !== undefined && config.agents[call.options.agentType] === undefined) {
        throw new Error(
          `agent(): no agent type "${call.options.agentType}" (agent files are found in agents/, .claude/agents/ and ~/.claude/agents/)`,
        );
      }
      const worktree = call.options.isolation === "worktree" ? worktrees.forCall(name) : undefined;
      const spec = taskSpecForCall(call, name, prompt, signal, worktree?.prepare);
      // A replay counts the recorded costs against the budgets (chargeOf), not its own against a call's.
      const { budgetUsd: _, budgetName: __, ...unbudgeted } = spec;
      const result = await engine.run(replay ? unbudgeted : spec);
      return worktree ? worktree.close(result) : result;
    },
  };

  /** What a replay's calls spent as recorded: its run budget counts this. */
  let replaySpentUsd = 0;
  /** A replay charges what each call spent in the recorded run, by its row's name (its own figures when the record lacks the row). */
  const chargeOf = (call: AgentCall, result: TaskResult) => {
    const charge = replay?.spent.get(nameOf.get(call.index)!) ?? { outputTokens: result.usage.outputTokens, costUsd: result.costUsd };
    replaySpentUsd += charge.costUsd;
    return charge;
  };

  /** The dollar budgets over a call: the orchestrator's; on Redis hosts, the run's against the run's spending as reported here. */
  const budgetsUsd = (agentType: string | undefined): BudgetUse[] => {
    const run = (spentUsd: number): BudgetUse[] =>
      options.budgetUsd === undefined ? [] : [{ scope: { kind: "run" }, limitUsd: options.budgetUsd, spentUsd }];
    // A replay: the run's budget against the recorded calls' costs (agent types' budgets are not applied).
    if (replay) return run(replaySpentUsd);
    return engine.budgetStatus?.(agentType) ?? run(engine.totals.costUsd);
  };

  const recordOf = (outcome: WorkflowOutcome | undefined, stop: RunStop | undefined): WorkflowSummary => {
    const divergences = engine.divergences().map((divergence) => ({ ...divergence }));
    const base = buildSummary({ ...rowInput(), ...totalsInput(), stop, ...(replay && { replay: { of: replay.of, divergences } }) });
    return {
      ...base,
      tasks: base.tasks.map((row) => rowOf(row, row.name)),
      complete: outcome !== undefined,
      // A replay that left its record failed, even where the script returned.
      exit_code: stop ? stop.exitCode : outcome === undefined || (outcome.ok && divergences.length === 0) ? 0 : 1,
      workflow: {
        name: checked.meta.name,
        description: checked.meta.description,
        args: options.args ?? null,
        cwd,
        budget_tokens: options.budgetTokens ?? null,
        max_agents: options.maxAgents ?? null,
      },
      result: outcome?.ok ? (outcome.result ?? null) : null,
      error: outcome?.error ?? null,
      logs: outcome?.logs ?? [],
      agent_count: outcome?.agentCount ?? 0,
    };
  };
  // A process that exits under the run (a second Ctrl-C) leaves no worktree behind: those open are removed at once.
  const discardWorktrees = () => worktrees.discardSync();
  process.once("exit", discardWorktrees);
  let outcome: WorkflowOutcome;
  try {
    // Written as the run starts, so that a run killed at once can still be resumed: its journal brings the rows.
    writeRecord(outDir, recordOf(undefined, undefined));
    outcome = await runWorkflowScript({
      source,
      ...(options.file !== undefined && { filename: options.file }),
      args: options.args,
      agents,
      budgetsUsd,
      ...(replay && { chargeOf }),
      ...(options.budgetTokens !== undefined && { budgetTokens: options.budgetTokens }),
      ...(options.maxAgents !== undefined && { maxAgents: options.maxAgents }),
      ...(options.limits !== undefined && { limits: options.limits }),
      replay: earlier ? recordedCalls(earlier) : [],
      places,
      ...(options.signal !== undefined && { signal: options.signal }),
      onEvent,
    });
  } finally {
    stopEvents();
    await engine.close();
    await worktrees.dispose();
    process.off("exit", discardWorktrees);
    journal.close();
  }
  const stop: RunStop | undefined = options.signal?.aborted
    ? { reason: String(options.signal.reason), exitCode: options.stopExitCode ?? 130 }
    : undefined;
  const summary = recordOf(outcome, stop);
  const path = writeRecord(outDir, summary);
  return { summary, path, exitCode: summary.exit_code, outcome, warnings: engine.warnings() };
}
