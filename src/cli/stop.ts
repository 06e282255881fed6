import process from "node:process";

/** Aborted when SIGINT or SIGTERM arrives; a second one ends the process at once. */
export function stopSignal(): AbortSignal {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) process.exit(signal === "SIGINT" ? 130 : 143);
    stop.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return stop.signal;
}

/** Resolves once the signal is aborted. */
export function stopped(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
