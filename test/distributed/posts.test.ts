// Tasks a lead posts on a run over two hosts: the post goes from the host's worker through Redis to the coordinator's board.
import { dirname, join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { bin, readRunRecord, readSummary, repo } from "../support/cli.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

/**
 * Two hosts serving a lead that posts to fixers (the fixers' requests to their own script), and the swarm file with
 * `line` added (`fixer`: settings the fixer agent adds); its output directory.
 */
async function postingFleet(redis: Parameters<typeof startHost>[0], model: Parameters<typeof startHost>[1], line: string, fixer = "") {
  await startHost(redis, model, { name: "a", script: "lead", concurrency: 2 });
  await startHost(redis, model, { name: "b", script: "lead", concurrency: 2 });
  const fixerUrl = JSON.stringify(model.baseUrlFor("fixer"));
  const file = await swarmFile([
    "name: posting",
    "concurrency: 4",
    line,
    `agents: { fixer: { description: fixes, prompt: You fix., ${fixer} env: { ANTHROPIC_BASE_URL: ${fixerUrl} } } }`,
    "tasks: [{ name: lead, prompt: find the work, post_tasks: true }]",
  ]);
  return { file, out: join(await tempHome("cadre-out-"), "run") };
}

describe("posted tasks on two hosts", () => {
  it("three posts under max_posted_tasks: 3 run as tasks of the run on the hosts; the fourth is a tool error the lead sees", async () => {
    const redis = await startRedis();
    const post = (n: number) => ({
      tool_use: { name: "mcp__cadre__post_task", input: { name: `fix-${n}`, agent: "fixer", prompt: `fix module ${n}` } },
    });
    const model = await createRehearsal({
      lead: [
        post(1),
        post(2),
        post(3),
        post(4),
        { tool_use: { name: "mcp__cadre__wait_tasks", input: { names: ["fix-1", "fix-2", "fix-3"] } } },
        { text: "all: {{tool_result}}" },
      ],
      fixer: [{ text: "done: {{prompt}}", delay_ms: 500 }],
    });
    const { file, out } = await postingFleet(redis, model, "max_posted_tasks: 3");

    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    const summary = await readSummary(out);
    expect(summary.tasks.map((t) => [t.name, t.status, t.posted_by ?? null])).toEqual([
      ["lead", "succeeded", null],
      ["fix-1", "succeeded", "lead"],
      ["fix-2", "succeeded", "lead"],
      ["fix-3", "succeeded", "lead"],
    ]);
    for (const task of summary.tasks) expect(["a", "b"]).toContain(task.host);
    // Counted at the model: each posted task answered once; the fourth never ran.
    const fixes = model.requests.filter((r) => r.script === "fixer" && r.outcome === "played");
    expect(fixes.map((r) => JSON.stringify(r.messages[0]?.content).match(/fix module \d/)?.[0]).sort()).toEqual([
      "fix module 1",
      "fix module 2",
      "fix module 3",
    ]);
    // The lead read the refusal of its fourth post, and the three results it waited for.
    const last = model.requests.filter((r) => r.script === "lead").at(-1)!;
    const results = last.messages.flatMap((m) =>
      Array.isArray(m.content) ? (m.content as { type: string; is_error?: boolean; content: unknown }[]).filter((b) => b.type === "tool_result") : [],
    );
    expect(results.map((r) => r.is_error ?? false)).toEqual([false, false, false, true, false]);
    expect(JSON.stringify(results[3]!.content)).toContain("max_posted_tasks (3)");
    expect(summary.tasks[0]!.text).toContain("done: fix module 2");
  }, 120_000);

  it("tasks posted as an agent with worktree: true each work in a worktree the coordinator made, their work on their branches", async () => {
    const redis = await startRedis();
    const post = (n: number) => ({ tool_use: { name: "mcp__cadre__post_task", input: { name: `fix-${n}`, agent: "fixer", prompt: `fix ${n}` } } });
    const model = await createRehearsal({
      lead: [post(1), post(2), { text: "posted" }],
      fixer: [{ tool_use: { name: "Bash", input: { command: "pwd > fixed.txt", description: "fix" } } }, { text: "fixed" }],
    });
    const { file, out } = await postingFleet(redis, model, "defaults: { allowed_tools: [Bash] }", "worktree: true,");
    const project = dirname(file);
    const git = (...args: string[]) => execa("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", ...args], { cwd: project });
    await git("init", "--quiet", "--initial-branch=main");
    await git("add", ".");
    await git("commit", "--quiet", "-m", "start");

    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    const summary = await readSummary(out);
    const posted = summary.tasks.filter((t) => t.posted_by === "lead");
    expect(posted.map((t) => [t.name, t.status, t.branch?.split("/").at(-1)])).toEqual([
      ["fix-1", "succeeded", "fix-1"],
      ["fix-2", "succeeded", "fix-2"],
    ]);
    // Each wrote where it worked: a worktree of its own, not the project's checkout, which is as it was.
    const where = await Promise.all(posted.map(async (t) => (await git("show", `${t.branch}:fixed.txt`)).stdout));
    expect(new Set([project, ...where]).size).toBe(3);
    for (const [k, t] of posted.entries()) expect(where[k]!.endsWith(`/${t.name}`), where[k]).toBe(true);
    expect((await git("status", "--porcelain")).stdout).toBe("");
    expect((await git("worktree", "list", "--porcelain")).stdout.match(/^worktree /gm)).toHaveLength(1);
  }, 120_000);

  it("a coordinator killed with SIGKILL during the posted tasks and resumed runs each posted task exactly once", async () => {
    const redis = await startRedis();
    const post = (n: number) => ({
      tool_use: { name: "mcp__cadre__post_task", input: { name: `fix-${n}`, agent: "fixer", prompt: `echo FIX-${n} && sleep 3` } },
    });
    const model = await createRehearsal({
      lead: [post(1), post(2), post(3), { text: "posted" }],
      fixer: [{ tool_use: { name: "Bash", input: { command: "{{prompt}}", description: "run it" } } }, { text: "done: {{tool_result}}" }],
    });
    const { file, out } = await postingFleet(redis, model, "defaults: { allowed_tools: [Bash] }");
    const killed = runDistributed(file, redis, out);
    const running = (t: { posted_by?: string; status: string }) => t.posted_by === "lead" && t.status === "running";
    await expect.poll(async () => (await readRunRecord(out).catch(() => undefined))?.tasks.filter(running).length, { timeout: 60_000 }).toBe(3);
    killed.kill("SIGKILL");
    await killed;
    const leadRequests = model.requests.filter((r) => r.script === "lead").length;

    const resumed = await execa("node", [bin, "run", file, "--redis", redis.url, "--resume", out], { cwd: repo, reject: false });
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(0);
    const summary = await readSummary(out);
    expect(summary.tasks.map((t) => [t.name, t.status, t.posted_by ?? null])).toEqual([
      ["lead", "succeeded", null],
      ["fix-1", "succeeded", "lead"],
      ["fix-2", "succeeded", "lead"],
      ["fix-3", "succeeded", "lead"],
    ]);
    // Counted at the model: the lead was not asked again, and each posted task's two replies were played once.
    expect(model.requests.filter((r) => r.script === "lead")).toHaveLength(leadRequests);
    for (const n of [1, 2, 3]) {
      const played = model.requests.filter(
        (r) => r.script === "fixer" && r.outcome === "played" && JSON.stringify(r.messages[0]?.content).includes(`FIX-${n}`),
      );
      expect(
        played.map((r) => r.step),
        `fix-${n}`,
      ).toEqual([0, 1]);
    }
  }, 120_000);
});
