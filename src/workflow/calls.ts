/**
 * One `agent()` call as the run records it, and the positional replay of a
 * resumed run: calls replay from the earlier record, by position, up to the
 * first one that changed, failed or never started; from there on they run.
 * A call that had started but not ended (the run was stopped under it) runs
 * again without ending the replay, so finished calls after it still replay.
 */
import { z } from "zod";
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
  effort: z.enum(["low", "medium", "high", "xhigh", "max"]).optional().catch(undefined),
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
});
export type RecordedCall = z.infer<typeof RecordedCallSchema>;

/** An agent() call's label when the script gives none, as the CLI makes it: its prompt's first 60 characters on one line (`agent-N` for an empty prompt). */
export function defaultLabel(prompt: string, index: number): string {
  return oneLine(prompt.slice(0, 60)) || `agent-${index + 1}`;
}

export function callKey(prompt: string, options: AgentOptions): string {
  return stableKey({ prompt, options });
}

/** Decides, call by call, whether a resumed run replays a call from the earlier record. */
export class CallReplay {
  readonly #earlier: ReadonlyMap<number, RecordedCall>;
  #replaying: boolean;

  constructor(earlier: readonly RecordedCall[] = []) {
    this.#earlier = new Map(earlier.map((call) => [call.index, call]));
    this.#replaying = earlier.length > 0;
  }

  /** The earlier call to replay for this one, or undefined when it runs live. */
  take(call: AgentCall): RecordedCall | undefined {
    if (!this.#replaying) return undefined;
    const earlier = this.#earlier.get(call.index);
    if (earlier?.key === call.key && earlier.status === "running") return undefined;
    if (earlier === undefined || earlier.key !== call.key || earlier.status !== "succeeded") {
      this.#replaying = false;
      return undefined;
    }
    return earlier;
  }
}
