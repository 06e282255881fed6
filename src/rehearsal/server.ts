// A scripted Anthropic Messages API on loopback that the real claude CLI talks to instead of the model.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { apiErrorBody, apiErrorHeaders, type ErrorAnswer, isErrorAnswer } from "./api-error.ts";
import type { Divergence } from "./divergence.ts";
import { type CacheLookup, type CacheUsage, PromptCache } from "./prompt-cache.ts";
import { estimateTokens } from "./reply.ts";
import { readJsonObject, routeOf, scriptOf } from "./routing.ts";
import type { RehearsalScriptInput, RehearsalScriptsInput } from "./script.ts";
import { type RehearsalOutcome, type Ruling, type ScriptedReply, ScriptRules } from "./scripting.ts";
import { classifyRequest } from "./side-requests.ts";
import { type MessageMeta, messageJson, sseFrames } from "./sse.ts";
import type { RequestMessage } from "./template.ts";

/**
 * A scripted Anthropic Messages API on loopback that the real claude CLI
 * talks to instead of the model. routing.ts reads what a request asks for;
 * the scripting rules (scripting.ts) say what the model answers; the server
 * keeps the requests, and sends the answers as the API would.
 *
 * Prompt caching is simulated (prompt-cache.ts) across all scripts, as one
 * account's cache: usage reports cache writes and reads as the API would.
 */

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
  /** A replay's lines of its record that could not be read, named: warnings, and named again by each divergence. */
  unreadable?: readonly string[];
  /**
   * Told of each request for a turn of a conversation (not a side request) before it is answered: `name` is
   * whose conversation it is (a task's, a round's, …; "<name>:subagent" for a subagent's), `step` the position
   * of the reply it asks for. "hold": it gets no answer (its process is being ended: a replay's stop).
   */
  onTurn?: (turn: { name: string; step: number }) => "hold" | undefined;
}

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
  /** The id of the message that answers it (the assistant messages of the reply carry it); undefined when answered with an error. */
  messageId: string | undefined;
}

/** A request the server answers with a message, and the cache lookup that message reports. */
interface Accepted {
  record: RecordedRequest;
  cache: CacheLookup;
  meta: MessageMeta;
}

const DEFAULT_MAX_BODY = 64 * 1024 * 1024;
const DEFAULT_KEEP_REQUESTS = 1_000;

