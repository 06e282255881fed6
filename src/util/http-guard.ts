// The checks in front of cadre's HTTP servers: Host and Origin headers, and a bearer token.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { HostPolicy, type HostPolicyOptions, HostPortError } from "./allowed-hosts.ts";

/**
 * The checks in front of cadre's HTTP servers (`cadre mcp --http`, the
 * dashboard): the Host and Origin headers, against DNS rebinding and other
 * sites' pages (allowed-hosts.ts says which names), and a bearer token. One
 * copy, so both servers answer alike.
 */

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** "127.0.0.1:8080", "[::1]:8080", "localhost:0" → host and port; `flag` names the option in the error. */
export function parseHostPort(value: string, flag: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new HostPortError(`${flag} wants HOST:PORT (e.g. 127.0.0.1:8787), got "${value}"`);
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
}

/** The Host and Origin headers of each request, against the names a server answers. */
export class HostCheck {
  readonly policy: HostPolicy;

  constructor(options: HostPolicyOptions) {
    this.policy = new HostPolicy(options);
  }

  /** Why the request is refused (403), or undefined when its Host and Origin are allowed. */
  refusal(req: http.IncomingMessage): string | undefined {
    const host = req.headers.host ?? "";
    if (!this.policy.allows(host)) return `Host "${host}" is not allowed`;
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host;
    } catch {
      // an unparsable origin is refused below
    }
    return originHost !== undefined && this.policy.allows(originHost) ? undefined : `Origin "${origin}" is not allowed`;
  }
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** The credentials of an Authorization header of the Bearer scheme, whose name is case-insensitive (RFC 7235). */
function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : /^bearer +(\S+) *$/i.exec(header)?.[1];
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
    const given =
      bearerToken(req.headers.authorization) ?? (query ? (new URL(req.url ?? "/", "http://x").searchParams.get("token") ?? undefined) : undefined);
    return given !== undefined && timingSafeEqual(digest(given), this.#digest);
  }
}
