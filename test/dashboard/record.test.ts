// A past run as the dashboard reads its summary.json: lenient about what older records lack, and
// showing what newer ones add (per-task times, sessions of peers, supervisors and children).
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunsDirectory } from "../../src/dashboard/index.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-record-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function runDir(name: string, summary: unknown): Promise<void> {
  await mkdir(join(dir, name), { recursive: true });
  await writeFile(join(dir, name, "summary.json"), typeof summary === "string" ? summary : JSON.stringify(summary));
}

const task = {
  name: "research",
  agent: "researcher",
  status: "succeeded",
  cost_usd: 0.5,
  num_turns: 3,
  duration_ms: 4000,
  attempts: 1,
  transcript: "transcripts/research.jsonl",
  error: null,
};

describe("RunsDirectory", () => {
  it("lists runs newest first, says why one cannot be read, and refuses ids that climb out", async () => {
    await runDir("2026-01-01T10-00-00Z", { swarm: "older", tasks: [task], totals: { succeeded: 1 } });
    await runDir("2026-01-02T10-00-00Z", "{ not json");
    const runs = new RunsDirectory(dir);
    const listed = await runs.runs();
    expect(listed.map((r) => [r.id, r.title])).toEqual([
      ["2026-01-02T10-00-00Z", "2026-01-02T10-00-00Z"],
      ["2026-01-01T10-00-00Z", "older"],
    ]);
    expect(listed[0]!.outcome).toContain("summary.json is not JSON");
    expect(listed[1]!.outcome).toBe("1/1 succeeded");
    expect(await runs.run("..")).toBeUndefined();
    expect(await runs.run("2026-01-02T10-00-00Z")).toBeUndefined();
    // A record without per-task times: the table, no timeline, and a word on why.
    const older = (await runs.run("2026-01-01T10-00-00Z"))!.snapshot(Date.now());
    expect(older.rows[0]).toMatchObject({
      key: "t:research",
      status: "succeeded",
      turns: 3,
      costUsd: 0.5,
      runMs: 4000,
      phases: [],
      hasConversation: true,
    });
    expect(older.notice).toContain("no per-task times");
  });

  it("lists by the time a record was written, not by name: a folder named by hand does not hide the newest run", async () => {
    const own = await mkdtemp(join(tmpdir(), "cadre-record-order-"));
    try {
      const write = async (name: string, minutesAgo: number) => {
        await mkdir(join(own, name));
        const file = join(own, name, "summary.json");
        await writeFile(file, JSON.stringify({ swarm: name, tasks: [task] }));
        const at = new Date(Date.now() - minutesAgo * 60_000);
        await utimes(file, at, at);
      };
      await write("library", 60);
      await write("2026-01-01T10-00-00Z", 30);
      await write("2026-01-02T10-00-00Z", 0);
      expect((await new RunsDirectory(own).runs()).map((r) => r.id)).toEqual(["2026-01-02T10-00-00Z", "2026-01-01T10-00-00Z", "library"]);
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });

  it("shows per-task times and the sessions a run started, each after the task it worked for", async () => {
    await runDir("2026-01-03T10-00-00Z", {
      swarm: "newer",
      started_at: "2026-01-03T10:00:00.000Z",
      finished_at: "2026-01-03T10:00:09.000Z",
      tasks: [
        { ...task, queued_ms: 1000, started_at: "2026-01-03T10:00:02.000Z", finished_at: "2026-01-03T10:00:06.000Z", branch: "cadre/research" },
      ],
      sessions: [
        {
          role: "peer",
          name: "peer:critic",
          agent: "critic",
          parent: "research",
          cost_usd: 0.1,
          num_turns: 1,
          transcript: "transcripts/peer_critic.jsonl",
        },
        { role: "supervisor", name: "supervisor:guard", agent: "guard", parent: null, cost_usd: 0.05, transcript: null },
        { role: "peer", name: "escape", transcript: "../../etc/passwd" },
      ],
      totals: { tasks: 1, succeeded: 1, cost_usd: 0.65, num_turns: 3 },
    });
    const run = (await new RunsDirectory(dir).run("2026-01-03T10-00-00Z"))!;
    const snapshot = run.snapshot(Date.now());
    expect(snapshot.rows.map((r) => [r.key, r.kind, r.parent])).toEqual([
      ["t:research", "task", null],
      ["s:0", "peer", "t:research"],
      ["s:1", "supervisor", null],
      ["s:2", "peer", null],
    ]);
    const start = Date.parse("2026-01-03T10:00:02.000Z");
    expect(snapshot.rows[0]).toMatchObject({ queuedMs: 1000, startedAt: start, runMs: 4000, branch: "cadre/research" });
    expect(snapshot.rows[0]!.phases.map((p) => [p.status, p.at - start])).toEqual([
      ["queued", -1000],
      ["running", 0],
      ["succeeded", 4000],
    ]);
    expect(snapshot.notice).toBeNull();
    expect(snapshot.totals).toMatchObject({ tasks: 1, costUsd: 0.65, turns: 3 });
    // A transcript path that leaves the run's directory is not read.
    expect(await run.conversation("s:2")).toBeUndefined();
    expect(await run.conversation("s:1")).toBeUndefined();
  });
});
