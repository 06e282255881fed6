// What a swarm file reaches, through the real command line (`cadre run --rehearse`, real claude workers):
// per-agent limits, structured output, MCP servers, permission rules, environment and extra directories,
// subagents, agents found by name, and git worktrees.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliMessage } from "../../src/protocol/index.ts";
import { cadre, decodeTranscript, readSummary, repo } from "../support/cli.ts";

let dir: string;
/** cadre's HOME in these runs: no user agents, no git identity (cadre then commits as "cadre"). */
let home: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-reach-"));
  home = join(dir, "home");
  await mkdir(home);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The environment of cadre and git here: HOME, and no system git config. */
const isolated = () => ({ HOME: home, GIT_CONFIG_NOSYSTEM: "1" });

function git(args: string[], cwd: string) {
  return execa("git", args, { cwd, env: isolated() }).then((result) => result.stdout.trim());
}

type Event = { type: string; task?: { name: string; agent?: string }; attempt?: number };

function toolResults(messages: CliMessage[]): { text: string; isError: boolean }[] {
  return messages.flatMap((m) =>
    m.type === "user" && Array.isArray(m.message.content)
      ? m.message.content.flatMap((b) =>
          b.type === "tool_result"
            ? [{ text: typeof b.content === "string" ? b.content : JSON.stringify(b.content), isError: b.is_error === true }]
            : [],
        )
      : [],
  );
}

function initOf(messages: CliMessage[]): { tools?: string[]; agents?: string[] } {
  return messages.find((m) => m.type === "system" && m.subtype === "init") as { tools?: string[]; agents?: string[] };
}

