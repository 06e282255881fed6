// Every decision of `cadre run --resume`: which run goes on, where an attempt writes, which results stand, which jobs are stale.
import { randomUUID } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
// Needs no Redis client: a run without --redis never loads BullMQ.
import { REDIS_UNREACHABLE, RUN_ID_PATTERN } from "../distributed/index.ts";
import { CadreError } from "../errors.ts";
import type { TaskResult } from "../orchestrator/index.ts";
import type { CarryDecision, ResolvedSwarmConfig, ResolvedTask } from "../swarm/index.ts";
import { olderSettingsHash, type TaskFingerprint } from "../swarm/index.ts";
import { type ReadRecord, readRecord } from "./record/read.ts";
import { resultFromRecord, SUMMARY_FILE, type Summary, type SummaryTask } from "./record/schema.ts";

/** `cadre run --resume` cannot go on: no earlier run, or its record is unreadable. */
export class ResumeError extends CadreError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("RESUME_FAILED", message, options);
  }
}

/** The earlier attempts of a run, and how this attempt treats each task. */
export interface ResumePlan {
  /** The run directory: this attempt writes its record and transcripts there too. */
  dir: string;
  previous: Summary;
  /** For a swarm's graph: keep a result that still matches, or run the task again and say why (a script's calls replay instead). */
  carryOver?: (task: ResolvedTask, fingerprint: TaskFingerprint) => CarryDecision;
  /** Tasks of the earlier run that the config no longer has. */
  removed: string[];
  /** Lines of its journal that could not be read, named (the rest was read; a task whose end is among them runs again). */
  unreadable: string[];
}

/** A run's record to resume (see readRecord); none when the directory has no summary.json. */
export async function recordToResume(dir: string): Promise<ReadRecord<Summary> | undefined> {
  const read = await readRecord(dir);
  if ("record" in read) return read;
  const path = join(dir, SUMMARY_FILE);
  switch (read.problem) {
    case "missing":
      return undefined;
    case "not_json":
      throw new ResumeError(`${path} is not valid JSON; it cannot be resumed`, { cause: read.cause });
    case "not_a_record":
      throw new ResumeError(`${path} is not a cadre run record (${read.cause.issues[0]?.message})`);
  }
}

/** The newest run directory under `runsDir` whose record (its summary, without the journal's newer lines) is one `wanted` takes. */
export async function newestRunWhere(runsDir: string, wanted: (record: Summary) => boolean): Promise<string | undefined> {
  const names = await readdir(runsDir).catch(() => [] as string[]);
  // Run directories are named by their start time, so the newest sorts last.
  for (const name of names.sort().reverse()) {
    const read = await readRecord(join(runsDir, name), { journal: false });
    if ("record" in read && wanted(read.record)) return join(runsDir, name);
  }
  return undefined;
}

/** The newest run directory under `runsDir` whose record is of this config file. */
export function latestRunOf(configFile: string, runsDir: string): Promise<string | undefined> {
  return newestRunWhere(runsDir, (record) => record.config === configFile);
}

/** The run directory under `runsDir` whose record has this run id (a distributed run's, picked up again by its id). */
async function runDirWithId(runId: string, runsDir: string): Promise<string | undefined> {
  const names = await readdir(runsDir).catch(() => [] as string[]);
  for (const name of names.sort().reverse()) {
    const read = await readRecord(join(runsDir, name));
    if ("record" in read && read.record.run_id === runId) return join(runsDir, name);
  }
  return undefined;
}

/** How an earlier attempt left a task that did not succeed, as the reason it runs again. */
const NOT_SUCCEEDED: Record<Exclude<SummaryTask["status"], "succeeded">, string> = {
  failed: "it failed before",
  cancelled: "it was cancelled before",
  skipped: "it was skipped before",
  running: "it was running when the run stopped",
  pending: "it had not started when the run stopped",
};

/** Which of the results a task uses differ from those its earlier attempt used. */
function changedInputs(before: Record<string, string>, now: Record<string, string>): string[] {
  return Object.keys(now).filter((name) => before[name] !== now[name]);
}

