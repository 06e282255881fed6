/**
 * The sandbox a workflow script runs in: a QuickJS engine compiled to
 * WebAssembly, a fresh one per run. The script sees JavaScript's built-ins and
 * the dialect's functions (prelude.ts) and nothing of the host: no modules, files,
 * processes, network or timers. Its CPU time is counted only while it runs
 * (not while it waits on agents) and its memory is capped; past either it is
 * stopped with a WorkflowLimitError and the engine is dropped whole.
 */
import type {
  CustomizeVariantOptions,
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from "quickjs-emscripten";
import type { StrandFork } from "./claude-code-keys.ts";
import { WorkflowLimitError, WorkflowScriptFailedError } from "./errors.ts";
import { PRELUDE } from "./prelude.ts";

/** The host side of the dialect: what the script's calls reach. Values cross as plain JSON data. */
export interface SandboxHost {
  /** `strand`: where in the script the call is made, as Claude Code's journal keys it (claude-code-keys.ts). */
  agent(prompt: unknown, options: unknown, strand: number): Promise<unknown>;
  /** A parallel() or pipeline() called in `strand` forks it: the fork's number. */
  fork(strand: number, kind: StrandFork): number;
  /** The strand of a fork's item. */
  item(fork: number, index: number): number;
  /** Every item of a fork has settled. */
  join(fork: number): void;
  /** `strand`: where the workflow() call is made; the nested workflow's calls go on in it. */
  workflow(ref: unknown, args: unknown, strand: number): Promise<unknown>;
  log(message: string): void;
  phase(title: string): void;
  /** Throws past the run's agent cap or token budget (parallel() and pipeline() ask before they start). */
  checkCaps(): void;
  /** Output tokens spent so far (budget.spent()). */
  spent(): number;
  /** Dollars the run's agents spent so far (budget.usd.spent()). */
  spentUsd(): number;
  /** What is left of the tightest dollar budget over an agent call of this agent type (budget.usd.remaining()); Infinity when none has a limit. */
  remainingUsd(agentType: string | undefined): number;
}

export interface SandboxLimits {
  /** The script's own CPU time over the whole run, waits on agents left out. */
  cpuTimeMs: number;
  /** The engine's heap. */
  memoryBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { cpuTimeMs: 30_000, memoryBytes: 256 * 1024 * 1024 };

const MAX_STACK_BYTES = 1024 * 1024;
const WASM_PAGE = 64 * 1024;
/** 16 MiB: what the engine takes to start. */
const MIN_PAGES = 256;

/** One script to run in a context of its own: the body from checkWorkflowScript, and what its globals hold. */
export interface SandboxScript {
  body: string;
  /** Shown in the script's stack traces. */
  filename: string;
  args: unknown;
  budgetTotal: number | null;
  /** A script run by workflow(): its own workflow() throws. */
  nested: boolean;
  /** The strand its top level goes on (claude-code-keys.ts): a nested workflow's, that of its workflow() call; default 0. */
  strand?: number;
  host: SandboxHost;
}

/** A context's run: settled by the script's done/fail calls, or by a limit. */
interface ContextRun {
  context: QuickJSContext;
  inFlight: number;
  settled: boolean;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** The WebAssembly global, which the project's TypeScript libraries declare only as types. */
const wasm = (globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory } }).WebAssembly;

type WasmMemory = Extract<NonNullable<CustomizeVariantOptions["wasmMemory"]>, { buffer: unknown }>;

let loading: Promise<typeof import("quickjs-emscripten")> | undefined;

/** Loaded on first use: only a workflow run needs the engine (about 1 MB of WebAssembly). */
function quickjs(): Promise<typeof import("quickjs-emscripten")> {
  loading ??= import("quickjs-emscripten");
  return loading;
}

function errorText(context: QuickJSContext, handle: QuickJSHandle): string {
  const dumped = context.dump(handle) as unknown;
  if (dumped !== null && typeof dumped === "object" && "message" in dumped) {
    const { name, message } = dumped as { name?: unknown; message?: unknown };
    return `${typeof name === "string" ? `${name}: ` : ""}${String(message)}`;
  }
  return String(dumped);
}

export class WorkflowSandbox {
  readonly #runtime: QuickJSRuntime;
  readonly #limits: SandboxLimits;
  readonly #runs = new Set<ContextRun>();
  #usedMs = 0;
  #enteredAt: number | undefined;
  #limit: WorkflowLimitError | undefined;
  #closed = false;

  private constructor(module: QuickJSWASMModule, limits: SandboxLimits) {
    this.#limits = limits;
    this.#runtime = module.newRuntime();
    this.#runtime.setMaxStackSize(MAX_STACK_BYTES);
    this.#runtime.setInterruptHandler(() => this.#overTime());
  }

  /**
   * A fresh engine with its own WebAssembly memory, freed with it. The memory's
   * maximum is the limit: QuickJS's own malloc limit does not count what this
   * build allocates, a memory that cannot grow does.
   */
  static async open(limits: Partial<SandboxLimits> = {}): Promise<WorkflowSandbox> {
    const { newQuickJSWASMModule, newVariant, RELEASE_SYNC } = await quickjs();
    const settled = { ...DEFAULT_SANDBOX_LIMITS, ...limits };
    const pages = Math.max(MIN_PAGES, Math.floor(settled.memoryBytes / WASM_PAGE));
    const wasmMemory = new wasm.Memory({ initial: MIN_PAGES, maximum: pages });
    return new WorkflowSandbox(await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory })), settled);
  }

  /** CPU time the scripts of this sandbox have used so far. */
  get cpuTimeMs(): number {
    return this.#usedMs;
  }

  /** Runs a script in a context of its own; resolves with its return value (JSON data), rejects with why it did not return. */
  run(script: SandboxScript): Promise<unknown> {
    if (this.#closed) return Promise.reject(new WorkflowScriptFailedError("the workflow sandbox is closed"));
    if (this.#limit) return Promise.reject(this.#limit);
    return new Promise<unknown>((resolve, reject) => {
      const context = this.#runtime.newContext();
      const run: ContextRun = {
        context,
        inFlight: 0,
        settled: false,
        resolve: (value) => this.#settle(run, () => resolve(value)),
        reject: (error) => this.#settle(run, () => reject(this.#explain(error))),
      };
      this.#runs.add(run);
      try {
        this.#start(run, script);
      } catch (error) {
        run.reject(error instanceof Error && "code" in error ? error : new WorkflowScriptFailedError(String((error as Error).message ?? error)));
      }
      this.#afterGuest();
    });
  }

  /** Drops the engine; a run still going rejects. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const run of [...this.#runs]) run.reject(new WorkflowScriptFailedError("the workflow run was stopped"));
    // Not disposed: handles a stopped script still holds make QuickJS's teardown assert. The engine
    // is this sandbox's alone (its own WebAssembly module), so its memory goes with the sandbox.
  }

  #settle(run: ContextRun, finish: () => void): void {
    if (run.settled) return;
    run.settled = true;
    this.#runs.delete(run);
    finish();
  }

  #overTime(): boolean {
    if (this.#enteredAt === undefined) return false;
    if (this.#usedMs + (performance.now() - this.#enteredAt) <= this.#limits.cpuTimeMs) return false;
    this.#limit ??= new WorkflowLimitError(
      "cpu_time",
      `the workflow script ran past its CPU-time limit (${this.#limits.cpuTimeMs} ms of its own computation) and was stopped`,
    );
    return true;
  }

  /** Counts the time spent in the guest, whatever it does. */
  #guest<T>(enter: () => T): T {
    if (this.#enteredAt !== undefined) return enter();
    this.#enteredAt = performance.now();
    try {
      return enter();
    } finally {
      this.#usedMs += performance.now() - this.#enteredAt;
      this.#enteredAt = undefined;
    }
  }

  #start(run: ContextRun, script: SandboxScript): void {
    const { context } = run;
    const host = context.newObject();
    const sync = (name: string, fn: (...values: unknown[]) => unknown) => {
      const handle = context.newFunction(name, (...args) => {
        const value = fn(...args.map((arg) => context.dump(arg) as unknown));
        return typeof value === "number" ? context.newNumber(value) : context.undefined;
      });
      context.setProp(host, name, handle);
      handle.dispose();
    };
    const async = (name: string, call: (...values: unknown[]) => Promise<unknown>) => {
      const handle = context.newFunction(name, (...args) => this.#deferred(run, call(...args.map((arg) => context.dump(arg) as unknown))));
      context.setProp(host, name, handle);
      handle.dispose();
    };
    const decode = (text: unknown): unknown => (typeof text === "string" ? JSON.parse(text) : undefined);
    async("agent", (prompt, options, strand) => script.host.agent(prompt, decode(options), Number(strand)));
    sync("fork", (strand, kind) => script.host.fork(Number(strand), kind === "pipeline" ? "pipeline" : "parallel"));
    sync("item", (fork, index) => script.host.item(Number(fork), Number(index)));
    sync("join", (fork) => script.host.join(Number(fork)));
    async("workflow", (ref, args, strand) => script.host.workflow(decode(ref), decode(args), Number(strand)));
    sync("log", (message) => script.host.log(String(message)));
    sync("phase", (title) => script.host.phase(String(title)));
    sync("checkCaps", () => script.host.checkCaps());
    sync("spent", () => script.host.spent());
    sync("spentUsd", () => script.host.spentUsd());
    sync("remainingUsd", (agentType) => script.host.remainingUsd(typeof agentType === "string" ? agentType : undefined));
    sync("done", (text) => run.resolve(decode(text)));
    sync("fail", (message) => run.reject(new WorkflowScriptFailedError(String(message))));

    const install = this.#guest(() => context.evalCode(PRELUDE, "cadre:prelude"));
    const installer = context.unwrapResult(install);
    const argsJson = script.args === undefined ? context.undefined : context.newString(JSON.stringify(script.args));
    const budget = script.budgetTotal === null ? context.null : context.newNumber(script.budgetTotal);
    const nested = script.nested ? context.true : context.false;
    const strand = context.newNumber(script.strand ?? 0);
    const finisher = this.#guest(() => context.callFunction(installer, context.undefined, host, argsJson, budget, nested, strand));
    strand.dispose();
    installer.dispose();
    host.dispose();
    argsJson.dispose();
    budget.dispose();
    const finish = context.unwrapResult(finisher);
    const body = this.#guest(() => context.evalCode(script.body, script.filename));
    if (body.error) {
      const text = errorText(context, body.error);
      body.error.dispose();
      finish.dispose();
      throw this.#limit ?? new WorkflowScriptFailedError(text);
    }
    const started = this.#guest(() => context.callFunction(finish, context.undefined, body.value));
    body.value.dispose();
    finish.dispose();
    context.unwrapResult(started).dispose();
  }

  /** A host promise as a promise of the script's; settling it runs the script on. */
  #deferred(run: ContextRun, promise: Promise<unknown>): QuickJSHandle {
    const { context } = run;
    const deferred: QuickJSDeferredPromise = context.newPromise();
    run.inFlight += 1;
    promise
      .then(
        (value) => {
          if (!deferred.alive || run.settled) return;
          const handle = value === undefined ? context.undefined : context.newString(JSON.stringify(value));
          deferred.resolve(handle);
          handle.dispose();
        },
        (error: unknown) => {
          if (!deferred.alive || run.settled) return;
          const handle = context.newError(error instanceof Error ? error.message : String(error));
          deferred.reject(handle);
          handle.dispose();
        },
      )
      .finally(() => {
        run.inFlight -= 1;
        if (deferred.alive) deferred.dispose();
        this.#afterGuest();
      });
    return deferred.handle;
  }

  /** Runs the jobs the script has queued, then ends what can no longer go on. */
  #afterGuest(): void {
    if (this.#closed) return;
    if (this.#limit === undefined) {
      const jobs = this.#guest(() => this.#runtime.executePendingJobs());
      if (jobs.error) {
        const text = errorText(jobs.error.context, jobs.error);
        jobs.error.dispose();
        if (this.#limit === undefined && /out of memory/i.test(text)) this.#limit = this.#memoryError();
      }
    }
    for (const run of [...this.#runs]) {
      if (this.#limit) run.reject(this.#limit);
      else if (run.inFlight === 0) {
        run.reject(
          new WorkflowLimitError(
            "never_settles",
            "the workflow script awaits something that can never settle (no agent or workflow() call is pending)",
          ),
        );
      }
    }
  }

  #memoryError(): WorkflowLimitError {
    return new WorkflowLimitError(
      "memory",
      `the workflow script ran out of memory (its limit is ${Math.round(this.#limits.memoryBytes / 1024 / 1024)} MiB) and was stopped`,
    );
  }

  /** A script's own error, or the limit behind it when the engine ran out of memory. */
  #explain(error: Error): Error {
    if (this.#limit) return this.#limit;
    if (!(error instanceof WorkflowScriptFailedError) || !/out of memory/i.test(error.message)) return error;
    this.#limit ??= this.#memoryError();
    return this.#limit;
  }
}
