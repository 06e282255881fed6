// A workflow script that computes for its whole CPU-time limit (30 s) runs on a thread of its own: cadre's thread
// still takes signals and serves the --ui page meanwhile (it used to wait for the limit: exit 1 after 30 s, not 143).
// So does `cadre mcp --http` for its other clients. What a script hands out is bounded as its computation is: a flood
// of log() lines ends at the output limit.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin, readSummary } from "../support/cli.ts";
import { startCadre } from "../support/dashboard.ts";
import { INIT, raw, startHttpCadre } from "../support/mcp-http.ts";
import { until } from "../support/wait.ts";

const FLOOD =
  'export const meta = { name: "flood", description: "logs" }\nconst line = "x".repeat(10 * 1024 * 1024)\nfor (let i = 0; i < 60; i++) log(line)\n';
const SPIN = 'export const meta = { name: "spin", description: "computes" }\nlog("computing")\nlet n = 0; for (;;) n++\n';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-compute-"));
  await writeFile(join(dir, "spin.js"), SPIN);
  await writeFile(join(dir, "flood.js"), FLOOD);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a script that computes", () => {
  it("SIGTERM stops the run within two seconds: exit 143, and a complete record", async () => {
    const out = join(dir, "term-out");
    const child = execa("node", [bin, "run", "spin.js", "--out", out], { cwd: dir, reject: false, all: true });
    let output = "";
    child.all!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    await until(() => (output.includes("· computing") ? true : undefined), 30_000, "the script's first log line");
    const sent = performance.now();
    child.kill("SIGTERM");
    const run = await child;
    expect(performance.now() - sent).toBeLessThan(2_000);
    expect(run.exitCode, run.all).toBe(143);
    const summary = (await readSummary(out)) as { complete?: boolean; error?: { code: string } | null };
    expect(summary).toMatchObject({ complete: true, error: { code: "ABORTED" } });
  });

  it("the --ui page answers while it computes", async () => {
    const served = await startCadre(["run", "spin.js", "--ui", "--out", join(dir, "ui-out")], { cwd: dir });
    await until(() => (served.output().includes("· computing") ? true : undefined), 30_000, "the script's first log line");
    const asked = performance.now();
    const page = await fetch(`${served.origin}/`, { signal: AbortSignal.timeout(5_000) });
    expect(page.status).toBe(200);
    expect(performance.now() - asked).toBeLessThan(2_000);
    served.process.kill("SIGTERM");
    expect((await served.process).exitCode).toBe(143);
  });

  it("sixty 10 MB log() lines end at the output limit with WORKFLOW_LIMIT and a complete record", async () => {
    // They used to take cadre to 1.37 GB and a crash ("Invalid string length"), the record left complete: false.
    const out = join(dir, "flood-out");
    const run = await execa("node", [bin, "run", "flood.js", "--json", "--out", out], { cwd: dir, reject: false });
    expect(run.exitCode, run.stderr).toBe(1);
    const summary = (await readSummary(out)) as { complete?: boolean; error?: { code: string; message: string } | null; logs?: string[] };
    expect(summary).toMatchObject({ complete: true, error: { code: "WORKFLOW_LIMIT", message: expect.stringMatching(/output limit \(16 MiB/) } });
    expect(summary.logs).toHaveLength(1);
  });

  it("cadre mcp --http: while one client's script computes, another client is answered at once", async () => {
    const token = "test-token-0123456789abcdef";
    const { url } = await startHttpCadre({ unused: [{ text: "x" }] }, ["--token", token]);
    const auth = { authorization: `Bearer ${token}` };
    const session = async () => {
      const opened = await raw(url, { headers: auth });
      const headers = { ...auth, "mcp-session-id": opened.headers["mcp-session-id"] as string, "mcp-protocol-version": "2025-06-18" };
      await raw(url, { headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
      return async (name: string, args: Record<string, unknown>) => {
        const body = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } });
        const answer = (await raw(url, { headers, body })).body;
        const json = answer.startsWith("{") ? answer : /^data: (.*)$/m.exec(answer)![1]!;
        return (JSON.parse(json) as { result: { structuredContent: { run_id: string; logs: string[] } } }).result.structuredContent;
      };
    };
    const first = await session();
    const { run_id } = await first("run_workflow", { script: SPIN, wait_s: 0 });
    // Each answer in under two seconds: on cadre's own thread each waited for the script's CPU-time limit, 30 s.
    const timed = async <T>(ask: () => Promise<T>): Promise<T> => {
      const asked = performance.now();
      const answer = await ask();
      expect(performance.now() - asked).toBeLessThan(2_000);
      return answer;
    };
    await until(
      async () => ((await timed(() => first("get_workflow", { run_id }))).logs.includes("computing") ? true : undefined),
      20_000,
      "the script's log line",
    );
    // A second client, from its first request.
    expect((await timed(() => raw(url, { headers: auth, body: JSON.stringify(INIT) }))).status).toBe(200);
  });
});
