// The rehearsal's scripting rules: which script and step a model request plays, and what the scripted model answers.
import type { ErrorAnswer } from "./api-error.ts";
import { type Divergence, divergenceOf } from "./divergence.ts";
import { planWindowHeaders, planWindowStatus } from "./plan-window.ts";
import { buildReply, type Reply, textReply } from "./reply.ts";
import {
  parseScript,
  parseScripts,
  type RehearsalScript,
  type RehearsalScriptInput,
  type RehearsalScriptsInput,
  type RehearsalStep,
} from "./script.ts";
import { type RequestMessage, templateContext } from "./template.ts";

/**
 * A conversation's position in its script is the number of the model's
 * replies in the request, so the rules keep no per-conversation state:
 * retries replay the same step, a second user turn continues the script, and
 * many workers can share one script.
 *
 * Subagents (the Agent/Task tool) call the same base URL with their own
 * fresh conversation; they play the script "<name>:subagent" instead, so a
 * script that spawns an agent does not make the agent spawn one again.
 */
export const SUBAGENT_SCRIPT_SUFFIX = ":subagent";

/** The script of a name's n-th recorded conversation in a replay: "name", then "name (2)", "name (3)", …. */
export function alternateName(name: string, n: number): string {
  return n === 1 ? name : `${name} (${n})`;
}

/** How the server answered a messages request. */
export type RehearsalOutcome = "played" | "failed" | "exhausted" | "side" | "unknown_script" | "unscripted_subagent";

/** A model request, as the rules read it. */
export interface ScriptedRequest {
  /** The script its URL names. */
  script: string;
  /** Set on subagent calls (x-claude-code-agent-id). */
  agentId: string | undefined;
  /** The CLI's session id (x-claude-code-session-id). */
  sessionId: string | undefined;
  messages: RequestMessage[];
  /** One of the CLI's own side requests (side-requests.ts), not a turn of a conversation. */
  side: boolean;
}

/** A message from the scripted model, built when it is sent (its tool ids and plan-window headers are of that moment). */
export interface ScriptedReply {
  build: (nextToolId: () => string) => Reply;
  headers: () => Record<string, string>;
  chunkDelayMs?: number | undefined;
}

/** What the server answers, after a scripted delay: an API error or a message. */
export type ScriptedAnswer = ({ error: ErrorAnswer } | { reply: ScriptedReply }) & { delayMs?: number | undefined };

export interface Ruling {
  /** The script played: the URL's, with SUBAGENT_SCRIPT_SUFFIX for subagent calls (in a replay, the recorded conversation claimed). */
  script: string;
  /** The script step this request asked for (its model reply count); null for side requests. */
  step: number | null;
  outcome: RehearsalOutcome;
  answer: ScriptedAnswer;
}

type Answered = Pick<Ruling, "outcome" | "answer">;

/** What the CLI puts in a conversation where a turn got no reply (an interrupt, a resumed session): "No response requested.". */
const NO_RESPONSE = "No response requested.";

/**
 * Whether a message of the request is a reply of the model, which moves the
 * script on: not the placeholder the CLI writes for a turn that got none, so
 * a session interrupted before its first reply and then resumed plays step 0
 * again, as a real model would answer the prompt it never answered.
 */
function isModelReply(message: RequestMessage | undefined): boolean {
  if (message?.role !== "assistant") return false;
  const content = message.content as unknown;
  const only = Array.isArray(content) && content.length === 1 ? (content[0] as { type?: unknown; text?: unknown }) : undefined;
  const text = typeof content === "string" ? content : only?.type === "text" ? only.text : undefined;
  return text !== NO_RESPONSE;
}

const text = (message: string): ScriptedAnswer => ({ reply: { build: () => textReply(message), headers: () => ({}) } });

/** The scripts by name, and what each request of them gets: a step played, a scripted failure, or an error that says what is missing. */
export class ScriptRules {
  readonly #scripts = new Map<string, RehearsalScript>();
  /** Attempts seen per script and step, for `fail: { times }` and a rejected plan window's `times`. */
  readonly #attempts = new Map<string, number>();
  readonly #replay: boolean;
  readonly #divergences = new Map<string, Divergence>();
  /** A replay: the recorded conversation each conversation of the replay plays (script, session and agent → script). */
  readonly #claims = new Map<string, string>();
  readonly #warnings: string[] = [];
  /** A replay's lines of its record that could not be read: each divergence names them, since a reply may have been on one. */
  readonly #unreadable: string;

  /**
   * `replay`: a request its script has no step for, or whose step expects other input, has diverged from the recorded run.
   * `unreadable`: the record's lines a replay could not read (warnings, and named by every divergence).
   */
  constructor(scripts: RehearsalScriptsInput, replay: boolean, unreadable: readonly string[] = []) {
    for (const [name, steps] of Object.entries(parseScripts(scripts))) this.#scripts.set(name, steps);
    this.#replay = replay;
    this.#warnings.push(...unreadable.map((line) => `${line}; the replay serves the replies of the other lines`));
    this.#unreadable = unreadable.length === 0 ? "" : ` (the record has lines that could not be read: ${unreadable.join("; ")})`;
  }

  /** Problems a test should see (each once): exhausted scripts, unknown script names, unscripted subagents. */
  get warnings(): readonly string[] {
    return this.#warnings;
  }

