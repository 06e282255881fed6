// cadre on Deno, ended by SIGKILL (nothing of it runs afterwards) or stopped by a hang-up:
// every claude and every tool it runs ends (within 5 s of the SIGKILL), and the rehearsal
// HOME is removed, as on Node (test/reliability/).
// Run by `deno task test` (node:test maps onto Deno.test); vitest does not pick it up.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { MINUTE_OF_BASH, type ProcessTree, rehearsalHomesLeft, survivors, treeWithBashTool } from "../support/reliability.ts";
import { DENO, DENO_JSON, killAll, ROOT, tempHome } from "./support.ts";

const CADRE = join(ROOT, "bin/cadre-deno.ts");

function cadreOnDeno(args: string[], env: Record<string, string>, cwd = ROOT): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(DENO, ["run", "-A", "--config", DENO_JSON, CADRE, ...args], { cwd, env, stdio: ["pipe", "ignore", "ignore"] });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited };
}

/** SIGKILL: nothing of cadre runs afterwards, yet what it started must end within 5 s. */
async function killOutright(cadre: ReturnType<typeof cadreOnDeno>, tree: ProcessTree, tmp: string): Promise<void> {
  cadre.child.kill("SIGKILL");
  const killedAt = Date.now();
  await cadre.exited;
  assert.deepEqual(await survivors(tree, killedAt + 5_000), []);
  assert.deepEqual(await rehearsalHomesLeft(tmp, 5_000), []);
}

async function busySwarm(dir: string): Promise<string> {
  const file = join(dir, "busy.json");
  const config = {
    defaults: { allowed_tools: ["Bash"] },
    tasks: [{ name: "busy", prompt: "hi" }],
    rehearsal: { busy: [{ tool_use: MINUTE_OF_BASH }, { text: "too late" }] },
  };
  await writeFile(file, JSON.stringify(config));
  return file;
}

test("deno: SIGKILL of cadre run ends every claude and tool within 5 s and removes the rehearsal HOME", async () => {
  const { home, tmp, remove } = await tempHome();
  let tree: ProcessTree = [];
  try {
    const file = await busySwarm(home);
    const cadre = cadreOnDeno(["run", file, "--rehearse", "--out", join(home, "out")], { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp });
    tree = await treeWithBashTool(cadre.child.pid!, 60_000);
    await killOutright(cadre, tree, tmp);
  } finally {
    killAll(tree.map((p) => p.pid));
    await remove();
  }
});

test("deno: SIGKILL of cadre mcp ends every child and tool within 5 s and removes the rehearsal HOME", async () => {
  const { home, cwd, tmp, remove } = await tempHome();
  let tree: ProcessTree = [];
  try {
    const scriptsFile = join(home, "scripts.json");
    await writeFile(scriptsFile, JSON.stringify({ busy: [{ tool_use: MINUTE_OF_BASH }, { text: "too late" }] }));
    const cadre = cadreOnDeno(["mcp", "--scripts", scriptsFile], { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp }, cwd);
    const send = (message: unknown) => cadre.child.stdin!.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const spawnArgs = { prompt: "go", name: "busy", wait_s: 0, allowed_tools: ["Bash"] };
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "spawn_session", arguments: spawnArgs } });
    tree = await treeWithBashTool(cadre.child.pid!, 60_000);
    await killOutright(cadre, tree, tmp);
  } finally {
    killAll(tree.map((p) => p.pid));
    await remove();
  }
});

test("deno: a hang-up stops cadre run gracefully: summary.json, exit 129, nothing left", async () => {
  const { home, tmp, remove } = await tempHome();
  let tree: ProcessTree = [];
  try {
    const file = await busySwarm(home);
    const out = join(home, "out");
    const { child, exited } = cadreOnDeno(["run", file, "--rehearse", "--out", out], { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp });
    tree = await treeWithBashTool(child.pid!, 60_000);
    // Not child.kill(): Deno's ChildProcess then reports the exit as by that signal, whatever the code was.
    process.kill(child.pid!, "SIGHUP");
    assert.equal(await exited, 129);
    assert.deepEqual(await survivors(tree, Date.now() + 5_000), []);
    assert.deepEqual(await rehearsalHomesLeft(tmp), []);
    const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as { exit_code: number; tasks: { status: string }[] };
    assert.equal(summary.exit_code, 129);
    assert.deepEqual(
      summary.tasks.map((t) => t.status),
      ["cancelled"],
    );
  } finally {
    killAll(tree.map((p) => p.pid));
    await remove();
  }
});
