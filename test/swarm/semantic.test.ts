import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorsOf, FIXTURE_CONFIGS } from "../support/swarm.ts";

const AGENTS = ["agents:", "  reviewer: { description: d, prompt: p }", "  writer: { description: d, prompt: p }"];

describe("references to agents", () => {
  it("finds unknown agents in tasks, hook supervisors and connections, with did-you-mean", async () => {
    const errors = await errorsOf([
      ...AGENTS,
      "tasks:",
      "  - { name: a, prompt: p, agent: reviewr }",
      "  - { name: b, prompt: p, agent: zzz }",
      "hooks:",
      "  PreToolUse:",
      "    - { matcher: Bash, supervisor: revewer }",
      "connections:",
      "  writr: [reviewer, nobody]",
    ]);
    expect(errors).toEqual([
      { path: "tasks[0].agent", message: 'unknown agent "reviewr"', hint: 'did you mean "reviewer"?' },
      { path: "tasks[1].agent", message: 'unknown agent "zzz"', hint: "defined agents: reviewer, writer" },
      { path: "hooks.PreToolUse[0].supervisor", message: 'unknown agent "revewer"', hint: 'did you mean "reviewer"?' },
      { path: "connections.writr", message: 'unknown agent "writr"', hint: 'did you mean "writer"?' },
      { path: "connections.writr[1]", message: 'unknown agent "nobody"', hint: "defined agents: reviewer, writer" },
    ]);
  });

  it("says where to define an agent when there are none", async () => {
    // (reviewer would be found: cadre ships one.)
    expect(await errorsOf(["tasks: [{ name: a, prompt: p, agent: auditor }]"])).toEqual([
      { path: "tasks[0].agent", message: 'unknown agent "auditor"', hint: "define it under agents:, or put auditor.md in .claude/agents" },
    ]);
  });

  it("reports a missing agent file with its resolved path, and an invalid one with its problem", async () => {
    const errors = await errorsOf(["agents:", "  gone: ./agents/gone.md", "  bare: ./agents/no-front-matter.md", "tasks: [{ name: a, prompt: p }]"]);
    expect(errors).toEqual([
      {
        path: "agents.gone",
        message: `agent file not found: ${join(FIXTURE_CONFIGS, "agents", "gone.md")}`,
        hint: `paths are relative to the config file's directory (${FIXTURE_CONFIGS.replace(/\/$/, "")})`,
      },
      {
        path: "agents.bare",
        message: expect.stringMatching(/^agent file .*no-front-matter\.md: no YAML front matter/),
      },
    ]);
  });

  it("allows a policy only where tool calls are decided", async () => {
    expect(await errorsOf(["hooks:", "  Stop: [{ policy: { deny_tools: [Bash] } }]", "tasks: [{ name: a, prompt: p }]"])).toEqual([
      {
        path: "hooks.Stop[0].policy",
        message: "a policy judges tool calls before they run, so it works only under PreToolUse and PreSkillShellCommand",
      },
    ]);
  });
});

