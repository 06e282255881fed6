import { readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { SUMMARY_FILE } from "../swarm/record.ts";
import type { Conversation } from "./conversation.ts";
import type { DashboardSource, RunFeed, RunListing, RunSnapshot, TotalsView } from "./feed.ts";
import { type LenientSummary, readRecord, readTranscript, recordRows, recordTotals, recordTranscript } from "./record.ts";

/** Run ids are folder names: nothing that could climb out of the runs directory. */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A finished run, as its summary.json and transcripts tell it. */
class RecordedRun implements RunFeed {
  constructor(
    readonly id: string,
    private readonly dir: string,
    private readonly record: LenientSummary,
  ) {}

  snapshot(now: number): RunSnapshot {
    const { record } = this;
    const rows = recordRows(record);
    const totals: TotalsView = { ...recordTotals(record), budgetUsd: record.budget_usd ?? null, budgetExceeded: false };
    const timed = rows.some((r) => r.startedAt !== null);
    return {
      id: this.id,
      title: record.swarm,
      mode: "record",
      seq: 0,
      live: false,
      finished: true,
      startedAt: record.started_at ? Date.parse(record.started_at) : null,
      finishedAt: record.finished_at ? Date.parse(record.finished_at) : null,
      now,
      rows,
      totals,
      rateLimit: null,
      running: 0,
      answerable: false,
      costSimulated: record.cost_simulated === true,
      notice: timed ? null : "This summary.json has no per-task times (written by an older cadre): the timeline is empty.",
    };
  }

  onChange(): () => void {
    return () => {};
  }

  async conversation(key: string): Promise<Conversation | undefined> {
    const path = recordTranscript(this.record, this.dir, key);
    return path === undefined ? undefined : readTranscript(path);
  }
}

/**
 * The runs `cadre run` wrote (.cadre/runs/<timestamp>/summary.json and
 * transcripts/), for `cadre ui`. A directory that is itself a run shows that
 * one run. Read anew on each request: a run that finishes meanwhile appears.
 */
export class RunsDirectory implements DashboardSource {
  constructor(readonly dir: string) {}

  /** Folder name → path of each run folder. */
  async #runDirs(): Promise<Map<string, string>> {
    if (await hasSummary(this.dir)) return new Map([[basename(this.dir), this.dir]]);
    const entries = await readdir(this.dir, { withFileTypes: true });
    const dirs = entries.filter((e) => e.isDirectory() && RUN_ID.test(e.name)).map((e) => e.name);
    // Run folders are named by their start time: newest first.
    return new Map(
      dirs
        .sort()
        .reverse()
        .map((name) => [name, join(this.dir, name)]),
    );
  }

  async runs(): Promise<RunListing[]> {
    const listings: RunListing[] = [];
    for (const [id, dir] of await this.#runDirs()) {
      const read = await readRecord(dir);
      if ("problem" in read) {
        listings.push({ id, title: id, startedAt: null, live: false, outcome: read.problem });
        continue;
      }
      const { record } = read;
      const outcome = `${recordTotals(record).byStatus.succeeded ?? 0}/${record.tasks.length} succeeded`;
      listings.push({
        id,
        title: record.swarm,
        startedAt: record.started_at ?? null,
        live: false,
        outcome: record.interrupted ? `${outcome}, interrupted` : outcome,
      });
    }
    return listings;
  }

  async run(id: string): Promise<RunFeed | undefined> {
    const dir = (await this.#runDirs()).get(id);
    if (dir === undefined) return undefined;
    const read = await readRecord(dir);
    return "record" in read ? new RecordedRun(id, dir, read.record) : undefined;
  }
}

async function hasSummary(dir: string): Promise<boolean> {
  return (await stat(join(dir, SUMMARY_FILE)).catch(() => undefined))?.isFile() === true;
}
