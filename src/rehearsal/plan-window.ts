// The plan-window headers the API sends a subscription (claude.ai login), which the real CLI turns into rate_limit_event messages.
import { z } from "zod";

/**
 * A step's plan window: how much of a subscription's window is used, and when
 * it resets. Only a CLI logged in to a subscription reads these headers (see
 * `subscription` in offlineClaudeEnv); an API-key session ignores them.
 */
export const RehearsalPlanWindowSchema = z.looseObject({
  utilization: z.number().min(0).max(100).describe("Percent of the window used, 0 to 100."),
  resets_in_s: z.number().positive().describe("The window resets this many seconds after the response."),
  window: z.enum(["five_hour", "seven_day"]).default("five_hour").describe("Which plan window: five_hour or seven_day."),
  status: z
    .enum(["allowed", "allowed_warning", "rejected"])
    .optional()
    .describe("Default: rejected at 100 %, allowed_warning from 80 %, else allowed. A rejected step is answered with HTTP 429."),
  times: z
    .number()
    .int()
    .min(1)
    .default(1)
    .describe("A rejected window refuses the step's first `times` attempts, then the step plays (the window has reset)."),
});
export type RehearsalPlanWindow = z.infer<typeof RehearsalPlanWindowSchema>;

const WINDOW_HEADER = { five_hour: "5h", seven_day: "7d" } as const;

export function planWindowStatus(window: RehearsalPlanWindow): "allowed" | "allowed_warning" | "rejected" {
  return window.status ?? (window.utilization >= 100 ? "rejected" : window.utilization >= 80 ? "allowed_warning" : "allowed");
}

/** The `anthropic-ratelimit-unified-*` headers of a response under this window, as the API sends them. */
export function planWindowHeaders(window: RehearsalPlanWindow, now = Date.now()): Record<string, string> {
  const status = planWindowStatus(window);
  const reset = String(Math.ceil(now / 1000 + window.resets_in_s));
  const name = WINDOW_HEADER[window.window];
  return {
    "anthropic-ratelimit-unified-status": status,
    "anthropic-ratelimit-unified-reset": reset,
    "anthropic-ratelimit-unified-representative-claim": window.window,
    [`anthropic-ratelimit-unified-${name}-utilization`]: String(window.utilization / 100),
    [`anthropic-ratelimit-unified-${name}-reset`]: reset,
    [`anthropic-ratelimit-unified-${name}-status`]: status,
    // The CLI reports a window short of refused only once the response says which warning threshold it passed.
    ...(status === "allowed_warning" && {
      [`anthropic-ratelimit-unified-${name}-surpassed-threshold`]: String(Math.floor(window.utilization / 10) / 10),
    }),
  };
}
