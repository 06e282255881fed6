import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { CadreError } from "../errors.ts";
import type { CarryDecision, ResolvedSwarmConfig, ResolvedTask } from "../swarm/index.ts";
import {
  olderSettingsHash,
  readJournal,
  resultFromRecord,
  SUMMARY_FILE,
  type Summary,
  SummarySchema,
  type SummaryTask,
  type TaskFingerprint,
  withJournal,
} from "../swarm/index.ts";

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
  /** For runSwarm: keep a result that still matches, or run the task again and say why. */
  carryOver: (task: ResolvedTask, fingerprint: TaskFingerprint) => CarryDecision;
  /** Tasks of the earlier run that the config no longer has. */
  removed: string[];
}

/** A run's record: summary.json, with its journal's newer lines unless `journal` is false (only the summary's own fields are needed). */
export async function readRecord(dir: string, { journal = true } = {}): Promise<Summary | undefined> {
  const text = await readFile(join(dir, SUMMARY_FILE), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ResumeError(`${join(dir, SUMMARY_FILE)} is not valid JSON; it cannot be resumed`, { cause: error });
  }
  const parsed = SummarySchema.safeParse(data);
  if (!parsed.success) throw new ResumeError(`${join(dir, SUMMARY_FILE)} is not a cadre run record (${parsed.error.issues[0]?.message})`);
  // The summary is compacted now and then: what ended since (before a kill) is in the journal.
  return journal ? withJournal(parsed.data, await readJournal(dir)) : parsed.data;
}

/** The newest run directory under `runsDir` whose record is of this config file. */
export async function latestRunOf(configFile: string, runsDir: string): Promise<string | undefined> {
  const names = await readdir(runsDir).catch(() => [] as string[]);
  // Run directories are named by their start time, so the newest sorts last.
  for (const name of names.sort().reverse()) {
    const record = await readRecord(join(runsDir, name), { journal: false }).catch(() => undefined);
    if (record?.config === configFile) return join(runsDir, name);
  }
  return undefined;
}

/** The run directory under `runsDir` whose record has this run id (a distributed run's, picked up again by its id). */
export async function runDirWithId(runId: string, runsDir: string): Promise<string | undefined> {
  const names = await readdir(runsDir).catch(() => [] as string[]);
  for (const name of names.sort().reverse()) {
    const record = await readRecord(join(runsDir, name)).catch(() => undefined);
    if (record?.run_id === runId) return join(runsDir, name);
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
  const previous = await readRecord(dir);
  if (previous === undefined) throw new ResumeError(`${dir} holds no ${SUMMARY_FILE}; give the directory of an earlier run`);
  const earlier = new Map(previous.tasks.map((task) => [task.name, task]));
  const current = new Set(config.tasks.map((task) => task.name));
  return {
    dir,
    previous,
    // A copy or a round stands for its task: it is made again when that task runs.
    removed: previous.tasks.filter((task) => !current.has(task.copy_of ?? task.round_of ?? task.name)).map((task) => task.name),
    carryOver: (task, fingerprint) => {
      const before = earlier.get(task.name);
      const older = () => olderSettingsHash(config, task);
      const reason = staleBecause(before, fingerprint, older);
      if (reason === undefined) return { kind: "keep", result: resultFromRecord({ ...before!, status: "succeeded" }, randomUUID().slice(0, 8)) };
      const sameWork =
        before?.fingerprint != null && sameSettings(before.fingerprint, fingerprint, older) && before.fingerprint.prompt === fingerprint.prompt;
      const session = !options.fresh && sameWork ? (before?.session_id ?? undefined) : undefined;
      return { kind: "run", reason, ...(session !== undefined && { resumeSession: session }) };
    },
  };
}
