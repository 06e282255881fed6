// The reaper's script, run as cadre runs it, told by hand what to watch: it kills what it
// watches when cadre goes, and leaves alone a process that has since been given a watched pid.
import { readFileSync } from "node:fs";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
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
});
