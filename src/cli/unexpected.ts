// An error no command expected: one line and exit 1, its stack only with CADRE_DEBUG=1.
import process from "node:process";
import { oneLine } from "../util/one-line.ts";

/** Set to 1 to see where an unexpected error came from. */
const DEBUG = "CADRE_DEBUG";

/**
 * An error no command expected: one line on stderr (its stack only with
 * CADRE_DEBUG=1), and the exit code 1. Bad input has its own messages and
 * exit 2 where it is read; this is for everything else.
 */
export function reportUnexpected(prefix: string, error: unknown): number {
  const message = error instanceof Error ? error.message : String(error);
  const line = oneLine(message, Number.POSITIVE_INFINITY) || (error instanceof Error ? error.name : "unknown error");
  const debug = process.env[DEBUG] === "1";
  process.stderr.write(`${prefix}: unexpected error: ${line}${debug ? "" : ` (${DEBUG}=1 shows where)`}\n`);
  if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return 1;
}

/**
 * The same for errors thrown outside any command's control (a listener, a
 * stray promise), for the rest of the process: reported, then exit 1.
 */
export function exitOnStrayErrors(prefix: string): void {
  const onError = (error: unknown) => process.exit(reportUnexpected(prefix, error));
  process.on("uncaughtException", onError);
  process.on("unhandledRejection", onError);
}
