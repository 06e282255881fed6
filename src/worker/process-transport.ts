import process from "node:process";
import { execa } from "execa";
import { DEFAULT_MAX_LINE_BYTES, encodeLine, NdjsonDecoder } from "../protocol/ndjson.ts";
import { reaper } from "../util/reaper.ts";
import type { ExitDetails } from "./errors.ts";

export interface ProcessTransportOptions {
  command: string;
  args: string[];
  cwd?: string;
  /** The child's whole environment (the parent's is not merged in here). */
  env: Record<string, string | undefined>;
  maxLineBytes?: number;
  /** How much of stderr to keep for error messages. */
  stderrTailBytes?: number;
}

export interface TransportHandlers {
  /** One decoded JSON value per stdout line. */
  onValue(value: unknown): void;
  /** A stdout line that is not JSON: reported, reading goes on. */
  onMalformedLine(line: string, error: Error): void;
  /** Reading cannot go on (e.g. a line over the size limit); the process is being killed. */
  onFatal(error: Error): void;
}

export interface TerminateOptions {
  /** How long to wait for a clean exit after stdin is closed. */
  graceMs?: number;
  /** How long to wait after SIGTERM before SIGKILL. */
  termMs?: number;
}

const DEFAULT_STDERR_TAIL_BYTES = 8 * 1024;
/** How long a kill handed to the reaper may take before the process is signalled directly. */
const REAPER_KILL_MS = 2_000;

function spawnChild(options: ProcessTransportOptions) {
  return execa(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    buffer: false,
    reject: false,
    // Its own process group and session: a Ctrl-C or a closing terminal reaches cadre,
    // which stops the child in order, not the child behind cadre's back. If cadre dies,
    // the reaper ends the child (execa's own cleanup cannot outlive a SIGKILL).
    detached: true,
  });
}

/**
 * One child process speaking NDJSON: lines out on stdin, lines in from stdout,
 * a bounded tail of stderr, and an exit that is always observed. Knows bytes and
 * lines, nothing about messages.
 */
export class ProcessTransport {
  readonly exited: Promise<ExitDetails>;
  private readonly child: ReturnType<typeof spawnChild>;
  private stderrChunks: Buffer[] = [];
  private stderrBytes = 0;
  private readonly stderrLimit: number;
  private exitDetails: ExitDetails | undefined;
  private inputEnded = false;

  constructor(options: ProcessTransportOptions, handlers: TransportHandlers) {
    this.stderrLimit = options.stderrTailBytes ?? DEFAULT_STDERR_TAIL_BYTES;
    this.child = spawnChild(options);
    const pid = this.child.pid;
    if (pid !== undefined) reaper().watch(pid);
    const decoder = new NdjsonDecoder({ maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES });
    const deliver = (events: ReturnType<NdjsonDecoder["push"]>) => {
      for (const event of events) {
        if (event.kind === "value") handlers.onValue(event.value);
        else handlers.onMalformedLine(event.line, event.error);
      }
    };
    let failed = false;
    this.child.stdout.on("data", (chunk: Buffer) => {
      if (failed) return;
      try {
        deliver(decoder.push(chunk));
      } catch (error) {
        failed = true;
        void this.kill();
        handlers.onFatal(error as Error);
      }
    });
    this.child.stdout.on("end", () => {
      if (failed) return;
      try {
        deliver(decoder.end());
      } catch (error) {
        handlers.onFatal(error as Error);
      }
    });
    this.child.stderr.on("data", (chunk: Buffer) => this.keepStderr(chunk));
    // A write to a process that has died fails with EPIPE; the exit is reported separately.
    this.child.stdin.on("error", () => {});
    this.exited = this.child.then((result): ExitDetails => {
      if (pid !== undefined) reaper().forget(pid);
      const details: ExitDetails = {
        exitCode: result.exitCode ?? null,
        signal: result.signal ?? null,
        // A process that never started (ENOENT, EACCES) has no stderr; execa's message says why.
        stderrTail: this.stderrTail() || (result.exitCode === undefined ? (result.shortMessage ?? "") : ""),
      };
      this.exitDetails = details;
      return details;
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.exitDetails !== undefined;
  }

  get canWrite(): boolean {
    return !this.inputEnded && !this.hasExited && this.child.stdin.writable;
  }

  /** Writes one message as one line. Returns false when the process can no longer take input. */
  write(message: unknown): boolean {
    if (!this.canWrite) return false;
    this.child.stdin.write(encodeLine(message));
    return true;
  }

  endInput(): void {
    if (this.inputEnded) return;
    this.inputEnded = true;
    this.child.stdin.end();
  }

  stderrTail(): string {
    const text = Buffer.concat(this.stderrChunks).toString("utf8");
    // Drop a partial first line left by trimming.
    return this.stderrBytes > this.stderrLimit ? text.slice(text.indexOf("\n") + 1) : text;
  }

  /** Ends the process: close stdin, wait, SIGTERM, wait, SIGKILL. Resolves once it has exited. */
  async terminate(options: TerminateOptions = {}): Promise<ExitDetails> {
    const { graceMs = 2_000, termMs = 2_000 } = options;
    this.endInput();
    if (await this.exitsWithin(graceMs)) return this.exited;
    this.signal("SIGTERM");
    if (await this.exitsWithin(termMs)) return this.exited;
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
    this.inputEnded = true;
    this.signal("SIGSTOP");
    const pid = this.livePid();
    if (pid !== undefined && reaper().killTree(pid) && (await this.exitsWithin(REAPER_KILL_MS))) return this.exited;
    this.signal("SIGKILL");
    return this.exited;
  }

  /** The pid while the process runs; undefined once its exit is seen, so a pid the system may have reused is never signalled. */
  private livePid(): number | undefined {
    return this.child.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  /**
   * Signals the child's process group through process.kill, not ChildProcess.kill:
   * on Deno the latter ignores every signal after the first, so SIGKILL would never
   * follow an ignored SIGTERM.
   */
  private signal(name: "SIGSTOP" | "SIGTERM" | "SIGKILL"): void {
    const pid = this.livePid();
    if (pid === undefined) return;
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, name);
        return;
      } catch {
        // No such group (not a group leader where groups do not exist), or already gone.
      }
    }
  }

  private async exitsWithin(ms: number): Promise<boolean> {
    if (this.hasExited) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    const exited = await Promise.race([this.exited.then(() => true as const), timeout]);
    clearTimeout(timer);
    return exited;
  }

  private keepStderr(chunk: Buffer): void {
    this.stderrChunks.push(chunk);
    this.stderrBytes += chunk.length;
    let kept = this.stderrChunks.reduce((n, c) => n + c.length, 0);
    while (kept > this.stderrLimit && this.stderrChunks.length > 1) {
      kept -= this.stderrChunks.shift()!.length;
    }
    const only = this.stderrChunks[0];
    if (only && kept > this.stderrLimit) this.stderrChunks[0] = only.subarray(only.length - this.stderrLimit);
  }
}
