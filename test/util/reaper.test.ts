// The reaper's script, run as cadre runs it, told by hand what to watch: it kills what it
// watches when cadre goes, and leaves alone a process that has since been given a watched pid.
import { readFileSync } from "node:fs";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { startGroup } from "../../src/util/process-group.ts";
import { REAPER_SCRIPT } from "../../src/util/reaper-script.ts";

const started: ReturnType<typeof execa>[] = [];

function sleeper() {
  const child = execa("sleep", ["60"], { detached: true, reject: false });
  started.push(child);
  return child;
}

function startOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

/** Starts the reaper, hands it these lines, then closes its stdin as cadre's death would, and waits for it to finish. */
async function reaperGone(lines: unknown[][]): Promise<void> {
  const reaper = execa(process.execPath, ["--input-type=module", "--eval", REAPER_SCRIPT], { stdin: "pipe", reject: false });
  for (const line of lines) reaper.stdin!.write(`${JSON.stringify(line)}\n`);
  reaper.stdin!.end();
  const { exitCode } = await reaper;
  expect(exitCode).toBe(0);
}

function running(child: ReturnType<typeof execa>): boolean {
  return child.exitCode === null && child.signalCode === null;
}

afterEach(async () => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

describe.skipIf(process.platform !== "linux")("the reaper", () => {
  it("kills a watched process when cadre goes", async () => {
    const child = sleeper();
    await reaperGone([["watch", child.pid, null, startOf(child.pid!)]]);
    await child;
    expect(child.signalCode).toBe("SIGKILL");
  });

  it("leaves alone a process whose pid was watched but which started later: the pid was given again", async () => {
    const child = sleeper();
    await reaperGone([["watch", child.pid, null, startOf(child.pid!) - 1]]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(running(child)).toBe(true);
  });

  it("kills what carries a watched process's mark, even reparented, once the process is forgotten", async () => {
    const mark = `test.${process.pid}.${Date.now()}`;
    const carrier = execa("sleep", ["60"], { detached: true, reject: false, env: { CADRE_GROUP: mark } });
    const bystander = execa("sleep", ["60"], { detached: true, reject: false, env: { CADRE_GROUP: `${mark}0` } });
    started.push(carrier, bystander);
    // The leader is said to have exited: what it left behind with its mark goes, nothing else.
    const leader = sleeper();
    await reaperGone([
      ["watch", leader.pid, mark, startOf(leader.pid!)],
      ["forget", leader.pid],
    ]);
    await carrier;
    expect(carrier.signalCode).toBe("SIGKILL");
    expect(running(bystander)).toBe(true);
  });

  it("finds its mark among the marks of the cadres a process runs under: a nested cadre's workers end with the outer cadre's", async () => {
    const mark = `test.${process.pid}.${Date.now()}`;
    // Started by a cadre that a worker of this one runs: the inner cadre's mark follows this one's.
    const nested = execa("sleep", ["60"], { detached: true, reject: false, env: { CADRE_GROUP: `${mark}:inner.1.1` } });
    const bystander = execa("sleep", ["60"], { detached: true, reject: false, env: { CADRE_GROUP: `other.1.1:${mark}0` } });
    started.push(nested, bystander);
    const leader = sleeper();
    await reaperGone([["watch", leader.pid, mark, startOf(leader.pid!)]]);
    await nested;
    expect(nested.signalCode).toBe("SIGKILL");
    expect(running(bystander)).toBe(true);
  });

  it("gives a process it starts the marks this process inherited, then its own", async () => {
    const inherited = process.env.CADRE_GROUP;
    process.env.CADRE_GROUP = "outer.1.1";
    try {
      const child = startGroup("sh", ["-c", 'printf %s "$CADRE_GROUP"'], { reject: false });
      const { stdout } = await child;
      expect(stdout).toMatch(/^outer\.1\.1:\d+\.[0-9a-f]{8}\.\d+$/);
    } finally {
      if (inherited === undefined) delete process.env.CADRE_GROUP;
      else process.env.CADRE_GROUP = inherited;
    }
  });
});