/** Whether the earlier attempt ran with the same settings; `older` is the hash a record without `template` used. */
function sameSettings(earlier: NonNullable<SummaryTask["fingerprint"]>, now: TaskFingerprint, older: () => string): boolean {
  return earlier.settings === (earlier.template === undefined ? older() : now.settings);
}

/** Why an earlier attempt's result of this task cannot stand; undefined when it can. */
function staleBecause(earlier: SummaryTask | undefined, fingerprint: TaskFingerprint, older: () => string): string | undefined {
  if (earlier === undefined) return "it is new";
  if (earlier.status !== "succeeded") return NOT_SUCCEEDED[earlier.status];
  const before = earlier.fingerprint;
  if (!before) return "its earlier record has no fingerprint";
  if (!sameSettings(before, fingerprint, older)) return "its settings changed";
  if (before.prompt === fingerprint.prompt) return undefined;
  if (before.template === undefined || before.inputs === undefined) return "its prompt changed (or a result it uses)";
  if (before.template !== fingerprint.template) return "its prompt changed";
  const changed = changedInputs(before.inputs, fingerprint.inputs ?? {});
  return changed.length > 0 ? `a result it uses changed: ${changed.join(", ")}` : "its prompt changed";
}

/**
 * The copies of a for_each over a result that an earlier attempt finished, by
 * the work they did (their map, prompt and settings): a resumed run's copy is
 * named by its place in the list, and keeps the result of the copy that did
 * the same work wherever that one stood, each earlier copy given once.
 */
class MovedCopies {
  readonly #byWork = new Map<string, SummaryTask[]>();
  readonly #given = new Set<string>();

  constructor(rows: readonly SummaryTask[]) {
    for (const row of rows) {
      if (row.copy_of === undefined || row.status !== "succeeded" || row.fingerprint?.template === undefined) continue;
      const work = MovedCopies.#work(row.copy_of, row.fingerprint);
      this.#byWork.set(work, [...(this.#byWork.get(work) ?? []), row]);
    }
  }

  static #work(map: string, fingerprint: Pick<TaskFingerprint, "prompt" | "settings">): string {
    return `${map}\0${fingerprint.settings}\0${fingerprint.prompt}`;
  }

  /** An earlier copy of `map` that did this work and is not given yet. */
  take(map: string, fingerprint: TaskFingerprint): SummaryTask | undefined {
    return this.#byWork.get(MovedCopies.#work(map, fingerprint))?.find((row) => !this.#given.has(row.name));
  }

  /** The result an earlier row gives (once). */
  keep(row: SummaryTask): TaskResult {
    this.#given.add(row.name);
    return resultFromRecord({ ...row, status: "succeeded" }, randomUUID().slice(0, 8));
  }
}

/**
 * Plans `cadre run --resume [dir]`: the run to go on with (by default the
 * newest one of this config under `runsDir`) and, per task, whether its
 * result stands. A task that did not succeed continues its claude session
 * when the earlier attempt left one and its settings are unchanged, unless
 * `fresh` says to start over.
 */
export async function planResume(config: ResolvedSwarmConfig, options: { dir?: string; runsDir: string; fresh: boolean }): Promise<ResumePlan> {
  const configFile = config.file ?? "";
  const dir = options.dir ?? (await latestRunOf(configFile, options.runsDir));
  if (dir === undefined) throw new ResumeError(`no earlier run of ${configFile} under ${options.runsDir} to resume; run it without --resume`);
  const read = await recordToResume(dir);
  if (read === undefined) throw new ResumeError(`${dir} holds no ${SUMMARY_FILE}; give the directory of an earlier run`);
  const { record: previous, unreadable } = read;
  const earlier = new Map(previous.tasks.map((task) => [task.name, task]));
  const copies = new MovedCopies(previous.tasks);
  const current = new Set(config.tasks.map((task) => task.name));
  return {
    dir,
    previous,
    unreadable,
    // A copy or a round stands for its task: it is made again when that task runs; a posted task is posted again as the run starts.
    removed: previous.tasks
      .filter((task) => task.posted_by === undefined && !current.has(task.copy_of ?? task.round_of ?? task.name))
      .map((task) => task.name),
    carryOver: (task, fingerprint) => {
      const before = earlier.get(task.name);
      const older = () => olderSettingsHash(config, task);
      const reason = staleBecause(before, fingerprint, older);
      if (reason === undefined) return { kind: "keep", result: copies.keep(before!) };
      // A copy whose item moved in its list (one added or removed before it) keeps the result of the copy that did its work.
      const moved = task.copy_of && copies.take(task.copy_of.task, fingerprint);
      if (moved) return { kind: "keep", result: copies.keep(moved), from: moved.name };
      const sameWork =
        before?.fingerprint != null && sameSettings(before.fingerprint, fingerprint, older) && before.fingerprint.prompt === fingerprint.prompt;
      const session = !options.fresh && sameWork ? (before?.session_id ?? undefined) : undefined;
      return { kind: "run", reason, ...(session !== undefined && { resumeSession: session }) };
    },
  };
}

