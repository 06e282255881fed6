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
