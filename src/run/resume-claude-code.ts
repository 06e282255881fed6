// A run of Claude Code's own Workflow tool, read from the CLI's session files, for `cadre run --resume wf_<id>` to continue on cadre's engine.
import { readdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { z } from "zod";
import { emptyUsage, type TaskResult } from "../orchestrator/index.ts";
import { CLAUDE_CODE_KEY_VERSION, type RecordedCall } from "../workflow/index.ts";
import { newestRunWhere, ResumeError } from "./resume.ts";

/** A run id as the CLI's Workflow tool prints it. */
export const CLAUDE_CODE_RUN_ID = /^wf_[A-Za-z0-9_-]{1,80}$/;

/** The CLI's record of a run, `<project>/<session>/workflows/<wf_id>.json` (2.1.332): the fields cadre reads. */
const ClaudeCodeRunFileSchema = z.looseObject({
  runId: z.string(),
  script: z.string(),
  scriptPath: z.string().optional(),
  args: z.unknown().optional(),
  status: z.string().optional(),
});

/** A key of the journal's format: `v2:` and a SHA-256 (claude-code-keys.ts). */
const KEY = new RegExp(`^${CLAUDE_CODE_KEY_VERSION}:[0-9a-f]{64}$`);

/** A line of the CLI's journal, `<project>/<session>/subagents/workflows/<wf_id>/journal.jsonl`; other types are the CLI's own (skipped, as it skips them). */
const JournalEntrySchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("started"), key: z.string(), label: z.string().optional() }),
  z.looseObject({ type: z.literal("result"), key: z.string(), result: z.unknown() }),
  z.looseObject({ type: z.literal("failed"), key: z.string() }),
]);
type JournalEntry = z.infer<typeof JournalEntrySchema>;

/** A run of the CLI's Workflow tool: its script and args, and the calls it finished, keyed as its journal keys them. */
export interface ClaudeCodeRun {
  runId: string;
  /** The CLI session that ran it. */
  sessionId: string;
  script: string;
  /** Where the CLI saved the script (the one to edit before continuing). */
  scriptPath: string | undefined;
  /** Its args, when it had some (`undefined`: none). */
  args: unknown;
  /** The calls that succeeded there, by their Claude Code key (CallReplay by `claudeCodeKey`). */
  calls: RecordedCall[];
}

/** Where the CLI keeps its projects' session files. */
function projectsDir(home: string): string {
  return join(process.env.CLAUDE_CONFIG_DIR ?? join(home, ".claude"), "projects");
}

/** The CLI's name for a project's directory: its path with every character but letters and digits as "-" (a long one cut, with a hash after). */
async function projectDirsOf(projects: string, cwd: string): Promise<string[]> {
  const name = cwd.replace(/[^a-zA-Z0-9]/g, "-");
  if (name.length <= 200) return [join(projects, name)];
  const names = await readdir(projects).catch(() => [] as string[]);
  return names.filter((entry) => entry.startsWith(`${name.slice(0, 200)}-`)).map((entry) => join(projects, entry));
}

/** The session directory whose workflows/ holds the run's file. */
async function sessionOf(projectDirs: readonly string[], runId: string): Promise<string | undefined> {
  for (const project of projectDirs) {
    const sessions = await readdir(project, { withFileTypes: true }).catch(() => []);
    for (const session of sessions) {
      if (!session.isDirectory()) continue;
      const found = await readdir(join(project, session.name, "workflows")).catch(() => [] as string[]);
      if (found.includes(`${runId}.json`)) return join(project, session.name);
    }
  }
  return undefined;
}

/** The journal's lines; a line cut short by a kill, or of a type cadre does not read, is left out. A key of another format is refused. */
function journalEntries(text: string, path: string): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const line of text.split("\n")) {
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      continue;
    }
    const parsed = JournalEntrySchema.safeParse(data);
    if (!parsed.success) continue;
    if (!KEY.test(parsed.data.key)) {
      const format = /^(v\d+):/.exec(parsed.data.key)?.[1] ?? "unversioned";
      throw new ResumeError(`${path} is of another format (keys ${format}, cadre reads ${CLAUDE_CODE_KEY_VERSION}: Claude Code 2.1.332)`);
    }
    entries.push(parsed.data);
  }
  return entries;
}