/**
 * Plans `--resume` of a workflow script's run in `dir`: its record, whose calls
 * that succeeded replay as the script makes them again (workflow/calls.ts), and
 * the args and budgets it was started with, which it keeps unless given anew.
 */
export async function planWorkflowResume(dir: string): Promise<ResumePlan> {
  const read = await recordToResume(dir);
  if (read === undefined) throw new ResumeError(`no run to resume in ${dir} (it has no ${SUMMARY_FILE})`);
  return { dir, previous: read.record, removed: [], unreadable: read.unreadable };
}

/** This attempt's number: 1, and one more for each --resume. */
export function attemptOf(plan: ResumePlan | undefined): number {
  return plan ? (plan.previous.attempt ?? 1) + 1 : 1;
}

/**
 * The tasks an earlier record settled: under --redis their jobs are stale,
 * while those it left running or pending, or failed only because the
 * coordinator lost Redis, may have finished on a host meanwhile.
 */
export function settledBefore(plan: ResumePlan | undefined): { attempt: number; tasks: ReadonlySet<string> } | undefined {
  if (plan === undefined) return undefined;
  const open = (task: SummaryTask) => task.status === "running" || task.status === "pending" || task.error?.code === REDIS_UNREACHABLE;
  const tasks = plan.previous.tasks.filter((task) => !open(task)).map((task) => task.name);
  return { attempt: attemptOf(plan), tasks: new Set(tasks) };
}

/** Where an attempt is asked to go: `cadre run`'s --out (or its default), --redis and --run-id. */
export interface PlaceRequest {
  outDir: string;
  /** True when --out was not given: the directory is made unique, or is the run's own when --run-id picks a run up. */
  defaultOut: boolean;
  redis: { url: string; runId: string; given: boolean } | undefined;
  /** Where runs go by default, and where --run-id finds a run's directory. */
  runsDir: string;
}

/**
 * Where an attempt writes its record, and which Redis run it is: a resumed
 * run's directory, and its id unless --run-id names another (a distributed
 * run keeps one id); a run picked up by --run-id in the directory of that
 * run; else the directory asked for, made unique if a run in the same
 * second already took the default one.
 */
export async function placeRun(
  request: PlaceRequest,
  plan: ResumePlan | undefined,
): Promise<{ outDir: string; redis?: { url: string; runId: string } }> {
  const { redis } = request;
  const earlierId = plan && !redis?.given && RUN_ID_PATTERN.test(plan.previous.run_id) ? plan.previous.run_id : undefined;
  const runId = earlierId ?? redis?.runId;
  const sameRunDir = redis?.given && request.defaultOut && !plan ? await runDirWithId(redis.runId, request.runsDir) : undefined;
  const outDir = plan?.dir ?? sameRunDir ?? (request.defaultOut ? await freshDir(request.outDir) : request.outDir);
  return { outDir, ...(redis && runId !== undefined && { redis: { url: redis.url, runId } }) };
}

/** The default run directory, made unique if a run in the same second already took it. */
async function freshDir(dir: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? dir : `${dir}-${n}`;
    if ((await stat(candidate).catch(() => undefined)) === undefined) return candidate;
  }
}
