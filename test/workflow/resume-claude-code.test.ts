// `cadre run --resume wf_<id>` continues a run of the pinned CLI's own Workflow tool (claude -p, offline against the
// scripted model) from the CLI's session files: the calls that succeeded there are not asked again, also after the
// continuation was killed with SIGKILL; missing or foreign files are refused in one line (exit 2).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import { CLAUDE_BIN, recordingClaude } from "../support/claude.ts";
import { bin } from "../support/cli.ts";
import { modelProxy } from "../support/model-proxy.ts";
import { isGone } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { CADRE_AGENTS_SCRIPT, CLAUDE_MAIN_SCRIPT, claudeWorkflowArgs, launchWorkflow, workflowModel } from "../support/workflow-cli.ts";

/** Six agents at once, then one that reports, whose prompt does not depend on theirs (its key goes on from the join). */
const SCRIPT = `export const meta = { name: "wide", description: "six agents at once" }
phase("Fan")
const jobs = await parallel([1, 2, 3, 4, 5, 6].map((i) => () => agent("job " + i + " of " + args.of, { label: "job-" + i })))
const report = await agent("report on the " + args.of + " jobs", { label: "report" })
return { jobs, report }
`;

/** A project with a Claude Code home; the scripted model; the CLI's run of SCRIPT, whose agents named in `failing` failed. */
async function claudeCodeRun(failing: string[]) {
  const server = await createRehearsal(workflowModel([{ text: "did: {{task}}" }]));
  const project = await tempHome("cadre-cc-resume-");
  const home = join(project, "home");
  await mkdir(join(home, "tmp"), { recursive: true });
  const proxy = await modelProxy(server.url, { fail: failing });
  server.setScript(CLAUDE_MAIN_SCRIPT, launchWorkflow(SCRIPT, { of: "six" }));
  const claude = await execa(CLAUDE_BIN, claudeWorkflowArgs(), {
    cwd: project,
    env: { ...offlineClaudeEnv({ baseUrl: proxy.url, home }), TMPDIR: join(home, "tmp") },
    extendEnv: false,
    input: "",
    reject: false,
    timeout: 120_000,
  });
  const runId = /wf_[A-Za-z0-9-]+/.exec(claude.stdout)?.[0];
  expect(runId, claude.stderr.slice(-2000)).toBeDefined();
  return { server, project, home, proxy, runId: runId! };
}

/** How many times cadre's workers asked the model for this prompt. */
function asked(server: RehearsalServer, text: string): number {
  return server.requests.filter((request) => request.script === CADRE_AGENTS_SCRIPT && JSON.stringify(request.messages).includes(text)).length;
}

/** `cadre run --resume <runId>` in the project, its workers against `baseUrl` (the scripted model's agents script). */
function continueRun(project: string, home: string, baseUrl: string, runId: string, env: Record<string, string> = {}) {
  return execa("node", [bin, "run", "--resume", runId], {
    cwd: project,
    env: { ...offlineClaudeEnv({ baseUrl: `${baseUrl}/s/${CADRE_AGENTS_SCRIPT}`, home }), CADRE_REAPER_GRACE_MS: "0", ...env },
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  });
}

/** The record of the newest run under the project's .cadre/runs. */
function newestRecord(project: string) {
  const runs = join(project, ".cadre", "runs");
  const dir = join(runs, readdirSync(runs).sort().at(-1)!);
  return { dir, record: JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) };
}

const JOBS = [1, 2, 3, 4, 5, 6].map((job) => `did: job ${job} of six`);

