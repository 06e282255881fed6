import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { CliMessage } from "../protocol/index.ts";
import { encodeLine } from "../protocol/index.ts";

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
 * as the CLI sent it (an unknown message as its raw object).
 */
export class TranscriptDirectory {
  readonly #streams = new Map<string, WriteStream>();
  readonly #usedNames = new Set<string>();
  readonly paths = new Map<string, string>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  write(taskId: string, taskName: string, message: CliMessage): void {
    let stream = this.#streams.get(taskId);
    if (!stream) {
      const path = this.paths.get(taskId) ?? this.#newPath(taskId, taskName);
      stream = createWriteStream(path, { flags: "a" });
      this.#streams.set(taskId, stream);
      // A full disk must not end the run: the lines it refused are lost, and the next one tries again (appending).
      const failed = stream;
      failed.on("error", () => {
        if (this.#streams.get(taskId) === failed) this.#streams.delete(taskId);
      });
    }
    stream.write(encodeLine(message.type === "unknown" ? message.raw : message));
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
    await Promise.all([...this.#streams.values()].map((s) => new Promise<void>((resolve) => s.end(() => resolve()))));
    this.#streams.clear();
  }
}
