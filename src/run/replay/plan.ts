// What a replay plays, worked out before it starts: the recorded run's replies, the overrides, the swarm file or script, and where it may run.
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { z } from "zod";
import { REPLIES_FILE } from "../../orchestrator/index.ts";
import type { RecordedConversations } from "../../rehearsal/index.ts";
import { findRepository } from "../../swarm/index.ts";
import { SUMMARY_FILE, type Summary, SummarySchema, type SummarySteering, type SummaryTask, WORKFLOW_SCRIPT_FILE } from "../record/schema.ts";
import { CLAUDE_CODE_RUN_ID } from "../resume-claude-code.ts";
import { ReplayError } from "./errors.ts";
import { applyOverrides, parseReplayOverrides } from "./overrides.ts";
import { readRecordedReplies } from "./scripts.ts";

/** A replay ready to run: SwarmRunOptions.replay. */
export interface ReplayPlan {
  /** The recorded run: its id and directory, which the replay's record names. */
  of: { run_id: string; dir: string };
  /** The swarm file to run: the one given, else the recorded run's. */
  config: string;
  /** What the scripted model serves: the recorded conversations, overrides applied. */
  replies: RecordedConversations;
  /** The recorded run's messages, interrupts and stops, which the replay does again where they were done (ReplaySteering). */
  steering?: readonly SummarySteering[];
}

export interface ReplayPlanOptions {
  /** The swarm file to run, e.g. the same file in a test checkout; default: the recorded run's. */
  config?: string;
  /** An overrides file (see ReplayOverridesSchema). */
  overrides?: string;
  /** Run even in the working tree the recorded run ran in (its tools run for real, there). */
  inPlace?: boolean;
}