function flattenSystem(system: unknown): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return system
    .map((block: { text?: unknown }) => (typeof block?.text === "string" ? block.text : ""))
    .filter((text) => text !== "")
    .join("\n");
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
  readonly #rules: ScriptRules;
  #inFlight = 0;
  #peakInFlight = 0;
  readonly #cache = new PromptCache();
  /** Process token → the script it plays now. */
  readonly #bindings = new Map<string, string>();
  readonly #sockets = new Set<Socket>();
  readonly #server: http.Server;
  readonly #maxBody: number;
  readonly #onTurn: RehearsalServerOptions["onTurn"];
  #counter = 0;
  #url = "";

  private constructor(
    scripts: RehearsalScriptsInput,
    maxBody: number,
    keepRequests: number,
    replay: Pick<RehearsalServerOptions, "replay" | "unreadable" | "onTurn">,
  ) {
    this.#rules = new ScriptRules(scripts, replay.replay ?? false, replay.unreadable);
    this.#onTurn = replay.onTurn;
    this.#maxBody = maxBody;
    this.#keepRequests = keepRequests;
    this.#server = http.createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) this.#sendError(res, { status: 500, message: `rehearsal server failed: ${String(error)}` });
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
      options,
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
    return this.#rules.warnings;
  }

  /** A replay's divergences, each once (the CLI resends a failed request), in the order found. */
  get divergences(): readonly Divergence[] {
    return this.#rules.divergences;
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
    this.#rules.set(name, steps);
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

  #sendError(res: http.ServerResponse, { status, message, headers }: ErrorAnswer): void {
    const requestId = this.#nextId("req");
    res.writeHead(status, { ...apiErrorHeaders(status, requestId), ...headers });
    res.end(JSON.stringify(apiErrorBody(status, message, requestId)));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const route = routeOf(req.method, req.url);
    if (isErrorAnswer(route)) return this.#sendError(res, route);
    if (!route.countTokens) this.#countInFlight(res);
    const read = await readJsonObject(req, this.#maxBody);
    if (isErrorAnswer(read)) return this.#sendError(res, read);
    if (route.countTokens) return this.#sendJson(res, 200, { input_tokens: estimateTokens(read.bytes) });
    const script = scriptOf(route, (process) => this.#bindings.get(process));
    if (typeof script !== "string") return this.#sendError(res, script);
    await this.#answer(req, res, script, read.body, read.bytes);
  }

  /** A messages request is in flight from its arrival until its response closes. */
  #countInFlight(res: http.ServerResponse): void {
    this.#inFlight += 1;
    this.#peakInFlight = Math.max(this.#peakInFlight, this.#inFlight);
    res.on("close", () => (this.#inFlight -= 1));
  }

  /** A model turn of `script`: recorded, then answered as the scripting rules say, after the step's delay. */
  async #answer(req: http.IncomingMessage, res: http.ServerResponse, script: string, body: Record<string, unknown>, bytes: number): Promise<void> {
    const messages = Array.isArray(body.messages) ? (body.messages as RequestMessage[]) : [];
    const agentId = header(req, "x-claude-code-agent-id");
    const sessionId = header(req, "x-claude-code-session-id");
    const request = { script, agentId, sessionId, messages, side: classifyRequest(body).side };
    const aborted = new AbortController();
    res.on("close", () => aborted.abort());
    // Held until its process has gone: no answer, no divergence.
    if (!request.side && this.#onTurn?.(this.#rules.turnOf(request)) === "hold") {
      if (!aborted.signal.aborted) await new Promise((resolve) => aborted.signal.addEventListener("abort", resolve, { once: true }));
      return;
    }
    const ruling = this.#rules.rule(request);
    const record = recordOf(req, body, messages, ruling);
    this.#keep(record);
    const id = this.#nextId("msg");
    const { answer } = ruling;
    if ("error" in answer) {
      if (!(await this.#pause(answer.delayMs, aborted.signal))) return;
      return this.#sendError(res, answer.error);
    }
    // Looked up when the request is accepted, before any scripted delay: the cache as the request finds it.
    const cache = this.#cache.lookup(body, estimateTokens(bytes));
    record.usage = cache.usage;
    record.messageId = id;
    const accepted: Accepted = { record, cache, meta: { id, model: record.model, usage: cache.usage } };
    if (!(await this.#pause(answer.delayMs, aborted.signal))) return;
    await this.#reply(res, accepted, answer.reply, aborted.signal);
  }

  #keep(record: RecordedRequest): void {
    this.#requests.push(record);
    if (this.#requests.length > this.#keepRequests) this.#requests.shift();
    this.#outcomes[record.outcome]++;
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
  #begin(accepted: Accepted): void {
    if (accepted.record.respondedAt !== undefined) return;
    accepted.record.respondedAt = Date.now();
    accepted.cache.begin();
  }

  /** Sends the scripted model's message, as JSON or as a stream of events (its deltas `chunkDelayMs` apart). */
  async #reply(res: http.ServerResponse, accepted: Accepted, scripted: ScriptedReply, signal: AbortSignal): Promise<void> {
    const { meta } = accepted;
    const reply = scripted.build(() => this.#nextId("toolu"));
    const headers = { "request-id": meta.id, ...scripted.headers() };
    const chunkDelay = scripted.chunkDelayMs;
    if (!accepted.record.stream) {
      this.#begin(accepted);
      return this.#sendJson(res, 200, messageJson(reply, meta), headers);
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
    for (const frame of sseFrames(reply, meta, chunkDelay !== undefined)) {
      if (frame.delta && chunkDelay && !(await this.#pause(chunkDelay, signal))) return;
      if (res.destroyed) return;
      this.#begin(accepted);
      await write(res, frame.data);
    }
    res.end();
  }
}

/** The record of a messages request: what it asked, and how the rules answered it. */
function recordOf(req: http.IncomingMessage, body: Record<string, unknown>, messages: RequestMessage[], ruling: Ruling): RecordedRequest {
  return {
    script: ruling.script,
    step: ruling.step,
    outcome: ruling.outcome,
    model: typeof body.model === "string" ? body.model : "",
    system: flattenSystem(body.system),
    tools: Array.isArray(body.tools) ? body.tools.map((tool: { name?: unknown }) => String(tool?.name)) : [],
    messages,
    stream: body.stream === true,
    maxTokens: typeof body.max_tokens === "number" ? body.max_tokens : undefined,
    outputConfig: objectOrUndefined(body.output_config),
    thinking: objectOrUndefined(body.thinking),
    sessionId: header(req, "x-claude-code-session-id"),
    agentId: header(req, "x-claude-code-agent-id"),
    betas: (header(req, "anthropic-beta") ?? "").split(",").filter((beta) => beta !== ""),
    at: Date.now(),
    usage: undefined,
    respondedAt: undefined,
    messageId: undefined,
  };
}

export function startRehearsalServer(options: RehearsalServerOptions = {}): Promise<RehearsalServer> {
  return RehearsalServer.start(options);
}

function objectOrUndefined(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
