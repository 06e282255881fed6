// The rehearsal server's routes: what a request asks for (a model turn or a token count), which script its URL names, its JSON body.
import type http from "node:http";
import { BodyTooLargeError, readBody } from "../util/read-body.ts";
import type { ErrorAnswer } from "./api-error.ts";

/** `/s/<script>` names the script; `/p/<process>` plays whatever script that process is bound to now (see bind). */
const ROUTE = /^(?:\/(s|p)\/([^/]+))?\/v1\/messages(\/count_tokens)?\/?$/;

export interface Route {
  path: string;
  /** `…/v1/messages/count_tokens`: a token count, not a model turn. */
  countTokens: boolean;
  /** `s`: the script by name; `p`: the script a process is bound to; undefined: script "default". */
  prefix: "s" | "p" | undefined;
  /** The name after the prefix, as sent (percent-encoded). */
  encodedName: string | undefined;
}

/** The route of a request; a 404 for anything but POST [/s/<script>|/p/<process>]/v1/messages[/count_tokens]. */
export function routeOf(method: string | undefined, url: string | undefined): Route | ErrorAnswer {
  const path = new URL(url ?? "/", "http://rehearsal").pathname;
  const match = ROUTE.exec(path);
  if (method !== "POST" || match === null) {
    return { status: 404, message: `rehearsal server: no route for ${method} ${path}; it serves POST [/s/<script>]/v1/messages` };
  }
  return { path, countTokens: match[3] !== undefined, prefix: match[1] as Route["prefix"], encodedName: match[2] };
}

/** The request's body as a JSON object, and its size in bytes; a 413 past `maxBody`, a 400 when it is not a JSON object. */
export async function readJsonObject(
  req: http.IncomingMessage,
  maxBody: number,
): Promise<{ body: Record<string, unknown>; bytes: number } | ErrorAnswer> {
  let raw: Buffer;
  try {
    raw = await readBody(req, maxBody);
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      return { status: 413, message: `request body exceeds ${maxBody} bytes`, headers: { connection: "close" } };
    throw error;
  }
  try {
    const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
    if (body === null || typeof body !== "object" || Array.isArray(body)) throw new Error("not an object");
    return { body, bytes: raw.length };
  } catch {
    return { status: 400, message: "request body is not a JSON object" };
  }
}

/**
 * The script a model turn's URL names: `/s/<script>`, the script `/p/<process>` is bound to, or "default".
 * An unbound process plays no script: its model requests fail as an unknown script's do.
 */
export function scriptOf(route: Route, boundScript: (process: string) => string | undefined): string | ErrorAnswer {
  let name: string | undefined;
  try {
    name = route.encodedName === undefined ? undefined : decodeURIComponent(route.encodedName);
  } catch {
    return { status: 400, message: `rehearsal: the name in ${route.path} is not valid percent-encoding` };
  }
  return route.prefix === "p" ? (boundScript(name!) ?? `(unbound process ${name})`) : (name ?? "default");
}
