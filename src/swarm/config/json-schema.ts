// The JSON Schema of a swarm file for editors, generated from the zod schema.
import { z } from "zod";
import { SwarmConfigSchema } from "./schema.ts";

/** Where editors find the generated schema, relative to the repository root. */
export const SWARM_SCHEMA_PATH = "schema/swarm.schema.json";

/**
 * The JSON Schema of a swarm config, for editors (yaml-language-server, VS Code).
 * It describes what people write (zod's input side: defaults are optional).
 */
export function swarmJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(SwarmConfigSchema, { io: "input", target: "draft-2020-12", unrepresentable: "any" });
}

/** The file content of schema/swarm.schema.json, as `npm run schema` writes it. */
export function renderSwarmJsonSchema(): string {
  return `${JSON.stringify(swarmJsonSchema(), null, 2)}\n`;
}
