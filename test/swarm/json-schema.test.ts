import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { HookEventSchema } from "../../src/protocol/index.ts";
import { renderSwarmJsonSchema, SWARM_SCHEMA_PATH, swarmJsonSchema } from "../../src/swarm/config/json-schema.ts";

const HOOK_EVENTS = HookEventSchema.options;

describe("schema/swarm.schema.json", () => {
  it("is up to date with the zod schema (run `npm run schema` to regenerate)", () => {
    const committed = readFileSync(new URL(`../../${SWARM_SCHEMA_PATH}`, import.meta.url), "utf8");
    expect(committed).toBe(renderSwarmJsonSchema());
  });

  it("describes what people write: strict objects, required keys, hook events", () => {
    const schema = swarmJsonSchema() as {
      additionalProperties: unknown;
      required: string[];
      properties: Record<string, any>;
    };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(["tasks"]);
    const task = schema.properties.tasks.items;
    expect(task.required).toEqual(["name", "prompt"]);
    expect(task.additionalProperties).toBe(false);
    expect(task.properties.when).toMatchObject({ type: "string", description: expect.stringContaining("CEL") });
    expect(schema.properties.hooks.propertyNames.enum).toEqual([...HOOK_EVENTS]);
  });
});
