// `deno task mcp` over stdio, driven by the SDK's own Client: a real claude child
// against the rehearsal server, then SIGTERM, after which no process may be left.
// Run by `deno task test` (node:test maps onto Deno.test); vitest does not pick it up.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DENO, DENO_JSON, descendants, isGone, killAll, tempHome } from "./support.ts";

const SCRIPTS = { alpha: [{ text: "alpha heard: {{prompt}}" }] };

test("deno task mcp: a child session's result over stdio, and SIGTERM leaves no process", async () => {
  const { home, cwd, tmp, remove } = await tempHome();
  const scriptsFile = join(home, "scripts.json");
  await writeFile(scriptsFile, JSON.stringify(SCRIPTS));
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["task", "--config", DENO_JSON, "mcp", "--scripts", scriptsFile],
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp, NO_COLOR: "1" },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => (stderr = (stderr + new TextDecoder().decode(chunk)).slice(-20_000)));
  const client = new Client({ name: "cadre-deno-test", version: "1.0.0" });
  let seen: number[] = [];
  try {
    await client.connect(transport);
    const pid = transport.pid!;

    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes("spawn_session"), `tools: ${tools.join(", ")}`);

    const spawned = await client.callTool({ name: "spawn_session", arguments: { prompt: "hello", name: "alpha", cwd } }, undefined, {
      timeout: 60_000,
    });
    assert.ok(!spawned.isError, `spawn_session failed: ${JSON.stringify(spawned.content)}\n${stderr}`);
    const session = spawned.structuredContent as { status: string; turns: number; result: string; cost_usd: number };
    assert.equal(session.status, "idle");
    assert.equal(session.turns, 1);
    assert.equal(session.result, "alpha heard: hello");
    assert.ok(session.cost_usd > 0);

    // deno task → deno run (cadre) → claude: all of them must go on one SIGTERM to the task.
    const tree = await descendants(pid);
    seen = [pid, ...tree.map((p) => p.pid)];
    assert.ok(
      tree.some((p) => p.comm.startsWith("claude")),
      `no claude below the server: ${JSON.stringify(tree)}`,
    );
    process.kill(pid, "SIGTERM");
    for (const p of seen) assert.ok(await isGone(p, 10_000), `pid ${p} survived SIGTERM (${JSON.stringify(tree)})\n${stderr}`);
  } finally {
    killAll(seen);
    await client.close();
    await remove();
  }
});
