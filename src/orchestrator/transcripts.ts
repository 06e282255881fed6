// The transcript files of tasks and sessions: one JSONL file each, open only while it is written.
import { createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { CliMessage } from "../protocol/index.ts";
import { encodeLine } from "../protocol/index.ts";
import { makeDirectory } from "../util/make-directory.ts";

/** Safe, readable file names: task names may hold anything. */
function fileNameFor(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9._-]+/g, "_")
      .replace(/^[._]+/, "")
      .slice(0, 100) || "task"
  );
}

/**
 * One JSONL transcript per task in a directory: each line is a message exactly
 * as the CLI sent it (an unknown message as its raw object). A task's file is
 * open while it runs: `end` closes it (a run of thousands of tasks holds only
 * its running tasks' files), and a later message opens it again to append.
 */
export class TranscriptDirectory {
  readonly #streams = new Map<string, WriteStream>();
  readonly #usedNames = new Set<string>();
  /** Files of ended tasks still being flushed. */
  readonly #ending = new Set<Promise<void>>();
  readonly paths = new Map<string, string>();

  constructor(readonly dir: string) {
    makeDirectory(dir);
  }

  write(taskId: string, taskName: string, message: CliMessage): void {
    let stream = this.#streams.get(taskId);
    if (!stream) {
      const opened = createWriteStream(this.paths.get(taskId) ?? this.#newPath(taskId, taskName), { flags: "a" });
      this.#streams.set(taskId, opened);
      // A full disk must not end the run: the lines it refused are lost, and the next one tries again (appending).
      opened.on("error", () => {
        if (this.#streams.get(taskId) === opened) this.#streams.delete(taskId);
      });
      stream = opened;
    }
    stream.write(encodeLine(message.type === "unknown" ? message.raw : message));
  }

  /** The task has ended: its file is flushed and closed (in the background; close() waits for it). */
  end(taskId: string): void {
    const stream = this.#streams.get(taskId);
    if (stream === undefined) return;
    this.#streams.delete(taskId);
    const ending = closed(stream);
    this.#ending.add(ending);
    void ending.then(() => this.#ending.delete(ending));
  }

  #newPath(taskId: string, taskName: string): string {
    let base = fileNameFor(taskName);
    for (let n = 2; this.#usedNames.has(base); n++) base = `${fileNameFor(taskName)}-${n}`;
    this.#usedNames.add(base);
    const path = join(this.dir, `${base}.jsonl`);
    this.paths.set(taskId, path);
    return path;
  }

  /** Flushes and closes every transcript. */
  async close(): Promise<void> {
    const open = [...this.#streams.values()];
    this.#streams.clear();
    await Promise.all([...this.#ending, ...open.map(closed)]);
  }
}

/** Ends a stream and resolves once it is closed, written or failed (a full disk). */
function closed(stream: WriteStream): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.once("close", () => resolve());
    stream.end();
  });
}
