/**
 * A time limit counted from a given start (epoch ms). Timers count from the
 * event loop's cached clock, a few ms before Date.now() on a busy loop, so
 * one that fires early waits out the rest: what it stops has run for its
 * whole limit by Date.now(), as durations are measured.
 */
export function startTimeLimit(startedAt: number, limitMs: number, onExpired: () => void): () => void {
  let timer: ReturnType<typeof setTimeout>;
  const arm = (ms: number) => {
    timer = setTimeout(() => {
      const left = startedAt + limitMs - Date.now();
      if (left > 0) arm(left);
      else onExpired();
    }, ms);
  };
  arm(limitMs);
  return () => clearTimeout(timer);
}
