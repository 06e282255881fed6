import { basename } from "node:path";
import { type DashboardServing, LiveRun, type LiveRunOptions, serveDashboard, singleRun } from "../../dashboard/index.ts";
import type { ResolvedSwarmConfig } from "../../swarm/config/index.ts";

export interface RunDashboard {
  live: LiveRun;
  serving: DashboardServing;
}

/** `cadre run --ui`: the run's live state, served on its own port until close(). */
export async function openRunDashboard(input: {
  address: { host: string; port: number };
  token: string | undefined;
  config: ResolvedSwarmConfig;
  /** The budget the run applies (a rehearsal applies none unless asked). */
  budgetUsd: number | undefined;
  costSimulated: boolean;
  /** The scheduler of an in-process run (a distributed one has none here). */
  scheduler: LiveRunOptions["scheduler"];
  outDir: string;
  startedAt: number;
}): Promise<RunDashboard> {
  const { config } = input;
  const live = new LiveRun({
    id: basename(input.outDir),
    title: config.name,
    mode: "swarm",
    tasks: config.tasks,
    startedAt: input.startedAt,
    budgetUsd: input.budgetUsd,
    costSimulated: input.costSimulated,
    scheduler: input.scheduler,
  });
  const serving = await serveDashboard(singleRun(live), { ...input.address, token: input.token });
  return { live, serving };
}
