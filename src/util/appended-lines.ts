// A file of lines, each appended in one write as it comes, so that a process killed at once loses none it appended.
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";

/** How long an appended line may wait for its fsync: a kill of the process loses none anyway (the OS has it), a crash of the machine at most this. */
const FSYNC_EVERY_MS = 1_000;

/**
 * Appends lines to a file with a synchronous write each (no buffer in this
 * process for a second Ctrl-C or a process.exit() to lose); the fsyncs come
 * in batches, on a timer that keeps nothing alive. A write that fails part
 * way (a full disk) leaves a torn line: the next one starts on a line of its
 * own, so a reader skips only the broken one.
 */
export class AppendedLines {
  readonly #fd: number;
  #unsynced = false;
  #bytes = 0;
  #closed = false;
  #torn = false;
  readonly #timer: ReturnType<typeof setInterval>;

  /** Opens `path` for appending (made if missing); throws as openSync does. */
  constructor(path: string) {
    this.#fd = openSync(path, "a");
    this.#timer = setInterval(() => this.sync(), FSYNC_EVERY_MS);
    this.#timer.unref();
  }

  /** Bytes appended by this process. */
  get bytes(): number {
    return this.#bytes;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Appends `line` and a newline; false when it could not be written (a full disk) or the file is closed. */
  append(line: string): boolean {
    if (this.#closed) return false;
    const buffer = Buffer.from(`${this.#torn ? "\n" : ""}${line}\n`);
    let written = 0;
    try {
      while (written < buffer.length) written += writeSync(this.#fd, buffer, written);
    } catch {
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
      // What could not be synced is in the OS's hands.
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
