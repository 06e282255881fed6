// `when:` as `cadre validate` checks it: syntax, dependencies, fields against the output schema, in one pass.
import { describe, expect, it } from "vitest";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { errorsOf, FIXTURE_CONFIGS } from "../support/swarm.ts";

const TRIAGE = [
  "agents:",
  "  triager:",
  "    description: d",
  "    prompt: p",
  "    output_schema:",
  "      type: object",
  "      properties:",
  "        kind: { type: string, enum: [bug, question] }",
  "        urgent: { type: boolean }",
  "        labels: { type: array, items: { type: string } }",
  "        detail: { type: object, properties: { file: { type: string } } }",
  "        extra: { type: object, additionalProperties: true }",
];

describe("when:", () => {
  it("passes a condition that reads its dependencies' fields as their schemas have them", async () => {
    const result = await parseSwarmConfig(
      [
        ...TRIAGE,
        "tasks:",
        "  - { name: triage, agent: triager, prompt: p }",
        "  - { name: fix-1, prompt: p }",
        "  - name: fix",
        "    prompt: p",
        "    depends_on: [triage, fix-1]",
        "    when: >-",
        '      results.triage.structured.kind in ["bug"] && results.triage.structured.urgent && "ui" in results.triage.structured.labels',
        '      && results.triage.structured.detail.file.endsWith(".ts") && results.triage.structured.extra.anything == 1',
        '      && (failure() || results["fix-1"].status == "skipped") && results.triage.text != ""',
      ].join("\n"),
      { baseDir: FIXTURE_CONFIGS, env: {} },
    );
    expect(result.ok ? [] : result.errors).toEqual([]);
    expect(result.ok && result.config.tasks[2]?.when).toMatch(/^results\.triage\.structured\.kind in \["bug"\]/);
  });

  it("reports syntax, non-dependencies, unknown tasks, misspelt fields and misfit types, each with its path, in one pass", async () => {
    const errors = await errorsOf([
      ...TRIAGE,
      "tasks:",
      "  - { name: triage, agent: triager, prompt: p }",
      "  - { name: plain, prompt: p }",
      "  - { name: a, prompt: p, depends_on: [triage], when: 'results.triage.structured.knd == \"bug\"' }",
      "  - { name: b, prompt: p, depends_on: [triage], when: 'results.triage.structured.kind ==' }",
      '  - { name: c, prompt: p, depends_on: [triage], when: \'results.plain.text == "" || results.triag.status == "failed"\' }',
      "  - { name: d, prompt: p, depends_on: [triage], when: 'results.triage.structured.kind == \"bgu\" || results.triage.structured.urgent == 1' }",
      "  - { name: e, prompt: p, depends_on: [triage, plain], when: 'results.plain.structured.x == 1 || results.triage.structured.detail.fil == \"\"' }",
      "  - { name: f, prompt: p, depends_on: [triage], when: 'results.triage.structured.kind || results.triage.branch == \"x\"' }",
      "  - { name: g, prompt: p, depends_on: [triage], when: 'results.triage.status == \"succeded\"' }",
    ]);
    expect(errors).toEqual([
      { path: "tasks[2].when", message: 'results.triage.structured.knd: its output_schema has no field "knd"', hint: 'did you mean "kind"?' },
      { path: "tasks[3].when", message: "not a valid expression: Unexpected token: EOF", hint: "it ends too soon" },
      { path: "tasks[4].when", message: 'results.plain.text: "plain" is not a dependency of this task', hint: 'add "plain" to its depends_on' },
      { path: "tasks[4].when", message: 'results.triag.status: no task is named "triag"', hint: 'did you mean "triage"?' },
      { path: "tasks[5].when", message: 'results.triage.structured.kind: is one of "bug", "question", never "bgu"', hint: 'did you mean "bug"?' },
      { path: "tasks[5].when", message: "results.triage.structured.urgent: is a boolean, but is compared with 1" },
      { path: "tasks[6].when", message: "results.plain.structured.x: the task has no output_schema, so its result has no structured output" },
      {
        path: "tasks[6].when",
        message: 'results.triage.structured.detail.fil: structured.detail in its output_schema has no field "fil"',
        hint: 'did you mean "file"?',
      },
      { path: "tasks[7].when", message: "results.triage.structured.kind: is a string, not true or false", hint: "compare it with a value" },
      {
        path: "tasks[7].when",
        message: "results.triage.branch: the task does not run in a worktree, so its result has no branch",
        hint: "give it worktree: true",
      },
      {
        path: "tasks[8].when",
        message: 'results.triage.status: a status is one of succeeded, failed, cancelled, skipped, not "succeded"',
        hint: 'did you mean "succeeded"?',
      },
    ]);
  });

  it("checks the reads of every for_each copy against that copy's dependencies, and says so once", async () => {
    const errors = await errorsOf([
      "tasks:",
      "  - { name: 'build-{{item}}', prompt: p, for_each: [a, b] }",
      "  - { name: 'test-{{item}}', prompt: p, for_each: [a, b], depends_on: ['build-{{item}}'], when: 'results[\"build-a\"].status == \"failed\"' }",
    ]);
    expect(errors).toEqual([
      {
        path: "tasks[1].when",
        message: 'results["build-a"].status: "build-a" is not a dependency of this task',
        hint: 'add "build-a" to its depends_on',
      },
    ]);
  });
});
