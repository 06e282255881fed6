// `cadre run script.js --resume` after the run was killed with SIGKILL: the agent() calls that had answered replay
// from the record (the scripted model is not asked again), the rest run, the result is the uninterrupted one, and
// no process is left. cadre runs as a user runs it (node bin/cadre.js), its workers against this test's scripted model.
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { recordingClaude } from "../support/claude.ts";
import { bin } from "../support/cli.ts";
import { isGone } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

const SCRIPT = `export const meta = { name: "six", description: "six agents, one after another" }
const answers = []
for (let i = 1; i <= 6; i++) answers.push(await agent("step " + i + " of six", { label: "step-" + i }))
return { answers, args }
`;

/** The calls the journal says ended well (a call's row is journalled as the engine has its result, and again as it settles). */
function answered(out: string): number {
  const path = join(out, "journal.jsonl");
  if (!existsSync(path)) return 0;
  const lines = readFileSync(path, "utf8").split("\n");
  return new Set(lines.filter((line) => line.includes('"status":"succeeded"')).map((line) => /"name":"([^"]+)"/.exec(line)?.[1])).size;
}

describe("a workflow run killed with SIGKILL", () => {
  it("resumes: the calls that answered are not asked again, and the result is the uninterrupted one", { timeout: 240_000 }, async () => {
    // Each agent's reply echoes its prompt after a pause, so that the kill lands while the fourth waits.
    const server = await createRehearsal({ default: [{ text: "done: {{prompt}}", delay_ms: 1_500 }] });
    const dir = await tempHome("cadre-wf-resume-");
    const script = join(dir, "six.js");
    await writeFile(script, SCRIPT);
    await mkdir(join(dir, "home"));
    // Every claude started is recorded as it starts: the killed run's workers are known without sampling the process list.
    const claude = await recordingClaude(dir);
    const env = { ...offlineClaudeEnv({ baseUrl: server.url, home: join(dir, "home") }), CADRE_REAPER_GRACE_MS: "0", CADRE_CLAUDE_BIN: claude.bin };
    // A resumed run is given no --args: it keeps those it was started with.
    const run = (out: string, ...extra: string[]) =>
      execa("node", [bin, "run", script, ...(extra.includes("--resume") ? extra : ["--args", '{"n":6}', ...extra, "--out", out])], {
        cwd: dir,
        env,
        extendEnv: false,
        reject: false,
      });
    const asked = (step: number) => server.requests.filter((request) => JSON.stringify(request.messages).includes(`step ${step} of six`)).length;

    const whole = await run(join(dir, "whole"));
    expect(whole.exitCode, whole.stderr).toBe(0);
    const uninterrupted = JSON.parse(readFileSync(join(dir, "whole", "summary.json"), "utf8")).result;
    expect(uninterrupted.answers).toHaveLength(6);
    const before = Array.from({ length: 6 }, (_, i) => asked(i + 1));

    const out = join(dir, "killed");
    const first = run(out);
    await new Promise<void>((resolve, reject) => {
      const poll = setInterval(() => {
        if (answered(out) >= 3) {
          clearInterval(poll);
          first.kill("SIGKILL");
          resolve();
        }
      }, 50);
      void first.then(() => {
        clearInterval(poll);
        reject(new Error("the run ended before it was killed"));
      });
    });
    await first;
    const workers = await claude.pids();
    const ended = answered(out);
    expect(ended).toBeGreaterThanOrEqual(3);
    expect(ended).toBeLessThan(6);
    const askedBeforeResume = Array.from({ length: 6 }, (_, i) => asked(i + 1));

    const resumed = await run(out, "--resume", out);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('it keeps what it was started with (args {"n":6})');
    const record = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    expect(record.result).toEqual(uninterrupted);
    expect(record.result.args).toEqual({ n: 6 });
    expect(record.attempt).toBe(2);
    expect(record.tasks.filter((row: { carried_over?: boolean }) => row.carried_over)).toHaveLength(ended);
    for (let step = 1; step <= 6; step++) {
      const again = asked(step) - askedBeforeResume[step - 1]!;
      // A call that had answered is not asked again; every other one is asked once more.
      expect(again, `step ${step}`).toBe(step <= ended ? 0 : 1);
    }
    expect(askedBeforeResume.slice(0, ended).every((count, i) => count === before[i]! + 1)).toBe(true);
    // The workers of the killed run were ended by the reaper; the resumed run's ended with it.
    for (const pid of workers) expect(await isGone(pid, 10_000), `worker ${pid}`).toBe(true);
  });

  it("a fan-out whose second agent failed: the resumed run asks the model for that agent alone, and keeps the args", {
    timeout: 180_000,
  }, async () => {
    const dir = await tempHome("cadre-wf-resume-wide-");
    const script = join(dir, "wide.js");
    await writeFile(
      script,
      `export const meta = { name: "wide", description: "six agents at once" }
return { jobs: await parallel([1, 2, 3, 4, 5, 6].map((i) => () => agent("job " + i + " of " + args.of, { label: "job-" + i }))) }
`,
    );
    // The first run's scripted model refuses job-2; by the resume it answers.
    const replies = (job2: string) =>
      [1, 3, 4, 5, 6]
        .map((job) => `job-${job}: [{ text: "done" }]\n`)
        .concat(`job-2: [${job2}]\n`)
        .join("");
    await writeFile(join(dir, "wide.rehearsal.yaml"), replies('{ fail: { status: 400, message: "bad request" } }'));
    const cadre = (...args: string[]) => execa("node", [bin, "run", script, "--rehearse", ...args], { cwd: dir, reject: false });
    const out = join(dir, "run");
    /** The names of the sessions that asked the model, one per reply, as the run's replies.jsonl keeps them. */
    const askers = () =>
      readFileSync(join(out, "replies.jsonl"), "utf8")
        .split("\n")
        .filter((line) => line.includes('"reply":'))
        .map((line) => (JSON.parse(line) as { name: string }).name);

    const first = await cadre("--args", '{"of":"six"}', "--out", out);
    expect(first.exitCode, first.stderr).toBe(0);
    const failed = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    expect(failed.result.jobs).toEqual(["done", null, "done", "done", "done", "done"]);
    const before = askers().length;

    await writeFile(join(dir, "wide.rehearsal.yaml"), replies('{ text: "done at last" }'));
    const resumed = await cadre("--resume", out);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const record = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    expect(record.workflow.args).toEqual({ of: "six" });
    expect(record.result.jobs).toEqual(["done", "done at last", "done", "done", "done", "done"]);
    // Only job-2 asked the model again; the five that had succeeded gave their recorded results.
    expect(askers().slice(before)).toEqual(["job-2"]);
    const carried = record.tasks.filter((row: { carried_over?: boolean }) => row.carried_over).map((row: { label: string }) => row.label);
    expect(carried).toEqual(["job-1", "job-3", "job-4", "job-5", "job-6"]);
    // Each kept row says which run and attempt ran it; the row that ran again says nothing of the kind.
    const rows = new Map(record.tasks.map((row: { label: string }) => [row.label, row]));
    expect(rows.get("job-1")).toMatchObject({ carried_from: { run_id: failed.run_id, attempt: 1 } });
    expect(rows.get("job-2")).not.toHaveProperty("carried_from");
  });
});
