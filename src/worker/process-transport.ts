// A claude process as a Transport: its stdin, stdout and stderr, in a process group the reaper watches.
import { DEFAULT_MAX_LINE_BYTES, encodeLine, NdjsonDecoder } from "../protocol/index.ts";
import { killGroup, settlesWithin, signalLiveGroup, startGroup } from "../util/process-group.ts";
import type { ExitDetails } from "./errors.ts";
import type { TerminateOptions, Transport, TransportFactory, TransportHandlers, TransportSpec } from "./transport.ts";

const DEFAULT_STDERR_TAIL_BYTES = 8 * 1024;

function spawnChild(options: TransportSpec) {
  // A process group of its own, watched by the reaper (see startGroup).
  return startGroup(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    buffer: false,
    reject: false,
  });
}

/**
 * One child process speaking NDJSON: lines out on stdin, lines in from stdout,
 * a bounded tail of stderr, and an exit that is always observed. Knows bytes and
 * lines, nothing about messages.
 */
export class ProcessTransport implements Transport {
  readonly exited: Promise<ExitDetails>;
  readonly #child: ReturnType<typeof spawnChild>;
  #stderrChunks: Buffer[] = [];
  #stderrBytes = 0;
  readonly #stderrLimit: number;
  #exitDetails: ExitDetails | undefined;
  #inputEnded = false;

  constructor(options: TransportSpec, handlers: TransportHandlers) {
    this.#stderrLimit = options.stderrTailBytes ?? DEFAULT_STDERR_TAIL_BYTES;
    this.#child = spawnChild(options);
    const decoder = new NdjsonDecoder({ maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES });
    const deliver = (events: ReturnType<NdjsonDecoder["push"]>) => {
      for (const event of events) {
        if (event.kind === "value") handlers.onValue(event.value);
        else handlers.onMalformedLine(event.line, event.error);
      }
    };
    let failed = false;
    this.#child.stdout.on("data", (chunk: Buffer) => {
      if (failed) return;
      try {
        deliver(decoder.push(chunk));
      } catch (error) {
        failed = true;
        void this.kill();
        handlers.onFatal(error as Error);
      }
    });
    this.#child.stdout.on("end", () => {
      if (failed) return;
      try {
        deliver(decoder.end());
      } catch (error) {
        handlers.onFatal(error as Error);
      }
    });
    this.#child.stderr.on("data", (chunk: Buffer) => this.#keepStderr(chunk));
    // A write to a process that has died fails with EPIPE; the exit is reported separately.
    this.#child.stdin.on("error", () => {});
    this.exited = this.#child.then((result): ExitDetails => {
      const details: ExitDetails = {
        exitCode: result.exitCode ?? null,
        signal: result.signal ?? null,
        // A process that never started (ENOENT, EACCES) has no stderr; execa's message says why.
        stderrTail: this.stderrTail() || (result.exitCode === undefined ? (result.shortMessage ?? "") : ""),
      };
      this.#exitDetails = details;
      return details;
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get hasExited(): boolean {
    return this.#exitDetails !== undefined;
  }

  get canWrite(): boolean {
    return !this.#inputEnded && !this.hasExited && this.#child.stdin.writable;
  }

  /** Writes one message as one line. Returns false when the process can no longer take input. */
  write(message: unknown): boolean {
    if (!this.canWrite) return false;
    this.#child.stdin.write(encodeLine(message));
    return true;
  }

  endInput(): void {
    if (this.#inputEnded) return;
    this.#inputEnded = true;
    this.#child.stdin.end();
  }

  stderrTail(): string {
    const text = Buffer.concat(this.#stderrChunks).toString("utf8");
    // Drop a partial first line left by trimming.
    return this.#stderrBytes > this.#stderrLimit ? text.slice(text.indexOf("\n") + 1) : text;
  }

  /** Ends the process: close stdin, wait, SIGTERM, wait, SIGKILL. Resolves once it has exited. */
  async terminate(options: TerminateOptions = {}): Promise<ExitDetails> {
    const { graceMs = 2_000, termMs = 2_000 } = options;
    this.endInput();
    if (await this.#exitsWithin(graceMs)) return this.exited;
    this.#signal("SIGTERM");
    if (await this.#exitsWithin(termMs)) return this.exited;
    return this.kill();
  }

  /**
   * Kills at once, without a grace period, with everything the process started:
   * the CLI runs its tools in sessions of their own, which a SIGKILL to the CLI
   * alone would leave running. The reaper walks the tree; should it not answer,
   * the process group is killed directly. The process is stopped first, before
   * this returns, and stdin stays open: in the moment the reaper takes, a CLI
   * that saw stdin close or read a last control request could still end its turn
   * and answer it.
   */
  async kill(): Promise<ExitDetails> {
    this.#inputEnded = true;
    await killGroup(this.#child, this.exited);
    return this.exited;
  }

  /**
   * Signals the child's process group through process.kill, not ChildProcess.kill:
   * on Deno the latter ignores every signal after the first, so SIGKILL would never
   * follow an ignored SIGTERM.
   */
  #signal(name: "SIGTERM"): void {
    signalLiveGroup(this.#child, name);
  }

  async #exitsWithin(ms: number): Promise<boolean> {
    return this.hasExited || (await settlesWithin(this.exited, ms));
  }

  #keepStderr(chunk: Buffer): void {
    this.#stderrChunks.push(chunk);
    this.#stderrBytes += chunk.length;
    let kept = this.#stderrChunks.reduce((n, c) => n + c.length, 0);
    while (kept > this.#stderrLimit && this.#stderrChunks.length > 1) {
      kept -= this.#stderrChunks.shift()!.length;
    }
    const only = this.#stderrChunks[0];
    if (only && kept > this.#stderrLimit) this.#stderrChunks[0] = only.subarray(only.length - this.#stderrLimit);
  }
}

/** The transport a Worker starts unless given another: a claude process. */
export const startProcessTransport: TransportFactory = (spec, handlers) => new ProcessTransport(spec, handlers);
