// Process reuse on the real CLI: a finished task's process serves the next task of the same
// settings with a fresh session, never carries the previous task's conversation or granted
// permissions, never crosses settings, and is replaced when it misbehaves.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { Orchestrator, OrchestratorEvent, TaskResult } from "../../src/orchestrator/index.ts";
import type { PermissionUpdate } from "../../src/protocol/index.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { isGone } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { conversationText } from "../support/requests.ts";

type Started = Extract<OrchestratorEvent, { type: "task_started" }>;
type Recycled = Extract<OrchestratorEvent, { type: "worker_recycled" }>;

function watch(orchestrator: Orchestrator): { started: Map<string, Started>; recycled: Recycled[] } {
  const started = new Map<string, Started>();
  const recycled: Recycled[] = [];
  orchestrator.on((event) => {
    if (event.type === "task_started") started.set(event.task.name, event);
    if (event.type === "worker_recycled") recycled.push(event);
  });
  return { started, recycled };
}

const bash = (command: string, extra: Record<string, unknown> = {}) => ({
  tool_use: { name: "Bash", input: { command, description: "test", ...extra } },
});

async function runInOrder(orchestrator: Orchestrator, names: string[], extra: (name: string) => object = () => ({})): Promise<TaskResult[]> {
  const results: TaskResult[] = [];
  for (const name of names) results.push(await orchestrator.run({ name, prompt: name, ...extra(name) }));
  for (const result of results) expect(result.status, `${result.name}: ${result.error?.message}`).toBe("succeeded");
  return results;
}

