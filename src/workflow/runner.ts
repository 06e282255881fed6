/**
 * Runs a checked workflow script to its end: the sandbox runs the script, and
 * each agent() call becomes a task of the engine given (cadre's orchestrator,
 * or a distributed run's coordinator), replayed from an earlier record when
 * the run resumes. The run's events go to `onEvent` as they happen.
 */
import { BudgetExceededError, type BudgetUse, type TaskResult } from "../orchestrator/index.ts";
import {
  type AgentCall,
  type AgentOptions,
  AgentOptionsSchema,
  CallReplay,
  type CallStatus,
  callKey,
  defaultLabel,
  type RecordedCall,
} from "./calls.ts";
import { checkWorkflowScript } from "./check.ts";
import { WorkflowLimitError } from "./errors.ts";
import { framePrompt } from "./frame.ts";
import type { WorkflowMeta } from "./meta.ts";
import { type SandboxHost, type SandboxLimits, WorkflowSandbox } from "./sandbox.ts";
import { readWorkflowRef, type SavedWorkflowPlaces } from "./saved.ts";

/** Agents per run unless told otherwise (the CLI's cap: a backstop against a runaway loop). */
export const DEFAULT_MAX_AGENTS = 1_000;

/** What runs one agent() call: a cadre task, its prompt already framed. */
export interface WorkflowAgentRunner {
  run(call: AgentCall, prompt: string, signal: AbortSignal): Promise<TaskResult>;
}

export type WorkflowEvent =
  | { type: "workflow_started"; meta: WorkflowMeta }
  | { type: "workflow_phase"; title: string; workflow: string | undefined }
  | { type: "workflow_log"; message: string }
  | { type: "agent_started"; call: AgentCall; replayed: boolean }
  | {
      type: "agent_ended";
      call: AgentCall;
      status: CallStatus;
      value: unknown;
      /** The task's result; undefined for a replayed call and for one refused before it ran (then `error` says why). */
      result: TaskResult | undefined;
      replayed: boolean;
      error?: { code: string; message: string };
    }
  | { type: "workflow_ended"; outcome: WorkflowOutcome };

/** How the script ended: its return value, or why it did not return. */
export interface WorkflowOutcome {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
  logs: string[];
  agentCount: number;
  /** Output tokens the run's agents spent (budget.spent()). */
  outputTokens: number;
  /** Dollars the run's agents spent (budget.usd.spent()). */
  costUsd: number;
}

export interface WorkflowRunOptions {
  /** The script's text (checked here before anything runs). */
  source: string;
  /** Shown in the script's stack traces. */
  filename?: string;
  /** The script's `args`, verbatim. */
  args?: unknown;
  agents: WorkflowAgentRunner;
  /** budget.total in output tokens; none: budget.total is null and there is no ceiling. */
  budgetTokens?: number;
  /**
   * The dollar budgets over an agent call of this agent type (the run's, the
   * agent's), with their use now: budget.usd.remaining() reads it, and agent()
   * throws past one that is spent. None: no dollar budget applies.
   */
  budgetsUsd?: (agentType: string | undefined) => BudgetUse[];
  /** What a call that ran counts against budget.spent() and budget.usd.spent(); default: its result's output tokens and cost. */
  chargeOf?: (call: AgentCall, result: TaskResult) => { outputTokens: number; costUsd: number };
  /** agent() calls per run, nested workflows' included (default 1,000). */
  maxAgents?: number;
  limits?: Partial<SandboxLimits>;
  /** An earlier attempt's calls, to replay positionally. */
  replay?: readonly RecordedCall[];
  /** Where workflow() looks for saved workflows. */
  places?: SavedWorkflowPlaces;
  /** Stops the run: the script, and the agents running. */
  signal?: AbortSignal;
  onEvent?: (event: WorkflowEvent) => void;
}

/** The budget's hard ceiling, once reached. */
function budgetReached(total: number, spent: number): Error {
  return new Error(`the run's budget of ${total} output tokens is spent (${spent}); agent() runs no more agents`);
}

/** The error of the first spent budget of `uses`, if one is. */
function spentBudget(uses: readonly BudgetUse[]): BudgetExceededError | undefined {
  const spent = uses.find((use) => use.spentUsd >= use.limitUsd);
  return spent && new BudgetExceededError(spent.spentUsd, spent.limitUsd, spent.scope);
}

