// What runs a swarm's tasks for `cadre run`: the orchestrator in this process, or the hosts of a distributed run.
import { join } from "node:path";
import { redactUrl } from "../distributed/index.ts";
import type { Scheduler } from "../orchestrator/index.ts";
import {
  type BudgetUse,
  DEFAULT_CONCURRENCY,
  Orchestrator,
  type OrchestratorEvent,
  REPLIES_FILE,
  type SessionRecord,
  type SteerOrigin,
  type TaskBoard,
  type TaskInfo,
  type TaskRunner,
  type TaskSpec,
  type Usage,
} from "../orchestrator/index.ts";
import type { Divergence, RecordedConversations, RehearsalRig } from "../rehearsal/index.ts";
import { orchestratorOptionsFor, type ResolvedSwarmConfig } from "../swarm/index.ts";
import { loadWithPeers } from "../util/peer.ts";
import type { SummarySteering } from "./record/schema.ts";
import type { ReplaySteering } from "./replay/steering.ts";

/** Where the task transcripts go inside the run directory, beside summary.json. */
const TRANSCRIPTS_DIR = "transcripts";
/** A rehearsal's HOME, inside the run directory. */
const REHEARSAL_HOME_DIR = "rehearsal-home";

/**
 * Reaching one running task by its name: the orchestrator's (in this process, at once), or the coordinator's
 * (on the host that runs the task, through Redis: resolved once that host has done it).
 */
export interface RunSteering {
  sendToTask(name: string, text: string, origin?: SteerOrigin): void | Promise<void>;
  interruptTask(name: string, origin?: SteerOrigin): Promise<void>;
  stopTask(name: string, origin?: SteerOrigin): void | Promise<void>;
  readonly runningTaskNames: string[];
}

/** What runs a swarm's tasks for `cadre run`: the orchestrator in this process, or the hosts of a distributed run. */
export interface RunEngine extends TaskRunner {
  on(listener: (event: OrchestratorEvent) => void): () => void;
  readonly totals: { costUsd: number; usage: Usage };
  /** The peers, supervisors and children of the workers (Orchestrator.sessionRecords, or as the hosts reported them). */
  readonly sessionRecords: readonly SessionRecord[];
  readonly transcriptPaths: ReadonlyMap<string, string>;
  /** Task id → the host that ran it (distributed runs). */
  readonly hosts?: ReadonlyMap<string, string>;
  /** Ends every process and connection of the run; resolves once the transcripts are written. */
  close(): Promise<void>;
  /** SIGKILLs every worker process this engine started here, at once (the second Ctrl-C). */
  kill(): void;
  /** What the run tells the user at its start. */
  readonly description: string;
  /** Problems to report after the run (scripted-model warnings, a lost Redis). */
  warnings(): readonly string[];
  /** A replay's divergences so far (none for other runs). */
  divergences(): readonly Divergence[];
  /** The limits in force and the slots in use, for the dashboard; only an in-process run has them here. */
  readonly scheduler?: Pick<Scheduler, "rateLimit" | "running">;
  /** What is left of the dollar budgets over work of `agent` (Orchestrator.budgetStatus); only an in-process run has it here. */
  budgetStatus?(agent: string | undefined): BudgetUse[];
  /** Reaching one running task (a message, an interrupt, a stop), wherever it runs. */
  readonly steering: RunSteering;
}

/** What the orchestrator and the coordinator both offer a run. */
type Core = Pick<RunEngine, "run" | "on" | "totals" | "transcriptPaths">;

/** `core` as a RunEngine: its tasks, events and records, and the rest as given. */
function engineOf(
  core: Core & Pick<RunEngine, "prepare"> & { sessionRecords?: readonly SessionRecord[] },
  rest: Omit<RunEngine, keyof Core | "prepare" | "sessionRecords">,
): RunEngine {
  return {
    run: (spec) => core.run(spec),
    // Only a run in this process starts processes ahead; the hosts of a distributed run keep their own.
    ...(core.prepare && { prepare: (spec: TaskSpec, count?: number) => core.prepare?.(spec, count) }),
    on: (listener) => core.on(listener),
    get totals() {
      return core.totals;
    },
    get sessionRecords() {
      return core.sessionRecords ?? [];
    },
    get transcriptPaths() {
      return core.transcriptPaths;
    },
    ...rest,
  };
}

/** How a run's tasks are run: where, how many at once, under which budget. */
export interface EngineOptions {
  /** Play the config's rehearsal scripts on a scripted model in this process (or on each host). */
  rehearse: boolean;
  /** Serve these recorded conversations (a replay, in this process) instead of the model: a request they do not answer diverges. */
  replay?: RecordedConversations;
  /** A replay's recorded steering, done again at the turns it was done at (ReplaySteering). */
  replaySteering?: readonly SummarySteering[];
  /** Overrides the config's concurrency. */
  concurrency: number | undefined;
  /** The budget the run applies (see SwarmRunOptions.rehearseBudget). */
  budgetUsd: number | undefined;
  /** Run on the hosts of this Redis instead of in this process. */
  redis: { url: string; runId: string } | undefined;
  /** A resumed distributed run: this attempt's number, and the tasks the earlier record settled (their jobs in Redis are stale). */
  rerun?: { attempt: number; tasks: ReadonlySet<string> };
  /** Lines to tell the user as the run goes (a distributed run's Redis trouble). */
  notify?: (line: string) => void;
  /** For a traced distributed run: the trace context each task's job carries to its host. */
  traceContext?: (task: TaskInfo) => string | undefined;
  /** The run's tasks, for workers whose tasks may post (here, or through Redis on the hosts). */
  taskBoard?: TaskBoard;
}

