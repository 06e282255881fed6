/**
 * Hook callbacks of one worker: cadre gives each handler function a callback
 * id, tells the CLI about them in `initialize`, and runs the right one when a
 * `hook_callback` control request names its id.
 */
import {
  type HookCallbackMatcher,
  type HookEvent,
  HookEventSchema,
  type HookInput,
  type HookOutput,
  type InitializeRequest,
} from "../protocol/index.ts";

export interface HookContext {
  toolUseId: string | undefined;
  /** Aborted when the CLI withdraws the request or the worker dies. */
  signal: AbortSignal;
}

export type HookCallback = (input: HookInput, context: HookContext) => HookOutput | Promise<HookOutput>;

/**
 * One matcher of a worker's hooks: the protocol's HookCallbackMatcher with
 * functions in place of callback ids. `onFailure` (what the CLI does when a
 * callback throws, times out or answers nonsense) defaults to "block" here,
 * not to the CLI's "continue": a guard that breaks must not open the gate.
 */
export type HookMatcher = Pick<HookCallbackMatcher, "matcher" | "onFailure"> & {
  hooks: HookCallback[];
  /** The CLI's own limit for these callbacks, in seconds. */
  timeoutSeconds?: number;
};

/** Event name (PreToolUse, PostToolUse, Stop, …) → matchers. */
export type HookConfig = Partial<Record<HookEvent, HookMatcher[]>>;

type InitializeHooks = NonNullable<InitializeRequest["hooks"]>;

export class HookRegistry {
  readonly #callbacks = new Map<string, HookCallback>();
  /** Callback id → its matcher's limit in ms, where the matcher names one. */
  readonly #limits = new Map<string, number>();
  readonly #initializeHooks: InitializeHooks = {};

  constructor(config: HookConfig = {}) {
    for (const event of HookEventSchema.options) {
      const matchers = config[event];
      if (!matchers) continue;
      this.#initializeHooks[event] = matchers.map((m) => {
        const ids = m.hooks.map((callback) => {
          const id = `hook_${this.#callbacks.size}`;
          this.#callbacks.set(id, callback);
          if (m.timeoutSeconds !== undefined) this.#limits.set(id, m.timeoutSeconds * 1000);
          return id;
        });
        return {
          ...(m.matcher !== undefined && { matcher: m.matcher }),
          hookCallbackIds: ids,
          ...(m.timeoutSeconds !== undefined && { timeout: m.timeoutSeconds }),
          onFailure: m.onFailure ?? "block",
        };
      });
    }
  }

  get isEmpty(): boolean {
    return this.#callbacks.size === 0;
  }

  /** The `hooks` field of the initialize request. */
  toInitialize(): InitializeHooks {
    return this.#initializeHooks;
  }

  /** How long cadre waits for this callback: its matcher's limit (the CLI's), so cadre never gives up before the CLI does. */
  limitMs(callbackId: string): number | undefined {
    return this.#limits.get(callbackId);
  }

  async invoke(callbackId: string, input: HookInput, context: HookContext): Promise<HookOutput> {
    const callback = this.#callbacks.get(callbackId);
    if (!callback) throw new Error(`no hook callback is registered as "${callbackId}"`);
    return await callback(input, context);
  }
}