/** The tree work in `dir` happens in: its git repository, else the directory. */
async function treeAt(dir: string): Promise<string> {
  const repository = await findRepository(dir);
  return repository.ok ? resolve(repository.root) : resolve(dir);
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** A run directory as a replay reads it: its replies (overrides applied) and its summary, if it has one. */
interface RecordedRun {
  of: ReplayPlan["of"];
  replies: RecordedConversations;
  summary: Summary | undefined;
}

/** A run without replies.jsonl (recorded by an older cadre, or on --redis hosts) cannot be replayed, and says so. */
async function readRecordedRun(runDir: string, overrides: string | undefined): Promise<RecordedRun> {
  const dir = resolve(runDir);
  const repliesText = await readOptional(join(dir, REPLIES_FILE));
  if (repliesText === undefined) {
    throw new ReplayError(
      "REPLAY_NO_RECORD",
      `${dir} has no ${REPLIES_FILE}: the run was recorded by a cadre older than replay, or on --redis hosts, and cannot be replayed`,
    );
  }
  const summaryText = await readOptional(join(dir, SUMMARY_FILE));
  const parsed = summaryText === undefined ? undefined : SummarySchema.safeParse(JSON.parse(summaryText));
  const summary = parsed?.success ? parsed.data : undefined;
  const recorded = readRecordedReplies(repliesText);
  const replies = overrides ? applyOverrides(recorded, parseReplayOverrides(await readFile(overrides, "utf8"), overrides)) : recorded;
  return {
    of: { run_id: recorded.runId || (summary?.run_id ?? ""), dir },
    replies: { conversations: replies.conversations, subagents: replies.subagents },
    summary,
  };
}

/** A replay refuses the recorded run's working tree unless `inPlace`, because its tools run for real. */
async function refuseOriginalTree(original: string, replayed: string, inPlace: boolean | undefined, give: string): Promise<void> {
  if (inPlace) return;
  const tree = await treeAt(original);
  if (tree !== (await treeAt(replayed))) return;
  throw new ReplayError(
    "REPLAY_IN_ORIGINAL_TREE",
    `a replay runs the tools again, for real, and ${tree} is where the recorded run worked: replay in a test checkout (${give}), or allow it with --in-place`,
  );
}

/** Reads a swarm run's directory for a replay (see readRecordedRun and refuseOriginalTree). */
export async function planReplay(runDir: string, options: ReplayPlanOptions = {}): Promise<ReplayPlan> {
  const { of, replies, summary } = await readRecordedRun(runDir, options.overrides);
  const recordedConfig = summary?.config;
  const config = options.config ? resolve(options.config) : recordedConfig;
  if (config === undefined || config === "") {
    throw new ReplayError(
      "REPLAY_NO_RECORD",
      `${of.dir} has no ${SUMMARY_FILE} that names its swarm file: give the swarm file (or the workflow script) to replay`,
    );
  }
  if (recordedConfig) await refuseOriginalTree(dirname(recordedConfig), dirname(config), options.inPlace, "give its copy of the swarm file");
  return { of, config, replies, steering: summary?.steering ?? [] };
}

/** Whether a run directory holds a workflow script's run (its record's `workflow`, or the copy of its script). */
export async function isWorkflowRecord(runDir: string): Promise<boolean> {
  const dir = resolve(runDir);
  if ((await readOptional(join(dir, WORKFLOW_SCRIPT_FILE))) !== undefined) return true;
  const text = await readOptional(join(dir, SUMMARY_FILE));
  try {
    return text !== undefined && typeof (JSON.parse(text) as { workflow?: unknown }).workflow === "object";
  } catch {
    return false;
  }
}

/** A workflow replay ready to run: WorkflowFileRunOptions.replay, and the script with its settings as recorded. */
export interface WorkflowReplayPlan {
  of: ReplayPlan["of"];
  /** The script's text: the given file's, else the copy the run kept. */
  source: string;
  /** The file it was read from (the run's copy, or the one given), for messages and stack traces. */
  file: string;
  /** The script's `args`, as recorded unless given. */
  args: unknown;
  /** The recorded run's budget.total (output tokens), which the script may read and branch on. */
  budgetTokens: number | undefined;
  /** The recorded run's dollar budget: the replay applies it to the recorded calls' costs (`spent`). */
  budgetUsd: number | undefined;
  /** The recorded run's limit of agent() calls. */
  maxAgents: number | undefined;
  /** What the scripted model serves: the recorded conversations, overrides applied. */
  replies: RecordedConversations;
  /** The recorded run's steering of its agent() calls, done again where it was done (ReplaySteering). */
  steering: readonly SummarySteering[];
  /** The recorded run's calls whose results came from a Claude Code run it continued (no replies of theirs were recorded): they give those results again. */
  fromClaudeCode: SummaryTask[];
  /** What each recorded agent() call spent, by its row's name: a replay's budgets count these, not its simulated costs. */
  spent: ReadonlyMap<string, { costUsd: number; outputTokens: number }>;
}

export interface WorkflowReplayPlanOptions {
  /** The script to run, e.g. its copy in a test checkout; default: the copy the recorded run kept. */
  script?: string;
  /** The script's `args`; default: the recorded run's. */
  args?: unknown;
  /** An overrides file (see ReplayOverridesSchema). */
  overrides?: string;
  /** Run even in the working tree the recorded run ran in (its tools run for real, there). */
  inPlace?: boolean;
  /** Where the replay's agents work (default: this process's directory); refused when it is the recorded run's tree. */
  cwd?: string;
}

/** The part of a workflow run's record a replay reads: the script's settings (see WorkflowSummary). */
const RecordedWorkflowSchema = z.looseObject({
  args: z.unknown().optional(),
  cwd: z.string().optional(),
  budget_tokens: z.number().nullable().optional(),
  max_agents: z.number().nullable().optional(),
});

/**
 * Reads a workflow run's directory for a replay: its replies, the copy of
 * its script it kept (unless `script` names another), its args, budgets and
 * agent limit, and what each call spent. A replay whose agents would work in
 * the recorded run's working tree is refused unless `inPlace`.
 */
export async function planWorkflowReplay(runDir: string, options: WorkflowReplayPlanOptions = {}): Promise<WorkflowReplayPlan> {
  const { of, replies, summary } = await readRecordedRun(runDir, options.overrides);
  const file = options.script ? resolve(options.script) : join(of.dir, WORKFLOW_SCRIPT_FILE);
  const source = await readOptional(file);
  if (source === undefined) {
    throw new ReplayError(
      "REPLAY_NO_RECORD",
      options.script
        ? `no such file: ${file}`
        : `${of.dir} has no ${WORKFLOW_SCRIPT_FILE} (the copy of its script a run keeps since replay could replay scripts): give the script to replay`,
    );
  }
  const parsed = RecordedWorkflowSchema.safeParse((summary as { workflow?: unknown } | undefined)?.workflow);
  const workflow = parsed.success ? parsed.data : undefined;
  const cwd = resolve(options.cwd ?? process.cwd());
  if (workflow?.cwd) await refuseOriginalTree(workflow.cwd, cwd, options.inPlace, "run the replay from a checkout of the project");
  const spent = new Map((summary?.tasks ?? []).map((row) => [row.name, { costUsd: row.cost_usd, outputTokens: row.usage.output_tokens }] as const));
  return {
    of,
    source,
    file,
    args: "args" in options ? options.args : (workflow?.args ?? null),
    budgetTokens: workflow?.budget_tokens ?? undefined,
    budgetUsd: summary?.budget_usd ?? undefined,
    maxAgents: workflow?.max_agents ?? undefined,
    replies,
    steering: summary?.steering ?? [],
    spent,
    fromClaudeCode: (summary?.tasks ?? []).filter((row) => row.carried_from !== undefined && CLAUDE_CODE_RUN_ID.test(row.carried_from.run_id)),
  };
}
