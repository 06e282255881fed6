/**
 * Running a workflow script end to end, without a terminal: the script is a
 * plan (workflow-plan.ts) of the one run pipeline (SwarmRun), so its record,
 * journal, resume, events, dashboard and telemetry are a swarm run's, with
 * the script's outcome beside the rows.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import type { TaskInfo } from "../orchestrator/index.ts";
import type { RehearsalScripts } from "../rehearsal/index.ts";
import { discoverAgents, newRunId, type ResolvedSwarmConfig } from "../swarm/index.ts";
import { type CheckedScript, checkWorkflowScript, type SandboxLimits, type WorkflowOutcome } from "../workflow/index.ts";
import { type Summary, WORKFLOW_SCRIPT_FILE } from "./record/schema.ts";
import { writeWholeSync } from "./record/summary.ts";
import { recordedWorkflowSettings, type WorkflowRecordFields } from "./record/workflow-fields.ts";
import type { WorkflowReplayPlan } from "./replay/plan.ts";
import { planWorkflowResume, type ResumePlan } from "./resume.ts";
import { type ClaudeCodeRun, continuedRunOf, readClaudeCodeRun } from "./resume-claude-code.ts";
import { type RunEvent, SwarmRun } from "./swarm-run.ts";
import { WorkflowPlan } from "./workflow-plan.ts";

export interface WorkflowFileRunOptions {
  /** Where the record and transcripts go (for a resumed run: its own directory). */
  outDir: string;
  /** The script's file, named in the record (and used to find the latest run to resume). */
  file?: string;
  /** The script's `args`, verbatim (a resumed run's own, unless given). */
  args?: unknown;
  /** The project directory: the agents' working directory and where agent files and saved workflows are found. */
  cwd?: string;
  /** The user's home, for saved workflows and agent files (default: os.homedir()). */
  home?: string;
  /** Play scripted replies, by agent label, on a scripted model. */
  rehearsal?: RehearsalScripts;
  /** Workers running at once (default: chosen by cadre). */
  concurrency?: number;
  /** budget.total, in output tokens (a resumed run's own, unless given). */
  budgetTokens?: number;
  /** The run's dollar budget (budget_usd): every agent of the script together; budget.usd.remaining() reads what is left. */
  budgetUsd?: number;
  /** agent() calls per run (default 1,000). */
  maxAgents?: number;
  /** The sandbox's CPU-time and memory limits (default 30 s of the script's own computation, 256 MiB). */
  limits?: Partial<SandboxLimits>;
  /** Resume the run recorded in `outDir` (or the one planned: planWorkflowResume): its calls that succeeded replay (see docs/workflow-scripts.md). */
  resume?: boolean | ResumePlan;
  /**
   * Continue a run of Claude Code's own Workflow tool (readClaudeCodeRun): the calls that succeeded there replay by their
   * Claude Code keys, and its args stand unless given. A resumed record that continues one continues it by itself.
   */
  claudeCode?: ClaudeCodeRun;
  /**
   * Let the agents' claude processes write their session files (~/.claude/projects), so that `claude --resume
   * <session_id>` can open an agent's conversation. Default false: cadre never continues an agent() call's session
   * (a call that did not end runs again from the start) and keeps each one's transcript itself, and the session
   * file costs a reused task a tenth to a fifth of its CLI's CPU (docs/performance.md).
   */
  sessionFiles?: boolean;
  /** Run the agents on the hosts of this Redis (as the run of this id: a resumed run's own by default). */
  redis?: string | { url: string; runId: string };
  /** Stops the run: the script and its running agents; the record is still written. */
  signal?: AbortSignal;
  /** Each event of the run as it happens: the task events of its calls (as a swarm run's), and the script's own beside them. */
  onEvent?: (event: RunEvent) => void;
  /** For a traced --redis run: the trace context each agent's job carries to its host. */
  traceContext?: (task: TaskInfo) => string | undefined;
  /** For a traced run: its run span's traceparent, kept in the record so that a resumed run's span links to it. */
  traceparent?: string;
  /** The exit code a stop by `signal` gives (default 130). */
  stopExitCode?: number;
  /** The run, as it starts: its `send`, `stopTask` and `interrupt` reach one running agent() call (by its row name) while the others go on. */
  onStart?: (run: SwarmRun) => void;
  /**
   * Replay a recorded run (planWorkflowReplay): its replies instead of the
   * model, offline, in this process. Its budgets count what the recorded calls
   * spent, not the scripted model's simulated costs.
   */
  replay?: Pick<WorkflowReplayPlan, "of" | "replies" | "spent"> & Partial<Pick<WorkflowReplayPlan, "fromClaudeCode" | "steering">>;
}

