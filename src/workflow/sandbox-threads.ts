/**
 * Starting the sandbox's thread (sandbox-thread.ts) wherever cadre runs, and keeping one idle for the next run:
 * a run that ended cleanly hands its thread back, so a run after it starts in microseconds, not the tens of
 * milliseconds a thread and its engine's module take to load.
 */
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import { type FromThread, SYNC_ANSWERED, type SyncAnswer, type ThreadData, type ToThread } from "./thread-messages.ts";

/**
 * The thread's module beside this one: TypeScript where cadre runs from its sources (Deno, the tests), JavaScript
 * where it was built (dist/). The command line's bundle has this expression replaced by its own chunk's URL
 * (rolldown.config.ts, which fails the build when it no longer finds it).
 */
const THREAD_MODULE = new URL(import.meta.url.endsWith(".ts") ? "./sandbox-thread.ts" : "./sandbox-thread.js", import.meta.url);

/** Node runs cadre's TypeScript sources only under tsx (the tests, the benches): the thread loads its module through tsx too. */
const TSX_BOOT = `import { workerData } from "node:worker_threads";
const { register } = await import(workerData.loader);
register();
await import(workerData.entry);`;

function startWorker(data: ThreadData): Worker {
  const options = { workerData: data, transferList: [data.answers] };
  if (!THREAD_MODULE.pathname.endsWith(".ts") || "Deno" in globalThis) return new Worker(THREAD_MODULE, options);
  const loader = import.meta.resolve("tsx/esm/api");
  const boot = new URL(`data:text/javascript,${encodeURIComponent(TSX_BOOT)}`);
  return new Worker(boot, { ...options, workerData: { ...data, loader, entry: THREAD_MODULE.href } });
}

/** One sandbox thread: messages to it and from it, and the synchronous answers it waits on. */
export class SandboxThread {
  readonly #worker: Worker;
  readonly #answers: MessagePort;
  readonly #flag: Int32Array;
  #listener: ((message: FromThread) => void) | undefined;
  #onExit: ((error: Error | undefined) => void) | undefined;
  #exited = false;

  private constructor() {
    const { port1, port2 } = new MessageChannel();
    const flag = new SharedArrayBuffer(4);
    this.#answers = port1;
    this.#flag = new Int32Array(flag);
    this.#worker = startWorker({ answers: port2, flag });
    this.#worker.on("message", (message: FromThread) => this.#receive(message));
    this.#worker.on("error", (error: Error) => this.#ended(error));
    this.#worker.on("exit", () => this.#ended(undefined));
  }

  /** A thread for a run: the idle one, else a new one. `listen` gets its messages; `onExit` hears it end (a crash's error, or none). */
  static take(listen: (message: FromThread) => void, onExit: (error: Error | undefined) => void): SandboxThread {
    const thread = idle ?? new SandboxThread();
    idle = undefined;
    thread.#worker.ref();
    thread.#listener = listen;
    thread.#onExit = onExit;
    return thread;
  }

  post(message: ToThread): void {
    if (!this.#exited) this.#worker.postMessage(message);
  }

  /** Answers the host call the thread waits on, and wakes it. */
  answer(answer: SyncAnswer): void {
    this.#answers.postMessage(answer);
    Atomics.store(this.#flag, 0, SYNC_ANSWERED);
    Atomics.notify(this.#flag, 0);
  }

  /** The run is done with the thread, whose engine is idle: it waits for the next run (without keeping the process alive). */
  release(): void {
    this.#listener = undefined;
    this.#onExit = undefined;
    if (this.#exited) return;
    this.post({ type: "close" });
    if (idle !== undefined) {
      this.terminate();
      return;
    }
    this.#worker.unref();
    idle = this;
  }

  /** Ends the thread at once, whatever its script is doing. */
  terminate(): void {
    this.#listener = undefined;
    this.#onExit = undefined;
    if (idle === this) idle = undefined;
    if (!this.#exited) void this.#worker.terminate();
    this.#answers.close();
  }

  #receive(message: FromThread): void {
    if (this.#listener) this.#listener(message);
    // A script that goes on after its run ended (a job it left queued) may still ask at once: it must not wait forever.
    else if (message.type === "sync") this.answer({ ok: false, message: "the workflow run has ended" });
  }

  #ended(error: Error | undefined): void {
    if (this.#exited) return;
    this.#exited = true;
    if (idle === this) idle = undefined;
    this.#answers.close();
    this.#onExit?.(error);
  }
}

/** The thread the last clean run handed back, or one started ahead. */
let idle: SandboxThread | undefined;

/** Starts a thread ahead of a run that is coming, so that its start overlaps what cadre does first; it keeps no process alive. */
export function warmSandboxThread(): void {
  if (idle !== undefined) return;
  const thread = SandboxThread.take(
    () => {},
    () => {},
  );
  thread.release();
}
