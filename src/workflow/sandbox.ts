/**
 * The sandbox a workflow script runs in, as cadre's thread sees it: a fresh engine per run (engine.ts) on a thread of
 * its own (sandbox-thread.ts), so that a script computing for its whole CPU-time limit holds up nothing of cadre's.
 * Its host calls come here as messages and are answered from the SandboxHost each script was given; stopping the run
 * ends the thread at once, wherever its script is.
 */
import { WorkflowLimitError, WorkflowScriptFailedError } from "./errors.ts";
import { DEFAULT_SANDBOX_LIMITS, type SandboxHost, type SandboxLimits, type SandboxScript } from "./sandbox-contract.ts";
import { SandboxThread } from "./sandbox-threads.ts";
import type { CrossingError, FromThread, SyncAnswer } from "./thread-messages.ts";

/** A script sent to the thread: its host, and the promise its end settles. */
interface ThreadRun {
  host: SandboxHost;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** An error from the thread as the runner knows it: a limit stays a WorkflowLimitError, anything else is the script's failure. */
function errorOf({ message, limit }: CrossingError): Error {
  return limit === undefined ? new WorkflowScriptFailedError(message) : new WorkflowLimitError(limit, message);
}

export class WorkflowSandbox {
  readonly #thread: SandboxThread;
  readonly #runs = new Map<number, ThreadRun>();
  readonly #opened: Promise<void>;
  #openedNow: { resolve(): void; reject(error: Error): void } | undefined;
  #nextRun = 0;
  #closed = false;

  private constructor(limits: SandboxLimits) {
    this.#opened = new Promise((resolve, reject) => {
      this.#openedNow = { resolve, reject };
    });
    this.#thread = SandboxThread.take(
      (message) => this.#receive(message),
      (error) => this.#lost(error),
    );
    this.#thread.post({ type: "open", limits });
  }

  /** A fresh engine on a thread of its own, ready once its WebAssembly module is. */
  static async open(limits: Partial<SandboxLimits> = {}): Promise<WorkflowSandbox> {
    const sandbox = new WorkflowSandbox({ ...DEFAULT_SANDBOX_LIMITS, ...limits });
    try {
      await sandbox.#opened;
    } catch (error) {
      sandbox.close();
      throw error;
    }
    return sandbox;
  }

  /** Runs a script in a context of its own; resolves with its return value (JSON data), rejects with why it did not return. */
  run(script: SandboxScript): Promise<unknown> {
    if (this.#closed) return Promise.reject(new WorkflowScriptFailedError("the workflow sandbox is closed"));
    let argsJson: string | undefined;
    try {
      argsJson = script.args === undefined ? undefined : JSON.stringify(script.args);
    } catch (error) {
      return Promise.reject(new WorkflowScriptFailedError(`the workflow's args are not JSON data: ${(error as Error).message}`));
    }
    const run = this.#nextRun++;
    const { host, body, filename, budgetTotal, nested, strand = 0 } = script;
    return new Promise((resolve, reject) => {
      this.#runs.set(run, { host, resolve, reject });
      this.#thread.post({ type: "run", run, script: { body, filename, argsJson, budgetTotal, nested, strand } });
    });
  }

  /** Drops the engine; a run still going rejects, and its thread ends at once. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const going = [...this.#runs.values()];
    this.#runs.clear();
    for (const run of going) run.reject(new WorkflowScriptFailedError("the workflow run was stopped"));
    if (going.length > 0) this.#thread.terminate();
    else this.#thread.release();
  }

  #receive(message: FromThread): void {
    if (message.type === "opened") this.#openedNow?.resolve();
    else if (message.type === "open_failed") this.#openedNow?.reject(errorOf(message.error));
    else if (message.type === "settled") this.#settle(message);
    else if (message.type === "sync") this.#thread.answer(this.#answerNow(message));
    else if (message.type === "call") this.#call(message);
    else {
      const host = this.#runs.get(message.run)?.host;
      if (message.name === "log") host?.log(message.text);
      else host?.phase(message.text);
    }
  }

  #settle(message: Extract<FromThread, { type: "settled" }>): void {
    const run = this.#runs.get(message.run);
    this.#runs.delete(message.run);
    if (run === undefined) return;
    if (message.ok) run.resolve(message.json === undefined ? undefined : JSON.parse(message.json));
    else run.reject(errorOf(message.error));
  }

  #answerNow({ run, name, args }: Extract<FromThread, { type: "sync" }>): SyncAnswer {
    const host = this.#runs.get(run)?.host;
    if (host === undefined) return { ok: false, message: "the workflow run was stopped" };
    try {
      if (name === "checkCaps") return { ok: true, value: void host.checkCaps() };
      if (name === "remainingUsd") return { ok: true, value: host.remainingUsd(typeof args[0] === "string" ? args[0] : undefined) };
      if (name === "fork") return { ok: true, value: host.fork(Number(args[0]), args[1] === "pipeline" ? "pipeline" : "parallel") };
      if (name === "item") return { ok: true, value: host.item(Number(args[0]), Number(args[1])) };
      if (name === "join") return { ok: true, value: void host.join(Number(args[0])) };
      return { ok: true, value: host[name]() };
    } catch (error) {
      return { ok: false, message: (error as Error).message };
    }
  }

  #call({ run, call, name, args }: Extract<FromThread, { type: "call" }>): void {
    const host = this.#runs.get(run)?.host;
    const answer = host === undefined ? Promise.reject(new Error("the workflow run was stopped")) : host[name](...args);
    answer.then(
      (value) => this.#thread.post({ type: "answer", call, ok: true, value }),
      (error: unknown) => this.#thread.post({ type: "answer", call, ok: false, message: error instanceof Error ? error.message : String(error) }),
    );
  }

  /** The thread ended on its own: a crash, or its heap's limit. */
  #lost(error: Error | undefined): void {
    const why =
      (error as { code?: string } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY"
        ? new WorkflowLimitError("memory", "the workflow sandbox's thread ran out of memory and was stopped")
        : new WorkflowScriptFailedError(`the workflow sandbox's thread ended${error ? `: ${error.message}` : ""}`);
    this.#openedNow?.reject(why);
    for (const run of this.#runs.values()) run.reject(why);
    this.#runs.clear();
    this.#closed = true;
  }
}