describe("tasks", () => {
  it("rejects duplicate names, also after for_each expansion", async () => {
    const errors = await errorsOf([
      "tasks:",
      "  - { name: a, prompt: p }",
      "  - { name: a, prompt: p }",
      "  - { name: same, prompt: p, for_each: [1, 2] }",
      "  - { name: 'x-{{item}}', prompt: p, for_each: [a, b, a] }",
      "  - { name: x-b, prompt: p }",
    ]);
    expect(errors).toEqual([
      { path: "tasks[1].name", message: 'duplicate task name "a" (tasks[0] has it too)' },
      { path: "tasks[2].name", message: 'every for_each copy is named "same"', hint: "put {{item}} or {{item.field}} in the name" },
      { path: "tasks[3].for_each[2]", message: 'gives the task name "x-a", which tasks[3].for_each[0] has too', hint: "task names must be unique" },
      { path: "tasks[4].name", message: 'duplicate task name "x-b" (tasks[3].for_each[1] has it too)' },
    ]);
  });

  it("checks {{item}} placeholders against for_each", async () => {
    const errors = await errorsOf([
      "tasks:",
      "  - { name: 'a-{{item}}', prompt: p }",
      "  - { name: 'b-{{item.file}}', prompt: 'line {{item.line}}', for_each: [{ file: x, line: 1 }, { file: y }] }",
    ]);
    expect(errors).toEqual([
      {
        path: "tasks[0].name",
        message: "{{item}} is only filled in for a task with for_each",
        hint: "add for_each: [...] to the task, or remove the placeholder",
      },
      { path: "tasks[1].for_each[1]", message: 'item has no field "line" (the task uses {{item.line}})' },
    ]);
  });

  it("finds unknown dependencies, self-dependencies and cycles", async () => {
    const errors = await errorsOf([
      "tasks:",
      "  - { name: build, prompt: p, depends_on: [tset] }",
      "  - { name: test, prompt: p, depends_on: [test] }",
      "  - { name: c1, prompt: p, depends_on: [c3] }",
      "  - { name: c2, prompt: p, depends_on: [c1] }",
      "  - { name: c3, prompt: p, depends_on: [c2] }",
    ]);
    expect(errors).toEqual([
      { path: "tasks[0].depends_on[0]", message: 'unknown task "tset"', hint: 'did you mean "test"?' },
      { path: "tasks[1].depends_on", message: 'task "test" depends on itself' },
      { path: "tasks[2].depends_on", message: "dependency cycle: c1 → c3 → c2 → c1" },
    ]);
  });

  it("requires {{results.x}} to name a task in depends_on", async () => {
    const errors = await errorsOf([
      "tasks:",
      "  - { name: review, prompt: p }",
      "  - { name: fix, prompt: 'use {{results.review}} and {{results.reveiw}}' }",
    ]);
    expect(errors).toEqual([
      { path: "tasks[1].prompt", message: '{{results.review}} needs "review" in depends_on', hint: 'add "review" to the task\'s depends_on' },
      { path: "tasks[1].prompt", message: '{{results.reveiw}} refers to an unknown task "reveiw"', hint: 'did you mean "review"?' },
    ]);
  });

  it("reports a problem shared by all for_each copies once", async () => {
    const errors = await errorsOf(["tasks:", "  - { name: 'a-{{item}}', prompt: 'p {{results.nope}}', for_each: [1, 2, 3], depends_on: [nope] }"]);
    expect(errors).toEqual([
      { path: "tasks[0].prompt", message: '{{results.nope}} refers to an unknown task "nope"' },
      { path: "tasks[0].depends_on[0]", message: 'unknown task "nope"' },
    ]);
  });

  it("checks working directories and rehearsal task names", async () => {
    const errors = await errorsOf([
      "defaults: { cwd: ./nowhere }",
      "tasks:",
      "  - { name: summary, prompt: p, cwd: ./swarm.yaml }",
      "rehearsal:",
      "  sumary: [{ text: hi }]",
    ]);
    expect(errors).toEqual([
      { path: "defaults.cwd", message: `directory not found: ${join(FIXTURE_CONFIGS, "nowhere")}` },
      { path: "tasks[0].cwd", message: `not a directory: ${join(FIXTURE_CONFIGS, "swarm.yaml")}` },
      { path: "rehearsal.sumary", message: 'unknown task "sumary"', hint: 'did you mean "summary"?' },
    ]);
  });
});

describe("every problem in one pass", () => {
  it("runs the semantic checks on what the schema accepts, beside the schema's own issues, in document order", async () => {
    const errors = await errorsOf([
      "concurrency: many",
      ...AGENTS,
      "  broken: { description: d }",
      "tasks:",
      "  - { name: a, prompt: p, agent: reviewr, retries: -1 }",
      "  - { name: b, prompt: p, depends_on: [c], agent: broken }",
      "  - { name: c, prompt: p, depends_on: [b], timeout_s: soon }",
      "  - { name: a, prompt: p }",
      "  - { prompt: 'no name {{results.zzz}}', depends_on: [a] }",
      "hooks:",
      "  PreToolUse:",
      "    - { matcher: Bash, supervisor: revewer }",
      "    - { matcher: Bash }",
      "connections:",
      "  writr: [reviewer]",
    ]);
    expect(errors.map((item) => `${item.path}: ${item.message}`)).toEqual([
      'concurrency: expected a number, got the string "many"',
      "agents.broken.prompt: required key is missing",
      'tasks[0].agent: unknown agent "reviewr"',
      "tasks[0].retries: must be 0 or more",
      "tasks[1].depends_on: dependency cycle: b → c → b",
      'tasks[2].timeout_s: expected a number, got the string "soon"',
      'tasks[3].name: duplicate task name "a" (tasks[0] has it too)',
      "tasks[4].name: required key is missing",
      'hooks.PreToolUse[0].supervisor: unknown agent "revewer"',
      "hooks.PreToolUse[1]: needs an action: one of policy, command, supervisor",
      'connections.writr: unknown agent "writr"',
    ]);
  });

  it("an invalid agent still counts as defined, and a task without a readable name hides no other task", async () => {
    const errors = await errorsOf([
      "agents:",
      "  critic: { description: d, prompt: p, tools: Read }",
      "tasks:",
      "  - { name: a, prompt: p, agent: critic }",
      "  - { name: 7, prompt: p }",
      "  - { name: c, prompt: '{{results.x}}', depends_on: [x] }",
      "  - { name: d, prompt: p, depends_on: [d] }",
      "rehearsal:",
      "  'peer:critic': [{ text: hi }]",
      "  x: [{ text: hi }]",
    ]);
    // Task 1's name is unreadable, so "x" may be it: no unknown-task claims about it; task 3's cycle is certain.
    expect(errors.map((item) => `${item.path}: ${item.message}`)).toEqual([
      'agents.critic.tools: expected a list, got the string "Read"',
      "tasks[1].name: expected a string, got the number 7",
      'tasks[3].depends_on: task "d" depends on itself',
    ]);
  });
});
