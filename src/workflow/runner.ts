/**
 * Runs a checked workflow script to its end: the sandbox runs the script, and
 * each agent() call becomes a task of the engine given (cadre's orchestrator,
 * or a distributed run's coordinator), replayed from an earlier record when
 * the run resumes. The run's events go to `onEvent` as they happen.
 */
import { CadreError } from "../errors.ts";
import { type BudgetUse, remainingOf, spentBudgetOf, type TaskResult } from "../orchestrator/index.ts";
import { workflowArgs } from "./args.ts";
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
import { type CheckedScript, checkWorkflowScript } from "./check.ts";
import { ClaudeCodeStrands } from "./claude-code-keys.ts";
import { WorkflowLimitError } from "./errors.ts";
import { framePrompt } from "./frame.ts";
import type { WorkflowMeta } from "./meta.ts";
import { WorkflowSandbox } from "./sandbox.ts";
import type { SandboxHost, SandboxLimits } from "./sandbox-contract.ts";
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
      /** A replayed call: the earlier attempt's call whose result it gives. */
      recorded?: RecordedCall;
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
  /** An earlier attempt's calls, to replay by what they asked (see CallReplay). */
  replay?: readonly RecordedCall[];
  /** A Claude Code run's calls that this run continues, keyed as its journal keys them (claude-code-keys.ts); asked after `replay`. */
  claudeCodeReplay?: readonly RecordedCall[];
  /** Where workflow() looks for saved workflows. */
  places?: SavedWorkflowPlaces;
  /** Stops the run: the script, and the agents running. */
  signal?: AbortSignal;
  onEvent?: (event: WorkflowEvent) => void;
}

/** A call the script made that cadre refuses: wrong arguments, an agent type it does not have (the script may catch it). */
export class AgentCallError extends CadreError {
  constructor(message: string) {
    super("WORKFLOW_AGENT_REFUSED", message);
  }
}

