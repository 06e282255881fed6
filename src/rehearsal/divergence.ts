// A replay's divergence: a request that asks for a reply the record does not have, found by comparing it with what the record expects.
import { contentText, type Seen, seen } from "../protocol/index.ts";
import type { RehearsalStep } from "./script.ts";
import { type RequestMessage, userText } from "./template.ts";

/**
 * Where and how a replayed session left its record: `script` is the session
 * (a task, round or copy, "peer:<agent>", …), `step` the turn (its position
 * in the conversation, counted from 0, as the record numbers replies).
 */
export interface Divergence {
  script: string;
  step: number;
  /**
   * no_record: the record has no session of that name; no_reply: not this many replies; prompt, tool_result: the model
   * would have been given something else; steering: a recorded message, interrupt or stop was not done again at its
   * step (the run layer's, src/run/replay/steering.ts).
   */
  kind: "no_record" | "no_reply" | "prompt" | "tool_result" | "steering";
  /** What the record has (an excerpt), or what it lacks. */
  expected: string;
  /** What the request carried instead (an excerpt). */
  got: string;
  /** All of it in a sentence: what the session's task fails with, and the replay reports. */
  message: string;
}

/** What a request gave the model since its previous reply: the user's words and the tool results. */
function newInput(messages: readonly RequestMessage[]): { prompt: Seen; toolResults: { id: string; seen: Seen }[] } {
  let last = messages.length - 1;
  while (last >= 0 && messages[last]?.role !== "assistant") last--;
  const since = messages.slice(last + 1).filter((message) => message.role === "user");
  const toolResults = since.flatMap((message) =>
    Array.isArray(message.content)
      ? (message.content as { type?: unknown; tool_use_id?: unknown; content?: unknown }[])
          .filter((block) => block?.type === "tool_result")
          .map((block) => ({ id: String(block.tool_use_id), seen: seen(contentText(block.content)) }))
      : [],
  );
  return {
    prompt: seen(
      since
        .map(userText)
        .filter((text) => text !== "")
        .join("\n"),
    ),
    toolResults,
  };
}

/** What the request carried, for a report: its tool results, else its words. */
function describe(input: ReturnType<typeof newInput>): string {
  if (input.toolResults.length > 0) return input.toolResults.map((result) => `${result.id}: ${result.seen.excerpt}`).join("; ");
  return input.prompt.excerpt === "" ? "(nothing new)" : input.prompt.excerpt;
}

/** The divergence of one request from its recorded step, or undefined when it asks what the record answers. */
export function divergenceOf(
  script: string,
  position: number,
  known: boolean,
  step: RehearsalStep | undefined,
  messages: readonly RequestMessage[],
): Divergence | undefined {
  const found = findDivergence(script, position, known, step, messages);
  return found && { ...found, message: divergenceMessage(found) };
}

function findDivergence(
  script: string,
  position: number,
  known: boolean,
  step: RehearsalStep | undefined,
  messages: readonly RequestMessage[],
): (Omit<Divergence, "message"> & { kind: Exclude<Divergence["kind"], "steering"> }) | undefined {
  const input = newInput(messages);
  const at = { script, step: position };
  if (!known) return { ...at, kind: "no_record", expected: "(no recorded session of this name)", got: describe(input) };
  if (step === undefined) return { ...at, kind: "no_reply", expected: `(no recorded reply ${position})`, got: describe(input) };
  const expect = step.expect;
  if (expect?.prompt !== undefined && input.toolResults.length === 0 && expect.prompt.digest !== input.prompt.digest) {
    return { ...at, kind: "prompt", expected: expect.prompt.excerpt, got: input.prompt.excerpt };
  }
  for (const [index, recorded] of (expect?.tool_results ?? []).entries()) {
    const now = input.toolResults[index];
    if (now === undefined || now.id !== recorded.id || now.seen.digest !== recorded.digest) {
      return {
        ...at,
        kind: "tool_result",
        expected: `${recorded.id}: ${recorded.excerpt}`,
        got: now ? `${now.id}: ${now.seen.excerpt}` : "(no such tool result)",
      };
    }
  }
  const extra = expect?.tool_results === undefined ? undefined : input.toolResults[expect.tool_results.length];
  if (extra !== undefined) return { ...at, kind: "tool_result", expected: "(no further tool result)", got: `${extra.id}: ${extra.seen.excerpt}` };
  return undefined;
}

/** The words a diverged session fails with: they reach its task's error and the replay's report. */
function divergenceMessage(divergence: Omit<Divergence, "message"> & { kind: Exclude<Divergence["kind"], "steering"> }): string {
  const what = {
    no_record: "the record has no session of this name (a path the recorded run did not take: an overrides file can give its replies)",
    no_reply: "the record has no reply for this turn (an overrides file can give it)",
    prompt: "the prompt differs from the recorded one",
    tool_result: "a tool result differs from the recorded one",
  }[divergence.kind];
  return `replay diverged: ${divergence.script}, turn ${divergence.step}: ${what}; expected ${JSON.stringify(divergence.expected)}, got ${JSON.stringify(divergence.got)}`;
}