/** A workflow run's record: a swarm run's, with the script's outcome. */
export type WorkflowSummary = Summary & WorkflowRecordFields;

export interface WorkflowRunResult {
  summary: WorkflowSummary;
  path: string;
  /** 0 the script returned, 1 it threw or hit a limit (or a replay left its record), `stopExitCode` when the signal stopped it. */
  exitCode: number;
  outcome: WorkflowOutcome;
  warnings: readonly string[];
}

/** A workflow run started and not yet iterated: the run (its events, record and stop) and the script's plan. */
export interface StartedWorkflowRun {
  run: SwarmRun;
  plan: WorkflowPlan;
  /** The args, budgets and limit it runs with: those given, else (a resumed run) the ones it was started with. */
  settings: Pick<WorkflowFileRunOptions, "args" | "budgetTokens" | "budgetUsd" | "maxAgents">;
}

/** The agent files a call's agentType may name (the project's, its .claude's, the user's, cadre's own). */
async function agentsOf(cwd: string, home: string | undefined): Promise<ResolvedSwarmConfig["agents"]> {
  const agents: ResolvedSwarmConfig["agents"] = {};
  for (const found of await discoverAgents({ cwd, ...(home !== undefined && { home }) })) {
    if (found.ok && found.shadowedBy === undefined) agents[found.name] = found.definition;
  }
  return agents;
}

/** The run's settings as the engine reads them: the script's name, the agent types, where agents work, the budget, the rehearsal. */
async function workflowConfig(checked: CheckedScript, options: WorkflowFileRunOptions, cwd: string, budgetUsd: number | undefined) {
  const config: ResolvedSwarmConfig = {
    name: checked.meta.name,
    ...(options.file !== undefined && { file: resolve(options.file) }),
    base_dir: cwd,
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(budgetUsd !== undefined && { budget_usd: budgetUsd }),
    defaults: { cwd },
    agents: await agentsOf(cwd, options.home),
    tasks: [],
    keep_worktrees: false,
    hooks: {},
    connections: {},
    // Agents of a script talk through the script, never to each other: no peer server in their processes.
    peer_tools: false,
    ...(options.sessionFiles !== true && { session_persistence: false }),
    rehearsal: options.rehearsal ?? {},
  };
  return config;
}

/** What a resumed run runs with: what is given, else what its record (or the Claude Code run it continues) says it was started with. */
function settingsOf(options: WorkflowFileRunOptions, resume: ResumePlan | undefined): StartedWorkflowRun["settings"] {
  const recorded = resume && recordedWorkflowSettings(resume.previous);
  return {
    args: options.args !== undefined ? options.args : recorded ? recorded.args : options.claudeCode?.args,
    budgetTokens: options.budgetTokens ?? recorded?.budgetTokens,
    budgetUsd: options.budgetUsd ?? recorded?.budgetUsd,
    maxAgents: options.maxAgents ?? recorded?.maxAgents,
  };
}

/** What a script's plan is made of beside the script: where it runs, its engine's settings, what it resumes and runs with. */
interface PlanInput {
  cwd: string;
  config: ResolvedSwarmConfig;
  resume: ResumePlan | undefined;
  claudeCode: ClaudeCodeRun | undefined;
  settings: StartedWorkflowRun["settings"];
}

/** The plan of a script's run: the script, what it runs with, and the record it resumes. */
function planOf(source: string, checked: CheckedScript, options: WorkflowFileRunOptions, { cwd, config, resume, claudeCode, settings }: PlanInput) {
  return new WorkflowPlan({
    source,
    checked,
    ...(config.file !== undefined && { file: config.file }),
    args: settings.args,
    places: { cwd, ...(options.home !== undefined && { home: options.home }) },
    agentTypes: new Set(Object.keys(config.agents)),
    ...(settings.budgetTokens !== undefined && { budgetTokens: settings.budgetTokens }),
    ...(settings.maxAgents !== undefined && { maxAgents: settings.maxAgents }),
    ...(options.limits !== undefined && { limits: options.limits }),
    ...(resume && { earlier: resume.previous }),
    ...(claudeCode && { claudeCode }),
    ...(options.replay && {
      replay: {
        spent: options.replay.spent,
        budgetUsd: settings.budgetUsd,
        ...(options.replay.fromClaudeCode && { fromClaudeCode: options.replay.fromClaudeCode }),
      },
    }),
  });
}