/**
 * The scripted model of a rehearsal or a replay (none for a live run), and a replay's recorded steering
 * done again on it; loaded only then. Its HOME is kept in the run directory, so that a resumed rehearsal
 * finds the CLI's session files.
 */
async function startScriptedModel(
  config: ResolvedSwarmConfig,
  options: Pick<EngineOptions, "rehearse" | "replay" | "replaySteering">,
  outDir: string,
): Promise<{ rig: RehearsalRig | undefined; steering: ReplaySteering | undefined }> {
  if (!(options.rehearse || options.replay)) return { rig: undefined, steering: undefined };
  const steering =
    options.replay && options.replaySteering?.length ? new (await import("./replay/steering.ts")).ReplaySteering(options.replaySteering) : undefined;
  const rig = await (await import("../rehearsal/rig.ts")).startRehearsalRig(config.rehearsal, {
    home: join(outDir, REHEARSAL_HOME_DIR),
    ...(options.replay && { replay: options.replay }),
    ...(steering && { onTurn: (turn: { name: string; step: number }) => steering.turn(turn) }),
  });
  return { rig, steering };
}

export async function startEngine(config: ResolvedSwarmConfig, options: EngineOptions, outDir: string, runId: string): Promise<RunEngine> {
  const { concurrency: configuredConcurrency, ...configured } = orchestratorOptionsFor(config);
  const concurrency = options.concurrency ?? (configuredConcurrency as number | undefined);
  const shared = { ...configured, budgetUsd: options.budgetUsd };
  const transcriptsDir = join(outDir, TRANSCRIPTS_DIR);
  const mode = options.replay ? "replay (recorded replies, offline)" : options.rehearse ? "rehearsal (scripted model, offline)" : "live";
  if (options.redis !== undefined) {
    const { url, runId } = options.redis;
    // Loaded only when used: BullMQ and the Redis client for --redis, the scripted model for --rehearse.
    const { Coordinator } = await loadWithPeers(["bullmq", "ioredis"], "--redis", () => import("../distributed/coordinator.ts"));
    const coordinator = await Coordinator.start({
      redisUrl: url,
      runId,
      swarm: config.name,
      // BullMQ's global limit needs a number; the orchestrator's default is the run's.
      concurrency: concurrency ?? DEFAULT_CONCURRENCY,
      options: shared,
      ...(options.rehearse && { rehearsal: config.rehearsal }),
      transcriptsDir,
      ...(options.rerun && { rerun: options.rerun }),
      ...(options.notify && { notify: options.notify }),
      ...(options.traceContext && { traceContext: options.traceContext }),
      ...(options.taskBoard && { taskBoard: options.taskBoard }),
    });
    const resumed = coordinator.resumed ? ", picked up where it was" : "";
    return engineOf(coordinator, {
      hosts: coordinator.hosts,
      close: () => coordinator.close(),
      // The hosts own the workers; they stop them on the cancellations of the first Ctrl-C.
      kill: () => {},
      steering: coordinator.steering,
      description: `${mode}, on the hosts of ${redactUrl(url)} (run id ${runId}${resumed})`,
      warnings: () => (coordinator.failure ? [coordinator.failure.message] : []),
      divergences: () => [],
    });
  }
  const { rig, steering } = await startScriptedModel(config, options, outDir);
  let orchestrator: Orchestrator;
  try {
    orchestrator = new Orchestrator({
      ...shared,
      // Neither the config nor the command line said: cadre sizes the run to the machine and the work.
      concurrency: concurrency ?? "auto",
      outDir: transcriptsDir,
      // Every in-process run keeps its replies: a few percent of its record (docs/replay.md), what `cadre replay` serves again.
      repliesPath: join(outDir, REPLIES_FILE),
      runId,
      ...(rig && { workerOptions: rig.workerOptions, processOptions: rig.processOptions }),
      ...(options.taskBoard && { taskBoard: options.taskBoard }),
    });
  } catch (error) {
    // Nothing else would end the rehearsal server, and the process would wait on it.
    await rig?.close();
    throw error;
  }
  steering?.steer(orchestrator);
  return engineOf(orchestrator, {
    async close() {
      // Every worker, peer and supervisor process ends here, and the transcripts are flushed.
      await orchestrator.close();
      steering?.finish();
      await rig?.close();
    },
    kill: () => orchestrator.kill(),
    scheduler: orchestrator.scheduler,
    budgetStatus: (agent) => orchestrator.budgetStatus(agent),
    steering: orchestrator,
    description: mode,
    warnings: () => [...(rig?.server.warnings ?? []), ...(steering?.warnings ?? [])],
    divergences: () => [...(rig?.server.divergences ?? []), ...(steering?.divergences ?? [])],
  });
}
