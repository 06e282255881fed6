/**
 * What travels through Redis, as zod schemas: read back, it is validated
 * here once (Redis is an edge: another version of cadre, or another program,
 * may have written it).
 */
import { z } from "zod";
import type { OrchestratorEvent, OrchestratorOptions, SessionRecord, TaskResult } from "../orchestrator/index.ts";
import { TaskSpecSchema } from "../orchestrator/index.ts";
import { RehearsalScriptsSchema } from "../rehearsal/index.ts";
import { DistributedDataError } from "./errors.ts";

/**
 * The orchestrator settings every host applies to a run: what a swarm config
 * says (agents, defaults, hooks, connections, limits). JSON only, so no
 * callbacks: hooks are policies, shell commands or supervisor agents.
 */
export type SharedOrchestratorOptions = Pick<
  OrchestratorOptions,
  "agents" | "agentLimits" | "budgetUsd" | "connections" | "defaults" | "hooks" | "idleTimeoutMs" | "peerTools" | "retries" | "timeoutMs"
>;

/** What a host needs to serve a run, written once by its coordinator. */
export const DistributedRunSchema = z.object({
  version: z.literal(1),
  swarm: z.string(),
  /** Tasks running at once over all hosts (BullMQ's global concurrency of the run's queue). */
  concurrency: z.int().positive(),
  // Written by the coordinator from a validated swarm config; deeper checks would repeat the config's.
  options: z.custom<SharedOrchestratorOptions>((value) => typeof value === "object" && value !== null && !Array.isArray(value)),
  /** Under --rehearse: the scripts each host's own scripted model plays. */
  rehearsal: RehearsalScriptsSchema.nullable(),
  createdAt: z.number(),
});
export type DistributedRun = z.infer<typeof DistributedRunSchema>;

/** A job: the task as the orchestrator takes it, without its signal (cancellation travels on its own). */
export const JobDataSchema = z.object({
  spec: TaskSpecSchema.extend({ worker: z.record(z.string(), z.unknown()).optional() }),
});
export type JobData = z.infer<typeof JobDataSchema>;

/** A job's data, checked; a DistributedDataError (the job then fails) when it is not a task. */
export function readJobData(value: unknown): JobData {
  return readValue(JobDataSchema, value, "a job's task");
}

const UsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadInputTokens: z.number(),
  cacheCreationInputTokens: z.number(),
});

const ErrorSummarySchema = z.object({ code: z.string(), message: z.string() });

const StatusSchema = z.enum(["succeeded", "failed", "cancelled", "skipped"]);

/** A peer, supervisor or child of the host's workers, as it stood when a job ended there. */
const SessionRecordSchema = z.looseObject({
  id: z.string(),
  role: z.enum(["peer", "supervisor", "child"]),
  name: z.string(),
  agent: z.string().optional(),
  parent: z.string().optional(),
  sessionId: z.string().optional(),
  costUsd: z.number(),
  usage: UsageSchema,
  numTurns: z.number(),
  status: StatusSchema.optional(),
});

/** A job's return value: the task's result, the host that ran it, and the sessions of that host's workers so far. */
export const JobResultSchema = z.object({
  host: z.string(),
  /** Absent from hosts of an older cadre. */
  sessions: z.array(SessionRecordSchema).optional(),
  result: z.looseObject({
    id: z.string(),
    name: z.string(),
    agent: z.string().optional(),
    status: StatusSchema,
    text: z.string(),
    structuredOutput: z.unknown().optional(),
    costUsd: z.number(),
    usage: UsageSchema,
    numTurns: z.number(),
    queuedMs: z.number(),
    startedAt: z.number().optional(),
    finishedAt: z.number(),
    durationMs: z.number(),
    attempts: z.number(),
    sessionId: z.string().optional(),
    error: ErrorSummarySchema.optional(),
  }),
});
export type JobResult = { host: string; result: TaskResult; sessions: SessionRecord[] };

/** A job's return value, checked; a DistributedDataError when it is not one. */
export function readJobResult(value: unknown): JobResult {
  const { host, result, sessions = [] } = readValue(JobResultSchema, value, "a job's result");
  return {
    host,
    sessions: sessions.map((session) => ({
      ...session,
      agent: session.agent,
      parent: session.parent,
      sessionId: session.sessionId,
      status: session.status,
    })),
    result: {
      ...result,
      agent: result.agent,
      structuredOutput: result.structuredOutput,
      startedAt: result.startedAt,
      sessionId: result.sessionId,
      error: result.error,
    },
  };
}

/** A poke on the control channel: hosts re-read what it names. */
export const ControlMessageSchema = z.discriminatedUnion("type", [
  /** The set of runs changed. */
  z.object({ type: z.literal("runs") }),
  /** The coordinator cancelled a job: the host running it stops it. */
  z.object({ type: z.literal("cancel"), run: z.string(), job: z.string() }),
  /** Some host's spending reached the run's budget: every host stops the run's tasks. */
  z.object({ type: z.literal("budget"), run: z.string() }),
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
