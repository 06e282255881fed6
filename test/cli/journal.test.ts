// The run's journal: a task's end appends one line; summary.json is compacted from it now and then. A run killed while
// a compaction is being written resumes with every task that had ended; what a task's end writes does not grow with the run.
import { existsSync, readFileSync, statSync, watch } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { runSwarmFile } from "../../src/run/index.ts";
import { JOURNAL_FILE, readJournal, withJournal } from "../../src/run/record/journal.ts";
import { recordingClaude } from "../support/claude.ts";
import { bin, readSummary } from "../support/cli.ts";
import { isAlive, isGone } from "../support/processes.ts";
import { tempHome } from "../support/rehearsal.ts";

const QUICK = 12;

/**
 * QUICK one-turn tasks, then `gate`, which fails at once without a worker (its
 * worktree's base is no commit of the repository `dir` is made), so that `pads` tasks waiting on it are
 * skipped together: the journal grows by their lines at once and the next
 * compaction writes a long summary. `slow` keeps the run going meanwhile.
 */
async function writeSwarm(dir: string, pads: number, slowMs: number): Promise<string> {
  await execa("git", ["init", "-q", dir]);
  await execa("git", ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start"]);
  const file = join(dir, "swarm.yaml");
  const list = (count: number, prefix: string) => `[${Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(", ")}]`;
  await writeFile(
    file,
    [
      "name: journal",
      "concurrency: 4",
      `defaults: { reuse: true, cwd: "${dir}" }`,
      "tasks:",
      `  - { name: "t-{{item}}", prompt: "say {{item}}", for_each: ${list(QUICK, "q")} }`,
      '  - { name: gate, prompt: go, worktree: { base: no-such-ref }, depends_on: ["t-{{item}}"] }',
      `  - { name: "pad-{{item}}", prompt: "pad {{item}}", depends_on: [gate], for_each: ${list(pads, "p")} }`,
      "  - { name: slow, prompt: wait }",
      "rehearsal:",
      '  "t-{{item}}": [{ text: "done {{prompt}}" }]',
      "  gate: [{ text: never }]",
      '  "pad-{{item}}": [{ text: never }]',
      `  slow: [{ text: slow, delay_ms: ${slowMs} }]`,
      "",
    ].join("\n"),
  );
  return file;
}

const quickNames = Array.from({ length: QUICK }, (_, i) => `t-q${i}`);

describe("the run's journal", () => {
  it("a run killed (SIGKILL) while summary.json is being compacted resumes with every task that had ended", { timeout: 240_000 }, async () => {
    const dir = await tempHome("cadre-journal-");
    const config = await writeSwarm(dir, 10_000, 12_000);
    const out = join(dir, "run");
    await mkdir(out);
    // Its workers, each noted as it starts: cadre cannot end them once SIGKILLed itself.
    const claude = await recordingClaude(await tempHome("cadre-claude-"));
    const first = execa("node", [bin, "run", config, "--rehearse", "--out", out], { cwd: dir, reject: false, env: { CADRE_CLAUDE_BIN: claude.bin } });
    // A record is written to a temporary file renamed over summary.json. The first is the run's start, before
    // the journal has a line; the next, once tasks have ended, is a compaction: killed as its file appears.
    let compacting: string | undefined;
    const watcher = watch(out, (_event, name) => {
      if (compacting !== undefined || !name?.startsWith("summary.json.") || !name.endsWith(".tmp")) return;
      if (!existsSync(join(out, name)) || fileSize(join(out, JOURNAL_FILE)) === 0) return;
      compacting = name;
      first.kill("SIGKILL");
    });
    await first;
    watcher.close();
    const workers = await claude.pids();
    for (const pid of workers) if (isAlive(pid)) process.kill(pid, "SIGKILL");
    for (const pid of workers) await isGone(pid);
    expect(compacting, "no compaction started before the run ended").toBeDefined();
    // Still there: the kill came before the compaction's rename.
    expect(existsSync(join(out, compacting!))).toBe(true);

    // The summary lags (written when the run started); the journal has every task that ended.
    const lagging = await readSummary(out);
    expect(lagging.tasks.filter((t) => quickNames.includes(t.name)).some((t) => t.status !== "succeeded")).toBe(true);
    const record = withJournal(lagging, (await readJournal(out)).values);
    expect(record.tasks.filter((t) => quickNames.includes(t.name)).map((t) => t.status)).toEqual(quickNames.map(() => "succeeded"));
    expect(record.tasks.find((t) => t.name === "gate")?.status).toBe("failed");
    expect(record.totals.succeeded).toBe(QUICK);

    const resumed = await execa("node", [bin, "run", config, "--rehearse", "--resume", out], { cwd: dir, reject: false });
    expect(resumed.exitCode, resumed.stderr).toBe(1);
    for (const name of quickNames) expect(resumed.stdout).toContain(`${name}: carried over`);
    const summary = await readSummary(out);
    const quick = summary.tasks.filter((t) => quickNames.includes(t.name));
    expect(quick.map((t) => [t.status, t.carried_over])).toEqual(quickNames.map(() => ["succeeded", true]));
    expect(summary.tasks.find((t) => t.name === "slow")?.status).toBe("succeeded");
    expect(summary.complete).toBe(true);
    // The half-written summary of the killed attempt is gone.
    expect((await readdir(out)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("what a task's end writes to the run directory does not grow with the number of tasks", { timeout: 120_000 }, async () => {
    /** Bytes this process wrote per task while it ran a swarm of `pads` skipped tasks (and a few that ran). */
    const bytesPerTask = async (pads: number): Promise<{ perTask: number; journalPerTask: number }> => {
      const dir = await tempHome("cadre-journal-bytes-");
      const config = await writeSwarm(dir, pads, 1);
      const out = join(dir, "run");
      const before = written();
      const result = await runSwarmFile(config, { outDir: out, rehearse: true });
      expect(result.summary.totals.skipped).toBe(pads);
      const journal = readFileSync(join(out, JOURNAL_FILE));
      return { perTask: (written() - before) / (pads + QUICK + 2), journalPerTask: journal.length / (pads + QUICK + 2) };
    };
    const small = await bytesPerTask(500);
    const large = await bytesPerTask(10_000);
    // Rewriting the whole record at each task's end would make the large run's share twenty times the small one's.
    expect(large.perTask / small.perTask).toBeLessThan(1.5);
    expect(large.journalPerTask / small.journalPerTask).toBeLessThan(1.2);
  });
});

/** The bytes this process has written (Linux: /proc/self/io), to files and pipes alike. */
function written(): number {
  const match = /^wchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
  if (match === null) throw new Error("/proc/self/io has no wchar");
  return Number(match[1]);
}

function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}
