import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { CadreError } from "../errors.ts";

/**
 * The checks in front of cadre's HTTP servers (`cadre mcp --http`, the
 * dashboard): the Host and Origin headers, against DNS rebinding and other
 * sites' pages, and a bearer token. One copy, so both servers answer alike.
 */

export class HostPortError extends CadreError {
  constructor(message: string) {
    super("INVALID_HOST_PORT", message);
  }
}

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

function isWildcard(host: string): boolean {
  return ["0.0.0.0", "::", "[::]"].includes(host);
}

/** An IPv6 address in the bracketed form URLs and Host headers use. */
export function bracketed(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** "127.0.0.1:8080", "[::1]:8080", "localhost:0" → host and port; `flag` names the option in the error. */
export function parseHostPort(value: string, flag: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new HostPortError(`${flag} wants HOST:PORT (e.g. 127.0.0.1:8787), got "${value}"`);
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
}

/**
 * Which Host and Origin values a server bound to `host`:`port` answers: on
 * loopback the loopback names at that port, else the bound name; a wildcard
 * address answers any Host, and an Origin only of the same host.
 */
export class HostCheck {
  readonly #allowed: Set<string>;
  readonly #anyHost: boolean;

  constructor(bound: { host: string; port: number }) {
    this.#anyHost = isWildcard(bound.host);
    const shown = bracketed(bound.host);
    const names = isLoopback(bound.host) ? ["localhost", "127.0.0.1", "[::1]", shown] : [shown];
    this.#allowed = new Set(names.map((name) => `${name.toLowerCase()}:${bound.port}`));
  }

  /** Why the request is refused (403), or undefined when its Host and Origin are allowed. */
  refusal(req: http.IncomingMessage): string | undefined {
    const host = (req.headers.host ?? "").toLowerCase();
    if (!this.#anyHost && !this.#allowed.has(host)) return `Host "${host}" is not allowed`;
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host.toLowerCase();
    } catch {
      // an unparsable origin is refused below
    }
    if (originHost === undefined || !(this.#anyHost ? originHost === host : this.#allowed.has(originHost)))
      return `Origin "${origin}" is not allowed`;
    return undefined;
  }
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** A shared secret a request must carry: generated when none is given. */
export class TokenCheck {
  readonly token: string;
  /** True when the token was generated here (the caller shows it once). */
  readonly generated: boolean;
  readonly #digest: Buffer;

  constructor(token: string | undefined) {
    this.token = token ?? randomBytes(32).toString("base64url");
    this.generated = token === undefined;
    this.#digest = digest(this.token);
  }

  /**
   * Whether the request carries the token: as `Authorization: Bearer T`, or
   * with `query` also as `?token=T` (for URLs a browser opens itself, such as
   * an EventSource, which cannot set headers).
   */
  accepts(req: http.IncomingMessage, { query = false } = {}): boolean {
    const header = req.headers.authorization;
    const given =
      typeof header === "string" && header.startsWith("Bearer ")
        ? header.slice("Bearer ".length)
        : query
          ? (new URL(req.url ?? "/", "http://x").searchParams.get("token") ?? undefined)
          : undefined;
    return given !== undefined && timingSafeEqual(digest(given), this.#digest);
  }
}
