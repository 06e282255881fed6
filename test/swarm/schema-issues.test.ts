import { describe, expect, it } from "vitest";
import { errorsOf } from "../support/swarm.ts";

describe("schema issues", () => {
  it("reports an unknown key at its path with a did-you-mean", async () => {
    const errors = await errorsOf(`tasks:\n  - name: a\n    promt: hi\n`);
    expect(errors).toContainEqual({ path: "tasks[0].promt", message: "unknown key", hint: 'did you mean "prompt"?' });
    expect(errors).toContainEqual({ path: "tasks[0].prompt", message: "required key is missing" });
  });

  it("suggests keys at every level: top, defaults, inline agents, hook events", async () => {
    const errors = await errorsOf(
      [
        "concurency: 2",
        "defaults: { modle: x }",
        "agents:",
        "  rev: { description: d, prompt: p, tool: [Read] }",
        "hooks:",
        "  PreTool: []",
        "tasks: [{ name: a, prompt: p }]",
      ].join("\n"),
    );
    expect(errors).toEqual([
      { path: "concurency", message: "unknown key", hint: 'did you mean "concurrency"?' },
      { path: "defaults.modle", message: "unknown key", hint: 'did you mean "model"?' },
      { path: "agents.rev.tool", message: "unknown key", hint: 'did you mean "tools"?' },
      { path: "hooks.PreTool", message: "unknown key", hint: 'did you mean "PreToolUse"?' },
    ]);
  });

  it("lists the known keys when nothing is close", async () => {
    const [error] = await errorsOf(`tasks: [{ name: a, prompt: p, zzzzzz: 1 }]`);
    expect(error?.path).toBe("tasks[0].zzzzzz");
    expect(error?.hint).toMatch(/^known keys: name, agent, prompt, for_each, depends_on/);
  });

  it("names wrong types in plain words, with a fix where one is obvious", async () => {
    const errors = await errorsOf(
      [
        "concurrency: '4'",
        "budget_usd: -1",
        "defaults:",
        "  allowed_tools: Read, Grep",
        "  permission_mode: acceptEdit",
        "agents:",
        "  rev: 5",
        "tasks:",
        "  - { name: a, prompt: p, retries: 1.5 }",
      ].join("\n"),
    );
    expect(errors).toEqual([
      { path: "concurrency", message: 'expected a number, got the string "4"', hint: "write the number without quotes" },
      { path: "budget_usd", message: "must be greater than 0" },
      { path: "defaults.allowed_tools", message: 'expected a list, got the string "Read, Grep"', hint: "write a list: [Read, Grep]" },
      {
        path: "defaults.permission_mode",
        message: 'the string "acceptEdit" is not one of: default, acceptEdits, bypassPermissions, plan, dontAsk, auto',
        hint: 'did you mean "acceptEdits"?',
      },
      { path: "agents.rev", message: "expected a string or a mapping, got the number 5" },
      { path: "tasks[0].retries", message: "expected an integer, got the number 1.5" },
    ]);
  });

  it("rejects an empty task list and a missing one", async () => {
    expect(await errorsOf("tasks: []")).toEqual([{ path: "tasks", message: "must not be empty", hint: "add at least one task" }]);
    expect(await errorsOf("name: x")).toEqual([{ path: "tasks", message: "required key is missing" }]);
    expect(await errorsOf("")).toEqual([{ path: "", message: "the config is empty", hint: "it needs at least tasks: [...]" }]);
  });

  it("requires exactly one action per hook entry and valid regular expressions", async () => {
    const errors = await errorsOf(
      [
        "hooks:",
        "  PreToolUse:",
        "    - { matcher: Bash, command: ./check.sh, supervisor: rev }",
        "    - { matcher: Bash }",
        "    - policy: { deny_commands: ['rm -rf (' ] }",
        "    - policy: {}",
        "tasks: [{ name: a, prompt: p }]",
      ].join("\n"),
    );
    expect(errors).toEqual([
      {
        path: "hooks.PreToolUse[0]",
        message: "has command and supervisor; give exactly one action per entry (split it into two entries)",
      },
      { path: "hooks.PreToolUse[1]", message: "needs an action: one of policy, command, supervisor" },
      {
        path: "hooks.PreToolUse[2].policy.deny_commands[0]",
        message: expect.stringMatching(/^not a valid regular expression: .*Unterminated group/),
      },
      {
        path: "hooks.PreToolUse[3].policy",
        message: "a policy needs at least one of deny_commands, allow_commands or deny_tools",
      },
    ]);
  });

  it("reports YAML syntax errors with line and column, and a hint for unquoted {{ }}", async () => {
    const errors = await errorsOf(`tasks:\n  - name: a\n    prompt: p\n    depends_on: [b-{{item}}]\n`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ path: "", message: expect.stringMatching(/^not valid YAML at line 4, column \d+: /) });
    expect(errors[0]?.hint).toContain("quote values that contain {{ }}");
  });

  it("points an unclosed quote at the line it opens on, not at the end of the file", async () => {
    const errors = await errorsOf(`tasks:\n  - name: "a\n    prompt: p\n  - name: b\n    prompt: q\n`);
    expect(errors).toMatchObject([{ path: "", message: "not valid YAML at line 2, column 11: this quote is never closed" }]);
  });

  it("reads JSON and reports its syntax errors", async () => {
    const errors = await errorsOf(`{"tasks": [{"name": "a", "prompt": "p", "modle": "x"}]}`, { format: "json" });
    expect(errors).toEqual([{ path: "tasks[0].modle", message: "unknown key", hint: 'did you mean "model"?' }]);
    const [syntax] = await errorsOf(`{"tasks": [}`, { format: "json" });
    expect(syntax?.message).toMatch(/^not valid JSON: /);
  });

  it("lists issues in the order their places appear in the file", async () => {
    const errors = await errorsOf(["tasks: [{ name: a, prompt: 1 }]", "zzz: 1", "concurrency: 0"].join("\n"));
    expect(errors.map((error) => error.path)).toEqual(["tasks[0].prompt", "zzz", "concurrency"]);
  });

  it("quotes keys that are not plain identifiers in paths", async () => {
    const errors = await errorsOf(`agents:\n  "my agent": { description: d }\ntasks: [{ name: a, prompt: p }]`);
    expect(errors).toEqual([
      { path: 'agents["my agent"].prompt', message: "required key is missing", hint: expect.stringContaining("cadre agents") },
    ]);
  });
});
