// The keys that let a swarm file reach what the library offers: how they are checked, and what each worker starts with.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RETRIES } from "../../src/orchestrator/index.ts";
import { fillResults, orchestratorOptionsFor, type ResolvedSwarmConfig, taskSpecFor } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { postedTask } from "../../src/swarm/posted.ts";
import { errorsOf, workerOf } from "../support/swarm.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-reach-config-"));
  await mkdir(join(dir, "extra"));
  await mkdir(join(dir, ".claude", "agents"), { recursive: true });
  await writeFile(join(dir, "sub.md"), "---\nname: whatever\ndescription: From a file\ntools: Read\n---\nYou are a file subagent.\n");
  await writeFile(join(dir, "writer.md"), "---\nname: writer\ndescription: Writes\nmodel: sonnet\n---\nYou write.\n");
  await writeFile(join(dir, ".claude", "agents", "helper.md"), "---\nname: helper\ndescription: Helps\ntools: Read, Grep\n---\nYou help.\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function load(lines: string[], baseDir = dir): Promise<ResolvedSwarmConfig> {
  const result = await parseSwarmConfig(lines.join("\n"), { baseDir, env: {} });
  if (!result.ok) throw new Error(JSON.stringify(result.errors, null, 2));
  return result.config;
}

const SCHEMA = "{ type: object, properties: { ok: { type: boolean } }, required: [ok] }";

describe("worker settings from defaults, agents and tasks", () => {
  it("reach the worker: MCP servers merge by name, permission rules and directories add up, env merges, the output schema and subagents pass", async () => {
    const config = await load([
      "defaults:",
      "  allowed_tools: [Read]",
      "  permissions: { allow: ['Bash(git diff:*)'], deny: ['Bash(rm:*)'] }",
      "  env: { LEVEL: defaults, DEBUG: 1 }",
      "  add_dirs: [extra]",
      "  mcp_servers:",
      "    docs: { command: node, args: [docs.js] }",
      "    shared: { type: http, url: 'http://127.0.0.1:9/mcp', headers: { Authorization: Bearer x } }",
      "agents:",
      "  reviewer:",
      "    description: Reviews",
      "    prompt: You review.",
      "    max_concurrency: 2",
      `    output_schema: ${SCHEMA}`,
      "    permissions: { deny: ['Read(./.env)'] }",
      "    env: { LEVEL: agent }",
      "    mcp_servers: { docs: { command: docs-server } }",
      "    subagents:",
      "      inline-sub: { description: Inline, prompt: You are inline., tools: [Grep] }",
      "      file-sub: sub.md",
      "tasks:",
      "  - name: t",
      "    agent: reviewer",
      "    prompt: go",
      "    env: { LEVEL: task }",
      "    permissions: { allow: [Edit] }",
      "    mcp_servers: { own: { command: own-server, env: { TOKEN: t } } }",
      "    add_dirs: [.]",
      "  - { name: plain, prompt: go, retries: 0 }",
    ]);
    const worker = workerOf(config, config.tasks[0]!);
    expect(worker.allowedTools).toEqual(["Read", "Bash(git diff:*)", "Edit"]);
    expect(worker.disallowedTools).toEqual(["Bash(rm:*)", "Read(./.env)"]);
    expect(worker.env).toEqual({ LEVEL: "task", DEBUG: "1" });
    expect(worker.additionalDirectories).toEqual([join(dir, "extra"), dir]);
    expect(worker.mcpServers).toEqual({
      docs: { type: "stdio", command: "docs-server" },
      shared: { type: "http", url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer x" } },
      own: { type: "stdio", command: "own-server", env: { TOKEN: "t" } },
    });
    expect(worker.jsonSchema).toEqual({ type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] });
    expect(worker.agents).toEqual({
      "inline-sub": { description: "Inline", prompt: "You are inline.", tools: ["Grep"] },
      "file-sub": { description: "From a file", prompt: "You are a file subagent.", tools: ["Read"] },
    });
    // The agent's own settings: its limit, and the rest in the worker layer of its spec.
    const options = orchestratorOptionsFor(config);
    expect(options.agentLimits).toEqual({ reviewer: 2 });
    // Retries: the task's own, else the library's default (the same number).
    expect(options.retries).toBeUndefined();
    expect(config.tasks.map((task) => taskSpecFor(task, "p", new AbortController().signal).retries)).toEqual([undefined, 0]);
    expect(DEFAULT_RETRIES).toBe(2);
    // A task without an agent gets only the defaults.
    expect(workerOf(config, config.tasks[1]!)).toMatchObject({ allowedTools: ["Read", "Bash(git diff:*)"], env: { LEVEL: "defaults", DEBUG: "1" } });
    expect(workerOf(config, config.tasks[1]!).jsonSchema).toBeUndefined();
  });

  it("an agent comes inline, from a file with overrides, or by name from the agents `cadre agents` lists", async () => {
    const config = await load([
      "defaults: { retries: 5 }",
      "agents:",
      "  author: { file: writer.md, model: opus, max_concurrency: 1 }",
      "  helper: { env: { HELPING: yes } }",
      "tasks:",
      "  - { name: a, agent: author, prompt: write }",
      "  - { name: b, agent: helper, prompt: help }",
      "connections: { author: [helper] }",
    ]);
    expect(config.agents.author).toMatchObject({ name: "author", description: "Writes", prompt: "You write.", model: "opus", max_concurrency: 1 });
    expect(config.agents.helper).toMatchObject({ name: "helper", prompt: "You help.", tools: ["Read", "Grep"], env: { HELPING: "yes" } });
    expect(orchestratorOptionsFor(config).retries).toBe(5);

    // Named in a task and nowhere under agents: found all the same.
    const found = await load(["tasks: [{ name: a, agent: helper, prompt: p }]"]);
    expect(found.agents.helper).toMatchObject({
      description: "Helps",
      prompt: "You help.",
      tools: ["Read", "Grep"],
      file: join(dir, ".claude", "agents", "helper.md"),
    });
    expect(workerOf(found, found.tasks[0]!)).toMatchObject({ appendSystemPrompt: "You help.", tools: ["Read", "Grep"] });
  });
});