/**
 * Checks a script and starts its run (nothing runs until its events are
 * iterated). A script refused before launch rejects with a
 * WorkflowScriptError before any engine starts; `--resume` of a directory
 * without a record rejects with a ResumeError.
 */
export async function startWorkflowRun(source: string, options: WorkflowFileRunOptions): Promise<StartedWorkflowRun> {
  const checked = await checkWorkflowScript(source);
  const cwd = resolve(options.cwd ?? process.cwd());
  const resume = options.resume === true ? await planWorkflowResume(resolve(options.outDir)) : options.resume || undefined;
  const claudeCode = options.claudeCode ?? (resume && (await continuedClaudeCodeRun(resume.previous, options.home)));
  const settings = settingsOf({ ...options, ...(claudeCode && { claudeCode }) }, resume);
  const config = await workflowConfig(checked, options, cwd, settings.budgetUsd);
  const plan = planOf(source, checked, options, { cwd, config, resume, claudeCode, settings });
  const { replay } = options;
  const run = await SwarmRun.start(
    config,
    {
      outDir: options.outDir,
      ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
      rehearse: options.rehearsal !== undefined,
      // A script's --budget-usd holds over a rehearsal's simulated costs; a replay counts the recorded ones itself (WorkflowPlan).
      rehearseBudget: replay === undefined,
      ...(replay && { replay: { of: replay.of, config: config.file ?? "", replies: replay.replies, steering: replay.steering ?? [] } }),
      ...(options.redis !== undefined && { redis: redisRun(options.redis, resume) }),
      ...(resume && { resume }),
      ...(options.traceContext && { traceContext: options.traceContext }),
      ...(options.traceparent !== undefined && { traceparent: options.traceparent }),
    },
    plan,
  );
  // The script as it ran, beside its record: a replay runs this copy, whatever has become of the file since.
  writeWholeSync(join(run.outDir, WORKFLOW_SCRIPT_FILE), (fd) => writeFileSync(fd, source));
  return { run, plan, settings };
}

/** The Claude Code run a resumed record continues (read again: the calls it finished there that this record lacks replay too). */
async function continuedClaudeCodeRun(record: Summary, home: string | undefined): Promise<ClaudeCodeRun | undefined> {
  const continued = continuedRunOf(record);
  if (continued === undefined) return undefined;
  return readClaudeCodeRun(continued.runId, { cwd: continued.cwd ?? process.cwd(), ...(home !== undefined && { home }) });
}

/** The Redis run a script's agents run on: the one given, or a resumed run's own id, or a new one. */
function redisRun(redis: NonNullable<WorkflowFileRunOptions["redis"]>, resume: ResumePlan | undefined): { url: string; runId: string } {
  return typeof redis === "string" ? { url: redis, runId: resume?.previous.run_id ?? newRunId() } : redis;
}

/** Runs a workflow script to its end and writes its record (see startWorkflowRun for what rejects). */
export async function runWorkflow(source: string, options: WorkflowFileRunOptions): Promise<WorkflowRunResult> {
  const { run, plan } = await startWorkflowRun(source, options);
  options.onStart?.(run);
  const signal = options.signal ?? new AbortController().signal;
  for await (const event of run.events(signal)) options.onEvent?.(event);
  const stop = signal.aborted ? { reason: String(signal.reason), exitCode: options.stopExitCode ?? 130 } : run.stop;
  const { summary, path, error } = run.writeRecord(stop);
  // A replay that left its record failed, even where the script returned.
  const diverged = (summary.replay?.divergences.length ?? 0) > 0;
  return {
    summary: summary as WorkflowSummary,
    path,
    exitCode: diverged && summary.exit_code === 0 ? 1 : summary.exit_code,
    outcome: plan.outcome!,
    warnings: [...run.warnings(), ...(error ? [error.message] : [])],
  };
}
