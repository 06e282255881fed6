// The claude the tests run: the one cadre finds, linked onto PATH, behind a script that notes each start, or started by hand.
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { onTestFinished } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { locateClaude } from "../../src/worker/locate-cli.ts";
import { STREAM_JSON_ARGS } from "../../src/worker/options.ts";
import { isAlive } from "./processes.ts";
import { tempHome } from "./rehearsal.ts";

/**
 * Starts the real claude CLI (CLAUDE_BIN) in stream-json mode
 * against a rehearsal server, with its own temp HOME and working directory.
 * Every process is ended after the test, and the test fails if one survives.
 *
 * stdout is split into lines and JSON.parse'd here, independently of
 * src/protocol, so protocol bugs cannot hide behind the rig.
 */

/**
 * The claude the tests drive: the one cadre itself finds. In a clone that is the pinned CLI the
 * Agent SDK devDependency carries (its platform package's binary); CADRE_CLAUDE_BIN overrides it.
 */
export const CLAUDE_BIN = locateClaude();

/**
 * Makes `dir` hold a `claude` (a link to CLAUDE_BIN) and returns it, for PATH: where a test runs
 * `claude` as a person types it. A clone has no node_modules/.bin/claude (see docs/contributing.md).
 */
export async function claudeOnPath(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await symlink(CLAUDE_BIN, join(dir, "claude"));
  return dir;
}

/**
 * The claude a run would start, behind a script in `dir` that notes each process's pid as it starts (exec keeps the
 * pid): give `bin` as CADRE_CLAUDE_BIN, and `pids()` says which processes the run started, none missed.
 */
export async function recordingClaude(dir: string): Promise<{ bin: string; pids(): Promise<number[]> }> {
  const script = join(dir, "recording-claude");
  const starts = join(dir, "recording-claude.pids");
  await writeFile(script, `#!/bin/sh\necho $$ >> '${starts}'\nexec '${CLAUDE_BIN}' "$@"\n`, { mode: 0o755 });
  const pids = async () => (await readFile(starts, "utf8").catch(() => "")).split("\n").filter(Boolean).map(Number);
  return { bin: script, pids };
}

export { STREAM_JSON_ARGS };

/** One parsed stdout line. A line that is not JSON arrives as { type: "non_json", text }. */
export type CliLine = { type: string; subtype?: string; [key: string]: unknown };

export interface StartClaudeOptions {
  baseUrl: string;
  /** Added after the stream-json flags. */
  args?: string[];
  /** Default: a "work" directory inside the temp HOME (no repo CLAUDE.md or settings leak in). */
  cwd?: string;
  /** Extra environment, over the offline one. */
  env?: Record<string, string>;
}

export interface UntilResultOptions {
  timeoutMs?: number;
  /** Sees each line before it is collected, e.g. to answer control requests. */
  onMessage?: (line: CliLine) => void | Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
let requestCounter = 0;

export class ClaudeHandle {
  /** Every stdout line so far, including those already consumed. */
  readonly received: CliLine[] = [];
  readonly exited: Promise<void>;
  #cursor = 0;
  #stdout = "";
  #stderr = "";
  #done = false;
  #wake: (() => void) | undefined;

