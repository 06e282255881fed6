// A workflow script whose agents run on two `cadre worker` hosts (--redis): the script runs where `cadre run` runs,
// and the result and the record's rows are those of the same script run in one process.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cadre } from "../support/cli.ts";
import { runDistributed, startHost, startRedis } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

interface Row {
  label: string;
  phase: string;
  status: string;
  result: unknown;
  host?: string | null;
}

const record = async (dir: string) =>
  JSON.parse(await readFile(join(dir, "summary.json"), "utf8")) as { result: unknown; logs: string[]; tasks: Row[] };

describe("a workflow script on two hosts", () => {
  it("gives the same result and rows as in one process, each agent on a host", async () => {
    const redis = await startRedis();
    // Under --rehearse each host plays the script's replies; this server only has to exist.
    const model = await createRehearsal({ unused: [{ text: "unused" }] });
    await startHost(redis, model, { name: "host-a", script: "unused" });
    await startHost(redis, model, { name: "host-b", script: "unused" });
    const home = await tempHome("cadre-wf-hosts-");
    const script = "examples/workflows/review.js";
    const onHosts = await runDistributed(script, redis, join(home, "hosts"), ["--rehearse"]);
    expect(onHosts.exitCode, onHosts.stderr + onHosts.stdout).toBe(0);
    const here = await cadre(["run", script, "--rehearse", "--out", join(home, "here")]);
    expect(here.exitCode, here.stderr).toBe(0);

    const hosts = await record(join(home, "hosts"));
    const local = await record(join(home, "here"));
    const rows = (summary: typeof hosts) =>
      summary.tasks.map(({ label, phase, status, result }) => ({ label, phase, status, result })).sort((a, b) => a.label.localeCompare(b.label));
    expect(hosts.result).toEqual(local.result);
    expect(hosts.logs).toEqual(local.logs);
    expect(rows(hosts)).toEqual(rows(local));
    expect(hosts.tasks).toHaveLength(9);
    expect(new Set(hosts.tasks.map((row) => row.host))).not.toContain(null);
  }, 240_000);
});
