// Appends the run's journal lines (summary.json's changes), one write each, fsynced in batches.
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { JOURNAL_FILE, type JournalLine } from "./journal.ts";

/** How long an appended line may wait for its fsync: a kill of the process loses none anyway (the OS has it), a crash of the machine at most this. */
const FSYNC_EVERY_MS = 1_000;

/**
 * Appends the run's journal lines (see journal.ts): each line is one
 * write, so that a SIGKILL loses none that was appended; the fsyncs come in
 * batches, on a timer. Never rewritten; a resumed run appends to it.
 */
export class RunJournal {
  readonly #fd: number;
  #lastAt = 0;
  #unsynced = false;
  #bytes = 0;
  #closed = false;
  /** A write failed part way (a full disk): the next line starts on a line of its own, and readers skip the broken one. */
  #torn = false;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(dir: string) {
    this.#fd = openSync(join(dir, JOURNAL_FILE), "a");
    this.#timer = setInterval(() => this.sync(), FSYNC_EVERY_MS);
    // The timer keeps nothing alive: the run's end closes the journal.
    this.#timer.unref();
  }

  /** Bytes appended by this process. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Appends a row. Its time is after `since` (the last compaction's), even
   * if the clock has not moved since, so that a reader can tell whether the
   * summary has it. False when it could not be written (a full disk).
   */
  append(attempt: number, task: JournalLine["task"], since: number): boolean {
    // A run killed at once (a second Ctrl-C) has written its whole record: what its tasks say after that is not kept.
    if (this.#closed) return true;
    this.#lastAt = Math.max(Date.now(), since + 1, this.#lastAt);
    const line: JournalLine = { at: this.#lastAt, attempt, task };
    const buffer = Buffer.from(`${this.#torn ? "\n" : ""}${JSON.stringify(line)}\n`);
    let written = 0;
    try {
      while (written < buffer.length) written += writeSync(this.#fd, buffer, written);
    } catch {
      // A full disk: the caller writes the record another way (and says so); this line may be torn.
      this.#torn ||= written > 0;
      this.#bytes += written;
      return false;
    }
    this.#torn = false;
    this.#bytes += buffer.length;
    this.#unsynced = true;
    return true;
  }

  sync(): void {
    if (!this.#unsynced || this.#closed) return;
    this.#unsynced = false;
    try {
      fdatasyncSync(this.#fd);
    } catch {
      // What could not be synced is in the OS's hands; the record is written whole at the end anyway.
    }
  }

  close(): void {
    if (this.#closed) return;
    clearInterval(this.#timer);
    this.sync();
    this.#closed = true;
    closeSync(this.#fd);
  }
}
