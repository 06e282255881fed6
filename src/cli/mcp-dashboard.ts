// The dashboard page of `cadre mcp --http`: every client's child sessions, with their permission requests to answer.
import { DashboardError, type DashboardHandler, dashboardHandler, dashboardUrl, LiveRun, singleRun } from "../dashboard/index.ts";
import type { HttpServing, McpRuntime } from "../mcp/index.ts";
import { RunModel } from "../run/index.ts";

/**
 * The page at / of `cadre mcp --http`: the children of every client, their
 * state and conversations, and their permission requests to answer.
 */
export function childSessionsDashboard(
  runtime: McpRuntime,
  costSimulated: boolean,
): { page: DashboardHandler; url(serving: HttpServing): string; off(): void } {
  const model = new RunModel({
    title: "cadre mcp: child sessions",
    mode: "sessions",
    startedAt: Date.now(),
    budgetUsd: runtime.orchestrator.options.budgetUsd,
    costSimulated,
  });
  const live = new LiveRun({
    id: "sessions",
    model,
    scheduler: runtime.orchestrator.scheduler,
    answer: (id, requestId, answer) => {
      const session = runtime.registry.get(id);
      if (!session) throw new DashboardError("UNKNOWN_SESSION", `no child session ${id}`);
      session.answer(requestId, answer);
    },
  });
  return {
    page: dashboardHandler(singleRun(live)),
    url: (serving) => dashboardUrl(serving.origin, { token: serving.token, generated: serving.tokenGenerated }),
    off: runtime.orchestrator.on((event) => model.apply(event, Date.now())),
  };
}
