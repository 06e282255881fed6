// `cadre run script.js --resume` after the run was killed with SIGKILL: the agent() calls that had answered replay
// from the record (the scripted model is not asked again), the rest run, the result is the uninterrupted one, and
// no process is left. cadre runs as a user runs it (node bin/cadre.js), its workers against this test's scripted model.
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { bin } from "../support/cli.ts";
import { claudeDescendants, isGone } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

const SCRIPT = `export const meta = { name: "six", description: "six agents, one after another" }
const answers = []
for (let i = 1; i <= 6; i++) answers.push(await agent("step " + i + " of six", { label: "step-" + i }))
return { answers, args }
`;

/** The lines of the journal whose row ended well. */
function answered(out: string): number {
  const path = join(out, "journal.jsonl");
  if (!existsSync(path)) return 0;
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.includes('"status":"succeeded"')).length;
}

describe("a workflow run killed with SIGKILL", () => {
  it("resumes: the calls that answered are not asked again, and the result is the uninterrupted one", { timeout: 240_000 }, async () => {
    // Each agent's reply echoes its prompt after a pause, so that the kill lands while the fourth waits.
    const server = await createRehearsal({ default: [{ text: "done: {{prompt}}", delay_ms: 1_500 }] });
    const dir = await tempHome("cadre-wf-resume-");
    const script = join(dir, "six.js");
    await writeFile(script, SCRIPT);
    await mkdir(join(dir, "home"));
    const env = { ...offlineClaudeEnv({ baseUrl: server.url, home: join(dir, "home") }), CADRE_REAPER_GRACE_MS: "0" };
    const run = (out: string, ...extra: string[]) =>
      execa("node", [bin, "run", script, "--args", '{"n":6}', ...extra, ...(extra.includes("--resume") ? [] : ["--out", out])], {
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
    const workers = new Set<number>();
    await new Promise<void>((resolve, reject) => {
      const poll = setInterval(() => {
        void claudeDescendants(first.pid!).then((pids) => {
          for (const pid of pids) workers.add(pid);
        });
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
    const ended = answered(out);
    expect(ended).toBeGreaterThanOrEqual(3);
    expect(ended).toBeLessThan(6);
    const askedBeforeResume = Array.from({ length: 6 }, (_, i) => asked(i + 1));

    const resumed = await run(out, "--resume", out);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const record = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    expect(record.result).toEqual(uninterrupted);
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
});