  constructor(
    readonly subprocess: ResultPromise,
    readonly home: string,
    readonly cwd: string,
  ) {
    let partial = "";
    subprocess.stdout!.setEncoding("utf8");
    subprocess.stdout!.on("data", (chunk: string) => {
      this.#stdout += chunk;
      const lines = (partial + chunk).split("\n");
      partial = lines.pop()!;
      for (const line of lines) this.#push(line);
    });
    subprocess.stderr!.setEncoding("utf8");
    subprocess.stderr!.on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-20_000);
    });
    this.exited = subprocess
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        if (partial !== "") this.#push(partial);
        this.#done = true;
        this.#wake?.();
      });
  }

  get pid(): number {
    return this.subprocess.pid!;
  }

  /** All stdout text so far, as the CLI wrote it (for decoders under test). */
  get stdout(): string {
    return this.#stdout;
  }

  /** The last 20,000 characters of stderr. */
  get stderr(): string {
    return this.#stderr;
  }

  #push(line: string): void {
    if (line.trim() === "") return;
    let parsed: CliLine;
    try {
      parsed = JSON.parse(line) as CliLine;
    } catch {
      parsed = { type: "non_json", text: line };
    }
    this.received.push(parsed);
    this.#wake?.();
  }

  /** Writes one message as one JSON line on stdin. */
  send(message: unknown): void {
    this.subprocess.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  sendUser(text: string): void {
    this.send({
      type: "user",
      session_id: "",
      message: { role: "user", content: [{ type: "text", text }] },
      parent_tool_use_id: null,
    });
  }

  /** Sends `initialize` and resolves with the CLI's control_response. */
  async initialize(request: Record<string, unknown> = {}): Promise<CliLine> {
    const requestId = `rig_init_${++requestCounter}`;
    this.send({ type: "control_request", request_id: requestId, request: { subtype: "initialize", ...request } });
    return this.next((line) => line.type === "control_response" && (line.response as { request_id?: string })?.request_id === requestId);
  }

  /** The next unconsumed line, or undefined once the process has exited and all lines are consumed. */
  async nextLine(timeoutMs = DEFAULT_TIMEOUT_MS): Promise<CliLine | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.#cursor >= this.received.length) {
      if (this.#done) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`claude (pid ${this.pid}) sent nothing for ${timeoutMs} ms${this.#diagnostics()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
    return this.received[this.#cursor++];
  }

  /** Consumes lines until one matches. */
  async next(predicate: (line: CliLine) => boolean, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<CliLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = await this.nextLine(Math.max(1, deadline - Date.now()));
      if (line === undefined) throw new Error(`claude (pid ${this.pid}) exited before the awaited line${this.#diagnostics()}`);
      if (predicate(line)) return line;
    }
  }

  /** Unconsumed lines as they come; ends when the process exits. */
  get messages(): AsyncIterable<CliLine> {
    return {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          const line = await this.nextLine();
          return line === undefined ? { done: true, value: undefined } : { done: false, value: line };
        },
      }),
    };
  }

  /** Consumes lines up to and including the next `result`. */
  async untilResult(options: UntilResultOptions = {}): Promise<{ messages: CliLine[]; result: CliLine }> {
    const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const messages: CliLine[] = [];
    for (;;) {
      const line = await this.nextLine(Math.max(1, deadline - Date.now()));
      if (line === undefined) throw new Error(`claude (pid ${this.pid}) exited before a result${this.#diagnostics()}`);
      await options.onMessage?.(line);
      messages.push(line);
      if (line.type === "result") return { messages, result: line };
    }
  }

  /** Ends stdin (the CLI's signal to finish), then SIGTERM, then SIGKILL if it lingers. */
  async close(graceMs = 3_000): Promise<void> {
    if (!this.#done) this.subprocess.stdin!.end();
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      const exited = await Promise.race([
        this.exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref()),
      ]);
      if (exited) return;
      this.subprocess.kill(signal);
    }
    await this.exited;
  }

  #diagnostics(): string {
    const last = this.received.slice(-3).map((line) => JSON.stringify(line).slice(0, 300));
    return `\n  last lines:\n    ${last.join("\n    ") || "(none)"}\n  stderr tail:\n    ${this.#stderr.slice(-2000) || "(empty)"}`;
  }
}

export async function startClaude(options: StartClaudeOptions): Promise<ClaudeHandle> {
  const home = await tempHome("cadre-claude-");
  const cwd = options.cwd ?? join(home, "work");
  // The CLI keeps tool output under $TMPDIR/claude-<uid>/; inside HOME it is removed with it.
  const tmp = join(home, "tmp");
  await Promise.all([mkdir(cwd, { recursive: true }), mkdir(tmp)]);
  const subprocess = execa(CLAUDE_BIN, [...STREAM_JSON_ARGS, ...(options.args ?? [])], {
    cwd,
    env: { ...offlineClaudeEnv({ baseUrl: options.baseUrl, home }), TMPDIR: tmp, ...options.env },
    extendEnv: false,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    buffer: false,
    reject: false,
  });
  if (subprocess.pid === undefined) {
    const result = await subprocess;
    throw new Error(`claude did not start: ${result.message ?? "no pid"}`);
  }
  const handle = new ClaudeHandle(subprocess, home, cwd);
  const pid = handle.pid;
  onTestFinished(async () => {
    const wasAlive = isAlive(pid);
    await handle.close(wasAlive ? 2_000 : 0);
    if (isAlive(pid)) {
      process.kill(pid, "SIGKILL");
      throw new Error(`claude pid ${pid} survived the test and was killed`);
    }
  });
  return handle;
}
