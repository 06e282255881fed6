// Edit a step of a replay: replies that replace recorded ones, or add the turns of a path the recorded run did not take.
import { z } from "zod";
import { type RecordedConversations, type RehearsalScript, type RehearsalStep, RehearsalStepSchema } from "../../rehearsal/index.ts";
import { own } from "../../util/own.ts";
import { parseYamlOrThrow } from "../../util/yaml.ts";
import { ReplayError } from "./errors.ts";

/**
 * An overrides file: session name → turn → the reply to give there, in the
 * rehearsal script's step form (text, tool_use, tool_uses, content):
 *
 *   review#2:
 *     0: { tool_use: { name: StructuredOutput, input: { approved: false, notes: "Once more." } } }
 *
 * A turn is the reply's position in its session's conversation, counted from
 * 0, as a divergence report names it.
 */
export const ReplayOverridesSchema = z.record(
  z.string().min(1),
  z.record(z.string().regex(/^\d+$/, "a turn is a number, from 0"), RehearsalStepSchema),
);
export type ReplayOverrides = z.infer<typeof ReplayOverridesSchema>;

export function parseReplayOverrides(text: string, file: string): ReplayOverrides {
  let data: unknown;
  try {
    data = parseYamlOrThrow(text);
  } catch (cause) {
    throw new ReplayError("REPLAY_OVERRIDES_INVALID", `${file} is not valid YAML or JSON: ${(cause as Error).message}`, { cause });
  }
  const parsed = ReplayOverridesSchema.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "(top level)"}: ${issue.message}`).join("\n");
    throw new ReplayError("REPLAY_OVERRIDES_INVALID", `${file} is not a valid overrides file:\n${issues}`, { cause: parsed.error });
  }
  return parsed.data;
}

/** The session a new round continues: "write#3" continues the conversation of "write#2" when the record has no "write#3". */
function previousRound(name: string, conversations: Record<string, RehearsalScript[]>): RehearsalScript | undefined {
  const round = /^(.+)#(\d+)$/.exec(name);
  if (round === null) return undefined;
  for (let n = Number(round[2]) - 1; n >= 1; n--) {
    const steps = conversations[`${round[1]}#${n}`]?.at(-1);
    if (steps !== undefined) return steps;
  }
  return undefined;
}

/**
 * The scripts with the overrides applied: a replaced reply is served
 * whatever its request carries (an edited path changes what later turns are
 * given, e.g. a prompt filled from an overridden answer); a turn the record
 * lacks is added, after the turns of the session it continues (a fresh
 * session, such as a round of a task in a loop's `fresh:`, overrides turn 0).
 * A name with several conversations (attempts, children) has its first edited.
 */
export function applyOverrides(recorded: RecordedConversations, overrides: ReplayOverrides): RecordedConversations {
  const conversations = { ...recorded.conversations };
  for (const [name, turns] of Object.entries(overrides)) {
    const [first, ...later] = own(conversations, name) ?? [];
    // A session the record lacks starts from the round it may continue, whose turns are its history: nothing to expect of them.
    const steps = first ? [...first] : (previousRound(name, conversations) ?? []).map(({ expect: _, ...step }) => step as RehearsalStep);
    for (const [turn, step] of Object.entries(turns)) {
      const at = Number(turn);
      if (at > steps.length) {
        throw new ReplayError(
          "REPLAY_OVERRIDES_INVALID",
          `overrides: ${name} turn ${at} follows turns the record does not have (it has ${steps.length}); give turns ${steps.length} to ${at - 1} too`,
        );
      }
      steps[at] = step;
    }
    conversations[name] = [steps, ...later];
  }
  return { ...recorded, conversations };
}
