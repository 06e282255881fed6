/**
 * The workflow scripts a client of `cadre mcp` started with run_workflow: each
 * runs in the background on the server's orchestrator (its agents are tasks
 * like any child's), and is looked up by its run id, by the client that
 * started it only.
 */
import { randomUUID } from "node:crypto";
import process from "node:process";
import { CadreError } from "../errors.ts";
import { type Orchestrator, type SteerAction, TaskNotRunningError } from "../orchestrator/index.ts";
import {
  checkWorkflowScript,
  findSavedWorkflow,
  plainCallSpec,
  runWorkflowScript,
  taskSpecForCall,
  type WorkflowOutcome,
  type WorkflowSource,
} from "../workflow/index.ts";

/** No run of this id for this client. */
export class UnknownWorkflowRunError extends CadreError {
  constructor(id: string) {
    super("UNKNOWN_WORKFLOW_RUN", `no workflow run "${id}" (run_workflow returns the run_id)`);
  }
}

export interface WorkflowRunEntry {
  id: string;
  owner: string;
  name: string;
  /** Settles when the script has returned or failed. */
  done: Promise<void>;
  outcome: WorkflowOutcome | undefined;
  agentsStarted: number;
  /** The labels of its agent() calls under way (a label used again is `label#2`). */
  running: Set<string>;
  logs: string[];
  stop: AbortController;
}

export interface StartWorkflow {
  /** The script's text; or `name`, a saved workflow. */
  script?: string;
  name?: string;
  args?: unknown;
  budgetTokens?: number;
}

export class WorkflowRuns {
  readonly #runs = new Map<string, WorkflowRunEntry>();
  readonly #orchestrator: Orchestrator;
  readonly #cwd: string;

  constructor(orchestrator: Orchestrator, cwd: string = process.cwd()) {
    this.#orchestrator = orchestrator;
    this.#cwd = cwd;
  }

  /** Checks the script (a refusal throws, before any agent), then runs it in the background. */
  async start(owner: string, request: StartWorkflow): Promise<WorkflowRunEntry> {
    const found: WorkflowSource =
      request.script !== undefined
        ? { name: "(inline)", file: "workflow.js", source: request.script }
        : await findSavedWorkflow(request.name ?? "", { cwd: this.#cwd });
    const { meta, makesPlainCalls } = await checkWorkflowScript(found.source);
    // The process its first plain call takes starts while the sandbox loads.
    if (makesPlainCalls) this.#orchestrator.prepare(plainCallSpec());
    const stop = new AbortController();
    const entry: WorkflowRunEntry = {
      id: `wf_${randomUUID().slice(0, 12)}`,
      owner,
      name: meta.name,
      done: Promise.resolve(),
      outcome: undefined,
      agentsStarted: 0,
      running: new Set(),
      logs: [],
      stop,
    };
    entry.done = runWorkflowScript({
      source: found.source,
      filename: found.file,
      args: request.args,
      ...(request.budgetTokens !== undefined && { budgetTokens: request.budgetTokens }),
      places: { cwd: this.#cwd },
      signal: stop.signal,
      agents: { run: (call, prompt, signal) => this.#orchestrator.run(taskSpecForCall(call, `${meta.name}/${call.label}`, prompt, signal)) },
      onEvent: (event) => {
        if (event.type === "agent_started") entry.agentsStarted++;
        if (event.type === "agent_started" && !event.replayed) entry.running.add(event.call.label);
        if (event.type === "agent_ended") entry.running.delete(event.call.label);
        if (event.type === "workflow_log") entry.logs.push(event.message);
      },
    }).then((outcome) => {
      entry.outcome = outcome;
    });
    this.#runs.set(entry.id, entry);
    return entry;
  }

  find(owner: string, id: string): WorkflowRunEntry {
    const entry = this.#runs.get(id);
    if (entry === undefined || entry.owner !== owner) throw new UnknownWorkflowRunError(id);
    return entry;
  }

  /**
   * Reaches one running agent() call of a run, by its label, while the others go on: a message into its turn
   * (taken at its next step), an interrupt of that turn, or a stop (the call returns null to the script).
   */
  async steer(owner: string, id: string, label: string, action: SteerAction, text = ""): Promise<void> {
    const entry = this.find(owner, id);
    const name = `${entry.name}/${label}`;
    const origin = { from: "the parent Claude" };
    try {
      if (!entry.running.has(label)) throw new TaskNotRunningError(label, []);
      if (action === "send") this.#orchestrator.sendToTask(name, text, origin);
      else if (action === "stop") this.#orchestrator.stopTask(name, origin);
      else await this.#orchestrator.interruptTask(name, origin);
    } catch (error) {
      // Named in the run's own labels: the orchestrator's list holds other runs' tasks too.
      throw error instanceof TaskNotRunningError ? new TaskNotRunningError(label, [...entry.running]) : error;
    }
  }

  /** Stops every run and waits for their ends. */
  async closeAll(): Promise<void> {
    for (const entry of this.#runs.values()) entry.stop.abort();
    await Promise.all([...this.#runs.values()].map((entry) => entry.done));
  }
}
