// The record cannot be written: a directory stands where summary.json goes (a real fs error on
// every write of it), a read-only output directory, a disk that fills up mid-run (a small tmpfs,
// where this machine lets a test mount one). The tasks go on, cadre says so once, tries again,
// and ends with what could be written.
import { spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin, cadre, readSummary, repo } from "../support/cli.ts";

("../support/reliability.ts");

import { until } from "../support/wait.ts";

const NAMES = ["a", "b", "c"];
let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-record-faults-"));
  file = join(dir, "three.yaml");
  // b and c take seconds, so the record is written several times while they run.
  const rehearsal = { a: [{ text: "done a" }], b: [{ text: "done b", delay_ms: 2500 }], c: [{ text: "done c", delay_ms: 2500 }] };
  await writeFile(file, JSON.stringify({ concurrency: 3, tasks: NAMES.map((name) => ({ name, prompt: "hi" })), rehearsal }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function startRun(out: string) {
  const child = cadre(["run", file, "--rehearse", "--out", out]);
  let stderr = "";
  let stdout = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  return { child, output: () => stdout + stderr };
}

/** A directory where summary.json goes: every write of the record fails (rename over a non-empty directory). */
async function blockedRecord(name: string): Promise<{ out: string; blocker: string }> {
  const out = join(dir, name);
  const blocker = join(out, "summary.json");
  await mkdir(join(blocker, "in-the-way"), { recursive: true });
  return { out, blocker };
}

const count = (text: string, pattern: RegExp) => text.match(new RegExp(pattern, "g"))?.length ?? 0;

describe("a record that cannot be written", () => {
  it("does not stop the tasks: said once, written again once it can be, complete at the end", async () => {
    const { out, blocker } = await blockedRecord("recovers");
    const run = startRun(out);
    await until(() => (/cannot write \S*summary\.json/.test(run.output()) ? true : undefined), 30_000, "the notice that the record is not written");
    await rm(blocker, { recursive: true });
    const { exitCode } = await run.child;
    const output = run.output();
    expect(exitCode, output).toBe(0);
    expect(count(output, /cannot write \S*summary\.json/), output).toBe(1);
    expect(count(output, /summary\.json is written again/), output).toBe(1);
    const summary = await readSummary(out);
    expect(summary.complete).toBe(true);
    expect(summary.tasks.map((task) => [task.name, task.status])).toEqual(NAMES.map((name) => [name, "succeeded"]));
  });

  it("that never can be: every task still runs, the end says the record is not written, exit 1", async () => {
    const { out } = await blockedRecord("never");
    const run = startRun(out);
    const { exitCode } = await run.child;
    const output = run.output();
    expect(exitCode, output).toBe(1);
    expect(count(output, /cannot write \S*summary\.json: [^;\n]*; the tasks go on/), output).toBe(1);
    expect(output).toMatch(/record: not written \(cannot write \S*summary\.json/);
    for (const name of NAMES) expect(output).toMatch(new RegExp(`\\b${name}: succeeded`));
    expect((await readdir(join(out, "transcripts"))).sort()).toEqual(NAMES.map((name) => `${name}.jsonl`));
  });
});

const isRoot = process.getuid?.() === 0;
/** Whether this machine lets a test mount a tmpfs in a mount namespace of its own (root, or user namespaces). */
const canMount = spawnSync("unshare", [isRoot ? "-m" : "-rm", "sh", "-c", `mount -t tmpfs -o size=1m tmpfs "${tmpdir()}"`]).status === 0;

/**
 * `cadre run` in a mount namespace of its own, with a tmpfs (mounted with `options`) at
 * `mountPoint`, which goes with it. `script` runs cadre: "$0" is the mount point, and
 * CADRE_RUN stands for the command (its output directory is "$3").
 */
function runOnTmpfs(mountPoint: string, options: string, out: string, script = "exec CADRE_RUN") {
  const command = script.replace("CADRE_RUN", 'node "$1" run "$2" --rehearse --out "$3"');
  return execa("unshare", [isRoot ? "-m" : "-rm", "sh", "-c", `mount -t tmpfs -o ${options} tmpfs "$0" && ${command}`, mountPoint, bin, file, out], {
    cwd: repo,
    reject: false,
  });
}

describe("an output directory that cannot be written", () => {
  it("a chmod'ed one is reported as read-only, before anything runs (exit 2)", async (context) => {
    // Root writes through any permission bits: the case is not there to test.
    if (isRoot) return context.skip("running as root, which ignores the directory's permissions");
    const parent = join(dir, "locked");
    await mkdir(parent);
    await chmod(parent, 0o555);
    const run = await cadre(["run", file, "--rehearse", "--out", join(parent, "out")]);
    await chmod(parent, 0o755);
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/cannot write \S+: the directory is read-only for this user \(EACCES\)/);
  });

  it.skipIf(!canMount)("a read-only file system is reported as one, not as ENOENT (exit 2)", async () => {
    const mountPoint = join(dir, "ro");
    await mkdir(mountPoint);
    for (const out of [mountPoint, join(mountPoint, "out")]) {
      const run = await runOnTmpfs(mountPoint, "ro,size=1m", out);
      expect(run.exitCode, run.stderr).toBe(2);
      expect(run.stderr).toContain(`the output directory cannot be used: cannot write ${out}: the file system is read-only (EROFS)`);
    }
  });

  it.skipIf(!canMount)(
    "a disk that fills up mid-run: the tasks go on, cadre says so once and writes the record again once there is room",
    async () => {
      const mountPoint = join(dir, "small");
      await mkdir(mountPoint);
      const out = join(mountPoint, "out");
      // The disk fills as soon as the run has written its first record, and is freed once cadre says it is full.
      const kept = join(dir, "small-kept");
      await mkdir(kept);
      const script = [
        `(while [ ! -f "$3/summary.json" ]; do sleep 0.05; done; dd if=/dev/zero of="$0/filler" bs=64k 2>/dev/null) &`,
        `{ CADRE_RUN; echo $? > "${kept}/code"; cp "$3/summary.json" "${kept}/"; } 2>&1 |`,
        `while IFS= read -r line; do printf '%s\\n' "$line"; case "$line" in *"disk is full"*) rm -f "$0/filler";; esac; done`,
      ].join(" ");
      const run = await runOnTmpfs(mountPoint, "size=16m", out, script);
      const output = `${run.stdout}${run.stderr}`;
      expect(await readFile(join(kept, "code"), "utf8"), output).toBe("0\n");
      expect(output).not.toContain("unexpected error");
      expect(count(output, /cannot write \S*summary\.json: the disk is full \(ENOSPC\); the tasks go on/), output).toBe(1);
      expect(count(output, /summary\.json is written again/), output).toBe(1);
      const summary = await readSummary(kept);
      expect(summary.complete).toBe(true);
      expect(summary.tasks.map((task) => [task.name, task.status])).toEqual(NAMES.map((name) => [name, "succeeded"]));
    },
  );
});
