// `cadre run script.js --ui`: a workflow run's live state as the dashboard: a row per agent() call with its phase, and the script's result.
import process from "node:process";
import { LiveWorkflow } from "../../dashboard/index.ts";
import type { OrchestratorEvent } from "../../orchestrator/index.ts";
import { RunModel, type WorkflowRunEvent, type WorkflowSummary } from "../../run/index.ts";
import { stopOnSignals, stopped } from "../signals.ts";
import { openRunDashboard, type RunDashboard } from "./dashboard.ts";

export class WorkflowDashboard {
  readonly #dashboard: RunDashboard;
  readonly #model: RunModel;
  readonly #workflow: LiveWorkflow;
  readonly #name: string;

  private constructor(dashboard: RunDashboard, model: RunModel, workflow: LiveWorkflow, name: string) {
    this.#dashboard = dashboard;
    this.#model = model;
    this.#workflow = workflow;
    this.#name = name;
  }

  static async open(input: {
    address: { host: string; port: number };
    token: string | undefined;
    meta: { name: string; description: string };
    outDir: string;
    budgetUsd: number | undefined;
    rehearsal: boolean;
  }): Promise<WorkflowDashboard> {
    const model = new RunModel({
      title: input.meta.name,
      mode: "swarm",
      startedAt: Date.now(),
      budgetUsd: input.budgetUsd,
      costSimulated: input.rehearsal,
    });
    const workflow = new LiveWorkflow(input.meta);
    const dashboard = await openRunDashboard({
      address: input.address,
      token: input.token,
      model,
      scheduler: undefined,
      outDir: input.outDir,
      workflow,
    });
    return new WorkflowDashboard(dashboard, model, workflow, input.meta.name);
  }

  get url(): string {
    return this.#dashboard.serving.url;
  }

  /** A workflow event: a call that runs gets its row as it starts (a replayed one shows from the record at the end). */
  workflow(event: WorkflowRunEvent): void {
    this.#workflow.apply(event);
    if (event.type === "agent_started" && !event.replayed) {
      const task = { name: event.name, template: event.name, agent: event.call.options.agentType, depends_on: [] };
      this.#model.apply({ type: "tasks_added", parent: this.#name, tasks: [task] }, Date.now());
    }
  }

  /** An event of the engine's tasks: the rows' status, turns, cost and conversation. */
  engine(event: OrchestratorEvent): void {
    this.#model.apply(event, Date.now());
  }

  /**
   * The run is over: the page shows its record. A person is watching, so the
   * page stays until Ctrl-C, unless they stopped the run themselves.
   */
  async finish(summary: WorkflowSummary | undefined, outDir: string, stoppedByUser: boolean): Promise<void> {
    this.#model.finishedAt = Date.now();
    this.#dashboard.live.finish(Date.now(), summary && { record: summary, dir: outDir });
    if (!stoppedByUser && summary) {
      process.stderr.write(`cadre run: the dashboard stays open at ${this.url} until Ctrl-C\n`);
      const leaving = stopOnSignals("the dashboard");
      await stopped(leaving.signal);
      leaving.dispose();
    }
    await this.#dashboard.serving.close();
  }
}
