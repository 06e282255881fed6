/**
 * One `agent()` call as the run records it, and the replay of a resumed run:
 * a call gives the result an earlier attempt recorded when it asks the same
 * (prompt and options) as a call that succeeded there, and is the same
 * occurrence of that ask (the n-th call asking it), wherever it now stands
 * and whatever failed before it; only calls that failed, changed or never
 * ran ask the model. (Claude Code's runtime replays by position up to the
 * first call that differs, and runs every call after it again.)
 */
import { z } from "zod";
import { EffortLevelSchema } from "../orchestrator/index.ts";
import { stableKey } from "../util/stable-key.ts";

/** Text on one line: runs of whitespace as one space, none at the ends (the CLI's labels). */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/**
 * agent()'s options, as loose as Claude Code's runtime takes them: a label or phase that is not text is its
 * text, a null schema is none, an effort or an isolation it does not know is left out; a cloud agent
 * (`isolation: 'remote'`) is refused, as the CLI refuses it. Other keys pass (both runtimes ignore them).
 */
export const AgentOptionsSchema = z.looseObject({
  label: z.preprocess((value) => (value == null ? undefined : oneLine(String(value))), z.string().optional()),
  phase: z.preprocess((value) => (value == null ? undefined : String(value)), z.string().optional()),
  schema: z.preprocess((value) => value ?? undefined, z.record(z.string(), z.unknown()).optional()),
  model: z.string().optional(),
  effort: EffortLevelSchema.optional().catch(undefined),
  isolation: z.preprocess(
    (value) => (value === "worktree" || value === "remote" ? value : undefined),
    z.literal("worktree", { error: "'remote' (a cloud agent) is not available in cadre" }).optional(),
  ),
  agentType: z.string().optional(),
  /** cadre's option: this call's own dollar budget (its task's budget_usd), a hard limit. */
  budgetUsd: z.number().positive().optional(),
});
export type AgentOptions = z.infer<typeof AgentOptionsSchema>;

/** An agent() call: where it stands in the run's order of calls, and what it asks. */
export interface AgentCall {
  /** 0-based, in the order the script made its calls (nested workflows' included). */
  index: number;
  label: string;
  /** The progress group: opts.phase, else the phase the script last started, else the nested workflow's. */
  phase: string | undefined;
  /** As the script wrote it (the model gets it framed, see frame.ts). */
  prompt: string;
  options: AgentOptions;
  /** The saved workflow a nested call came from. */
  workflow: string | undefined;
  /** Equal for two calls exactly when they ask the same (prompt and options). */
  key: string;
  /** The key Claude Code's journal gives this call (claude-code-keys.ts): what it asks, where it stands in its strand. */
  claudeCodeKey: string;
}

export const CallStatusSchema = z.enum(["running", "succeeded", "failed", "cancelled", "skipped"]);
export type CallStatus = z.infer<typeof CallStatusSchema>;

/** What the record keeps of a call for a later replay. */
export const RecordedCallSchema = z.looseObject({
  index: z.number().int().min(0),
  key: z.string(),
  status: CallStatusSchema,
  /** What agent() returned to the script (text, object or null). */
  value: z.unknown().optional(),
  output_tokens: z.number().optional(),
  /** The record row it was kept as (a Claude Code run's call: its label). */
  name: z.string().optional(),
  /** A call of a Claude Code run (its `wf_…` id), which the run continues; absent for a call of cadre's record. */
  claude_code_run: z.string().optional(),
});
export type RecordedCall = z.infer<typeof RecordedCallSchema>;

/** An agent() call's label when the script gives none, as the CLI makes it: its prompt's first 60 characters on one line (`agent-N` for an empty prompt). */
export function defaultLabel(prompt: string, index: number): string {
  return oneLine(prompt.slice(0, 60)) || `agent-${index + 1}`;
}

export function callKey(prompt: string, options: AgentOptions): string {
  return stableKey({ prompt, options });
}

/**
 * Which key of a call a record's keys are: cadre's (what it asks), or Claude Code's journal's (what it asks and where it
 * stands in its strand, so unique in a run: the occurrence is always the first).
 */
export type ReplayKey = "key" | "claudeCodeKey";

/** Decides, call by call, whether a resumed run gives a call the result an earlier attempt recorded (see above). */
export class CallReplay {
  /** By what a call asks: the earlier attempt's calls that asked it, in the order they were made. */
  readonly #earlier = new Map<string, RecordedCall[]>();
  /** By what a call asks: how many calls of this attempt have asked it. */
  readonly #asked = new Map<string, number>();
  readonly #by: ReplayKey;

  constructor(earlier: readonly RecordedCall[] = [], by: ReplayKey = "key") {
    this.#by = by;
    for (const call of [...earlier].sort((a, b) => a.index - b.index)) this.#earlier.set(call.key, [...(this.#earlier.get(call.key) ?? []), call]);
  }

  /** The earlier call to replay for this one, or undefined when it runs. */
  take(call: AgentCall): RecordedCall | undefined {
    const key = call[this.#by];
    const occurrence = this.#asked.get(key) ?? 0;
    this.#asked.set(key, occurrence + 1);
    const earlier = this.#earlier.get(key)?.[occurrence];
    return earlier?.status === "succeeded" ? earlier : undefined;
  }
}
