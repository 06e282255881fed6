// Replays a recorded run to its end and resolves with its record: the library form of `cadre replay`, for tests kept as fixtures.
import { type RunSwarmFileOptions, runSwarmFile, type SwarmRunResult } from "../run-swarm-file.ts";
import { planReplay, type ReplayPlanOptions } from "./plan.ts";

export interface ReplaySwarmFileOptions
  extends ReplayPlanOptions,
    Omit<RunSwarmFileOptions, "replay" | "rehearse" | "rehearseBudget" | "redis" | "resume"> {}

/**
 * Replays the run recorded in `runDir` (planReplay) with the real CLI
 * against its recorded replies and resolves as runSwarmFile does; the
 * record's `replay.divergences` say where a session left the record, and a
 * divergence makes the exit code 1 even when every task succeeded.
 */
export async function replaySwarmFile(runDir: string, options: ReplaySwarmFileOptions): Promise<SwarmRunResult> {
  const { config, overrides, inPlace, ...run } = options;
  const plan = await planReplay(runDir, { config, overrides, inPlace });
  const result = await runSwarmFile(plan.config, { ...run, replay: plan });
  const diverged = (result.summary.replay?.divergences.length ?? 0) > 0;
  return diverged && result.exitCode === 0 ? { ...result, exitCode: 1 } : result;
}
