// The background work of one session (workflows, background agents and shells, monitors), folded from the CLI's task messages.
import { readFileSync, statSync } from "node:fs";
import { z } from "zod";
import {
  type CliMessage,
  type TaskNotificationMessage,
  type TaskProgressMessage,
  type TaskStartedMessage,
  type TaskUpdatedMessage,
  type TaskUsage,
  type WorkflowAgentProgress,
  WorkflowAgentProgressSchema,
  WorkflowOutputFileSchema,
  type WorkflowPhaseProgress,
} from "../protocol/index.ts";

export const BackgroundTaskUsageSchema = z.object({ totalTokens: z.number(), toolUses: z.number(), durationMs: z.number() });
type BackgroundTaskUsage = z.infer<typeof BackgroundTaskUsageSchema>;

/** The CLI's usage of a background task in cadre's names. */
function usageFromCli(usage: TaskUsage): BackgroundTaskUsage {
  return { totalTokens: usage.total_tokens, toolUses: usage.tool_uses, durationMs: usage.duration_ms };
}

/** One agent of a workflow: the fields of its progress entry that cadre keeps, its phase by title. */
export const WorkflowAgentSchema = WorkflowAgentProgressSchema.pick({
  index: true,
  label: true,
  agentId: true,
  state: true,
  tokens: true,
  toolCalls: true,
  durationMs: true,
})
  .strip()
  .extend({ phase: z.string().optional() });
export type WorkflowAgent = z.infer<typeof WorkflowAgentSchema>;

/** One background task of a session, as cadre shows and records it. */
export const BackgroundTaskSchema = z.object({
  id: z.string(),
  runId: z.string().optional(),
  /** The CLI's task_type: local_workflow, local_agent, local_bash, monitor, …. */
  kind: z.string(),
  description: z.string(),
  /** running, then completed, failed or stopped (the CLI's words). */
  status: z.string(),
  toolUseId: z.string().optional(),
  /** The background task (a subagent) that launched this one. */
  parentTaskId: z.string().optional(),
  workflowName: z.string().optional(),
  usage: BackgroundTaskUsageSchema.optional(),
  /** A workflow's phases by title, in order. */
  phases: z.array(z.string()).optional(),
  /** A workflow's agents. */
  agents: z.array(WorkflowAgentSchema).optional(),
  summary: z.string().optional(),
  outputFile: z.string().optional(),
  /** A workflow's return value, from its output file. */
  result: z.unknown().optional(),
  error: z.string().optional(),
});
export type BackgroundTask = z.infer<typeof BackgroundTaskSchema>;

/** A workflow's output file is small JSON; a larger one is not read. */
const MAX_OUTPUT_FILE_BYTES = 1024 * 1024;

function workflowResult(path: string): unknown {
  try {
    if (statSync(path).size > MAX_OUTPUT_FILE_BYTES) return undefined;
    const parsed = WorkflowOutputFileSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data.result : undefined;
  } catch {
    return undefined;
  }
}

function agentsOf(progress: TaskProgressMessage["workflow_progress"]): { phases: string[]; agents: WorkflowAgent[] } | undefined {
  if (!progress) return undefined;
  const phases: string[] = [];
  const agents: WorkflowAgent[] = [];
  for (const entry of progress) {
    if (entry.type === "workflow_phase") phases.push((entry as WorkflowPhaseProgress).title);
    else if (entry.type === "workflow_agent") {
      const agent = entry as WorkflowAgentProgress;
      // "queued" until it starts, then the CLI's word: "start", "done", ….
      const state = agent.agentId === undefined && agent.state === "start" ? "queued" : agent.state;
      const kept = WorkflowAgentSchema.safeParse({ ...agent, phase: agent.phaseTitle, state });
      // An entry that is no whole agent (the union let it through as another kind) is left out.
      if (kept.success) agents.push(kept.data);
    }
  }
  return { phases, agents };
}

/**
 * The background tasks of a session by id. `running` is the CLI's own level
 * (background_tasks_changed, which replaces the set each time); the task_*
 * messages fill in what each task is and how it ended.
 */