describe("the new keys are checked with paths and hints", () => {
  it("MCP servers, permission rules, env names, output schemas and agent entries", async () => {
    const errors = await errorsOf(
      [
        "defaults:",
        "  mcp_servers:",
        "    'bad name': { command: x }",
        "    remote: { url: 'http://127.0.0.1:1/mcp' }",
        "    web: { type: http, command: x, url: 'http://127.0.0.1:1/mcp' }",
        "  permissions: { allow: ['Bash(git diff:*'], alow: [Read] }",
        "  env: { 1BAD: x }",
        "agents:",
        "  both: { file: writer.md, prompt: p }",
        "  nameless: { prompt: p }",
        "  ghost: { max_concurrency: 0 }",
        "tasks:",
        "  - { name: a, prompt: p, output_schema: { type: string }, mcp_server: {} }",
      ],
      { baseDir: dir },
    );
    expect(errors).toEqual([
      { path: 'defaults.mcp_servers["bad name"]', message: "invalid key: a server name may hold only letters, digits, _ and -" },
      { path: "defaults.mcp_servers.remote.command", message: 'a stdio server needs command (give type: "http" for a server at a URL)' },
      { path: "defaults.mcp_servers.web.command", message: "not a key of an http server" },
      { path: "defaults.permissions.allow[0]", message: 'a permission rule is Tool or Tool(specifier), e.g. "Bash(git diff:*)" or "Read(./src/**)"' },
      { path: "defaults.permissions.alow", message: "unknown key", hint: 'did you mean "allow"?' },
      { path: 'defaults.env["1BAD"]', message: "invalid key: not a variable name" },
      { path: "agents.both.prompt", message: "give prompt or file, not both (the file's body is the prompt)" },
      { path: "agents.nameless.description", message: "required key is missing" },
      { path: "agents.ghost.max_concurrency", message: "must be greater than 0" },
      {
        path: "tasks[0].output_schema.type",
        message: "the output schema must describe an object (type: object): the model answers through a tool, whose input is an object",
      },
      { path: "tasks[0].mcp_server", message: "unknown key", hint: 'did you mean "mcp_servers"?' },
    ]);
  });

  it("{{results.<task>.<field>}}: known fields only, structured needs an output schema, branch a worktree, and the task in depends_on", async () => {
    const errors = await errorsOf(
      [
        "agents:",
        `  judge: { description: d, prompt: p, output_schema: ${SCHEMA} }`,
        "tasks:",
        "  - { name: a.ts, prompt: p }",
        "  - { name: verdict, agent: judge, prompt: p }",
        "  - name: b",
        "    depends_on: [a.ts, verdict]",
        "    prompt: '{{results.a.ts.brnch}} {{results.a.ts.structured.x}} {{results.a.ts.commit}} {{results.verdict.structured.ok}}'",
        "  - { name: c, prompt: '{{results.verdict.structured.ok}}' }",
      ],
      { baseDir: dir },
    );
    expect(errors).toEqual([
      { path: "tasks[2].prompt", message: '{{results.a.ts.brnch}}: a result has no field "brnch"', hint: 'did you mean "branch"?' },
      { path: "tasks[2].prompt", message: 'task "a.ts" has no output_schema, so its result has no structured output' },
      { path: "tasks[2].prompt", message: 'task "a.ts" does not run in a worktree, so its result has no commit', hint: "give it worktree: true" },
      {
        path: "tasks[3].prompt",
        message: '{{results.verdict.structured.ok}} needs "verdict" in depends_on',
        hint: 'add "verdict" to the task\'s depends_on',
      },
    ]);
  });
});

