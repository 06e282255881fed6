// A record file of JSON lines (journal.jsonl, replies.jsonl) read line by line: a line that cannot be read is named by its file and number, the others are still read.
import { ZodError } from "zod";

export interface ReadLines<T> {
  values: T[];
  /** One sentence per line that could not be read: "journal.jsonl line 7 cannot be read: …". */
  unreadable: string[];
}

/** `parse` turns a line's JSON into its value, or throws (a ZodError, or an Error whose message says why). */
export function readJsonLines<T>(text: string, file: string, parse: (value: unknown) => T): ReadLines<T> {
  const values: T[] = [];
  const unreadable: string[] = [];
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    try {
      values.push(parse(JSON.parse(raw)));
    } catch (error) {
      // The last line without its newline was being written when the run was killed.
      const cut = index === lines.length - 1 ? " (cut short: the run was killed as it was written)" : "";
      unreadable.push(`${file} line ${index + 1} cannot be read${cut}: ${whyUnreadable(error)}`);
    }
  }
  return { values, unreadable };
}

function whyUnreadable(error: unknown): string {
  if (error instanceof ZodError) {
    const issue = error.issues[0];
    return `not a line of this file (${issue?.path.join(".") || "the line"}: ${issue?.message})`;
  }
  return error instanceof SyntaxError ? `not JSON (${error.message})` : (error as Error).message;
}
