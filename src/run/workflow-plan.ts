// A workflow script as a plan of the run: each agent() call a task of the run's engine, the script's own events beside the tasks'.
import { randomUUID } from "node:crypto";
import { setImmediate } from "node:timers";
import type { BudgetUse, TaskResult } from "../orchestrator/index.ts";
import { type AddedTask, unrunResult, type WorktreeOutcome } from "../swarm/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import {
  type AgentCall,
  AgentCallError,
  BUILT_IN_AGENT_TYPES,
  type CheckedScript,
  plainCallSpec,
  type RecordedCall,
  RecordedCallSchema,
  runWorkflowScript,
  type SandboxLimits,
  type SavedWorkflowPlaces,
  succeededValue,
  taskSpecForCall,
  type WorkflowEvent,
  type WorkflowOutcome,
} from "../workflow/index.ts";
import type { PlanContext, PlanEvent, RunPlan } from "./plan.ts";
import { resultFromRecord, type Summary, type SummaryTask } from "./record/schema.ts";
import type { RecordExtension, RecordedPlan, RunStop } from "./record/summary.ts";
import { type WorkflowRecordFields, workflowFieldsOf } from "./record/workflow-fields.ts";
import { CLAUDE_CODE_RUN_ID, type ClaudeCodeRun, claudeCodeCallResult } from "./resume-claude-code.ts";
import { WorkflowWorktrees } from "./workflow-worktrees.ts";

/** What a workflow plan runs: the script, checked, and what it is run with. */
export interface WorkflowPlanOptions {
  source: string;
  checked: CheckedScript;
  /** The script's file (absolute), named in the record and in its stack traces. */
  file?: string;
  /** The script's `args`, verbatim. */
  args: unknown;
  /** Where its agents work, and where workflow() finds saved workflows. */
  places: SavedWorkflowPlaces & { cwd: string };
  /** The agent types its calls may name (agent files found for the project). */
  agentTypes: ReadonlySet<string>;
  /** budget.total, in output tokens. */
  budgetTokens?: number;
  /** agent() calls per run. */
  maxAgents?: number;
  limits?: Partial<SandboxLimits>;
  /** The record of the attempt this one resumes: its calls that succeeded replay (workflow/calls.ts). */
  earlier?: Summary;
  /** The run of Claude Code's Workflow tool this one continues: its calls that succeeded replay by their Claude Code keys. */
  claudeCode?: ClaudeCodeRun;
  /**
   * A replay: what each recorded call spent (by row), which its budgets count instead of the simulated costs, the run's
   * dollar budget, and the recorded calls whose results came from a Claude Code run (no replies of theirs to play).
   */
  replay?: {
    spent: ReadonlyMap<string, { costUsd: number; outputTokens: number }>;
    budgetUsd: number | undefined;
    fromClaudeCode?: readonly SummaryTask[];
  };
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

/** The calls a record's rows hold, for replay, each with its row's name (a call that never started is none), and the Claude Code run one came from. */
function recordedCalls(rows: readonly SummaryTask[]): RecordedCall[] {
  return rows.flatMap((row) => {
    const { call_index: index, call_key: key, status, result: value, name } = row;
    const fromRun = row.carried_from !== undefined && CLAUDE_CODE_RUN_ID.test(row.carried_from.run_id) ? row.carried_from.run_id : undefined;
    const recorded = { index, key, status, value, output_tokens: row.usage.output_tokens, name, ...(fromRun && { claude_code_run: fromRun }) };
    const parsed = RecordedCallSchema.safeParse(recorded);
    return parsed.success ? [parsed.data] : [];
  });
}

/** What a record says of the Claude Code run it continues. */
function continuesOf(run: ClaudeCodeRun): { claude_code_run: string; session_id: string; script_path: string | null } {
  return { claude_code_run: run.runId, session_id: run.sessionId, script_path: run.scriptPath ?? null };
}

/**
 * A workflow script on the run pipeline. The sandbox runs the script; each
 * agent() call becomes a task (tasks_added, then task_settled as it ends),
 * or, in a resumed run, settles at once with the earlier attempt's result;
 * the script's phases, logs and end go beside as its own events. The stream
 * ends once every call it started has settled, however the script ended.
 */
export class WorkflowPlan implements RunPlan {
  readonly outline: RecordedPlan;
  readonly record: RecordExtension;
  readonly #options: WorkflowPlanOptions;
  readonly #names = new RowNames();
  /** By call index: its task's name. */
  readonly #nameOf = new Map<number, string>();
  /** By task name: the call, what agent() gave the script once it has, and the Claude Code run whose result it gave. */
  readonly #calls = new Map<string, { call: AgentCall; value: unknown; claudeCodeRun?: string }>();
  readonly #earlierRows: ReadonlyMap<string, SummaryTask>;
  /** By task name: what an isolated call's worktree came to. */
  readonly #worktreeOutcomes = new Map<string, WorktreeOutcome>();
  /** Calls started and not yet ended. */
  #open = 0;
  #allEnded: (() => void) | undefined;
  #replaySpentUsd = 0;
  #outcome: WorkflowOutcome | undefined;