describe("worktree settings", () => {
  it("need a git repository with a commit; a task's own setting wins over its agent's and the defaults'", async () => {
    const git = (args: string[], cwd: string) => execa("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", ...args], { cwd });
    const repo = join(dir, "repo");
    await mkdir(repo);
    await git(["init", "--quiet"], repo);
    const lines = [
      "defaults: { worktree: true }",
      "agents: { careful: { description: d, prompt: p, worktree: false } }",
      "tasks:",
      "  - { name: a, prompt: p }",
      "  - { name: b, prompt: p, agent: careful }",
      "  - { name: c, prompt: p, agent: careful, worktree: { base: main } }",
      "  - { name: d, prompt: p, depends_on: [a], worktree: { base: '{{results.a.branch}}' } }",
    ];
    expect(await errorsOf(lines, { baseDir: repo })).toEqual([
      {
        path: "defaults.worktree",
        message: `worktree needs a git repository: the git repository ${repo} has no commit yet to start worktrees from`,
        hint: "run git init and commit there, or leave worktree out",
      },
      {
        path: "tasks[2].worktree",
        message: `worktree needs a git repository: the git repository ${repo} has no commit yet to start worktrees from`,
        hint: "run git init and commit there, or leave worktree out",
      },
      {
        path: "tasks[3].worktree",
        message: `worktree needs a git repository: the git repository ${repo} has no commit yet to start worktrees from`,
        hint: "run git init and commit there, or leave worktree out",
      },
    ]);
    await git(["commit", "--quiet", "--allow-empty", "-m", "start"], repo);
    const head = (await git(["rev-parse", "HEAD"], repo)).stdout;
    const config = await load(lines, repo);
    expect(config.tasks.map((task) => task.worktree)).toEqual([
      { repo, start: head },
      undefined,
      { repo, start: head, base: "main" },
      { repo, start: head, base: "{{results.a.branch}}" },
    ]);
    expect(config.keep_worktrees).toBe(false);
  });

  it("a task posted as an agent gets its agent's worktree, else the defaults', from the run's repository, checked when the file loads", async () => {
    const git = (args: string[], cwd: string) => execa("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", ...args], { cwd });
    const repo = join(dir, "posting-repo");
    await mkdir(repo);
    await git(["init", "--quiet"], repo);
    const agents = "agents: { builder: { description: d, prompt: p, worktree: { base: main } }, plain: { description: d, prompt: p } }";
    const lines = (posts: boolean) => [agents, `tasks: [{ name: lead, prompt: p, post_tasks: ${posts} }]`];
    // Only a run that may post needs the repository an agent's worktree comes from.
    expect((await load(lines(false), repo)).posts_repository).toBeUndefined();
    expect(await errorsOf(lines(true), { baseDir: repo })).toEqual([
      {
        path: "agents.builder.worktree",
        message: `worktree needs a git repository: the git repository ${repo} has no commit yet to start worktrees from`,
        hint: "run git init and commit there, or leave worktree out",
      },
    ]);
    await git(["commit", "--quiet", "--allow-empty", "-m", "start"], repo);
    const start = (await git(["rev-parse", "HEAD"], repo)).stdout;
    const posted = (config: ResolvedSwarmConfig, agent?: string) =>
      postedTask(config, { name: "p", prompt: "p", depends_on: [], posted: { by: "lead", depth: 1 }, ...(agent !== undefined && { agent }) })
        .worktree;
    const config = await load(lines(true), repo);
    expect(config.posts_repository).toEqual({ repo, start });
    expect([posted(config, "builder"), posted(config, "plain"), posted(config)]).toEqual([{ repo, start, base: "main" }, undefined, undefined]);
    // The defaults' worktree goes to a posted task with no agent, or an agent that says nothing of it; `false` turns it off.
    const turnedOff =
      "agents: { builder: { description: d, prompt: p, worktree: { base: main } }, plain: { description: d, prompt: p, worktree: false } }";
    const byDefault = await load(["defaults: { worktree: true }", turnedOff, lines(true)[1]!], repo);
    expect([posted(byDefault, "builder"), posted(byDefault, "plain"), posted(byDefault)]).toEqual([
      { repo, start, base: "main" },
      undefined,
      { repo, start },
    ]);
  });

  it("placeholders in worktree.base belong on a task", async () => {
    const errors = await errorsOf(["defaults: { worktree: { base: '{{results.a.branch}}' } }", "tasks: [{ name: a, prompt: p }]"], {
      baseDir: tmpdir(),
    });
    expect(errors).toContainEqual({
      path: "defaults.worktree.base",
      message: "placeholders in worktree.base are filled in only when a task sets it",
      hint: "set worktree.base on the task",
    });
  });
});