describe("process reuse on the real CLI", () => {
  it("serves the next task with a fresh session in the same process; each task keeps its own record", async () => {
    const server = await createRehearsal({ s: [{ text: "answer to {{prompt}}" }] });
    const outDir = await tempHome("cadre-reuse-out-");
    const { orchestrator } = await rehearsedOrchestrator(server, { reuse: true, concurrency: 1, outDir, script: () => "s" });
    const { started } = watch(orchestrator);
    const results = await runInOrder(orchestrator, ["task-one", "task-two", "task-three"]);

    expect(results.map((r) => r.text)).toEqual(["answer to task-one", "answer to task-two", "answer to task-three"]);
    expect([...started.values()].map((e) => e.worker)).toEqual(["cold", "reused", "reused"]);
    expect(new Set([...started.values()].map((e) => e.pid)).size).toBe(1);
    expect(new Set(results.map((r) => r.sessionId)).size).toBe(3);
    // What the model saw for the later tasks: their own prompt, nothing of the earlier ones.
    const [, second, third] = server.requests.filter((r) => r.outcome === "played");
    expect(conversationText(second)).toContain("task-two");
    expect(conversationText(second)).not.toMatch(/task-one/);
    expect(conversationText(third)).not.toMatch(/task-one|task-two/);
    // Cost and usage per task; the reset's own result is charged to no task (and costs nothing).
    for (const result of results) expect(result.costUsd).toBeGreaterThan(0);
    expect(results.reduce((sum, r) => sum + r.costUsd, 0)).toBeCloseTo(orchestrator.totals.costUsd, 10);
    // Each transcript holds its task's own session and nothing of the reset.
    await orchestrator.close();
    for (const result of results) {
      const lines = (await readFile(orchestrator.transcriptPaths.get(result.id)!, "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines.find((m) => m.type === "system" && m.subtype === "init")?.session_id).toBe(result.sessionId);
      expect(lines.filter((m) => m.type === "result")).toHaveLength(1);
      expect(lines.some((m) => m.type === "conversation_reset")).toBe(false);
    }
  });

  it("a permission granted for the session ends the process; the next task is asked again", async () => {
    const server = await createRehearsal({ s: [bash("touch {{prompt}}.txt"), { text: "touched" }] });
    const asked: string[] = [];
    const { orchestrator } = await rehearsedOrchestrator(server, {
      reuse: true,
      concurrency: 1,
      script: () => "s",
      canUseTool: (_request, task) => {
        asked.push(task.name);
        const rule: PermissionUpdate = {
          type: "addRules",
          rules: [{ toolName: "Bash", ruleContent: "touch:*" }],
          behavior: "allow",
          destination: "session",
        };
        return { behavior: "allow", ...(task.name === "granting" && { updatedPermissions: [rule] }) };
      },
    });
    const { started, recycled } = watch(orchestrator);
    await runInOrder(orchestrator, ["granting", "after-grant", "plain"]);

    expect(asked).toEqual(["granting", "after-grant", "plain"]);
    expect(recycled.map((e) => [e.task.name, e.reason])).toEqual([["granting", expect.stringContaining("permission")]]);
    expect(await isGone(started.get("granting")!.pid!)).toBe(true);
    // An answer without a grant leaves nothing behind: that process serves on, and still asks.
    expect(started.get("after-grant")!.worker).toBe("cold");
    expect(started.get("plain")!.worker).toBe("reused");
    expect(started.get("plain")!.pid).toBe(started.get("after-grant")!.pid);
  });

  it("never crosses settings: tasks of different models or agents get different processes", async () => {
    const server = await createRehearsal({ s: [{ text: "done {{prompt}}" }] });
    const { orchestrator } = await rehearsedOrchestrator(server, {
      reuse: true,
      concurrency: 1,
      script: () => "s",
      agents: {
        alpha: { description: "A", prompt: "You are alpha." },
        beta: { description: "B", prompt: "You are beta." },
      },
      peerTools: false,
    });
    const { started } = watch(orchestrator);
    // Each kind twice in a row, then the first kind again: every task after the first finds an
    // idle process, of its own settings or of others'.
    const names = ["m1-0", "m1-1", "m2-0", "m2-1", "alpha-0", "alpha-1", "beta-0", "beta-1", "m1-2"];
    const kindOf = (name: string) => name.split("-")[0]!;
    await runInOrder(orchestrator, names, (name) => (kindOf(name).startsWith("m") ? { model: `model-${kindOf(name)}` } : { agent: kindOf(name) }));

    const kindsByPid = new Map<number, Set<string>>();
    for (const event of started.values()) kindsByPid.set(event.pid!, (kindsByPid.get(event.pid!) ?? new Set()).add(kindOf(event.task.name)));
    for (const [pid, kinds] of kindsByPid) expect([...kinds], `pid ${pid}`).toHaveLength(1);
    expect(names.map((name) => started.get(name)!.worker)).toEqual(["cold", "reused", "cold", "reused", "cold", "reused", "cold", "reused", "cold"]);
    // The settings reached the model as asked: each request's model or system prompt is its task's.
    for (const request of server.requests.filter((r) => r.outcome === "played")) {
      const kind = kindOf(names.find((name) => conversationText(request).includes(name))!);
      if (kind.startsWith("m")) expect(request.model).toBe(`model-${kind}`);
      else expect(request.system).toContain(`You are ${kind}.`);
    }
  });

  it("a process is not recycled while its background shell runs: the task waits for it; a tool with state in the process ends the process", async () => {
    const server = await createRehearsal({
      bg: [bash("sleep 2; echo shell-finished", { run_in_background: true }), { text: "launched" }, { text: "after the shell" }],
      cron: [{ tool_use: { name: "CronCreate", input: { cron: "* * * * *", prompt: "ping" } } }, { text: "scheduled" }],
      plain: [{ text: "plain" }],
    });
    const { orchestrator } = await rehearsedOrchestrator(server, {
      reuse: true,
      concurrency: 1,
      canUseTool: () => ({ behavior: "allow" }),
      script: () => "overridden by processOptions",
      // One process for all three scripts: the route follows the task (see processOptions).
      processOptions: () => {
        const token = `p${Math.random()}`;
        return {
          options: { env: { ANTHROPIC_BASE_URL: server.baseUrlForProcess(token) } },
          bind: (context) => server.bind(token, context.name.replace(/-\d$/, "")),
          release: () => server.unbind(token),
        };
      },
    });
    const { started, recycled } = watch(orchestrator);
    const shellEnded: string[] = [];
    orchestrator.on((event) => {
      if (event.type === "background_task" && event.background.status === "completed") shellEnded.push(event.task.name);
      if (event.type === "task_finished") shellEnded.push(`finished ${event.task.name}`);
    });
    const [bg] = await runInOrder(orchestrator, ["bg", "cron", "plain-1", "plain-2"]);

    expect(bg!.text).toBe("after the shell");
    expect(bg!.backgroundTasks?.map((task) => [task.kind, task.status])).toEqual([["local_bash", "completed"]]);
    expect(shellEnded.indexOf("bg"), "the shell ended before its task").toBeLessThan(shellEnded.indexOf("finished bg"));
    expect(shellEnded.indexOf("bg")).toBeGreaterThanOrEqual(0);
    expect(recycled.map((e) => e.task.name)).toEqual(["cron"]);
    expect(recycled[0]!.reason).toMatch(/CronCreate/);
    expect([...started.values()].map((e) => e.worker)).toEqual(["cold", "reused", "cold", "reused"]);
  });

  it("replaces a reused process that died while idle; the task does not fail for it", async () => {
    const server = await createRehearsal({ s: [{ text: "done {{prompt}}" }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { reuse: 2, concurrency: 1, script: () => "s" });
    const { started, recycled } = watch(orchestrator);
    await runInOrder(orchestrator, ["first"]);
    const pid = started.get("first")!.pid!;
    process.kill(pid, "SIGKILL");
    expect(await isGone(pid)).toBe(true);
    const [second, third, fourth] = await runInOrder(orchestrator, ["second", "third", "fourth"]);
    expect([second, third, fourth].map((r) => r!.attempts)).toEqual([1, 1, 1]);
    expect(started.get("second")!.worker).toBe("cold");
    // reuse: 2 means two tasks per process, then a new one.
    expect(started.get("third")!.worker).toBe("reused");
    expect(started.get("fourth")!.worker).toBe("cold");
    expect(recycled.map((e) => e.task.name)).toContain("third");
    expect(recycled.find((e) => e.task.name === "third")!.reason).toMatch(/served 2 tasks/);
  });
});