  constructor(options: WorkflowPlanOptions) {
    this.#options = options;
    this.outline = {
      name: options.checked.meta.name,
      ...(options.file !== undefined && { file: options.file }),
      tasks: [],
    };
    this.#earlierRows = new Map((options.earlier?.tasks ?? []).map((row) => [row.name, row]));
    this.record = { row: (name, result) => this.#rowFields(name, result), fields: (stop) => this.#recordFields(stop) };
  }

  /** How the script ended, once it has. */
  get outcome(): WorkflowOutcome | undefined {
    return this.#outcome;
  }

  run(context: PlanContext): AsyncIterable<PlanEvent> {
    const queue = new AsyncQueue<PlanEvent>();
    this.#drive(context, queue).then(
      () => queue.end(),
      (error: unknown) => queue.fail(error),
    );
    return queue;
  }

  async #drive(context: PlanContext, queue: AsyncQueue<PlanEvent>): Promise<void> {
    const { checked, earlier, claudeCode } = this.#options;
    // The process the script's first plain call takes starts while the sandbox loads (not in a resumed run: its calls may all replay).
    if (checked.makesPlainCalls && earlier === undefined && claudeCode === undefined) context.runner.prepare?.(plainCallSpec());
    const worktrees = new WorkflowWorktrees(context.worktrees, this.#options.places.cwd);
    let ended: Extract<WorkflowEvent, { type: "workflow_ended" }> | undefined;
    this.#outcome = await runWorkflowScript({
      ...this.#scriptOptions(),
      agents: { run: (call, prompt, signal) => this.#runCall(context, worktrees, call, prompt, signal) },
      budgetsUsd: (agentType) => this.#budgets(context, agentType),
      ...(this.#options.replay && { chargeOf: (call: AgentCall, result: TaskResult) => this.#replayCharge(call, result) }),
      replay: recordedCalls([...(earlier?.tasks ?? []), ...(this.#options.replay?.fromClaudeCode ?? [])]),
      ...(claudeCode && { claudeCodeReplay: claudeCode.calls }),
      signal: context.signal,
      onEvent: (event) => {
        // The script's end is told after its last call has settled.
        if (event.type === "workflow_ended") ended = event;
        else this.#told(event, queue);
      },
    });
    await this.#callsEnded();
    if (ended) queue.push(ended);
  }

  #scriptOptions() {
    const { source, file, args, budgetTokens, maxAgents, limits, places } = this.#options;
    return {
      source,
      ...(file !== undefined && { filename: file }),
      args,
      ...(budgetTokens !== undefined && { budgetTokens }),
      ...(maxAgents !== undefined && { maxAgents }),
      ...(limits !== undefined && { limits }),
      places,
    };
  }

  /** A script event: a call's start makes its task (or settles it from the record), its end settles it. */
  #told(event: Exclude<WorkflowEvent, { type: "workflow_ended" }>, queue: AsyncQueue<PlanEvent>): void {
    if (event.type !== "agent_started" && event.type !== "agent_ended") {
      queue.push(event);
      return;
    }
    if (event.type === "agent_started") {
      const name = this.#names.next(event.call.label);
      this.#nameOf.set(event.call.index, name);
      this.#calls.set(name, { call: event.call, value: undefined });
      queue.push({ type: "tasks_added", parent: this.outline.name, tasks: [this.#taskOf(name, event.call)] });
      queue.push({ ...event, name });
      if (!event.replayed) this.#open++;
      return;
    }
    const name = this.#nameOf.get(event.call.index)!;
    const entry = this.#calls.get(name)!;
    entry.value = event.value;
    if (event.recorded?.claude_code_run !== undefined) entry.claudeCodeRun = event.recorded.claude_code_run;
    queue.push({ ...event, name });
    queue.push(this.#settled(name, event));
    if (!event.replayed && --this.#open === 0) this.#allEnded?.();
  }

  #taskOf(name: string, call: AgentCall): AddedTask {
    return { name, template: name, agent: call.options.agentType, depends_on: [] };
  }

  /** The task_settled of a call that ended: its task's result, the earlier attempt's for a replayed one, or the refusal. */
  #settled(name: string, event: Extract<WorkflowEvent, { type: "agent_ended" }>): PlanEvent {
    const task = { name, agent: event.call.options.agentType };
    if (event.replayed && event.recorded?.claude_code_run !== undefined) {
      return { type: "task_settled", task, result: claudeCodeCallResult(name, event.recorded), started: false, carriedOver: true, carriedFrom: null };
    }
    if (event.replayed) {
      const earlierName = event.recorded?.name ?? name;
      const row = this.#earlierRows.get(earlierName);
      const result = row
        ? resultFromRecord({ ...row, status: "succeeded" }, randomUUID().slice(0, 8))
        : unrunResult(task, "failed", { code: "RESUME_FAILED", message: `the earlier attempt has no row ${earlierName}` });
      return { type: "task_settled", task, result: { ...result, name }, started: false, carriedOver: true, carriedFrom: earlierName };
    }
    const status = event.status === "running" ? "failed" : event.status;
    const refusal = event.error ?? { code: "WORKFLOW_AGENT_REFUSED", message: "the call was refused before it ran" };
    const result = event.result ? { ...event.result, status } : unrunResult(task, "failed", refusal);
    const worktree = this.#worktreeOutcomes.get(name);
    return { type: "task_settled", task, result, started: event.result !== undefined, ...(worktree && { worktree }) };
  }

  /** Resolves once every call started has ended (a script may return without awaiting them; its stop ends them). */
  #callsEnded(): Promise<void> {
    if (this.#open === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#allEnded = resolve;
    });
  }

  async #runCall(context: PlanContext, worktrees: WorkflowWorktrees, call: AgentCall, prompt: string, signal: AbortSignal): Promise<TaskResult> {
    const name = this.#nameOf.get(call.index)!;
    // The run tells the call's task and its start (queued just now) before the engine tells of its queueing.
    await new Promise((resolve) => setImmediate(resolve));
    const { agentType } = call.options;
    const { agentTypes } = this.#options;
    if (agentType !== undefined && !agentTypes.has(agentType) && !BUILT_IN_AGENT_TYPES.has(agentType)) {
      const known = [...BUILT_IN_AGENT_TYPES, ...agentTypes].map((type) => `"${type}"`).join(", ");
      throw new AgentCallError(
        `agent(): no agent type "${agentType}"; the available ones: ${known} (agent files are found in agents/, .claude/agents/ and ~/.claude/agents/)`,
      );
    }
    // Outside a git repository an isolated call throws in the script, as in the CLI, before it is a task.
    if (call.options.isolation === "worktree") await worktrees.repository();
    const worktree = call.options.isolation === "worktree" ? worktrees.forCall(name) : undefined;
    const spec = taskSpecForCall(call, name, prompt, signal, worktree?.prepare, agentTypes);
    // A replay counts the recorded costs against the budgets (#replayCharge), not its own against a call's.
    const { budgetUsd: _, budgetName: __, ...unbudgeted } = spec;
    const result = await context.runner.run(this.#options.replay ? unbudgeted : spec);
    if (worktree === undefined) return result;
    const closed = await worktree.close(result);
    const outcome = worktree.outcome();
    if (outcome !== undefined) this.#worktreeOutcomes.set(name, outcome);
    return closed;
  }

  /** The dollar budgets over a call: the run's (and its agent type's); a replay's run budget against the recorded calls' costs. */
  #budgets(context: PlanContext, agentType: string | undefined): BudgetUse[] {
    const { replay } = this.#options;
    if (replay === undefined) return context.budgetStatus(agentType);
    return replay.budgetUsd === undefined ? [] : [{ scope: { kind: "run" }, limitUsd: replay.budgetUsd, spentUsd: this.#replaySpentUsd }];
  }

  /** A replay charges what each call spent in the recorded run, by its row's name (its own figures when the record lacks the row). */
  #replayCharge(call: AgentCall, result: TaskResult): { outputTokens: number; costUsd: number } {
    const recorded = this.#options.replay?.spent.get(this.#nameOf.get(call.index)!);
    const charge = recorded ?? { outputTokens: result.usage.outputTokens, costUsd: result.costUsd };
    this.#replaySpentUsd += charge.costUsd;
    return charge;
  }

  /** A call's row: what the call was, and what agent() gave the script. */
  #rowFields(name: string, result: TaskResult | undefined): Partial<SummaryTask> | undefined {
    const entry = this.#calls.get(name);
    if (entry === undefined) return undefined;
    const { call, claudeCodeRun } = entry;
    // A result journalled before agent() has returned (a run killed in between) keeps the value it gives, so a resume gives it too.
    const value = entry.value ?? (result?.status === "succeeded" ? succeededValue(result, call.options) : undefined);
    return {
      // A call of the Claude Code run this one continues: kept, and from where (a call kept from cadre's record keeps its row).
      ...(claudeCodeRun !== undefined && { carried_over: true, carried_from: { run_id: claudeCodeRun } }),
      label: call.label,
      phase: call.phase ?? null,
      workflow: call.workflow ?? null,
      prompt: call.prompt,
      call_index: call.index,
      call_key: call.key,
      result: value ?? null,
    };
  }

  /** The record's own fields: the script and what it ran with, its result, error and logs; complete once the script has ended. */
  #recordFields(stop: RunStop | undefined): WorkflowRecordFields & {
    complete: boolean;
    exit_code: number;
    budget_usd?: number | null;
    continues?: ReturnType<typeof continuesOf>;
  } {
    const outcome = this.#outcome;
    const { checked, args, places, budgetTokens, maxAgents, replay } = this.#options;
    return {
      complete: outcome !== undefined,
      exit_code: stop ? stop.exitCode : outcome?.ok === false ? 1 : 0,
      // A replay applies the recorded run's budget itself (the engine none): the record says which.
      ...(replay && { budget_usd: replay.budgetUsd ?? null }),
      ...(this.#options.claudeCode && { continues: continuesOf(this.#options.claudeCode) }),
      ...workflowFieldsOf(checked.meta, { args, cwd: places.cwd, budgetTokens, maxAgents }, outcome),
    };
  }
}