/** What is left of the tightest budget of `uses` (Infinity when there is none). */
function remainingOf(uses: readonly BudgetUse[]): number {
  return Math.max(0, Math.min(Infinity, ...uses.map((use) => use.limitUsd - use.spentUsd)));
}

/** agent()'s schema must be an object schema (as the CLI's: bare `{type: 'object'}` will do) whose required fields are among the properties it lists. */
function schemaProblem(schema: Record<string, unknown>): string | undefined {
  const { properties = {}, required = [] } = schema;
  if (schema.type !== "object" || properties === null || typeof properties !== "object" || Array.isArray(properties)) {
    return "agent(): opts.schema must be a JSON Schema with type 'object' at its root (its properties, if it lists them, an object)";
  }
  if (!Array.isArray(required)) return "agent(): opts.schema.required must be a list of property names";
  const listed = (name: unknown) => typeof name === "string" && (schema.properties === undefined || name in properties);
  const missing = required.filter((name) => !listed(name));
  return missing.length > 0 ? `agent(): opts.schema.required names ${missing.join(", ")}, which opts.schema.properties lacks` : undefined;
}

/** A schema agent that never gave a valid output: it gave none, or the CLI stopped it after too many invalid ones. */
const NO_STRUCTURED_OUTPUT = new Set(["STRUCTURED_OUTPUT_MISSING", "STRUCTURED_OUTPUT_INVALID"]);

/** The value agent() gives the script for a task's result; throws what agent() throws. */
function agentValue(result: TaskResult, options: AgentOptions): unknown {
  // A budget stopped it, or kept it from starting: the script hears which (as past the token budget).
  if (result.error?.code === "BUDGET_EXCEEDED") throw Object.assign(new Error(result.error.message), { code: result.error.code });
  // As the CLI's agent() throws with the reason; a stopped or skipped schema agent still gives null.
  if (result.error !== undefined && NO_STRUCTURED_OUTPUT.has(result.error.code)) {
    throw Object.assign(new Error(`agent({schema}): ${result.error.message}`), { code: result.error.code });
  }
  if (result.status !== "succeeded") return null;
  if (options.schema === undefined) return result.text;
  if (result.structuredOutput === undefined) throw new Error("agent(): the agent ended without a structured output matching opts.schema");
  return result.structuredOutput;
}

