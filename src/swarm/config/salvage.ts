// What can be kept of a config that failed the schema, so the semantic checks still report in the same pass.
import type { z } from "zod";
import { HookEventSchema } from "../../protocol/index.ts";
import { type Hooks, SwarmHookMatcherSchema } from "./hooks.ts";
import { type SwarmConfig, SwarmConfigSchema, type TaskConfig, TaskSchema } from "./schema.ts";

/**
 * What the semantic checks may take as known in a salvaged config, where
 * parts that failed the schema are left out.
 */
export interface SalvageGaps {
  /** Every agent name written under `agents`, valid entry or not: a reference to a broken agent is not an unknown one. */
  agentNames: string[];
  /** False when a task was left out (its name or for_each unreadable): a name no task has may then be that task's. */
  allTaskNames: boolean;
}

type Record_ = Record<string, unknown>;

const isRecord = (value: unknown): value is Record_ => typeof value === "object" && value !== null && !Array.isArray(value);

/** The value if it passes `schema` (with the schema's defaults applied), else undefined. */
function valid<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> | undefined {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The entries of a mapping whose values pass `schema`. */
function validEntries<S extends z.ZodType>(schema: S, value: unknown): Record<string, z.infer<S>> | undefined {
  if (!isRecord(value)) return undefined;
  const kept: Record<string, z.infer<S>> = {};
  for (const [key, item] of Object.entries(value)) {
    const checked = valid(schema, item);
    if (checked !== undefined) kept[key] = checked;
  }
  return kept;
}

/** A task with only its valid fields; undefined when its name or for_each cannot be read (its names are then unknown). */
function salvageTask(value: unknown): TaskConfig | undefined {
  if (!isRecord(value)) return undefined;
  const task: Record_ = {};
  for (const [key, schema] of Object.entries(TaskSchema.shape)) {
    const checked = valid(schema, value[key]);
    if (checked !== undefined) task[key] = checked;
  }
  if (task.name === undefined || (value.for_each !== undefined && task.for_each === undefined)) return undefined;
  // A prompt that is not a string still leaves a task that others may depend on.
  return { prompt: "", ...task } as TaskConfig;
}

/** Left-out items stay holes, so the items kept keep their index (forEach and some skip holes). */
function keptAt<T>(items: unknown[], salvage: (item: unknown) => T | undefined): T[] {
  const kept: T[] = [];
  items.forEach((item, index) => {
    const checked = salvage(item);
    if (checked !== undefined) kept[index] = checked;
  });
  return kept;
}

function salvageHooks(value: unknown): Hooks | undefined {
  if (!isRecord(value)) return undefined;
  const hooks: Hooks = {};
  for (const [name, matchers] of Object.entries(value)) {
    const event = valid(HookEventSchema, name);
    if (event !== undefined && Array.isArray(matchers)) hooks[event] = keptAt(matchers, (matcher) => valid(SwarmHookMatcherSchema, matcher));
  }
  return hooks;
}

/**
 * The parts of a config that pass the schema when the whole does not, so
 * that `cadre validate` can still run the semantic checks (unknown agents,
 * cycles, duplicate names, …) and report every problem in one pass. Returns
 * undefined when the file is not even a mapping.
 */
export function salvageConfig(value: unknown): { config: SwarmConfig; gaps: SalvageGaps } | undefined {
  if (!isRecord(value)) return undefined;
  const { shape } = SwarmConfigSchema;
  const config: Record_ = {};
  for (const [key, schema] of Object.entries(shape)) {
    const checked = valid(schema, value[key]);
    if (checked !== undefined) config[key] = checked;
  }
  const agents = validEntries(shape.agents.unwrap().valueType, value.agents);
  const connections = validEntries(shape.connections.unwrap().valueType, value.connections);
  const rehearsal = validEntries(shape.rehearsal.unwrap().valueType, value.rehearsal);
  const hooks = salvageHooks(value.hooks);
  const entries = Array.isArray(value.tasks) ? value.tasks : [];
  const tasks = keptAt(entries, salvageTask);
  return {
    config: {
      ...config,
      ...(agents && { agents }),
      ...(connections && { connections }),
      ...(rehearsal && { rehearsal }),
      ...(hooks && { hooks }),
      tasks,
    } as SwarmConfig,
    gaps: {
      agentNames: isRecord(value.agents) ? Object.keys(value.agents) : [],
      allTaskNames: Array.isArray(value.tasks) && Object.keys(tasks).length === entries.length,
    },
  };
}
