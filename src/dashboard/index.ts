// The dashboard layer's surface: what the layers above use of it.
export { DashboardError } from "./errors.ts";
export { type RunSnapshot, singleRun } from "./feed.ts";
export { LiveRun, type LiveRunOptions } from "./live-run.ts";
export { type DashboardHandler, dashboardHandler } from "./routes.ts";
export { RunsDirectory } from "./runs-directory.ts";
export { type DashboardServing, dashboardUrl, serveDashboard } from "./serve.ts";
