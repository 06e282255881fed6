// A hook's one limit and its on_error: the answer when the hook fails or times out.
import type { HookOutput } from "../../protocol/index.ts";
import type { HookCallback } from "../../worker/index.ts";
import { HookTimeoutError } from "./errors.ts";
import { denyResult, noOpinion } from "./results.ts";

export interface FallbackOptions {
  /** The answer when the hook fails: "deny" blocks (fail closed), "allow" gives no opinion (fail open). */
  onError: "deny" | "allow";
  /** Stop waiting for the hook after this long; its signal is aborted so it can end its work. */
  timeoutMs?: number;
  /** Told about every failure, before the fallback answers. */
  onFailure?: (error: unknown) => void;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Wraps a hook so that a failure (a throw, or no answer within timeoutMs)
 * becomes a chosen answer instead of an error response to the CLI, which
 * would let the action go ahead. The failure is reported through onFailure.
 * When the CLI itself withdraws the request, the hook's own error passes
 * through: nobody waits for an answer then.
 */
export function withFallback(callback: HookCallback, options: FallbackOptions): HookCallback {
  return async (input, context) => {
    const timeout = new AbortController();
    const signal = AbortSignal.any([context.signal, timeout.signal]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut =
      options.timeoutMs === undefined
        ? undefined
        : new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              const error = new HookTimeoutError(`the ${input.hook_event_name} hook`, options.timeoutMs!);
              timeout.abort(error);
              reject(error);
            }, options.timeoutMs);
          });
    try {
      // Called at once (a synchronous throw becomes a rejection), so it sees the signal before any abort.
      const answer = (async () => callback(input, { ...context, signal }))();
      // After a timeout the hook's late failure has nobody to report to.
      answer.catch(() => {});
      return await (timedOut ? Promise.race([answer, timedOut]) : answer);
    } catch (error) {
      if (context.signal.aborted) throw error;
      try {
        options.onFailure?.(error);
      } catch {
        // A broken reporter must not change the hook's answer.
      }
      return fallback(input.hook_event_name, options.onError, error);
    } finally {
      clearTimeout(timer);
    }
  };
}

function fallback(event: string, onError: "deny" | "allow", error: unknown): HookOutput {
  if (onError === "allow") return noOpinion();
  return denyResult(event, `denied because the ${event} hook failed (on_error: deny): ${describe(error)}`);
}
