// Finished runs in a runs directory, each read back from its summary.json and transcripts for the dashboard.
import { readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { type LenientSummary, SUMMARY_FILE } from "../run/index.ts";
import type { Conversation } from "./conversation.ts";
import type { DashboardSource, RunFeed, RunListing, RunSnapshot, TotalsView } from "./feed.ts";
import { readRecordForPage, readTranscript, recordRowViews, recordTotals, recordTranscript } from "./record-view.ts";
import { recordWorkflowView } from "./workflow-view.ts";

/** Run ids are folder names: nothing that could climb out of the runs directory. */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A finished run, as its summary.json and transcripts tell it. */
class RecordedRun implements RunFeed {
  readonly #dir: string;
  readonly #record: LenientSummary;

  constructor(
    readonly id: string,
    dir: string,
    record: LenientSummary,
  ) {
    this.#dir = dir;
    this.#record = record;
  }

  snapshot(now: number): RunSnapshot {
    const record = this.#record;
    const rows = recordRowViews(record);
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
      steerable: false,
      costSimulated: record.cost_simulated === true,
      notice: timed ? null : "This summary.json has no per-task times (written by an older cadre): the timeline is empty.",
      workflow: recordWorkflowView(record),
    };
  }

  onChange(): () => void {
    return () => {};
  }

  async conversation(key: string): Promise<Conversation | undefined> {
    const path = recordTranscript(this.#record, this.#dir, key);
    return path === undefined ? undefined : readTranscript(path);
  }
}

/** A summary.json's size and time: a file that keeps both was not rewritten. */
async function stampOf(dir: string): Promise<string | undefined> {
  const info = await stat(join(dir, SUMMARY_FILE)).catch(() => undefined);
  return info?.isFile() ? `${info.size} ${info.mtimeMs}` : undefined;
}

type Listing = Omit<RunListing, "id">;

/**
 * The runs `cadre run` wrote (.cadre/runs/<timestamp>/summary.json and
 * transcripts/), for `cadre ui`. A directory that is itself a run shows that
 * one run. Looked at anew on each request: a run that finishes meanwhile
 * appears. What a record says in the list is kept while its file stays the
 * same, and so is the record read last (whole): the page lists the runs and
 * then opens one, and a run of 10,000 tasks is read once, not on each request.
 */
export class RunsDirectory implements DashboardSource {
  readonly #listings = new Map<string, { stamp: string; listing: Listing }>();
  #last: { dir: string; stamp: string; read: Awaited<ReturnType<typeof readRecordForPage>> } | undefined;

  constructor(readonly dir: string) {}

  async #read(dir: string, stamp: string | undefined): Promise<Awaited<ReturnType<typeof readRecordForPage>>> {
    if (stamp !== undefined && this.#last?.dir === dir && this.#last.stamp === stamp) return this.#last.read;
    const read = await readRecordForPage(dir);
    this.#last = stamp === undefined ? undefined : { dir, stamp, read };
    return read;
  }

  /** Folder name → path of each run folder, the newest first. */
  async #runDirs(): Promise<Map<string, string>> {
    if (await hasSummary(this.dir)) return new Map([[basename(this.dir), this.dir]]);
    const entries = await readdir(this.dir, { withFileTypes: true });
    const names = entries.filter((e) => e.isDirectory() && RUN_ID.test(e.name)).map((e) => e.name);
    // By time, not by name: `cadre run` names its folders by their start, but a library's or
    // --out's folder ("library") would sort after every timestamp. A tie goes by name.
    const dirs = await Promise.all(names.map(async (name) => ({ name, at: await lastWritten(join(this.dir, name)) })));
    dirs.sort((a, b) => b.at - a.at || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    return new Map(dirs.map(({ name }) => [name, join(this.dir, name)]));
  }

  async runs(): Promise<RunListing[]> {
    const dirs = [...(await this.#runDirs())];
    const listings = new Map<string, Listing>();
    // Oldest first, so that the record kept whole is the newest: the one the page opens unless told otherwise.
    for (const [id, dir] of [...dirs].reverse()) listings.set(id, await this.#listing(id, dir));
    return dirs.map(([id]) => ({ id, ...listings.get(id)! }));
  }

  async #listing(id: string, dir: string): Promise<Listing> {
    const stamp = await stampOf(dir);
    const known = this.#listings.get(dir);
    if (stamp !== undefined && known?.stamp === stamp) return known.listing;
    const read = await this.#read(dir, stamp);
    let listing: Listing;
    if ("problem" in read) listing = { title: id, startedAt: null, live: false, outcome: read.problem };
    else {
      const { record } = read;
      const outcome = `${recordTotals(record).byStatus.succeeded ?? 0}/${record.tasks.length} succeeded`;
      listing = {
        title: record.swarm,
        startedAt: record.started_at ?? null,
        live: false,
        outcome: record.interrupted ? `${outcome}, interrupted` : outcome,
      };
    }
    if (stamp !== undefined) this.#listings.set(dir, { stamp, listing });
    return listing;
  }

  async run(id: string): Promise<RunFeed | undefined> {
    const dir = (await this.#runDirs()).get(id);
    if (dir === undefined) return undefined;
    const read = await this.#read(dir, await stampOf(dir));
    return "record" in read ? new RecordedRun(id, dir, read.record) : undefined;
  }
}

/** When a run folder's record was last written: its summary.json's time, else the folder's (a run that has none yet). */
async function lastWritten(dir: string): Promise<number> {
  const info = (await stat(join(dir, SUMMARY_FILE)).catch(() => undefined)) ?? (await stat(dir).catch(() => undefined));
  return info?.mtimeMs ?? 0;
}

async function hasSummary(dir: string): Promise<boolean> {
  return (await stampOf(dir)) !== undefined;
}
