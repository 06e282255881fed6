// Parsing a command's flags with Node's parseArgs, its refusals said as one line with the closest flag.
import { type ParseArgsConfig, parseArgs } from "node:util";
import { closest } from "../util/did-you-mean.ts";
import { isLoopback } from "../util/http-guard.ts";
import { own } from "../util/own.ts";

/** A wrong argument, said in one line; the usage line need not follow it. */
export class UsageError extends Error {}

type FlagsConfig = Omit<ParseArgsConfig, "args" | "strict" | "tokens"> & { options: NonNullable<ParseArgsConfig["options"]> };

/**
 * Node's parseArgs, strict, with its refusals said the way a person reads them
 * (`unknown option --rehears (did you mean --rehearse?)`) as a UsageError.
 */
export function parseFlags<const T extends FlagsConfig>(args: string[], config: T): ReturnType<typeof parseArgs<T & { args: string[] }>> {
  try {
    return parseArgs({ ...config, args });
  } catch (error) {
    throw new UsageError(flagProblem(args, config) ?? (error as Error).message);
  }
}

/** The first thing strict parsing refuses, found again by a lenient pass over the same arguments. */
function flagProblem(args: string[], config: FlagsConfig): string | undefined {
  const { tokens } = parseArgs({ ...config, args, strict: false, tokens: true, allowPositionals: true });
  for (const token of tokens) {
    if (token.kind === "positional" && !config.allowPositionals) return `unexpected argument "${token.value}"`;
    if (token.kind !== "option") continue;
    const option = own(config.options, token.name);
    if (option === undefined) return unknownOption(token.rawName, Object.keys(config.options));
    if (option.type === "string" && token.value === undefined) return `${token.rawName} needs a value`;
    // Strict parsing also refuses `--out --json`: a word with a dash is taken for a value only when attached.
    if (option.type === "string" && !token.inlineValue && token.value?.startsWith("-"))
      return `${token.rawName} needs a value (to give "${token.value}", write --${token.name}=${token.value})`;
    if (option.type === "boolean" && token.inlineValue) return `${token.rawName} takes no value`;
  }
  return undefined;
}

/** `unknown option --rehears (did you mean --rehearse?)`; `names` are the long names, without dashes. */
export function unknownOption(rawName: string, names: Iterable<string>): string {
  const match = rawName.startsWith("--") ? closest(rawName.slice(2), names) : undefined;
  return `unknown option ${rawName}${match === undefined ? "" : ` (did you mean --${match}?)`}`;
}

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
