// The dashboard's HTTP routes: the page and its files, and under /api/ the runs' data behind the token.
import type http from "node:http";
import { CadreError } from "../errors.ts";
import { BodyTooLargeError, readBody } from "../util/read-body.ts";
import { readAsset } from "./assets.ts";
import { AnswerRequestSchema, type DashboardSource, type RunFeed, SteerRequestSchema, toWire, type WireSnapshot } from "./feed.ts";
import { Coalesced, EventStreamResponse, lastEventId } from "./sse.ts";

/**
 * The dashboard's HTTP interface, behind a server that has already checked
 * Host and Origin. The page and its files are public (they hold no data);
 * everything under /api/ needs the token.
 *
 *   GET  /                                      the page
 *   GET  /assets/<file>                         its scripts and styles
 *   GET  /api/runs                              the runs to choose from (JSON)
 *   GET  /api/first-paint.js?run=<id>           the runs and a snapshot of the one shown, as a script (see below)
 *   GET  /api/runs/<id>/state                   the run's state: a snapshot, then the changes, coalesced (SSE)
 *   GET  /api/runs/<id>/conversation?row=<key>  a row's conversation, entry by entry (SSE)
 *   POST /api/runs/<id>/answer                  answers a permission request
 *   POST /api/runs/<id>/steer                   messages, interrupts or stops a running task
 */

/** Updates go out at most this often (four a second): a burst of events becomes one update. */
const STATE_INTERVAL_MS = 250;
const MAX_BODY_BYTES = 64 * 1024;
/** The global the page registers before it loads the first-paint script; the script calls it with what it holds. */
const FIRST_PAINT_CALLBACK = "cadreFirstPaint";

/** What every response carries: no framing, no sniffing, no referrer, only the page's own scripts. */
const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
};

/** Answers a request; `authorized` says whether it carries the token. */
export type DashboardHandler = (req: http.IncomingMessage, res: http.ServerResponse, authorized: boolean) => Promise<void>;

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

function refuse(res: http.ServerResponse, status: number, message: string): void {
  send(res, status, { error: message });
}

export function dashboardHandler(source: DashboardSource): DashboardHandler {
  return async (req, res, authorized) => {
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname;
    if (req.method === "GET" && (path === "/" || path.startsWith("/assets/"))) {
      const asset = await readAsset(path === "/" ? "index.html" : path.slice("/assets/".length));
      if (!asset) return refuse(res, 404, `no such file: ${path}`);
      res.writeHead(200, { ...SECURITY_HEADERS, "content-type": asset.type, "cache-control": "no-cache" });
      return void res.end(asset.body);
    }
    const api = /^\/api\/runs(?:\/([^/]+)\/(state|conversation|answer|steer))?$/.exec(path);
    const firstPaint = path === "/api/first-paint.js";
    if (!api && !firstPaint) return refuse(res, 404, `no such page: ${path}`);
    if (!authorized) return refuse(res, 401, "this dashboard needs its token: open the address cadre printed, with its #token=…");
    if (!api) return req.method === "GET" ? sendFirstPaint(res, source, url.searchParams.get("run")) : refuse(res, 405, "GET only");
    const [, runId, what] = api;
    if (runId === undefined) return req.method === "GET" ? send(res, 200, { runs: await source.runs() }) : refuse(res, 405, "GET only");
    const feed = await source.run(runId);
    if (!feed) return refuse(res, 404, `no run "${runId}"`);
    if (what === "answer") return req.method === "POST" ? answer(req, res, feed) : refuse(res, 405, "POST only");
    if (what === "steer") return req.method === "POST" ? steer(req, res, feed) : refuse(res, 405, "POST only");
    if (req.method !== "GET") return refuse(res, 405, "GET only");
    if (what === "state") return streamState(req, res, feed);
    return streamConversation(req, res, feed, url.searchParams.get("row") ?? "");
  };
}

/** The whole state of a run as it goes out: the first event of its state stream, and the first paint. */
function wholeState(feed: RunFeed): WireSnapshot {
  return toWire(feed.snapshot(Date.now()));
}

/**
 * What the page shows first, as a classic script that hands it to the page's
 * callback: the runs, the one shown (`run` if there is such a run, else the
 * first) and its whole state. A script the page inserts while it loads holds
 * back the page's load event until it has run, where an EventSource or a
 * fetch would not: so a page (or a screenshot) that waits for `load` sees the
 * run, not an empty table. The state stream follows with the same state and
 * the changes; the token guards this as it guards the rest of /api/.
 */