  /** A replay's divergences, each once (the CLI resends a failed request), in the order found. */
  get divergences(): readonly Divergence[] {
    return [...this.#divergences.values()];
  }

  /** Adds or replaces a script, and forgets its fail attempts. */
  set(name: string, steps: RehearsalScriptInput): void {
    this.#scripts.set(name, parseScript(name, steps));
    for (const key of this.#attempts.keys()) if (key.startsWith(`${name}\0`)) this.#attempts.delete(key);
  }

  /** The conversation a request is a turn of (its URL's script; "<script>:subagent" for a subagent's) and its step there. */
  turnOf(request: ScriptedRequest): { name: string; step: number } {
    const name = request.agentId === undefined ? request.script : `${request.script}${SUBAGENT_SCRIPT_SUFFIX}`;
    return { name, step: request.messages.filter(isModelReply).length };
  }

  /** The script and step a request plays, and the answer it gets. */
  rule(request: ScriptedRequest): Ruling {
    const { side, messages } = request;
    const { name: named, step: position } = this.turnOf(request);
    const script = this.#replay && !side ? this.#claim(named, `${request.sessionId}\0${request.agentId}`, position, messages) : named;
    const played = { script, step: side ? null : position };
    if (side) return { ...played, outcome: "side", answer: text("rehearsal") };
    const steps = this.#scripts.get(script);
    const step = steps?.[position];
    const outcome = !this.#scripts.has(request.script)
      ? "unknown_script"
      : steps === undefined
        ? "unscripted_subagent"
        : step === undefined
          ? "exhausted"
          : "played";
    const found = this.#replay ? divergenceOf(script, position, steps !== undefined, step, messages) : undefined;
    const divergence = found && { ...found, message: `${found.message}${this.#unreadable}` };
    if (divergence !== undefined) {
      this.#divergences.set(`${script}\0${position}`, divergence);
      return { ...played, outcome, answer: { error: { status: 400, message: divergence.message } } };
    }
    if (outcome === "played") return { ...played, ...this.#play(script, position, step!, messages) };
    return { ...played, outcome, answer: this.#unplayable(outcome, request.script, script, position, steps) };
  }

  /** The answer to a request whose step does not exist: its script, its subagent script or the step is missing. */
  #unplayable(
    outcome: "unknown_script" | "unscripted_subagent" | "exhausted",
    named: string,
    script: string,
    position: number,
    steps: RehearsalScript | undefined,
  ): ScriptedAnswer {
    if (outcome === "unknown_script") {
      const known = [...this.#scripts.keys()].map((name) => `"${name}"`).join(", ") || "none";
      return { error: { status: 400, message: this.#warn(`rehearsal: no script named "${named}" (known scripts: ${known})`) } };
    }
    if (outcome === "unscripted_subagent") {
      return text(this.#warn(`rehearsal: a subagent of script "${named}" called the model, and there is no script "${script}"`));
    }
    // Not an answer the model could give: the turn fails with this message, as on an API error.
    const message = this.#warn(`rehearsal: script "${script}" has no step ${position} (it has ${steps!.length} steps, numbered from 0)`);
    return { error: { status: 400, message } };
  }

  /** A step played: its scripted failure while its attempts last, a rejected plan window's 429, else its reply. */
  #play(script: string, position: number, step: RehearsalStep, messages: readonly RequestMessage[]): Answered {
    const key = `${script}\0${position}`;
    const { fail, plan_window: window } = step;
    const attempt = fail ? this.#nextAttempt(key) : 0;
    if (fail && (fail.times === undefined || attempt <= fail.times)) {
      const message = fail.message ?? `rehearsal: scripted ${fail.status} (attempt ${attempt}${fail.times ? ` of ${fail.times}` : ""})`;
      return { outcome: "failed", answer: { error: { status: fail.status, message }, delayMs: step.delay_ms } };
    }
    if (window && planWindowStatus(window) === "rejected" && this.#nextAttempt(`${key}\0plan`) <= window.times) {
      const message = "rehearsal: the plan's usage limit is reached";
      return { outcome: "failed", answer: { error: { status: 429, message, headers: planWindowHeaders(window) } } };
    }
    const reply: ScriptedReply = {
      build: (nextToolId) => buildReply(step, templateContext(messages, position, script), nextToolId),
      headers: () => (window && planWindowStatus(window) !== "rejected" ? planWindowHeaders(window) : {}),
      chunkDelayMs: step.chunk_delay_ms,
    };
    return { outcome: "played", answer: { reply, delayMs: step.delay_ms } };
  }

  #nextAttempt(key: string): number {
    const attempt = (this.#attempts.get(key) ?? 0) + 1;
    this.#attempts.set(key, attempt);
    return attempt;
  }

  /**
   * The recorded conversation a replayed one plays. A name may have several
   * ("name", "name (2)", …: a task's attempts, the children a task spawned,
   * a session's subagents); each conversation of the replay, told apart by
   * the CLI's session id (and agent id), takes the first not yet taken whose
   * turn expects what it brings, else the first not yet taken, and keeps it.
   */
  #claim(name: string, conversation: string, position: number, messages: readonly RequestMessage[]): string {
    const key = `${name}\0${conversation}`;
    const claimed = this.#claims.get(key);
    if (claimed !== undefined) return claimed;
    const taken = new Set(this.#claims.values());
    const free: string[] = [];
    let recorded = 0;
    while (this.#scripts.has(alternateName(name, recorded + 1))) {
      recorded++;
      if (!taken.has(alternateName(name, recorded))) free.push(alternateName(name, recorded));
    }
    const fits = (candidate: string) => divergenceOf(candidate, position, true, this.#scripts.get(candidate)?.[position], messages) === undefined;
    // None free: one more than the record has, which diverges as a conversation it never had (a name without any stays as it is).
    const chosen = free.find(fits) ?? free[0] ?? (recorded > 0 ? alternateName(name, recorded + 1) : name);
    this.#claims.set(key, chosen);
    return chosen;
  }

  /** Once per distinct message: the CLI resends some failed requests. Returns the message. */
  #warn(message: string): string {
    if (!this.#warnings.includes(message)) this.#warnings.push(message);
    return message;
  }
}
