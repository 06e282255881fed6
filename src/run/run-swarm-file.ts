// runSwarmFile: a swarm file run to its end from the library, with the same record as `cadre run`.
import { ConfigError, loadSwarmConfigOrThrow, missingScripts, type ResolvedSwarmConfig } from "../swarm/index.ts";
import type { Summary } from "./record/schema.ts";
import type { RunStop } from "./record/summary.ts";
import { type RunEvent, SwarmRun, type SwarmRunOptions } from "./swarm-run.ts";

export interface RunSwarmFileOptions extends SwarmRunOptions {
  /** Stops the run: running tasks end as cancelled, the record is still written. */
  signal?: AbortSignal;
  /** Each event as it happens (the buffered form's view of the stream). */
  onEvent?: (event: RunEvent) => void;
  /** The exit code a stop by `signal` gives (default 130, as for Ctrl-C). */
  stopExitCode?: number;
  /** The run, as it starts: its `send`, `stopTask` and `interrupt` reach one running task while the others go on. */
  onStart?: (run: SwarmRun) => void;
}

export interface SwarmRunResult {
  /** The record, as written to `path`. */
  summary: Summary;
  path: string;
  /** 0 every task succeeded, 1 some did not, `stopExitCode` when the signal stopped the run. */
  exitCode: number;
  /** Problems to report (scripted-model warnings, a lost Redis, a record that could not be written). */
  warnings: readonly string[];
}

/**
 * Runs a swarm file (or a config already loaded) to its end, as `cadre run`
 * does, and resolves with its record. A config with problems rejects with a
 * ConfigError that lists them all; under `rehearse`, so does one without a
 * script for every task.
 */
export async function runSwarmFile(file: string | ResolvedSwarmConfig, options: RunSwarmFileOptions): Promise<SwarmRunResult> {
  const config = typeof file === "string" ? await loadSwarmConfigOrThrow(file) : file;
  if (options.rehearse) {
    const missing = missingScripts(config);
    if (missing.length > 0)
      throw new ConfigError(
        missing.map((message) => ({ path: "", message })),
        config.file,
      );
  }
  const signal = options.signal ?? new AbortController().signal;
  const run = await SwarmRun.start(config, options);
  options.onStart?.(run);
  for await (const event of run.events(signal)) options.onEvent?.(event);
  const stop: RunStop | undefined = signal.aborted ? { reason: String(signal.reason), exitCode: options.stopExitCode ?? 130 } : run.stop;
  const { summary, path, error } = run.writeRecord(stop);
  return { summary, path, exitCode: summary.exit_code, warnings: [...run.warnings(), ...(error ? [error.message] : [])] };
}
