// Writes schema/swarm.schema.json from the zod schema of the swarm config (`npm run schema`).
// test/swarm/json-schema.test.ts fails when the committed file is stale.
import { writeFileSync } from "node:fs";
import { renderSwarmJsonSchema, SWARM_SCHEMA_PATH } from "../src/swarm/config/json-schema.ts";

const target = new URL(`../${SWARM_SCHEMA_PATH}`, import.meta.url);
writeFileSync(target, renderSwarmJsonSchema());
console.log(`wrote ${SWARM_SCHEMA_PATH}`);
