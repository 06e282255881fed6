export { DashboardError } from "./errors.ts";
export { type DashboardSource, type PermissionAnswer, type RunFeed, type RunSnapshot, singleRun } from "./feed.ts";
export { LiveRun, type LiveRunOptions } from "./live-run.ts";
export { type DashboardHandler, dashboardHandler } from "./routes.ts";
export { RunsDirectory } from "./runs-directory.ts";
export { type DashboardServing, dashboardUrl, type ServeDashboardOptions, serveDashboard } from "./serve.ts";
