/** run_workflow and get_workflow: a workflow script (Claude Code's dialect) on cadre's fleet, its status and result. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { WorkflowRunEntry, WorkflowRuns } from "../workflow-runs.ts";
import { MAX_WAIT_S, ok, type ToolContext, WaitSchema } from "./common.ts";

const WorkflowStatusSchema = {
  run_id: z.string(),
  name: z.string(),
  status: z.enum(["running", "succeeded", "failed"]),
  agents_started: z.number(),
  running_agents: z.array(z.string()),
  logs: z.array(z.string()),
  result: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
};

function statusOf(entry: WorkflowRunEntry) {
  const outcome = entry.outcome;
  const structured = {
    run_id: entry.id,
    name: entry.name,
    status: outcome === undefined ? ("running" as const) : outcome.ok ? ("succeeded" as const) : ("failed" as const),
    agents_started: entry.agentsStarted,
    running_agents: [...entry.running],
    logs: entry.logs,
    ...(outcome?.ok && { result: outcome.result ?? null }),
    ...(outcome?.error && { error: outcome.error }),
  };
  const text =
    structured.status === "running"
      ? `workflow ${entry.name} (${entry.id}) is running: ${entry.agentsStarted} agents started; call get_workflow to wait for it`
      : structured.status === "succeeded"
        ? `workflow ${entry.name} returned: ${JSON.stringify(structured.result)}`
        : `workflow ${entry.name} failed: ${outcome?.error?.message}`;
  return ok(structured, text);
}

async function waitFor(entry: WorkflowRunEntry, waitS: number, signal: AbortSignal): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const aborted = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  await Promise.race([entry.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitS * 1000))), aborted]);
  clearTimeout(timer);
}

export function registerWorkflowTools(server: McpServer, context: ToolContext, runs: WorkflowRuns): void {
  const { owner } = context;
  server.registerTool(
    "run_workflow",
    {
      title: "Run a workflow script on cadre",
      description:
        "Run a workflow script in Claude Code's dialect (export const meta = {...}, then agent(), parallel(), pipeline(), phase(), log(), budget, workflow(), args) " +
        "on cadre's orchestrator: every agent() call is a child worker, with no 16-agent cap. Give the script inline, or the name of a saved workflow " +
        "(.claude/workflows/NAME.js). A script with a syntax error, an import or the clock is refused before any agent starts.",
      inputSchema: {
        script: z.string().max(524_288).optional().describe("The script's text."),
        name: z.string().optional().describe("A saved workflow: .claude/workflows/NAME.js of the project, else of the user."),
        args: z.unknown().optional().describe("The script's `args`, verbatim (pass arrays and objects as JSON values, not strings)."),
        budget_tokens: z.number().int().min(1).optional().describe("budget.total in output tokens; agent() throws once the run has spent it."),
        wait_s: WaitSchema,
      },
      outputSchema: WorkflowStatusSchema,
    },
    async ({ script, name, args, budget_tokens, wait_s }, extra) => {
      if ((script === undefined) === (name === undefined)) throw new Error("give the script, or the name of a saved workflow (one of them)");
      const entry = await runs.start(owner, {
        ...(script !== undefined && { script }),
        ...(name !== undefined && { name }),
        args,
        ...(budget_tokens !== undefined && { budgetTokens: budget_tokens }),
      });
      await waitFor(entry, wait_s ?? context.defaultWaitS, extra.signal);
      return statusOf(entry);
    },
  );
  server.registerTool(
    "steer_workflow_agent",
    {
      title: "Message, interrupt or stop one agent of a workflow run",
      description:
        "Reach one running agent() call of a run_workflow run (by its label, as get_workflow lists it under running_agents) while the others go on. " +
        "send: your message goes into its running turn, taken at its next step, and the call returns its answer after it. " +
        "interrupt: its turn ends. stop: it ends at once, its process and tools killed (one that waits for a slot ends without starting); " +
        "the call returns null to the script.",
      inputSchema: {
        run_id: z.string().min(1).describe("The run_id run_workflow returned."),
        agent: z.string().min(1).describe("The agent() call's label, from running_agents."),
        action: z.enum(["send", "interrupt", "stop"]),
        message: z.string().min(1).max(50_000).optional().describe("For send: the message, as text."),
      },
      outputSchema: WorkflowStatusSchema,
    },
    async ({ run_id, agent, action, message }) => {
      if ((action === "send") !== (message !== undefined)) throw new Error("send takes a message; interrupt and stop take none");
      await runs.steer(owner, run_id, agent, action, message);
      return statusOf(runs.find(owner, run_id));
    },
  );
  server.registerTool(
    "get_workflow",
    {
      title: "A workflow run's status and result",
      description: "The status of a run_workflow run; waits up to wait_s for it to end, then gives its result or error.",
      inputSchema: {
        run_id: z.string().min(1).describe("The run_id run_workflow returned."),
        wait_s: z.number().min(0).max(MAX_WAIT_S).optional().describe(`Seconds to wait for the run to end (default 0, max ${MAX_WAIT_S}).`),
      },
      outputSchema: WorkflowStatusSchema,
      annotations: { readOnlyHint: true },
    },
    async ({ run_id, wait_s }, extra) => {
      const entry = runs.find(owner, run_id);
      if (wait_s) await waitFor(entry, wait_s, extra.signal);
      return statusOf(entry);
    },
  );
}