/** The budget's hard ceiling, once reached. */
function budgetReached(total: number, spent: number): WorkflowLimitError {
  return new WorkflowLimitError("output_tokens", `the run's budget of ${total} output tokens is spent (${spent}); agent() runs no more agents`);
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

/** What agent() gives for a task that succeeded (its text, or its structured output under a schema), as the record keeps it. */
export function succeededValue(result: TaskResult, options: AgentOptions): unknown {
  return options.schema === undefined ? result.text : (result.structuredOutput ?? null);
}

/** The value agent() gives the script for a task's result; throws what agent() throws. */
function agentValue(result: TaskResult, options: AgentOptions): unknown {
  // A budget stopped it, or kept it from starting: the script hears which (as past the token budget).
  if (result.error?.code === "BUDGET_EXCEEDED") throw Object.assign(new Error(result.error.message), { code: result.error.code });
  // As the CLI's agent() throws with the reason; a stopped or skipped schema agent still gives null.
  if (result.error !== undefined && NO_STRUCTURED_OUTPUT.has(result.error.code)) {
    throw Object.assign(new Error(`agent({schema}): ${result.error.message}`), { code: result.error.code });
  }
  if (result.status !== "succeeded") return null;
  if (options.schema !== undefined && result.structuredOutput === undefined) {
    throw new Error("agent(): the agent ended without a structured output matching opts.schema");
  }
  return succeededValue(result, options);
}

/** Runs `options.source`; resolves with how it ended (a script refused before launch rejects with a WorkflowScriptError). */
export async function runWorkflowScript(options: WorkflowRunOptions): Promise<WorkflowOutcome> {
  const checked = await checkWorkflowScript(options.source);
  options.onEvent?.({ type: "workflow_started", meta: checked.meta });
  const run = new ScriptRun(options, await WorkflowSandbox.open(options.limits));
  const outcome = await run.run(checked);
  options.onEvent?.({ type: "workflow_ended", outcome });
  return outcome;
}

/** Where a call is made: the phase the script last started, and the saved workflow a nested call comes from. */
interface CallScope {
  phase: string | undefined;
  workflow: string | undefined;
}

/** One run of a script: its sandbox, its calls so far and what they spent, its logs. */
class ScriptRun {
  readonly #options: WorkflowRunOptions;
  readonly #sandbox: WorkflowSandbox;
  readonly #replay: CallReplay;
  readonly #claudeCodeReplay: CallReplay;
  readonly #maxAgents: number;
  readonly #budgetTotal: number | null;
  /** Ends the agents still running once the script ends (or is stopped). */
  readonly #stop = new AbortController();
  readonly #signal: AbortSignal;
  readonly #logs: string[] = [];
  #calls = 0;
  #spent = 0;
  #spentUsd = 0;

  constructor(options: WorkflowRunOptions, sandbox: WorkflowSandbox) {
    this.#options = options;
    this.#sandbox = sandbox;
    this.#replay = new CallReplay(options.replay);
    this.#claudeCodeReplay = new CallReplay(options.claudeCodeReplay, "claudeCodeKey");
    this.#maxAgents = options.maxAgents ?? DEFAULT_MAX_AGENTS;
    this.#budgetTotal = options.budgetTokens ?? null;
    this.#signal = options.signal ? AbortSignal.any([options.signal, this.#stop.signal]) : this.#stop.signal;
  }

  async run(checked: CheckedScript): Promise<WorkflowOutcome> {
    const onAbort = () => this.#sandbox.close();
    this.#signal.addEventListener("abort", onAbort, { once: true });
    // Stopped while its sandbox opened: an abort already past fires no listener.
    if (this.#signal.aborted) onAbort();
    const { filename, args } = this.#options;
    try {
      const host = this.#hostFor({ phase: undefined, workflow: undefined }, false);
      // The run's args as the CLI's Workflow tool gives them: a string holding a JSON object or array is that value (a nested workflow's are as passed).
      const body = { body: checked.body, filename: filename ?? `${checked.meta.name}.js`, args: workflowArgs(args), budgetTotal: this.#budgetTotal };
      return this.#outcome({ ok: true, result: await this.#sandbox.run({ ...body, nested: false, host }) });
    } catch (error) {
      const stopped = this.#options.signal?.aborted;
      const code = stopped ? "ABORTED" : ((error as { code?: string }).code ?? "WORKFLOW_SCRIPT_FAILED");
      return this.#outcome({ ok: false, error: { code, message: stopped ? "the workflow run was stopped" : (error as Error).message } });
    } finally {
      this.#signal.removeEventListener("abort", onAbort);
      // Agents still running (a script that returned without awaiting them, or one stopped by a limit) end with it.
      this.#stop.abort();
      this.#sandbox.close();
    }
  }

  #outcome(end: Pick<WorkflowOutcome, "ok" | "result" | "error">): WorkflowOutcome {
    return { ...end, logs: this.#logs, agentCount: this.#calls, outputTokens: this.#spent, costUsd: this.#spentUsd };
  }

  #emit(event: WorkflowEvent): void {
    this.#options.onEvent?.(event);
  }

  #log(message: string): void {
    this.#logs.push(message);
    this.#emit({ type: "workflow_log", message });
  }

  /** Past the run's agent cap or its token budget: agent() throws, and so do parallel() and pipeline() before they start. */
  #checkCaps(): void {
    if (this.#calls >= this.#maxAgents) {
      throw new WorkflowLimitError(
        "agents",
        `agent(): this run has started its ${this.#maxAgents} agents, the most it may (raise it with --max-agents)`,
      );
    }
    if (this.#budgetTotal !== null && this.#spent >= this.#budgetTotal) throw budgetReached(this.#budgetTotal, this.#spent);
  }

  #budgetsUsd(agentType: string | undefined): BudgetUse[] {
    return this.#options.budgetsUsd?.(agentType) ?? [];
  }

  /** What the sandbox's functions do, for the script or (nested) a saved workflow it calls. */
  #hostFor(scope: CallScope, nested: boolean, strands = new ClaudeCodeStrands()): SandboxHost {
    return {
      agent: (prompt, raw, strand) => this.#agent(scope, prompt, raw, (text) => strands.next(strand, text, raw)),
      fork: (strand, kind) => strands.fork(strand, kind),
      item: (fork, index) => strands.item(fork, index),
      join: (fork) => strands.join(fork),
      workflow: (ref, args, strand) => this.#nested(ref, args, nested, { strands, strand }),
      log: (message) => this.#log(message),
      phase: (title) => {
        scope.phase = title;
        this.#emit({ type: "workflow_phase", title, workflow: scope.workflow });
      },
      checkCaps: () => this.#checkCaps(),
      spent: () => this.#spent,
      spentUsd: () => this.#spentUsd,
      remainingUsd: (agentType) => remainingOf(this.#budgetsUsd(agentType)),
    };
  }

  /** workflow(): a saved workflow run inline, its calls going on in the strand of the call (as Claude Code keys them), its log lines marked with its name as the CLI's runtime logs them. */
  async #nested(
    ref: Parameters<SandboxHost["workflow"]>[0],
    args: unknown,
    nested: boolean,
    at: { strands: ClaudeCodeStrands; strand: number },
  ): Promise<unknown> {
    if (nested) throw new AgentCallError("workflow() nests one level only");
    const found = await readWorkflowRef(ref, this.#options.places);
    const child = await checkWorkflowScript(found.source);
    const { name } = child.meta;
    const host = {
      ...this.#hostFor({ phase: undefined, workflow: name }, true, at.strands),
      log: (message: string) => this.#log(`[${name}] ${message}`),
    };
    const script = { body: child.body, filename: found.file, args, budgetTotal: this.#budgetTotal };
    this.#log(`▸ running dynamic workflow ${name}`);
    try {
      const result = await this.#sandbox.run({ ...script, nested: true, host, strand: at.strand });
      this.#log(`▸ ${name} done`);
      return result;
    } catch (error) {
      this.#log(`▸ ${name} failed: ${(error as Error).message}`);
      throw error;
    }
  }

  /** agent(): the call checked, then replayed from the record or run as a task; throws what agent() throws. */
  async #agent(scope: CallScope, prompt: unknown, raw: unknown, claudeCodeKeyOf: (prompt: string) => string): Promise<unknown> {
    const call = this.#callOf(scope, prompt, raw, claudeCodeKeyOf);
    // Both are asked, so that each counts this call's occurrence; the record's result first (a continuation's own).
    const fromClaudeCode = this.#claudeCodeReplay.take(call);
    const earlier = this.#replay.take(call) ?? fromClaudeCode;
    this.#emit({ type: "agent_started", call, replayed: earlier !== undefined });
    if (earlier !== undefined) {
      this.#spent += earlier.output_tokens ?? 0;
      this.#emit({
        type: "agent_ended",
        call,
        status: "succeeded",
        value: earlier.value ?? null,
        result: undefined,
        replayed: true,
        recorded: earlier,
      });
      return earlier.value ?? null;
    }
    const result = await this.#runTask(call);
    const charge = this.#options.chargeOf?.(call, result) ?? { outputTokens: result.usage.outputTokens, costUsd: result.costUsd };
    this.#spent += charge.outputTokens;
    this.#spentUsd += charge.costUsd;
    let value: unknown;
    try {
      value = agentValue(result, call.options);
    } catch (error) {
      this.#emit({ type: "agent_ended", call, status: "failed", value: null, result, replayed: false });
      throw error;
    }
    this.#emit({ type: "agent_ended", call, status: result.status, value, result, replayed: false });
    // The CLI's runtime logs each agent that failed (its agent() gives null).
    if (result.status === "failed") this.#log(`[${call.label}] failed: ${result.error?.message ?? "the agent failed"}`);
    return value;
  }

  /** The call agent() was asked for, numbered, once its arguments and the run's limits and budgets allow it. */
  #callOf(scope: CallScope, prompt: unknown, raw: unknown, claudeCodeKeyOf: (prompt: string) => string): AgentCall {
    if (typeof prompt !== "string") throw new AgentCallError("agent() takes a prompt: a string (a number is its text)");
    const parsed = AgentOptionsSchema.safeParse(raw ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new AgentCallError(`agent(): opts${issue.path.length > 0 ? `.${issue.path.join(".")}` : ""}: ${issue.message}`);
    }
    const options = parsed.data;
    const problem = options.schema && schemaProblem(options.schema);
    if (problem) throw new AgentCallError(problem);
    if (this.#calls >= this.#maxAgents) {
      throw new WorkflowLimitError(
        "agents",
        `agent(): this run has started its ${this.#maxAgents} agents, the most it may (raise it with --max-agents)`,
      );
    }
    if (this.#budgetTotal !== null && this.#spent >= this.#budgetTotal) throw budgetReached(this.#budgetTotal, this.#spent);
    const overspent = spentBudgetOf(this.#budgetsUsd(options.agentType));
    if (overspent) throw overspent;
    const index = this.#calls++;
    const label = options.label ?? defaultLabel(prompt, index);
    const key = callKey(prompt, options);
    return {
      index,
      label,
      phase: options.phase ?? scope.phase,
      prompt,
      options,
      workflow: scope.workflow,
      key,
      claudeCodeKey: claudeCodeKeyOf(prompt),
    };
  }

  /** The call as a task; a call its runner refuses (an unknown agent type) ends failed, and agent() throws why. */
  async #runTask(call: AgentCall): Promise<TaskResult> {
    try {
      return await this.#options.agents.run(call, framePrompt(call.prompt), this.#signal);
    } catch (error) {
      const refusal = { code: (error as { code?: string }).code ?? "WORKFLOW_AGENT_REFUSED", message: (error as Error).message };
      this.#emit({ type: "agent_ended", call, status: "failed", value: null, result: undefined, replayed: false, error: refusal });
      throw error;
    }
  }
}