describe("cadre run: what a swarm file reaches", () => {
  it("max_concurrency holds one agent to one task at a time while others run beside it; output_schema gives structured_output", async () => {
    const file = join(dir, "limits.yaml");
    const answer = { type: "object", properties: { verdict: { type: "string", enum: ["ship", "hold"] }, score: { type: "integer" } } };
    await writeFile(
      file,
      JSON.stringify({
        concurrency: 4,
        agents: {
          solo: { description: "One at a time", prompt: "You work alone.", max_concurrency: 1 },
          crowd: { description: "Many at once", prompt: "You work in a crowd." },
          judge: { description: "Judges", prompt: "You judge.", output_schema: { ...answer, required: ["verdict", "score"] } },
        },
        tasks: [
          { name: "solo-{{item}}", agent: "solo", for_each: [1, 2, 3], prompt: "work" },
          { name: "crowd-{{item}}", agent: "crowd", for_each: [1, 2], prompt: "work" },
          { name: "verdict", agent: "judge", prompt: "judge it" },
          {
            name: "announce",
            depends_on: ["verdict"],
            prompt: "Say: {{results.verdict.structured.verdict}}, score {{results.verdict.structured.score}}",
          },
          { name: "rambler", prompt: "answer", output_schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } },
          { name: "misfit", agent: "judge", prompt: "judge badly" },
        ],
        rehearsal: {
          "solo-{{item}}": [{ text: "solo done", delay_ms: 1500 }],
          "crowd-{{item}}": [{ text: "crowd done", delay_ms: 1500 }],
          verdict: [{ tool_use: { name: "StructuredOutput", input: { verdict: "ship", score: 9 } } }],
          announce: [{ text: "announced: {{prompt}}" }],
          rambler: [{ text: "no JSON here" }, { text: "still no JSON" }],
          misfit: Array.from({ length: 6 }, () => ({ tool_use: { name: "StructuredOutput", input: { verdict: "maybe", score: 1 } } })),
        },
      }),
    );
    const out = join(dir, "limits-out");
    const run = await cadre(["run", file, "--rehearse", "--json", "--out", out], { env: isolated() });
    expect(run.exitCode, run.stderr).toBe(1);

    // Replay the run's events: how many tasks of each agent were running at each moment.
    const events = run.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Event);
    const running = new Map<string, string | undefined>();
    let peakSolo = 0;
    let soloWithOthers = false;
    for (const event of events) {
      if (event.type === "task_started" && event.attempt === 1) running.set(event.task!.name, event.task!.agent);
      else if (event.type === "task_finished") running.delete(event.task!.name);
      else continue;
      const agents = [...running.values()];
      const solo = agents.filter((agent) => agent === "solo").length;
      peakSolo = Math.max(peakSolo, solo);
      if (solo > 0 && agents.length > solo) soloWithOthers = true;
    }
    const soloStarted = new Set(events.flatMap((e) => (e.type === "task_started" && e.task?.agent === "solo" ? [e.task.name] : [])));
    expect([...soloStarted].sort(), run.stderr).toEqual(["solo-1", "solo-2", "solo-3"]);
    expect(peakSolo).toBe(1);
    expect(soloWithOthers).toBe(true);

    const summary = await readSummary(out);
    const task = (name: string) => summary.tasks.find((t) => t.name === name)!;
    expect(summary.tasks.filter((t) => t.agent === "solo" || t.agent === "crowd").map((t) => t.status)).toEqual(Array(5).fill("succeeded"));
    expect(task("verdict")).toMatchObject({ status: "succeeded", structured_output: { verdict: "ship", score: 9 } });
    // A later task reads fields of it.
    expect(task("announce").text).toBe("announced: Say: ship, score 9");
    expect(task("announce").structured_output).toBeNull();
    // A model that never answers in the schema fails the task with a code that says so.
    expect(task("rambler")).toMatchObject({ status: "failed", error: { code: "STRUCTURED_OUTPUT_MISSING" }, structured_output: null });
    expect(task("misfit")).toMatchObject({ status: "failed", error: { code: "STRUCTURED_OUTPUT_INVALID" } });
    expect(task("misfit").error?.message).toContain("/verdict");
    // The final table shows that the answer matched its schema.
    expect(run.stderr).toMatch(/^verdict +succeeded .*✓ schema \{"verdict":"ship","score":9\}$/m);
  }, 180_000);

  it("MCP servers, permission rules, env, add_dirs and subagents reach the workers; an agent from .claude/agents runs by name", async () => {
    const project = join(dir, "project");
    await mkdir(join(project, ".claude", "agents"), { recursive: true });
    await mkdir(join(dir, "common"));
    await writeFile(join(project, "secret.txt"), "top secret\n");
    await writeFile(join(dir, "common", "notes.txt"), "common notes\n");
    await writeFile(
      join(project, ".claude", "agents", "helper.md"),
      "---\nname: helper\ndescription: Helps with small chores\ntools: Read, Grep\n---\nYou are the project's helper.\n",
    );
    const server = join(repo, "test", "fixtures", "mcp", "shout-server.mjs");
    await writeFile(
      join(project, "swarm.yaml"),
      [
        "defaults:",
        "  env: { CADRE_GREETING: hello-from-defaults }",
        "agents:",
        "  caller:",
        "    description: Calls the shout server",
        "    prompt: You call tools.",
        "    mcp_servers:",
        `      shout: { command: node, args: [${JSON.stringify(server)}], env: { SHOUT_GREETING: hi } }`,
        '    permissions: { allow: ["mcp__shout__shout"] }',
        "    subagents:",
        "      sub-helper: { description: Helps the caller, prompt: You help. }",
        "tasks:",
        "  - { name: shout, agent: caller, prompt: shout it }",
        "  - name: guarded",
        "    prompt: look around",
        "    env: { CADRE_GREETING: hello-from-task }",
        "    add_dirs: [../common]",
        '    permissions: { allow: ["Bash(touch:*)", "Bash(printenv:*)"], deny: ["Read(./secret.txt)"] }',
        "  - { name: named, agent: helper, prompt: help }",
        "rehearsal:",
        "  shout:",
        "    - tool_use: { name: mcp__shout__shout, input: { text: quiet words } }",
        "    - text: 'shout said: {{tool_result}}'",
        "  guarded:",
        "    - tool_use: { name: Read, input: { file_path: secret.txt } }",
        `    - tool_use: { name: Read, input: { file_path: ${JSON.stringify(join(dir, "common", "notes.txt"))} } }`,
        "    - tool_use: { name: Bash, input: { command: touch made-by-touch, description: touch } }",
        "    - tool_use: { name: Bash, input: { command: printenv CADRE_GREETING, description: greet } }",
        "    - tool_use: { name: Bash, input: { command: rm made-by-touch, description: remove } }",
        "    - text: done",
        "  named: [{ text: helper here }]",
      ].join("\n"),
    );
    const out = join(dir, "tools-out");
    const run = await cadre(["run", "swarm.yaml", "--rehearse", "--out", out], { cwd: project, env: isolated() });
    expect(run.exitCode, run.stderr).toBe(0);
    const summary = await readSummary(out);
    const transcript = (name: string) => decodeTranscript(join(out, summary.tasks.find((t) => t.name === name)!.transcript!));

    // The MCP server from mcp_servers was started by the worker's CLI and its tool called (with the server's env).
    expect(summary.tasks[0]?.text).toBe("shout said: QUIET WORDS (from shout-server, greeting hi)");
    const shout = await transcript("shout");
    expect(initOf(shout).tools).toContain("mcp__shout__shout");
    // The agent's subagents reached the CLI through initialize.
    expect(initOf(shout).agents).toContain("sub-helper");

    const [secret, common, touched, greeting, removed] = toolResults(await transcript("guarded"));
    // deny: Read(./secret.txt) blocks a read that is otherwise allowed without asking.
    expect(secret).toMatchObject({ isError: true });
    expect(secret?.text).toContain("denied by your permission settings");
    expect(secret?.text).not.toContain("top secret");
    // add_dirs: a file outside the working directory is readable.
    expect(common).toMatchObject({ isError: false, text: expect.stringContaining("common notes") });
    // allow: Bash(touch:*) runs without asking; other commands are still refused (nobody is there to ask).
    expect(touched?.isError).toBe(false);
    expect(greeting).toMatchObject({ isError: false, text: expect.stringContaining("hello-from-task") });
    expect(removed).toMatchObject({ isError: true, text: expect.stringContaining("cadre denied Bash") });

    // The helper was never defined in the swarm file: cadre found it in .claude/agents and ran it with its tools.
    expect(summary.tasks[2]).toMatchObject({ name: "named", agent: "helper", status: "succeeded", text: "helper here" });
    const tools = initOf(await transcript("named")).tools ?? [];
    expect(tools.filter((tool) => !tool.startsWith("mcp__cadre__")).sort()).toEqual(["Grep", "Read"]);
  }, 180_000);

  it("worktree tasks that write the same file each leave a branch with their own version; the starting checkout stays clean", async () => {
    const project = join(dir, "repo");
    await mkdir(project);
    const gitIn = (args: string[]) => git(args, project);
    await gitIn(["init", "--quiet", "--initial-branch=main"]);
    await writeFile(join(project, "notes.txt"), "original\n");
    await writeFile(
      join(project, "swarm.yaml"),
      [
        "defaults: { worktree: true, permissions: { allow: [Write, Edit] } }",
        "tasks:",
        "  - { name: alpha, prompt: write alpha }",
        "  - { name: beta, prompt: write beta }",
        "  - { name: idle, prompt: change nothing }",
        "  - { name: broken, prompt: write then fail }",
        "  - name: follow-up",
        "    depends_on: [alpha]",
        '    worktree: { base: "{{results.alpha.branch}}" }',
        "    prompt: build on alpha",
        "rehearsal:",
        "  alpha:",
        '    - tool_use: { name: Write, input: { file_path: notes.txt, content: "alpha was here\\n" } }',
        "    - text: alpha wrote",
        "  beta:",
        '    - tool_use: { name: Write, input: { file_path: notes.txt, content: "beta was here\\n" } }',
        "    - text: beta wrote",
        "  idle: [{ text: nothing to do }]",
        "  broken:",
        '    - tool_use: { name: Write, input: { file_path: partial.txt, content: "half done\\n" } }',
        "    - { text: never, fail: { status: 400, times: 3, message: scripted outage } }",
        "  follow-up:",
        '    - tool_use: { name: Write, input: { file_path: more.txt, content: "more\\n" } }',
        "    - tool_use: { name: Read, input: { file_path: notes.txt } }",
        "    - text: 'read: {{tool_result}}'",
      ].join("\n"),
    );
    await gitIn(["add", "."]);
    await gitIn(["-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "--quiet", "-m", "start"]);
    const start = await gitIn(["rev-parse", "HEAD"]);

    const out = join(dir, "worktree-out");
    const run = await cadre(["run", join(project, "swarm.yaml"), "--rehearse", "--out", out], { env: isolated() });
    expect(run.exitCode, run.stderr).toBe(1);
    const summary = await readSummary(out);
    const task = (name: string) => summary.tasks.find((t) => t.name === name)!;
    expect(summary.run_id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{4}$/);
    const branch = (name: string) => `cadre/${summary.run_id}/${name}`;

    // Two tasks wrote the same file: each branch holds its own version, on top of the starting commit.
    for (const name of ["alpha", "beta"]) {
      expect(task(name)).toMatchObject({
        status: "succeeded",
        branch: branch(name),
        base: start,
        diff_stat: "1 file changed, 1 insertion(+), 1 deletion(-)",
      });
      expect(await gitIn(["show", `${branch(name)}:notes.txt`])).toBe(`${name} was here`);
      expect(await gitIn(["rev-parse", branch(name)])).toBe(task(name).commit);
      expect(await gitIn(["rev-parse", `${branch(name)}^`])).toBe(start);
      expect(await gitIn(["log", "-1", "--format=%an|%s", branch(name)])).toBe(`cadre|cadre: task ${name} (succeeded) in run ${summary.run_id}`);
    }
    // A task that changed nothing leaves no branch.
    expect(task("idle")).toMatchObject({ status: "succeeded", branch: null, commit: null, diff_stat: "" });
    // A failed task's work is kept on its branch too, marked as failed.
    expect(task("broken")).toMatchObject({ status: "failed", branch: branch("broken") });
    expect(await gitIn(["show", `${branch("broken")}:partial.txt`])).toBe("half done");
    expect(await gitIn(["log", "-1", "--format=%s", branch("broken")])).toContain("(failed)");
    // The dependent started from alpha's branch: it read alpha's version, and its branch builds on alpha's commit.
    expect(task("follow-up").text).toContain("alpha was here");
    expect(task("follow-up").base).toBe(task("alpha").commit);
    expect(await gitIn(["rev-parse", `${branch("follow-up")}^`])).toBe(task("alpha").commit);

    // The starting checkout: same commit, same branch, nothing changed, no worktree left behind.
    expect(await gitIn(["status", "--porcelain"])).toBe("");
    expect(await gitIn(["rev-parse", "HEAD"])).toBe(start);
    expect(await gitIn(["symbolic-ref", "--short", "HEAD"])).toBe("main");
    expect(await gitIn(["worktree", "list", "--porcelain"])).toBe(`worktree ${project}\nHEAD ${start}\nbranch refs/heads/main`);
    expect((await gitIn(["branch", "--list", "cadre/*", "--format=%(refname:short)"])).split("\n").sort()).toEqual(
      ["alpha", "beta", "broken", "follow-up"].map(branch),
    );
    expect(run.stdout).toMatch(new RegExp(`^alpha +succeeded .*⎇ ${branch("alpha")}: 1 file changed`, "m"));

    // Outside a git repository, worktree: true is a config error that says so.
    const outside = join(dir, "not-a-repo");
    await mkdir(outside);
    await writeFile(join(outside, "swarm.yaml"), "defaults: { worktree: true }\ntasks: [{ name: a, prompt: p }]\n");
    const refused = await cadre(["validate", join(outside, "swarm.yaml")], { env: isolated() });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`defaults.worktree: worktree needs a git repository: ${outside} is not inside a git repository`);
  }, 180_000);

  it("Ctrl-C: a running worktree task's work so far is committed to its branch and its worktree removed", async () => {
    const project = join(dir, "interrupted");
    await mkdir(project);
    const gitIn = (args: string[]) => git(args, project);
    await gitIn(["init", "--quiet", "--initial-branch=main"]);
    await writeFile(
      join(project, "swarm.yaml"),
      [
        "defaults: { worktree: true, permissions: { allow: [Write] } }",
        "tasks: [{ name: slow, prompt: write then think }]",
        "rehearsal:",
        "  slow:",
        '    - tool_use: { name: Write, input: { file_path: draft.txt, content: "first draft\\n" } }',
        "    - { text: too late, delay_ms: 30000 }",
      ].join("\n"),
    );
    await gitIn(["add", "."]);
    await gitIn(["-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "--quiet", "-m", "start"]);
    const out = join(dir, "interrupted-out");
    const child = cadre(["run", join(project, "swarm.yaml"), "--rehearse", "--json", "--out", out], { env: isolated() });
    let stdout = "";
    await new Promise<void>((resolve) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        // The Write's result came back: the draft is on disk and the model is "thinking".
        if (stdout.includes("File created successfully")) resolve();
      });
    });
    child.kill("SIGINT");
    const run = await child;
    expect(run.exitCode, run.stderr).toBe(130);
    const summary = await readSummary(out);
    const branch = `cadre/${summary.run_id}/slow`;
    expect(summary.tasks[0]).toMatchObject({ status: "cancelled", branch, diff_stat: "1 file changed, 1 insertion(+)", worktree: null });
    expect(await gitIn(["show", `${branch}:draft.txt`])).toBe("first draft");
    expect(await gitIn(["log", "-1", "--format=%s", branch])).toContain("(cancelled)");
    expect((await gitIn(["worktree", "list", "--porcelain"])).split("\n")[0]).toBe(`worktree ${project}`);
    expect((await gitIn(["worktree", "list"])).split("\n")).toHaveLength(1);
    expect(await gitIn(["status", "--porcelain"])).toBe("");
  }, 120_000);
});
