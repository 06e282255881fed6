// Waiting on several sessions at once (wait_sessions): until any or all are settled, with progress.
import type { ManagedSession } from "./managed-session.ts";

export interface WaitOptions {
  /** "any": until one session is settled; "all": until every one is. */
  mode: "any" | "all";
  timeoutMs: number;
  /** The client cancelled the call. */
  signal?: AbortSignal;
  /** Called at once, whenever the number of settled sessions changes, and every few seconds. */
  onProgress?: (settled: number, total: number) => void;
}

const PROGRESS_INTERVAL_MS = 5_000;

/**
 * Waits until sessions are settled (see ManagedSession.settled): their turn
 * ended, or it waits for a permission answer. Resolves true when the wait was
 * satisfied, false on timeout or cancellation; never rejects.
 */
export function waitSettled(sessions: readonly ManagedSession[], options: WaitOptions): Promise<boolean> {
  const count = () => sessions.filter((s) => s.settled).length;
  const satisfied = () => (options.mode === "all" ? count() === sessions.length : count() > 0);
  if (satisfied() || options.signal?.aborted) return Promise.resolve(satisfied());
  return new Promise((resolve) => {
    let reported = count();
    options.onProgress?.(reported, sessions.length);
    const offs = sessions.map((s) =>
      s.onChange(() => {
        const now = count();
        if (now !== reported) {
          reported = now;
          options.onProgress?.(now, sessions.length);
        }
        if (satisfied()) finish(true);
      }),
    );
    const ticker = setInterval(() => options.onProgress?.(count(), sessions.length), PROGRESS_INTERVAL_MS);
    const timer = setTimeout(() => finish(false), options.timeoutMs);
    const onAbort = () => finish(false);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    function finish(done: boolean): void {
      for (const off of offs) off();
      clearInterval(ticker);
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(done);
    }
  });
}
