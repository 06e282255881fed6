// SIGINT, SIGTERM and SIGHUP for a command: the first stops gracefully, a second at once, with the shell's exit codes.
import process from "node:process";
import { AbortError } from "../errors.ts";

/** How a shell reports a process a signal stopped: 128 + the signal's number. */
export const SIGNAL_EXIT_CODES = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
export type StopSignal = keyof typeof SIGNAL_EXIT_CODES;
const STOP_SIGNALS = Object.keys(SIGNAL_EXIT_CODES) as StopSignal[];

export interface StopHandlers {
  /** The first signal: the command is stopping gracefully. */
  onStop?(signal: StopSignal): void;
  /**
   * The second: record what can be recorded, synchronously; the process then exits with 128 + that signal
   * (after the promise it may return settles, for at most KILL_GRACE_MS: telemetry leaving).
   */
  onKill?(): Promise<void> | undefined;
}

export interface Stopping {
  /** Aborted by the first signal, with an AbortError (what it stops is "cancelled", not "failed"). */
  signal: AbortSignal;
  /** The first signal that came, if one did. */
  readonly received: StopSignal | undefined;
  /** Restores the default behaviour. */
  dispose(): void;
}

const ignore = () => {};

/** What a signal stops is cancelled by it: "the run was stopped by SIGTERM". */
class StoppedBySignal extends AbortError {
  constructor(what: string, signal: StopSignal) {
    super(what);
    this.message = `${what} was stopped by ${signal}`;
  }
}

/** How long a second signal waits for what onKill still sends before the process exits. */
const KILL_GRACE_MS = 2_000;

/**
 * SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closing) once abort the
 * returned signal, its reason naming `what` is stopped (e.g. "the run"): the
 * command stops what it runs and writes what it has. A
 * second one calls onKill and exits at once; what cadre started is then ended
 * by the reaper (src/worker/reaper.ts).
 */
export function stopOnSignals(what: string, handlers: StopHandlers = {}): Stopping {
  const controller = new AbortController();
  let received: StopSignal | undefined;
  const onSignal = (name: StopSignal) => {
    // After a hang-up the terminal is gone: a write to it fails (EIO), which must not end the command before it has stopped.
    if (name === "SIGHUP") for (const stream of [process.stdout, process.stderr]) stream.on("error", ignore);
    if (!controller.signal.aborted) {
      received = name;
      handlers.onStop?.(name);
      controller.abort(new StoppedBySignal(what, name));
      return;
    }
    let pending: Promise<void> | undefined;
    try {
      pending = handlers.onKill?.();
    } finally {
      if (pending === undefined) process.exit(SIGNAL_EXIT_CODES[name]);
    }
    const grace = new Promise<void>((resolve) => setTimeout(resolve, KILL_GRACE_MS).unref());
    void Promise.race([pending.catch(ignore), grace]).finally(() => process.exit(SIGNAL_EXIT_CODES[name]));
  };
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    dispose() {
      for (const name of STOP_SIGNALS) process.off(name, onSignal);
    },
  };
}

/** Resolves once the signal is aborted. */
export function stopped(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