describe("cadre run --resume wf_<id>", () => {
  it("continues a Claude Code run whose second agent failed: only that agent asks the model", { timeout: 240_000 }, async () => {
    const { server, project, home, runId } = await claudeCodeRun(["job 2 of six"]);
    const continued = await continueRun(project, home, server.url, runId);
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(continued.stdout).toContain(`continues Claude Code's workflow run ${runId}`);
    expect(continued.stdout).toContain('args {"of":"six"}');
    expect([1, 2, 3, 4, 5, 6].map((job) => asked(server, `job ${job} of six`))).toEqual([0, 1, 0, 0, 0, 0]);
    expect(asked(server, "report on the six jobs")).toBe(0);
    const { record } = newestRecord(project);
    expect(record.result).toEqual({ jobs: JOBS, report: "did: report on the six jobs" });
    expect(record.continues).toMatchObject({ claude_code_run: runId });
    const rows = new Map(record.tasks.map((row: { label: string }) => [row.label, row]));
    expect(rows.get("job-2")).not.toHaveProperty("carried_over");
    expect(rows.get("job-1")).toMatchObject({ carried_over: true, carried_from: { run_id: runId }, result: "did: job 1 of six" });
    expect(rows.get("report")).toMatchObject({ carried_over: true, carried_from: { run_id: runId } });

    // Replayed offline: the call that ran plays its recorded replies, the calls of the CLI's run give their results.
    const { dir } = newestRecord(project);
    const replayed = await execa("node", [bin, "replay", dir, "--in-place", "--out", join(project, "replayed")], {
      cwd: project,
      env: offlineClaudeEnv({ baseUrl: "http://127.0.0.1:9", home }),
      extendEnv: false,
      reject: false,
    });
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    const replay = JSON.parse(readFileSync(join(project, "replayed", "summary.json"), "utf8"));
    expect(replay.result).toEqual(record.result);
    expect(replay.replay.divergences).toEqual([]);
  });

  it("after its continuation was killed with SIGKILL, asks only for what neither finished", { timeout: 240_000 }, async () => {
    const { server, project, home, proxy, runId } = await claudeCodeRun(["job 2 of six", "job 5 of six"]);
    // The continuation: job 2 answers, job 5 waits until the kill.
    proxy.rules = { hold: ["job 5 of six"] };
    // Its claude processes are recorded as they start: the held one must be gone before the proxy lets job 5 through again.
    const claude = await recordingClaude(home);
    const killed = continueRun(project, home, proxy.url, runId, { CADRE_CLAUDE_BIN: claude.bin });
    /** Whether the continuation's journal says job 2 succeeded. */
    const job2Answered = () => {
      const runs = join(project, ".cadre", "runs");
      const [dir] = existsSync(runs) ? readdirSync(runs) : [];
      const path = dir === undefined ? undefined : join(runs, dir, "journal.jsonl");
      if (path === undefined || !existsSync(path)) return false;
      return readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .some((line) => {
          const { task } = JSON.parse(line) as { task: { label?: string; status: string } };
          return task.label === "job-2" && task.status === "succeeded";
        });
    };
    await expect.poll(job2Answered, { timeout: 60_000 }).toBe(true);
    killed.kill("SIGKILL");
    await killed;
    expect(asked(server, "job 2 of six")).toBe(1);
    for (const pid of await claude.pids()) expect(await isGone(pid, 10_000), `claude ${pid}`).toBe(true);

    proxy.rules = {};
    const resumed = await continueRun(project, home, proxy.url, runId);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect([1, 2, 3, 4, 5, 6].map((job) => asked(server, `job ${job} of six`))).toEqual([0, 1, 0, 0, 1, 0]);
    expect(asked(server, "report on the six jobs")).toBe(0);
    const { record } = newestRecord(project);
    expect(readdirSync(join(project, ".cadre", "runs"))).toHaveLength(1);
    expect(record.attempt).toBe(2);
    expect(record.result).toEqual({ jobs: JOBS, report: "did: report on the six jobs" });
    const job2 = record.tasks.find((row: { label: string }) => row.label === "job-2");
    // Job 2 ran in the killed continuation (its first attempt), the others in the CLI's run.
    expect(job2).toMatchObject({ carried_over: true, carried_from: { attempt: 1 } });
    expect(job2.carried_from.run_id).not.toBe(runId);
    expect(record.tasks.find((row: { label: string }) => row.label === "job-1")).toMatchObject({ carried_from: { run_id: runId } });
  });

  it("says in one line what is missing or of another format, and exits 2", { timeout: 180_000 }, async () => {
    const { server, project, home, runId } = await claudeCodeRun([]);
    const refused = async (id: string) => {
      const run = await continueRun(project, home, server.url, id);
      expect(run.exitCode, run.stdout).toBe(2);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      return run.stderr.trim();
    };
    expect(await refused("wf_nosuchrun-000")).toMatch(/^cadre run: no Claude Code workflow run wf_nosuchrun-000 in .*home\/\.claude\/projects\//);
    const session = readdirSync(join(home, ".claude", "projects"))
      .map((name) => join(home, ".claude", "projects", name))
      .flatMap((project) => readdirSync(project).map((name) => join(project, name)))
      .find((dir) => existsSync(join(dir, "workflows", `${runId}.json`)))!;
    const journal = join(session, "subagents", "workflows", runId, "journal.jsonl");
    const text = readFileSync(journal, "utf8");
    await writeFile(journal, text.replaceAll('"key":"v2:', '"key":"v3:'));
    expect(await refused(runId)).toMatch(/journal\.jsonl is of another format \(keys v3, cadre reads v2/);
    await rm(journal);
    expect(await refused(runId)).toMatch(new RegExp(`^cadre run: the journal of Claude Code's run ${runId} is missing`));
    await writeFile(join(session, "workflows", `${runId}.json`), JSON.stringify({ runId, version: 9 }));
    expect(await refused(runId)).toMatch(/is not a Claude Code workflow run of the format cadre reads/);
    expect(server.requests.filter((request) => request.script === CADRE_AGENTS_SCRIPT)).toHaveLength(0);
  });
});
