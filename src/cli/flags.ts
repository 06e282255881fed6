import { isLoopback } from "../util/http-guard.ts";

/** A wrong argument, said in one line; the usage line need not follow it. */
export class UsageError extends Error {}

/**
 * The value of a numeric flag such as `--concurrency`, checked where a wrong
 * value can still be named by its flag; undefined when the flag is absent.
 */
export function numberFlag(name: string, value: string | undefined, { integer = false, min = 0 } = {}): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (value.trim() === "" || !Number.isFinite(parsed) || parsed < min || (integer && !Number.isInteger(parsed))) {
    throw new UsageError(`--${name} wants ${integer ? "a whole number" : "a number"} of at least ${min}, got "${value}"`);
  }
  return parsed;
}

/**
 * Checks a server's token: at least 16 characters when given, and given at
 * all to serve beyond loopback (`exposes` says what a stranger could then do).
 */
export function checkServerToken(host: string, token: string | undefined, exposes: string): void {
  if (token !== undefined && token.length < 16) throw new UsageError("the token must be at least 16 characters");
  if (!isLoopback(host) && token === undefined)
    throw new UsageError(`refusing to serve on ${host} without --token: anyone who can reach it could ${exposes}`);
}
