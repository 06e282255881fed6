/**
 * Hook callbacks of one worker: cadre gives each handler function a callback
 * id, tells the CLI about them in `initialize`, and runs the right one when a
 * `hook_callback` control request names its id.
 */

/** The hook input the CLI sends (session_id, hook_event_name, tool_name, tool_input, …); fields vary by event. */
export type HookInput = { hook_event_name: string; session_id?: string; tool_name?: string; tool_input?: unknown } & Record<
  string,
  unknown
>;

/** Claude Code's hook JSON output (continue, decision, reason, hookSpecificOutput, …). */
export type HookResult = Record<string, unknown>;

export interface HookContext {
  toolUseId: string | undefined;
  /** Aborted when the CLI withdraws the request or the worker dies. */
  signal: AbortSignal;
}

export type HookCallback = (input: HookInput, context: HookContext) => HookResult | Promise<HookResult>;

export interface HookMatcher {
  /** A tool-name pattern as Claude Code understands it ("Bash", "Write|Edit", "mcp__.*"); absent matches all. */
  matcher?: string;
  hooks: HookCallback[];
  /** The CLI's own limit for these callbacks, in seconds. */
  timeoutSeconds?: number;
  /**
   * What the CLI does when a callback fails (throws, times out, answers
   * nonsense): "continue" lets the action go ahead, "block" blocks it. Default
   * "block": a guard that breaks must not open the gate.
   */
  onFailure?: "continue" | "block";
}

/** Event name (PreToolUse, PostToolUse, Stop, …) → matchers. */
export type HookConfig = Record<string, HookMatcher[]>;

interface InitializeMatcher {
  matcher?: string;
  hookCallbackIds: string[];
  timeout?: number;
  onFailure: "continue" | "block";
}

export class HookRegistry {
  private readonly callbacks = new Map<string, HookCallback>();
  private readonly initializeHooks: Record<string, InitializeMatcher[]> = {};

  constructor(config: HookConfig = {}) {
    for (const [event, matchers] of Object.entries(config)) {
      this.initializeHooks[event] = matchers.map((m) => {
        const ids = m.hooks.map((callback) => {
          const id = `hook_${this.callbacks.size}`;
          this.callbacks.set(id, callback);
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
    return this.callbacks.size === 0;
  }

  /** The `hooks` field of the initialize request. */
  toInitialize(): Record<string, InitializeMatcher[]> {
    return this.initializeHooks;
  }

  async invoke(callbackId: string, input: HookInput, context: HookContext): Promise<HookResult> {
    const callback = this.callbacks.get(callbackId);
    if (!callback) throw new Error(`no hook callback is registered as "${callbackId}"`);
    return await callback(input, context);
  }
}
