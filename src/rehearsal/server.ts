// A scripted Anthropic Messages API on loopback that the real claude CLI talks to instead of the model.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { BodyTooLargeError, readBody } from "../util/read-body.ts";
import { apiErrorBody, apiErrorHeaders } from "./api-error.ts";
import { type Divergence, divergenceOf } from "./divergence.ts";
import { planWindowHeaders, planWindowStatus } from "./plan-window.ts";
import { type CacheLookup, type CacheUsage, PromptCache } from "./prompt-cache.ts";
import { buildReply, estimateTokens, type Reply, textReply } from "./reply.ts";
import {
  parseScript,
  parseScripts,
  type RehearsalScript,
  type RehearsalScriptInput,
  type RehearsalScriptsInput,
  type RehearsalStep,
} from "./script.ts";
import { classifyRequest } from "./side-requests.ts";
import { type MessageMeta, messageJson, sseFrames } from "./sse.ts";
import { type RequestMessage, templateContext } from "./template.ts";

/**
 * A scripted Anthropic Messages API on loopback that the real claude CLI
 * talks to instead of the model. Each conversation's position in its script
 * is the number of the model's replies in the request, so the server keeps no
 * per-conversation state: retries replay the same step, a second user turn
 * continues the script, and many workers can share one script.
 *
 * Prompt caching is simulated (prompt-cache.ts) across all scripts, as one
 * account's cache: usage reports cache writes and reads as the API would.
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

export interface RehearsalServerOptions {
  /** The scripts by name that workers play (each worker picks one by its base URL); `setScript` adds or replaces one later. */
  scripts?: RehearsalScriptsInput;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: an ephemeral port. */
  port?: number;
  /** Larger request bodies get 413. Default 64 MiB. */
  maxBodyBytes?: number;
  /** How many of the latest requests `requests` keeps (default 1,000): a long run's history stays bounded; `outcomes` counts them all. */
  keepRequests?: number;
  /**
   * Serve a replay: a request its script has no step for, or whose step
   * expects other input (`expect`), has diverged from the recorded run. It
   * gets a 400 error that names the session, the turn, what was expected and
   * what came instead (the CLI fails its turn with it), and is listed in
   * `divergences`. Scripts "name (2)", "name (3)", … are the later recorded
   * conversations of a name, which conversations of the replay claim (#claim).
   */
  replay?: boolean;
}

/** How the server answered a messages request. */
export type RehearsalOutcome = "played" | "failed" | "exhausted" | "side" | "unknown_script" | "unscripted_subagent";

/** One messages request as received; credentials and other headers are never kept. */
export interface RecordedRequest {
  /** The script played: the URL's, with SUBAGENT_SCRIPT_SUFFIX for subagent calls. */
  script: string;
  /** The script step this request asked for (its assistant message count); null for side requests. */
  step: number | null;
  outcome: RehearsalOutcome;
  model: string;
  /** The system prompt flattened to text. */
  system: string;
  /** Names of the tools offered to the model. */
  tools: string[];
  messages: RequestMessage[];
  stream: boolean;
  maxTokens: number | undefined;
  /** The request's output_config (effort, task_budget, format), as sent. */
  outputConfig: Record<string, unknown> | undefined;
  /** The request's thinking setting, as sent. */
  thinking: Record<string, unknown> | undefined;
  /** The CLI's session id (x-claude-code-session-id). */
  sessionId: string | undefined;
  /** Set on subagent calls (x-claude-code-agent-id). */
  agentId: string | undefined;
  /** The API betas the request asked for (the anthropic-beta header, split at commas). */
  betas: string[];
  /** Epoch milliseconds. */
  at: number;
  /** What the request is billed for on the input side; undefined when it was answered with an error. */
  usage: CacheUsage | undefined;
  /** When its response began (message_start), in epoch milliseconds; undefined if it never did. */
  respondedAt: number | undefined;
}

/** A request the server answers with a message, and the cache lookup that message reports. */
interface Answer {
  record: RecordedRequest;
  cache: CacheLookup;
  meta: MessageMeta;
}

const DEFAULT_MAX_BODY = 64 * 1024 * 1024;
const DEFAULT_KEEP_REQUESTS = 1_000;
/** `/s/<script>` names the script; `/p/<process>` plays whatever script that process is bound to now (see bind). */
const ROUTE = /^(?:\/(s|p)\/([^/]+))?\/v1\/messages(\/count_tokens)?\/?$/;

