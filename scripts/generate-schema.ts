// Writes schema/swarm.schema.json and docs/reference/swarm-file.md from the zod schema of the swarm config (`npm run schema`).
// test/swarm/json-schema.test.ts and test/swarm/reference.test.ts fail when a committed file is stale.
import { mkdirSync, writeFileSync } from "node:fs";
import { renderSwarmJsonSchema, SWARM_SCHEMA_PATH } from "../src/swarm/config/json-schema.ts";
import { renderSwarmReference, SWARM_REFERENCE_PATH } from "./swarm-reference.ts";

for (const [path, text] of [
  [SWARM_SCHEMA_PATH, renderSwarmJsonSchema()],
  [SWARM_REFERENCE_PATH, renderSwarmReference()],
] as const) {
  const target = new URL(`../${path}`, import.meta.url);
  mkdirSync(new URL(".", target), { recursive: true });
  writeFileSync(target, text);
  console.log(`wrote ${path}`);
}
