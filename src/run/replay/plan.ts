// What a replay plays, worked out before it starts: the recorded run's replies, the overrides, the config, and where it may run.
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { REPLIES_FILE } from "../../orchestrator/index.ts";
import type { RecordedConversations } from "../../rehearsal/index.ts";
import { findRepository } from "../../swarm/index.ts";
import { SUMMARY_FILE, SummarySchema } from "../record/schema.ts";
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
}

export interface ReplayPlanOptions {
  /** The swarm file to run, e.g. the same file in a test checkout; default: the recorded run's. */
  config?: string;
  /** An overrides file (see ReplayOverridesSchema). */
  overrides?: string;
  /** Run even in the working tree the recorded run ran in (its tools run for real, there). */
  inPlace?: boolean;
}

/** The tree a config's tasks work in: its git repository, else its directory. */
async function treeOf(config: string): Promise<string> {
  const repository = await findRepository(dirname(config));
  return repository.ok ? resolve(repository.root) : resolve(dirname(config));
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Reads a run directory for a replay. A run without replies.jsonl (recorded
 * by an older cadre, or on --redis hosts) cannot be replayed, and says so; a
 * replay refuses the recorded run's working tree unless `inPlace`, because
 * its tools run for real.
 */
export async function planReplay(runDir: string, options: ReplayPlanOptions = {}): Promise<ReplayPlan> {
  const dir = resolve(runDir);
  const repliesText = await readOptional(join(dir, REPLIES_FILE));
  if (repliesText === undefined) {
    throw new ReplayError(
      "REPLAY_NO_RECORD",
      `${dir} has no ${REPLIES_FILE}: the run was recorded by a cadre older than replay, or on --redis hosts, and cannot be replayed`,
    );
  }
  const summaryText = await readOptional(join(dir, SUMMARY_FILE));
  const summary = summaryText === undefined ? undefined : SummarySchema.safeParse(JSON.parse(summaryText));
  const recordedConfig = summary?.success ? summary.data.config : undefined;
  const config = options.config ? resolve(options.config) : recordedConfig;
  if (config === undefined || config === "") {
    throw new ReplayError("REPLAY_NO_RECORD", `${dir} has no ${SUMMARY_FILE} that names its swarm file: give the swarm file to replay`);
  }
  if (!options.inPlace && recordedConfig) {
    const original = await treeOf(recordedConfig);
    if (original === (await treeOf(config))) {
      throw new ReplayError(
        "REPLAY_IN_ORIGINAL_TREE",
        `a replay runs the tools again, for real, and ${original} is where the recorded run worked: replay in a test checkout (give its copy of the swarm file), or allow it with --in-place`,
      );
    }
  }
  const recorded = readRecordedReplies(repliesText);
  const replies = options.overrides
    ? applyOverrides(recorded, parseReplayOverrides(await readFile(options.overrides, "utf8"), options.overrides))
    : recorded;
  const runId = recorded.runId || (summary?.success ? summary.data.run_id : "");
  return { of: { run_id: runId, dir }, config, replies: { conversations: replies.conversations, subagents: replies.subagents } };
}