async function sendFirstPaint(res: http.ServerResponse, source: DashboardSource, wanted: string | null): Promise<void> {
  const runs = await source.runs();
  const run = runs.find((listed) => listed.id === wanted) ?? runs[0];
  const feed = run && (await source.run(run.id));
  const held = { runs, runId: run?.id ?? null, state: feed ? wholeState(feed) : null };
  res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/javascript; charset=utf-8", "cache-control": "no-store" });
  res.end(`${FIRST_PAINT_CALLBACK}(${JSON.stringify(held)});\n`);
}

/**
 * A run's state: a whole snapshot ("state"), then at most one update per
 * interval: the rows that changed since the last one ("patch"), or a whole
 * snapshot again when rows came or went.
 */
function streamState(req: http.IncomingMessage, res: http.ServerResponse, feed: RunFeed): void {
  const stream = new EventStreamResponse(req, res);
  let sent = { seq: 0, rows: 0 };
  const update = () => {
    const now = Date.now();
    const patch = sent.rows > 0 ? feed.changedSince?.(now, sent.seq, sent.rows) : undefined;
    if (patch) {
      stream.send("patch", toWire(patch));
      sent = { seq: patch.seq, rows: sent.rows };
      return;
    }
    const state = wholeState(feed);
    stream.send("state", state);
    sent = { seq: state.seq, rows: state.rows.length };
  };
  const coalesced = new Coalesced(update, STATE_INTERVAL_MS);
  stream.onClose(feed.onChange(() => coalesced.changed()));
  stream.onClose(() => coalesced.close());
  update();
}

async function streamConversation(req: http.IncomingMessage, res: http.ServerResponse, feed: RunFeed, row: string): Promise<void> {
  const conversation = await feed.conversation(row);
  if (!conversation) return refuse(res, 404, `no conversation for "${row}"`);
  const stream = new EventStreamResponse(req, res);
  const after = lastEventId(req);
  for (const entry of conversation.entries) if (entry.seq > after) stream.send("entry", entry, entry.seq);
  // After "end" the stream closes; the page closes its EventSource on "end", so it does not reconnect.
  const end = () => {
    stream.send("end", {});
    stream.close();
  };
  if (conversation.ended) return end();
  stream.onClose(
    conversation.on((event) => {
      if (event.type === "entry") stream.send("entry", event.entry, event.entry.seq);
      else end();
    }),
  );
}

/** The request's JSON body, or undefined once a refusal was sent (too large, not JSON). */
async function jsonBody(req: http.IncomingMessage, res: http.ServerResponse): Promise<{ body: unknown } | undefined> {
  try {
    return { body: JSON.parse((await readBody(req, MAX_BODY_BYTES)).toString("utf8")) };
  } catch (error) {
    refuse(res, error instanceof BodyTooLargeError ? 413 : 400, error instanceof BodyTooLargeError ? error.message : "the body is not JSON");
    return undefined;
  }
}

async function steer(req: http.IncomingMessage, res: http.ServerResponse, feed: RunFeed): Promise<void> {
  if (!feed.steer) return refuse(res, 409, "the tasks of this run cannot be reached from the page");
  const read = await jsonBody(req, res);
  if (!read) return;
  const parsed = SteerRequestSchema.safeParse(read.body);
  if (!parsed.success) return refuse(res, 400, `not a message, interrupt or stop: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  try {
    await feed.steer(parsed.data);
  } catch (error) {
    if (error instanceof CadreError) return refuse(res, 409, error.message);
    throw error;
  }
  send(res, 200, { done: parsed.data.action });
}

async function answer(req: http.IncomingMessage, res: http.ServerResponse, feed: RunFeed): Promise<void> {
  if (!feed.answer) return refuse(res, 409, "permission requests of this run cannot be answered from the page");
  const read = await jsonBody(req, res);
  if (!read) return;
  const parsed = AnswerRequestSchema.safeParse(read.body);
  if (!parsed.success) return refuse(res, 400, `not an answer: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  try {
    feed.answer(parsed.data.row, parsed.data.requestId, parsed.data.answer);
  } catch (error) {
    if (error instanceof CadreError) return refuse(res, 409, error.message);
    throw error;
  }
  send(res, 200, { answered: true });
}
