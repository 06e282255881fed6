// `cadre run --ui`: the run's live state served as the dashboard on a port of its own.
import { basename } from "node:path";
import { type DashboardServing, LiveRun, type LiveRunOptions, serveDashboard, singleRun } from "../../dashboard/index.ts";
import type { RunModel, SteerableRun } from "../../run/index.ts";

export interface RunDashboard {
  live: LiveRun;
  serving: DashboardServing;
}

/** `cadre run --ui`: the run's live state, served on its own port until close(). */
export async function openRunDashboard(input: {
  address: { host: string; port: number };
  token: string | undefined;
  /** The run's read-model, which the terminal reads too. */
  model: RunModel;
  /** The scheduler of an in-process run (a distributed one has none here). */
  scheduler: LiveRunOptions["scheduler"];
  outDir: string;
  /** The run: the page's messages and stops reach its running tasks. */
  steer: SteerableRun;
}): Promise<RunDashboard> {
  const live = new LiveRun({ id: basename(input.outDir), model: input.model, scheduler: input.scheduler, steer: input.steer });
  const serving = await serveDashboard(singleRun(live), { ...input.address, token: input.token });
  return { live, serving };
}
