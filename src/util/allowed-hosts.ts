// Which Host and Origin values cadre's HTTP servers answer: listed names, never inferred (against DNS rebinding).
import { CadreError } from "../errors.ts";

/**
 * Which Host and Origin values cadre's HTTP servers (`cadre mcp --http`, the
 * dashboard) answer. A page in a browser can reach a server on this machine
 * through a name that resolves here (DNS rebinding) or through 0.0.0.0, so the
 * names are listed, never inferred: the
 * loopback names, the address the server is bound to when it is a specific one,
 * and the names the user gives (--allowed-hosts). Binding a wildcard address
 * changes where the server listens, not which names it answers to.
 */

/** An address or host name a flag was given that is not one. */
export class HostPortError extends CadreError {
  constructor(message: string) {
    super("INVALID_HOST_PORT", message);
  }
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
const WILDCARDS = new Set(["0.0.0.0", "::", "[::]"]);

export interface HostPolicyOptions {
  /** The address the server is bound to, as given (IPv6 with or without brackets). */
  bound: string;
  port: number;
  /** More names: "name" (any port, or none) or "name:port" (that port only). */
  allowedHosts: readonly string[];
}

/** "[::1]:80" → { name: "[::1]", port: "80" }; "example" → { name: "example" }. */
function split(host: string): { name: string; port?: string } {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host);
  return match ? { name: match[1]!, ...(match[2] !== undefined && { port: match[2] }) } : { name: host };
}

/** An IPv6 address in the bracketed form URLs and Host headers use. */
export function bracketed(address: string): string {
  return address.includes(":") && !address.startsWith("[") ? `[${address}]` : address;
}

export function isWildcard(host: string): boolean {
  return WILDCARDS.has(host);
}

export class HostPolicy {
  /** "name:port" values allowed exactly. */
  readonly #exact = new Set<string>();
  /** Names allowed at any port. */
  readonly #anyPort = new Set<string>();
  readonly #shown: string[] = [];

  constructor({ bound, port, allowedHosts }: HostPolicyOptions) {
    const specific = isWildcard(bound) ? [] : [bracketed(bound.toLowerCase())];
    for (const name of new Set([...LOOPBACK_NAMES, ...specific])) this.#add(`${name}:${port}`);
    for (const host of allowedHosts) this.#add(host.toLowerCase());
  }

  #add(host: string): void {
    const { name, port } = split(host);
    if (port === undefined) {
      this.#anyPort.add(name);
      this.#shown.push(`${name} (any port)`);
    } else if (!this.#exact.has(host)) {
      this.#exact.add(host);
      this.#shown.push(host);
    }
  }

  /** Whether a request naming this host ("name" or "name:port", from Host or an Origin's host) is answered. */
  allows(host: string): boolean {
    const lower = host.toLowerCase();
    return this.#exact.has(lower) || this.#anyPort.has(split(lower).name);
  }

  /** What is allowed, for the start-up message. */
  describe(): string {
    return this.#shown.join(", ");
  }
}

const HOST_ENTRY = /^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)(:\d{1,5})?$/i;

/** --allowed-hosts "a,b:8080" → ["a", "b:8080"]: host names or addresses, each with an optional port. */
export function parseAllowedHosts(value: string | undefined): string[] {
  const entries = (value ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const bad = entries.find((entry) => !HOST_ENTRY.test(entry));
  if (bad !== undefined) throw new HostPortError(`--allowed-hosts wants host names or addresses, each with an optional :PORT, got "${bad}"`);
  return entries;
}
