import process from "node:process";
import { AbortError } from "../../errors.ts";

export interface InterruptHandlers {
  /** The first Ctrl-C (or SIGTERM): the run is stopping gracefully. */
  onInterrupt(): void;
  /** The second: kill the workers and record what can be recorded, synchronously; the process then exits with 130. */
  onKill(): void;
}

/**
 * Ctrl-C once aborts the returned signal (the run stops starting tasks,
 * stops the running ones and writes its summary); twice calls onKill and
 * exits at once. dispose() restores the default behaviour.
 */
export function interruptOnSignals(handlers: InterruptHandlers): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      handlers.onInterrupt();
      // An AbortError: the orchestrator reports the tasks it stops as "cancelled", not "failed".
      controller.abort(new AbortError(`the run (${name})`));
      return;
    }
    try {
      handlers.onKill();
    } finally {
      process.exit(130);
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
