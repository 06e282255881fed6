// Names inherited from Object.prototype (toString, constructor, __proto__, hasOwnProperty) are names like any other: unknown unless defined.
import { describe, expect, it } from "vitest";
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts";
import { rehearsalScriptFor } from "../../src/rehearsal/rig.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { missingScripts } from "../../src/swarm/rehearsal.ts";
import { FIXTURE_CONFIGS } from "../support/swarm.ts";

const INHERITED = ["toString", "constructor", "__proto__", "hasOwnProperty"];
const parse = (lines: string[]) => parseSwarmConfig(lines.join("\n"), { baseDir: FIXTURE_CONFIGS, format: "yaml", env: {} });

describe("a name Object.prototype has", () => {
  it.each(INHERITED)("as a task's agent (%s) is an unknown agent", async (name) => {
    const result = await parse(["tasks:", `  - { name: a, agent: "${name}", prompt: p }`]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => error.message)).toContain(`unknown agent "${name}"`);
  });

  it.each(INHERITED)("as a variable (%s) is not set", async (name) => {
    const result = await parse(["tasks:", `  - { name: a, prompt: "\${${name}}" }`]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => error.message)).toContain(`environment variable ${name} is not set`);
  });

  it.each(INHERITED)("as a task with no rehearsal script (%s) lacks one", async (name) => {
    const result = await parse([
      "tasks:",
      `  - { name: "${name}", prompt: p }`,
      "  - { name: other, prompt: p }",
      "rehearsal:",
      "  other: [{ text: ok }]",
    ]);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(missingScripts(result.config)).toContain(`rehearsal: no script for task "${name}"`);
  });

  it.each(INHERITED)("as a worker's agent (%s) plays no inherited script", (name) => {
    expect(rehearsalScriptFor({ kind: "task", name: "a", agent: name }, {})).toBe("a");
  });

  it.each(INHERITED)("as an orchestrator task's agent (%s) is refused as unknown", async (name) => {
    const orchestrator = new Orchestrator({ agents: { reviewer: { description: "d", prompt: "p" } } });
    try {
      await expect(Promise.resolve().then(() => orchestrator.run({ prompt: "p", agent: name }))).rejects.toMatchObject({ code: "UNKNOWN_AGENT" });
    } finally {
      await orchestrator.close();
    }
  });
});
