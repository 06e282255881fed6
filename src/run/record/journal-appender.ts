// Appends the run's journal lines (summary.json's changes), one write each, fsynced in batches.
import { join } from "node:path";
import { AppendedLines } from "../../util/appended-lines.ts";
import { JOURNAL_FILE, type JournalLine } from "./journal.ts";

/**
 * Appends the run's journal lines (see journal.ts): each line is one
 * write, so that a SIGKILL loses none that was appended; the fsyncs come in
 * batches, on a timer. Never rewritten; a resumed run appends to it.
 */
export class RunJournal {
  readonly #lines: AppendedLines;
  #lastAt = 0;

  constructor(dir: string) {
    this.#lines = new AppendedLines(join(dir, JOURNAL_FILE));
  }

  /** Bytes appended by this process. */
  get bytes(): number {
    return this.#lines.bytes;
  }

  /**
   * Appends a row. Its time is after `since` (the last compaction's), even
   * if the clock has not moved since, so that a reader can tell whether the
   * summary has it. False when it could not be written (a full disk): the
   * caller writes the record another way (and says so).
   */
  append(attempt: number, task: JournalLine["task"], since: number): boolean {
    // A run killed at once (a second Ctrl-C) has written its whole record: what its tasks say after that is not kept.
    if (this.#lines.closed) return true;
    this.#lastAt = Math.max(Date.now(), since + 1, this.#lastAt);
    const line: JournalLine = { at: this.#lastAt, attempt, task };
    return this.#lines.append(JSON.stringify(line));
  }

  sync(): void {
    this.#lines.sync();
  }

  close(): void {
    this.#lines.close();
  }
}