describe("fillResults with fields", () => {
  it("reads text, structured fields, branch and commit; task names may hold dots; what is missing stays as written", () => {
    const names = new Set(["review-a.ts", "verdict"]);
    const results: Record<string, { text: string; structured?: unknown; branch?: string; commit?: string }> = {
      "review-a.ts": { text: "LGTM", branch: "cadre/r/review-a.ts", commit: "abc" },
      verdict: { text: '{"ok":true}', structured: { ok: true, detail: { score: 3 }, tags: ["x"] } },
    };
    const fill = (text: string) => fillResults(text, names, (name) => results[name]);
    expect(fill("{{results.review-a.ts}} {{results.review-a.ts.text}} {{results.review-a.ts.branch}} {{results.review-a.ts.commit}}")).toBe(
      "LGTM LGTM cadre/r/review-a.ts abc",
    );
    expect(fill("{{results.verdict.structured.ok}} {{results.verdict.structured.detail.score}} {{results.verdict.structured.tags}}")).toBe(
      'true 3 ["x"]',
    );
    expect(fill("{{results.verdict.structured}}")).toBe('{"ok":true,"detail":{"score":3},"tags":["x"]}');
    expect(fill("{{results.verdict.structured.missing}} {{results.verdict.branch}} {{results.other}}")).toBe(
      "{{results.verdict.structured.missing}} {{results.verdict.branch}} {{results.other}}",
    );
  });
});
