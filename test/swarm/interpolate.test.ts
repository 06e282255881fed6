import { describe, expect, it } from "vitest";
import { interpolateEnv } from "../../src/swarm/config/interpolate.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { FIXTURE_CONFIGS } from "../support/swarm.ts";

const parse = (text: string, env: Record<string, string>) => parseSwarmConfig(text, { baseDir: FIXTURE_CONFIGS, env });

describe("${VAR} interpolation", () => {
  it("replaces variables and defaults inside strings, not keys", () => {
    const { value, issues } = interpolateEnv(
      { a: "model ${MODEL}", b: ["${MISSING:-fallback}", "${EMPTY:-was empty}", "x${EMPTY}y"], "${KEY}": "k" },
      { MODEL: "opus", EMPTY: "" },
    );
    expect(issues).toEqual([]);
    expect(value).toEqual({ a: "model opus", b: ["fallback", "was empty", "xy"], "${KEY}": "k" });
  });

  it("keeps $${ as a literal ${ for shell commands", () => {
    expect(interpolateEnv({ command: "echo $${HOME} ${X}" }, { X: "1", HOME: "/h" }).value).toEqual({ command: "echo ${HOME} 1" });
  });

  it("makes an unset variable without default an issue at the value's path", async () => {
    const result = await parse(`tasks:\n  - name: a\n    prompt: "use \${API_URL}"\n    model: \${MODEL}\n`, {});
    expect(result).toEqual({
      ok: false,
      errors: [
        { path: "tasks[0].prompt", message: "environment variable API_URL is not set", hint: "set it, or give a default: ${API_URL:-value}" },
        { path: "tasks[0].model", message: "environment variable MODEL is not set", hint: "set it, or give a default: ${MODEL:-value}" },
      ],
    });
  });

  it("rejects a malformed reference", async () => {
    const result = await parse(`tasks: [{ name: a, prompt: "\${not a var}" }]`, {});
    expect(result).toMatchObject({ ok: false, errors: [{ path: "tasks[0].prompt", message: '"${not a var}" is not a variable reference' }] });
  });

  it("turns a whole reference into a number where the schema wants one", async () => {
    const result = await parse(`concurrency: \${N}\nbudget_usd: \${B:-2.5}\ntasks: [{ name: "t-\${N}", prompt: p }]`, { N: "4" });
    expect(result.ok && [result.config.concurrency, result.config.budget_usd, result.config.tasks[0]?.name]).toEqual([4, 2.5, "t-4"]);

    const bad = await parse(`concurrency: \${N}\ntasks: [{ name: a, prompt: p }]`, { N: "four" });
    expect(bad).toEqual({ ok: false, errors: [{ path: "concurrency", message: 'expected a number, got the string "four"' }] });
  });

  it("fills values before the semantic checks see them", async () => {
    const result = await parse(`agents:\n  rev: { description: d, prompt: p }\ntasks: [{ name: a, prompt: p, agent: "\${AGENT}" }]`, {
      AGENT: "reviewr",
    });
    expect(result).toEqual({ ok: false, errors: [{ path: "tasks[0].agent", message: 'unknown agent "reviewr"', hint: 'did you mean "rev"?' }] });
  });
});