function flattenSystem(system: unknown): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return system
    .map((block: { text?: unknown }) => (typeof block?.text === "string" ? block.text : ""))
    .filter((text) => text !== "")
    .join("\n");
}

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

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Resolves when written, or when the client has gone (then nothing more is sent). */
function write(res: http.ServerResponse, data: string): Promise<void> {
  if (res.write(data)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

export class RehearsalServer {
  readonly #requests: RecordedRequest[] = [];
  readonly #keepRequests: number;
  readonly #outcomes: Record<RehearsalOutcome, number> = { played: 0, failed: 0, exhausted: 0, side: 0, unknown_script: 0, unscripted_subagent: 0 };
  readonly #warnings: string[] = [];
  readonly #replay: boolean;
  readonly #divergences = new Map<string, Divergence>();
  /** A replay: the recorded conversation each conversation of the replay plays (script, session and agent → script). */
  readonly #claims = new Map<string, string>();
  #inFlight = 0;
  #peakInFlight = 0;
  readonly #scripts = new Map<string, RehearsalScript>();
  /** Attempts seen per script and step, for `fail: { times }`. */
  readonly #attempts = new Map<string, number>();
  readonly #cache = new PromptCache();
  /** Process token → the script it plays now. */
  readonly #bindings = new Map<string, string>();
  readonly #sockets = new Set<Socket>();
  readonly #server: http.Server;
  readonly #maxBody: number;
  #counter = 0;
  #url = "";

  private constructor(scripts: RehearsalScriptsInput, maxBody: number, keepRequests: number, replay: boolean) {
    for (const [name, steps] of Object.entries(parseScripts(scripts))) this.#scripts.set(name, steps);
    this.#replay = replay;
    this.#maxBody = maxBody;
    this.#keepRequests = keepRequests;
    this.#server = http.createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) this.#sendError(res, 500, `rehearsal server failed: ${String(error)}`);
        else res.destroy();
      });
    });
    this.#server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
    });
  }

  static async start(options: RehearsalServerOptions = {}): Promise<RehearsalServer> {
    const server = new RehearsalServer(
      options.scripts ?? {},
      options.maxBodyBytes ?? DEFAULT_MAX_BODY,
      options.keepRequests ?? DEFAULT_KEEP_REQUESTS,
      options.replay ?? false,
    );
    const host = options.host ?? "127.0.0.1";
    await new Promise<void>((resolve, reject) => {
      server.#server.once("error", reject);
      server.#server.listen(options.port ?? 0, host, () => {
        server.#server.off("error", reject);
        resolve();
      });
    });
    const { port } = server.#server.address() as AddressInfo;
    server.#url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    return server;
  }

  /** The latest messages requests (see keepRequests), in arrival order. */
  get requests(): readonly RecordedRequest[] {
    return this.#requests;
  }

  /** How many messages requests were answered each way, since the server started. */
  get outcomes(): Readonly<Record<RehearsalOutcome, number>> {
    return this.#outcomes;
  }

  /** Problems a test should see (each once): exhausted scripts, unknown script names, unscripted subagents. */
  get warnings(): readonly string[] {
    return this.#warnings;
  }

  /** A replay's divergences, each once (the CLI resends a failed request), in the order found. */
  get divergences(): readonly Divergence[] {
    return [...this.#divergences.values()];
  }

  /** Messages requests being answered now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Most messages requests that were being answered at once. */
  get peakInFlight(): number {
    return this.#peakInFlight;
  }

  /** The base URL, without a script prefix (script "default"). */
  get url(): string {
    return this.#url;
  }

  /** ANTHROPIC_BASE_URL for a worker that should play script `name`. */
  baseUrlFor(name: string): string {
    return `${this.#url}/s/${encodeURIComponent(name)}`;
  }

  /**
   * ANTHROPIC_BASE_URL for one process whose script is chosen later, and may
   * change: a spare started before anyone asked for it, a process that serves
   * one task after another. `bind` says which script it plays from now on.
   */
  baseUrlForProcess(token: string): string {
    return `${this.#url}/p/${encodeURIComponent(token)}`;
  }

  bind(token: string, script: string): void {
    this.#bindings.set(token, script);
  }

  unbind(token: string): void {
    this.#bindings.delete(token);
  }

  /** Adds or replaces a script, and forgets its fail attempts. */
  setScript(name: string, steps: RehearsalScriptInput): void {
    this.#scripts.set(name, parseScript(name, steps));
    for (const key of this.#attempts.keys()) if (key.startsWith(`${name}\0`)) this.#attempts.delete(key);
  }

  /** Stops listening and cuts open connections (a streaming reply ends mid-way). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  #nextId(prefix: string): string {
    this.#counter += 1;
    return `${prefix}_rehearsal_${String(this.#counter).padStart(6, "0")}`;
  }

  #sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  }

  #sendError(res: http.ServerResponse, status: number, message: string, extra: Record<string, string> = {}): void {
    const requestId = this.#nextId("req");
    res.writeHead(status, { ...apiErrorHeaders(status, requestId), ...extra });
    res.end(JSON.stringify(apiErrorBody(status, message, requestId)));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://rehearsal").pathname;
    const route = ROUTE.exec(path);
    if (req.method !== "POST" || route === null) {
      return this.#sendError(res, 404, `rehearsal server: no route for ${req.method} ${path}; it serves POST [/s/<script>]/v1/messages`);
    }
    const isMessages = route[3] === undefined;
    if (isMessages) {
      this.#inFlight += 1;
      this.#peakInFlight = Math.max(this.#peakInFlight, this.#inFlight);
      res.on("close", () => (this.#inFlight -= 1));
    }

    let raw: Buffer;
    try {
      raw = await readBody(req, this.#maxBody);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        return this.#sendError(res, 413, `request body exceeds ${this.#maxBody} bytes`, { connection: "close" });
      }
      throw error;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
      if (body === null || typeof body !== "object" || Array.isArray(body)) throw new Error("not an object");
    } catch {
      return this.#sendError(res, 400, "request body is not a JSON object");
    }
    const totalTokens = estimateTokens(raw.length);
    if (!isMessages) return this.#sendJson(res, 200, { input_tokens: totalTokens });

    let routeName: string | undefined;
    try {
      routeName = route[2] === undefined ? undefined : decodeURIComponent(route[2]);
    } catch {
      return this.#sendError(res, 400, `rehearsal: the name in ${path} is not valid percent-encoding`);
    }
    // An unbound process plays no script: its model requests fail as an unknown script's do.
    const baseScript = route[1] === "p" ? (this.#bindings.get(routeName!) ?? `(unbound process ${routeName})`) : (routeName ?? "default");
    const agentId = header(req, "x-claude-code-agent-id");
    const messages = Array.isArray(body.messages) ? (body.messages as RequestMessage[]) : [];
    const verdict = classifyRequest(body);
    const position = messages.filter(isModelReply).length;
    const named = agentId === undefined ? baseScript : `${baseScript}${SUBAGENT_SCRIPT_SUFFIX}`;
    const sessionId = header(req, "x-claude-code-session-id");
    const script = this.#replay && !verdict.side ? this.#claim(named, `${sessionId}\0${agentId}`, position, messages) : named;
    const steps = this.#scripts.get(script);
    const step: RehearsalStep | undefined = steps?.[position];
    const outcome: RehearsalOutcome = verdict.side
      ? "side"
      : !this.#scripts.has(baseScript)
        ? "unknown_script"
        : steps === undefined
          ? "unscripted_subagent"
          : step === undefined
            ? "exhausted"
            : "played";
    const record: RecordedRequest = {
      script,
      step: verdict.side ? null : position,
      outcome,
      model: typeof body.model === "string" ? body.model : "",
      system: flattenSystem(body.system),
      tools: Array.isArray(body.tools) ? body.tools.map((tool: { name?: unknown }) => String(tool?.name)) : [],
      messages,
      stream: body.stream === true,
      maxTokens: typeof body.max_tokens === "number" ? body.max_tokens : undefined,
      outputConfig: objectOrUndefined(body.output_config),
      thinking: objectOrUndefined(body.thinking),
      sessionId,
      agentId,
      betas: (header(req, "anthropic-beta") ?? "").split(",").filter((beta) => beta !== ""),
      at: Date.now(),
      usage: undefined,
      respondedAt: undefined,
    };
    this.#requests.push(record);
    if (this.#requests.length > this.#keepRequests) this.#requests.shift();
    this.#outcomes[outcome]++;
    const id = this.#nextId("msg");
    // Looked up when the request is accepted, before any scripted delay: the cache as the request finds it.
    const accept = (): Answer => {
      const cache = this.#cache.lookup(body, totalTokens);
      record.usage = cache.usage;
      return { record, cache, meta: { id, model: record.model, usage: cache.usage } };
    };

    if (outcome === "side") {
      return this.#reply(res, accept(), textReply("rehearsal"), undefined);
    }
    if (this.#replay) {
      const divergence = divergenceOf(script, position, steps !== undefined, step, messages);
      if (divergence !== undefined) {
        this.#divergences.set(`${script}\0${position}`, divergence);
        return this.#sendError(res, 400, divergence.message);
      }
    }
    if (outcome === "unknown_script") {
      const known = [...this.#scripts.keys()].map((name) => `"${name}"`).join(", ") || "none";
      const message = `rehearsal: no script named "${baseScript}" (known scripts: ${known})`;
      this.#warn(message);
      return this.#sendError(res, 400, message);
    }
    if (outcome === "unscripted_subagent") {
      const message = `rehearsal: a subagent of script "${baseScript}" called the model, and there is no script "${script}"`;
      this.#warn(message);
      return this.#reply(res, accept(), textReply(message), undefined);
    }
    if (step === undefined) {
      // Not an answer the model could give: the turn fails with this message, as on an API error.
      const message = `rehearsal: script "${script}" has no step ${position} (it has ${steps!.length} steps, numbered from 0)`;
      this.#warn(message);
      return this.#sendError(res, 400, message);
    }

    const aborted = new AbortController();
    res.on("close", () => aborted.abort());
    if (step.fail) {
      const key = `${script}\0${position}`;
      const attempt = (this.#attempts.get(key) ?? 0) + 1;
      this.#attempts.set(key, attempt);
      if (step.fail.times === undefined || attempt <= step.fail.times) {
        record.outcome = "failed";
        this.#outcomes.played--;
        this.#outcomes.failed++;
        if (!(await this.#pause(step.delay_ms, aborted.signal))) return;
        const message =
          step.fail.message ?? `rehearsal: scripted ${step.fail.status} (attempt ${attempt}${step.fail.times ? ` of ${step.fail.times}` : ""})`;
        return this.#sendError(res, step.fail.status, message);
      }
    }
    const window = step.plan_window;
    if (window && planWindowStatus(window) === "rejected") {
      const key = `${script}\0${position}\0plan`;
      const attempt = (this.#attempts.get(key) ?? 0) + 1;
      this.#attempts.set(key, attempt);
      if (attempt <= window.times) {
        record.outcome = "failed";
        this.#outcomes.played--;
        this.#outcomes.failed++;
        return this.#sendError(res, 429, "rehearsal: the plan's usage limit is reached", planWindowHeaders(window));
      }
    }
    const answer = accept();
    if (!(await this.#pause(step.delay_ms, aborted.signal))) return;
    const reply = buildReply(step, templateContext(messages, position, script), () => this.#nextId("toolu"));
    const headers = window && planWindowStatus(window) !== "rejected" ? planWindowHeaders(window) : {};
    await this.#reply(res, answer, reply, step.chunk_delay_ms, aborted.signal, headers);
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

  /** Once per distinct message: the CLI resends some failed requests. */
  #warn(message: string): void {
    if (!this.#warnings.includes(message)) this.#warnings.push(message);
  }

  /** False when the client went away while waiting. */
  async #pause(ms: number | undefined, signal: AbortSignal): Promise<boolean> {
    if (ms === undefined || ms === 0) return !signal.aborted;
    try {
      await sleep(ms, undefined, { signal });
      return true;
    } catch {
      return false;
    }
  }

  /** The response begins: what it wrote to the cache becomes readable. */
  #begin(answer: Answer): void {
    if (answer.record.respondedAt !== undefined) return;
    answer.record.respondedAt = Date.now();
    answer.cache.begin();
  }

  async #reply(
    res: http.ServerResponse,
    answer: Answer,
    reply: Reply,
    chunkDelay: number | undefined,
    signal?: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<void> {
    const { meta } = answer;
    if (!answer.record.stream) {
      this.#begin(answer);
      return this.#sendJson(res, 200, messageJson(reply, meta), { "request-id": meta.id, ...headers });
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": meta.id, ...headers });
    for (const frame of sseFrames(reply, meta, chunkDelay !== undefined)) {
      if (frame.delta && chunkDelay && signal && !(await this.#pause(chunkDelay, signal))) return;
      if (res.destroyed) return;
      this.#begin(answer);
      await write(res, frame.data);
    }
    res.end();
  }
}

export function startRehearsalServer(options: RehearsalServerOptions = {}): Promise<RehearsalServer> {
  return RehearsalServer.start(options);
}

function objectOrUndefined(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
