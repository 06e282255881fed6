import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { discoverAgents, SHIPPED_SCOPE } from "../../src/swarm/agents/discover.ts";
import { AgentFileError, parseAgentFile, readAgentFile } from "../../src/swarm/agents/file.ts";

const fixtures = fileURLToPath(new URL("../fixtures/config/agents/", import.meta.url));

function failure(text: string): AgentFileError {
  try {
    parseAgentFile(text, "/x/agent.md");
  } catch (error) {
    if (error instanceof AgentFileError) return error;
    throw error;
  }
  throw new Error("expected the agent file to be rejected");
}

describe("parseAgentFile", () => {
  it("reads tools as a comma-separated string; model inherit means the default", async () => {
    expect(await readAgentFile(join(fixtures, "reviewer.md"))).toEqual({
      name: "code-reviewer",
      description: "Reviews code for bugs",
      prompt: "You are a code reviewer. Report bugs with file:line references.",
      tools: ["Read", "Grep", "Glob"],
      file: join(fixtures, "reviewer.md"),
    });
  });

  it("reads tools as a list, and Claude Code's other fields", async () => {
    expect(await readAgentFile(join(fixtures, "list-tools.md"))).toEqual({
      name: "lister",
      description: "Lists things",
      prompt: "Body with a blank line before it.",
      tools: ["Read", "Glob"],
      disallowed_tools: ["Bash"],
      model: "haiku",
      permission_mode: "plan",
      max_turns: 5,
      file: join(fixtures, "list-tools.md"),
    });
  });

  it("explains a file without front matter", async () => {
    const error = await readAgentFile(join(fixtures, "no-front-matter.md")).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AgentFileError);
    expect(error).toMatchObject({
      code: "AGENT_FILE_INVALID",
      reason: "no YAML front matter: an agent file starts with a --- block holding at least name and description",
    });
  });

  it("names the missing or wrong field", () => {
    expect(failure("---\ndescription: d\n---\nbody").reason).toBe('"name" is required');
    expect(failure("---\nname: a\ndescription: d\ntools: 3\n---\nbody").reason).toBe('"tools" must be a comma-separated string or a list of names');
    expect(failure("---\nname: a\ndescription: d\npermissionMode: yolo\n---\nbody").reason).toMatch(/^"permissionMode" must be one of default, /);
    expect(failure("---\nname: a\ndescription: d\n---\n\n").reason).toBe("the body (the agent's system prompt) is empty");
    expect(failure("---\n- a\n- b\n---\nbody").reason).toBe("front matter must be a YAML mapping (name: …, description: …)");
    expect(failure("---\nname: a\n- b\n---\nbody").reason).toMatch(/^front matter is not valid YAML: /);
  });

  it("forgives an unquoted colon in a value, as Claude Code does", () => {
    const agent = parseAgentFile("---\nname: a\ndescription: Use when: tests fail\n---\nbody", "/x/a.md");
    expect(agent.description).toBe("Use when: tests fail");
  });

  it("reports a missing file", async () => {
    await expect(readAgentFile("/nonexistent/agent.md")).rejects.toMatchObject({ reason: "file not found", file: "/nonexistent/agent.md" });
  });
});

describe("discoverAgents", () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  it("searches agents/, .claude/agents and ~/.claude/agents in that order and marks shadowed names", async () => {
    root = await mkdtemp(join(tmpdir(), "cadre-agents-"));
    const cwd = join(root, "project");
    const home = join(root, "home");
    const write = async (dir: string, file: string, name: string) => {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, file), `---\nname: ${name}\ndescription: ${name} from ${dir}\n---\nprompt`);
    };
    await write(join(cwd, "agents"), "reviewer.md", "reviewer");
    await write(join(cwd, ".claude", "agents"), "critic.md", "critic");
    await write(join(cwd, ".claude", "agents"), "other-reviewer.md", "reviewer");
    await write(join(home, ".claude", "agents"), "critic.md", "critic");
    await writeFile(join(home, ".claude", "agents", "broken.md"), "no front matter");

    const found = await discoverAgents({ cwd, home });
    // cadre's own agents come last, and a project's reviewer shadows the shipped one.
    const shipped = found.filter((agent) => agent.scope === SHIPPED_SCOPE);
    expect(shipped.map((agent) => agent.name).sort()).toEqual(["critic", "researcher", "reviewer", "summarizer", "test-writer"]);
    expect(found.slice(-shipped.length)).toEqual(shipped);
    expect(shipped.find((agent) => agent.name === "reviewer")).toMatchObject({ shadowedBy: join(cwd, "agents", "reviewer.md") });
    expect(
      found
        .filter((agent) => agent.scope !== SHIPPED_SCOPE)
        .map((agent) => [agent.name, agent.file, agent.scope, agent.ok ? (agent.shadowedBy ?? null) : agent.error]),
    ).toEqual([
      ["reviewer", join(cwd, "agents", "reviewer.md"), "project", null],
      ["critic", join(cwd, ".claude", "agents", "critic.md"), "project .claude", null],
      ["reviewer", join(cwd, ".claude", "agents", "other-reviewer.md"), "project .claude", join(cwd, "agents", "reviewer.md")],
      ["broken", join(home, ".claude", "agents", "broken.md"), "user", expect.stringMatching(/^no YAML front matter/)],
      ["critic", join(home, ".claude", "agents", "critic.md"), "user", join(cwd, ".claude", "agents", "critic.md")],
    ]);
  });

  it("finds only the shipped agents, without error, when no other directory exists", async () => {
    root = await mkdtemp(join(tmpdir(), "cadre-agents-"));
    const found = await discoverAgents({ cwd: root, home: root });
    expect(found.map((agent) => [agent.scope, agent.ok])).toEqual(Array(5).fill([SHIPPED_SCOPE, true]));
  });
});