export class BackgroundWork {
  readonly #tasks = new Map<string, BackgroundTask>();
  #running = new Set<string>();

  /** Every task the session started in the background, oldest first. */
  get tasks(): BackgroundTask[] {
    return [...this.#tasks.values()].map((task) => ({ ...task }));
  }

  /** Tasks the CLI still runs. */
  get running(): BackgroundTask[] {
    return this.tasks.filter((task) => this.#running.has(task.id));
  }

  get anyRunning(): boolean {
    return this.#running.size > 0;
  }

  /**
   * Reads the results of finished workflows that were not there yet when their
   * notification came (the CLI may write the file just after); returns the tasks it completed.
   */
  readLateResults(): BackgroundTask[] {
    const read: BackgroundTask[] = [];
    for (const task of this.#tasks.values()) {
      if (task.kind !== "local_workflow" || task.outputFile === undefined || task.result !== undefined) continue;
      task.result = workflowResult(task.outputFile);
      if (task.result !== undefined) read.push({ ...task });
    }
    return read;
  }

  /** Folds one message in; returns the task it changed, if any. */
  observe(message: CliMessage): BackgroundTask | undefined {
    if (message.type !== "system") return undefined;
    switch (message.subtype) {
      case "background_tasks_changed": {
        this.#running = new Set(message.tasks.filter((entry) => entry.ambient !== true).map((entry) => entry.task_id));
        for (const entry of message.tasks) {
          if (!this.#tasks.has(entry.task_id)) {
            this.#tasks.set(entry.task_id, {
              id: entry.task_id,
              runId: entry.run_id,
              kind: entry.task_type,
              description: entry.description,
              status: "running",
              parentTaskId: entry.parent_task_id,
            });
          }
        }
        return undefined;
      }
      case "task_started":
        return this.#started(message as TaskStartedMessage);
      case "task_progress":
        return this.#progress(message as TaskProgressMessage);
      case "task_updated":
        return this.#update(message as TaskUpdatedMessage);
      case "task_notification":
        return this.#notified(message as TaskNotificationMessage);
      default:
        return undefined;
    }
  }

  #started(message: TaskStartedMessage): BackgroundTask | undefined {
    const known = this.#tasks.get(message.task_id);
    // A foreground task (is_backgrounded false) is part of the turn, not background work, until it is moved there.
    if (!known && message.is_backgrounded === false) return undefined;
    const task: BackgroundTask = {
      ...known,
      id: message.task_id,
      runId: message.run_id ?? known?.runId,
      kind: message.task_type ?? known?.kind ?? "unknown",
      description: message.description,
      status: "running",
      toolUseId: message.tool_use_id,
      parentTaskId: message.parent_task_id ?? known?.parentTaskId,
      workflowName: message.workflow_name,
    };
    this.#tasks.set(task.id, task);
    return { ...task };
  }

  #progress(message: TaskProgressMessage): BackgroundTask | undefined {
    const task = this.#tasks.get(message.task_id);
    if (!task) return undefined;
    if (message.usage) task.usage = usageFromCli(message.usage);
    const workflow = agentsOf(message.workflow_progress);
    if (workflow) Object.assign(task, workflow);
    return { ...task };
  }

  #update(message: TaskUpdatedMessage): BackgroundTask | undefined {
    const task = this.#tasks.get(message.task_id);
    if (!task) return undefined;
    if (message.patch.status !== undefined) task.status = message.patch.status;
    if (message.patch.error !== undefined) task.error = message.patch.error;
    return { ...task };
  }

  #notified(message: TaskNotificationMessage): BackgroundTask | undefined {
    const task = this.#tasks.get(message.task_id);
    if (!task) return undefined;
    task.status = message.status;
    task.summary = message.summary;
    task.outputFile = message.output_file;
    if (message.usage) {
      // A workflow's notification counts its duration from its first agent: the longer one, from task_progress, stays.
      const usage = usageFromCli(message.usage);
      task.usage = { ...usage, durationMs: Math.max(usage.durationMs, task.usage?.durationMs ?? 0) };
    }
    if (task.kind === "local_workflow" && message.output_file !== undefined) task.result = workflowResult(message.output_file);
    return { ...task };
  }
}