/** The calls that hold a result, as the CLI reads its journal: a result stands until the call fails or starts again. */
function finishedCalls(entries: readonly JournalEntry[], runId: string): RecordedCall[] {
  const labels = new Map<string, string>();
  const results = new Map<string, { index: number; value: unknown }>();
  entries.forEach((entry, index) => {
    if (entry.type === "started") {
      if (entry.label !== undefined) labels.set(entry.key, entry.label);
      results.delete(entry.key);
    } else if (entry.type === "failed") results.delete(entry.key);
    else results.set(entry.key, { index, value: entry.result });
  });
  return [...results].map(([key, { index, value }]) => ({
    index,
    key,
    status: "succeeded",
    value,
    ...(labels.has(key) && { name: labels.get(key) }),
    claude_code_run: runId,
  }));
}

/**
 * Finds the CLI's run `runId` among the sessions of the project in `cwd` and reads it: its record and its journal,
 * checked at the edge. Throws a ResumeError that says in one line what is missing or of another format.
 */
export async function readClaudeCodeRun(runId: string, places: { cwd: string; home?: string }): Promise<ClaudeCodeRun> {
  const projects = projectsDir(places.home ?? homedir());
  const projectDirs = await projectDirsOf(projects, places.cwd);
  const session = await sessionOf(projectDirs, runId);
  if (session === undefined) {
    throw new ResumeError(
      `no Claude Code workflow run ${runId} in ${projectDirs[0] ?? projects} (run cadre from the directory the Claude Code session worked in)`,
    );
  }
  const file = join(session, "workflows", `${runId}.json`);
  const record = ClaudeCodeRunFileSchema.safeParse(await readJson(file));
  if (!record.success)
    throw new ResumeError(`${file} is not a Claude Code workflow run of the format cadre reads (${record.error.issues[0]?.message})`);
  const journal = join(session, "subagents", "workflows", runId, "journal.jsonl");
  const text = await readFile(journal, "utf8").catch(() => undefined);
  if (text === undefined)
    throw new ResumeError(`the journal of Claude Code's run ${runId} is missing (${journal}): there are no results to continue from`);
  const sessionId = session.split(/[\\/]/).at(-1)!;
  const { script, scriptPath, args } = record.data;
  return { runId, sessionId, script, scriptPath, args, calls: finishedCalls(journalEntries(text, journal), runId) };
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, "utf8").catch(() => "");
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What a cadre record says of the Claude Code run it continues (WorkflowPlan writes it). */
const ContinuesSchema = z.looseObject({
  continues: z.looseObject({ claude_code_run: z.string() }),
  workflow: z.looseObject({ cwd: z.string().optional() }).optional(),
});

/** The Claude Code run a cadre record continues, with the project it ran in; undefined for a record that continues none. */
export function continuedRunOf(record: unknown): { runId: string; cwd: string | undefined } | undefined {
  const parsed = ContinuesSchema.safeParse(record);
  return parsed.success ? { runId: parsed.data.continues.claude_code_run, cwd: parsed.data.workflow?.cwd } : undefined;
}

/** The newest run directory under `runsDir` whose record continues the Claude Code run `runId` (a continuation killed or stopped, to go on with). */
export function latestContinuationOf(runId: string, runsDir: string): Promise<string | undefined> {
  return newestRunWhere(runsDir, (record) => continuedRunOf(record)?.runId === runId);
}

/** The result a call of the CLI's run gives in cadre's record: what agent() returned there (its costs are the CLI's, not this run's). */
export function claudeCodeCallResult(name: string, call: RecordedCall): TaskResult {
  const value = call.value ?? null;
  const at = Date.now();
  return {
    id: name,
    name,
    status: "succeeded",
    text: typeof value === "string" ? value : JSON.stringify(value),
    ...(value !== null && typeof value === "object" && { structuredOutput: value }),
    costUsd: 0,
    usage: emptyUsage(),
    numTurns: 0,
    queuedMs: 0,
    finishedAt: at,
    durationMs: 0,
    attempts: 0,
  };
}
