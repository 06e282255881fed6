/**
 * What travels through Redis, as zod schemas: read back, it is validated
 * here once (Redis is an edge: another version of cadre, or another program,
 * may have written it).
 */
import { z } from "zod";
import type { OrchestratorEvent, OrchestratorOptions } from "../orchestrator/index.ts";
import { HookPolicySchema, SessionRecordSchema, TaskResultSchema, TaskSpecSchema } from "../orchestrator/index.ts";
import { AgentDefinitionSchema, HookEventSchema } from "../protocol/index.ts";
import { RehearsalScriptsSchema } from "../rehearsal/index.ts";
import { DistributedDataError } from "./errors.ts";

/**
 * The orchestrator settings every host applies to a run: what a swarm config
 * says (agents, defaults, hooks, connections, limits). JSON only, so no
 * callbacks: hooks are policies, shell commands or supervisor agents.
 */
export type SharedOrchestratorOptions = Pick<
  OrchestratorOptions,
  | "agents"
  | "agentLimits"
  | "budgetForecast"
  | "budgetUsd"
  | "connections"
  | "planUsage"
  | "defaults"
  | "hooks"
  | "idleTimeoutMs"
  | "peerTools"
  | "retries"
  | "timeoutMs"
>;

/** A routed hook as JSON can carry it: a shell command, a policy or a supervisor agent (no callbacks). */
const SharedHookSchema = z.intersection(
  z.union([z.object({ command: z.string().min(1) }), z.object({ policy: HookPolicySchema }), z.object({ supervisor: z.string().min(1) })]),
  z.object({ matcher: z.string().optional(), timeoutMs: z.number().positive().optional(), onError: z.enum(["deny", "allow"]).optional() }),
);

/** SharedOrchestratorOptions as a host checks them; worker settings are the CLI's to judge, so they pass as objects. */
const SharedOptionsSchema = z.looseObject({
  agents: z.record(z.string(), AgentDefinitionSchema).optional(),
  agentLimits: z.record(z.string(), z.int().positive()).optional(),
  budgetUsd: z.number().positive().optional(),
  budgetForecast: z.boolean().optional(),
  planUsage: z.object({ pauseAt: z.number() }).optional(),
  connections: z.record(z.string(), z.array(z.string())).optional(),
  defaults: z.record(z.string(), z.unknown()).optional(),
  hooks: z.partialRecord(HookEventSchema, z.array(SharedHookSchema)).optional(),
  idleTimeoutMs: z.number().positive().optional(),
  peerTools: z.boolean().optional(),
  retries: z.int().min(0).optional(),
  timeoutMs: z.number().positive().optional(),
});

/** What a host needs to serve a run, written once by its coordinator. */
export const DistributedRunSchema = z.object({
  version: z.literal(1),
  swarm: z.string(),
  /** Tasks running at once over all hosts (BullMQ's global concurrency of the run's queue). */
  concurrency: z.int().positive(),
  // The parsed value is the options as written: the schema checks their shape, the type is the orchestrator's.
  options: SharedOptionsSchema.transform((options) => options as SharedOrchestratorOptions),
  /** Under --rehearse: the scripts each host's own scripted model plays. */
  rehearsal: RehearsalScriptsSchema.nullable(),
  createdAt: z.number(),
});
export type DistributedRun = z.infer<typeof DistributedRunSchema>;

/** A job: the task as the orchestrator takes it, without its signal (cancellation travels on its own). */
export const JobDataSchema = z.object({
  spec: TaskSpecSchema.extend({ worker: z.record(z.string(), z.unknown()).optional() }),
  /** The W3C `traceparent` of the task's span on the coordinator, when it traces: the host's spans join that trace. */
  traceContext: z.string().optional(),
});
export type JobData = z.infer<typeof JobDataSchema>;

/** A job's data, checked; a DistributedDataError (the job then fails) when it is not a task. */
export function readJobData(value: unknown): JobData {
  return readValue(JobDataSchema, value, "a job's task");
}

/** A job's return value: the task's result, the host that ran it, and the sessions of that host's workers so far. */
export const JobResultSchema = z.object({
  host: z.string(),
  /** Absent from hosts of an older cadre. */
  sessions: z.array(SessionRecordSchema).default([]),
  result: TaskResultSchema,
});
export type JobResult = z.infer<typeof JobResultSchema>;

/** A job's return value, checked; a DistributedDataError when it is not one. */
export function readJobResult(value: unknown): JobResult {
  return readValue(JobResultSchema, value, "a job's result");
}

/** A poke on the control channel: hosts re-read what it names. */
export const ControlMessageSchema = z.discriminatedUnion("type", [
  /** The set of runs changed. */
  z.object({ type: z.literal("runs") }),
  /** The coordinator cancelled a job: the host running it stops it. */
  z.object({ type: z.literal("cancel"), run: z.string(), job: z.string() }),
  /** Some host's spending reached the run's budget: every host stops the run's tasks. */
  z.object({ type: z.literal("budget"), run: z.string() }),
  /** A steering request waits for the host of this name (see steering.ts). */
  z.object({ type: z.literal("steer"), run: z.string(), host: z.string() }),
]);
export type ControlMessage = z.infer<typeof ControlMessageSchema>;

/** A value read from Redis, checked against its schema; `what` names it in the error. */
export function readValue<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new DistributedDataError(what, `${issue?.path.join(".") || "(top)"}: ${issue?.message}`);
}

/** JSON read from Redis, checked against its schema. */
export function readJson<S extends z.ZodType>(schema: S, text: string, what: string): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DistributedDataError(what, "not JSON");
  }
  return readValue(schema, value, what);
}

/** An event from a host's orchestrator; only its type is checked (hosts wrote it from orchestrator events). */
const EventSchema = z.looseObject({ type: z.string() });

export function readEvent(text: string): OrchestratorEvent {
  return readJson(EventSchema, text, "an event") as OrchestratorEvent;
}
