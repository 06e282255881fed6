// `cadre run … | head -1`: the reader of stdout exits after one line, and every later write
// to the pipe fails (EPIPE). The run goes on to its end and writes its whole record.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin, readSummary, repo } from "../support/cli.ts";

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-closed-output-"));
  file = join(dir, "four.yaml");
  const names = ["a", "b", "c", "d"];
  await writeFile(
    file,
    JSON.stringify({
      concurrency: 2,
      tasks: names.map((name) => ({ name, prompt: "hi" })),
      rehearsal: Object.fromEntries(names.map((name) => [name, [{ text: `done ${name}` }]])),
    }),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `cadre run` with its stdout into `head -n 1`, as a shell pipe does; stderr is kept. */
async function runIntoHead(args: string[]) {
  const head = spawn("head", ["-n", "1"], { stdio: ["pipe", "pipe", "inherit"] });
  let headOut = "";
  head.stdout.on("data", (chunk: Buffer) => (headOut += chunk.toString("utf8")));
  const run = spawn("node", [bin, "run", ...args], { cwd: repo, stdio: ["ignore", head.stdin, "pipe"] });
  // Only cadre writes into the pipe now.
  head.stdin.destroy();
  let stderr = "";
  run.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const [headCode] = await once(head, "exit");
  const [code] = await once(run, "exit");
  return { code: code as number, headCode: headCode as number, headOut, stderr };
}

describe("cadre run into a pipe that closes early", () => {
  it.each([
    ["--json", ["--json"]],
    ["lines", []],
  ])("%s: the run goes on to its end, says once that stdout closed, and writes a complete summary.json", async (label, flags) => {
    const out = join(dir, `out-${label}`);
    const run = await runIntoHead([file, "--rehearse", "--out", out, ...flags]);
    expect(run.headCode).toBe(0);
    expect(run.headOut.split("\n").filter(Boolean)).toHaveLength(1);
    expect(run.stderr).not.toContain("unexpected error");
    expect(run.stderr.match(/stdout was closed/g), run.stderr).toHaveLength(1);
    expect(run.code, run.stderr).toBe(0);
    const summary = await readSummary(out);
    expect([summary.complete, summary.interrupted, summary.exit_code]).toEqual([true, false, 0]);
    expect(summary.tasks.map((task) => [task.name, task.status, task.text])).toEqual(
      ["a", "b", "c", "d"].map((name) => [name, "succeeded", `done ${name}`]),
    );
  });
});