/** Runs `options.source`; resolves with how it ended (a script refused before launch rejects with a WorkflowScriptError). */
export async function runWorkflowScript(options: WorkflowRunOptions): Promise<WorkflowOutcome> {
  const checked = await checkWorkflowScript(options.source);
  const emit = (event: WorkflowEvent) => options.onEvent?.(event);
  const maxAgents = options.maxAgents ?? DEFAULT_MAX_AGENTS;
  const budgetTotal = options.budgetTokens ?? null;
  const replay = new CallReplay(options.replay);
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const logs: string[] = [];
  let calls = 0;
  let spent = 0;
  let spentUsd = 0;
  const budgetsUsd = options.budgetsUsd ?? (() => []);
  emit({ type: "workflow_started", meta: checked.meta });
  const sandbox = await WorkflowSandbox.open(options.limits);
  const onAbort = () => sandbox.close();
  signal.addEventListener("abort", onAbort, { once: true });

  const log = (message: string) => {
    logs.push(message);
    emit({ type: "workflow_log", message });
  };

  // Past the run's agent cap or its token budget: agent() throws, and so do parallel() and pipeline() before they start.
  const checkCaps = () => {
    if (calls >= maxAgents) {
      throw new WorkflowLimitError("agents", `agent(): this run has started its ${maxAgents} agents, the most it may (raise it with --max-agents)`);
    }
    if (budgetTotal !== null && spent >= budgetTotal) throw budgetReached(budgetTotal, spent);
  };

  const agent = async (scope: { phase: string | undefined; workflow: string | undefined }, prompt: unknown, raw: unknown): Promise<unknown> => {
    if (typeof prompt !== "string") throw new Error("agent() takes a prompt: a string (a number is its text)");
    const parsed = AgentOptionsSchema.safeParse(raw ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`agent(): opts${issue.path.length > 0 ? `.${issue.path.join(".")}` : ""}: ${issue.message}`);
    }
    const agentOptions = parsed.data;
    const problem = agentOptions.schema && schemaProblem(agentOptions.schema);
    if (problem) throw new Error(problem);
    checkCaps();
    const overspent = spentBudget(budgetsUsd(agentOptions.agentType));
    if (overspent) throw overspent;
    const index = calls++;
    const call: AgentCall = {
      index,
      label: agentOptions.label ?? defaultLabel(prompt, index),
      phase: agentOptions.phase ?? scope.phase,
      prompt,
      options: agentOptions,
      workflow: scope.workflow,
      key: callKey(prompt, agentOptions),
    };
    const earlier = replay.take(call);
    emit({ type: "agent_started", call, replayed: earlier !== undefined });
    if (earlier !== undefined) {
      spent += earlier.output_tokens ?? 0;
      emit({ type: "agent_ended", call, status: "succeeded", value: earlier.value ?? null, result: undefined, replayed: true });
      return earlier.value ?? null;
    }
    let result: TaskResult;
    try {
      result = await options.agents.run(call, framePrompt(prompt), signal);
    } catch (error) {
      const refusal = { code: (error as { code?: string }).code ?? "WORKFLOW_AGENT_REFUSED", message: (error as Error).message };
      emit({ type: "agent_ended", call, status: "failed", value: null, result: undefined, replayed: false, error: refusal });
      throw error;
    }
    const charge = options.chargeOf?.(call, result) ?? { outputTokens: result.usage.outputTokens, costUsd: result.costUsd };
    spent += charge.outputTokens;
    spentUsd += charge.costUsd;
    let value: unknown;
    try {
      value = agentValue(result, agentOptions);
    } catch (error) {
      emit({ type: "agent_ended", call, status: "failed", value: null, result, replayed: false });
      throw error;
    }
    emit({ type: "agent_ended", call, status: result.status, value, result, replayed: false });
    // The CLI's runtime logs each agent that failed (its agent() gives null).
    if (result.status === "failed") log(`[${call.label}] failed: ${result.error?.message ?? "the agent failed"}`);
    return value;
  };

  const hostFor = (scope: { phase: string | undefined; workflow: string | undefined }, nested: boolean): SandboxHost => ({
    agent: (prompt, raw) => agent(scope, prompt, raw),
    workflow: async (ref, args) => {
      if (nested) throw new Error("workflow() nests one level only");
      const found = await readWorkflowRef(ref, options.places);
      const child = await checkWorkflowScript(found.source);
      const childScope = { phase: undefined, workflow: child.meta.name };
      return sandbox.run({ body: child.body, filename: found.file, args, budgetTotal, nested: true, host: hostFor(childScope, true) });
    },
    log,
    phase: (title) => {
      scope.phase = title;
      emit({ type: "workflow_phase", title, workflow: scope.workflow });
    },
    checkCaps,
    spent: () => spent,
    spentUsd: () => spentUsd,
    remainingUsd: (agentType) => remainingOf(budgetsUsd(agentType)),
  });

  let outcome: WorkflowOutcome;
  try {
    const result = await sandbox.run({
      body: checked.body,
      filename: options.filename ?? `${checked.meta.name}.js`,
      args: options.args,
      budgetTotal,
      nested: false,
      host: hostFor({ phase: undefined, workflow: undefined }, false),
    });
    outcome = { ok: true, result, logs, agentCount: calls, outputTokens: spent, costUsd: spentUsd };
  } catch (error) {
    const stopped = options.signal?.aborted;
    const code = stopped ? "ABORTED" : ((error as { code?: string }).code ?? "WORKFLOW_SCRIPT_FAILED");
    const message = stopped ? "the workflow run was stopped" : (error as Error).message;
    outcome = { ok: false, error: { code, message }, logs, agentCount: calls, outputTokens: spent, costUsd: spentUsd };
  } finally {
    signal.removeEventListener("abort", onAbort);
    // Agents still running (a script that returned without awaiting them, or one stopped by a limit) end with it.
    stop.abort();
    sandbox.close();
  }
  emit({ type: "workflow_ended", outcome });
  return outcome;
}
