// The layer matrix, in one place: each layer of src/ and the layers it may import. test/layers.test.ts holds the real
// import graph to it and checks the table in docs/ARCHITECTURE.md against it. A new layer is one line here.

/** The bottom of every layer: each layer may import these, and they import only each other. */
export const BOTTOM = ["errors.ts", "util"] as const;

/**
 * What each layer may import besides itself and BOTTOM, top to bottom ("*": every layer). Imports point down only,
 * and each layer lists no more than its code uses: a new dependency between layers is a decision, made here.
 */
export const MAY_IMPORT: Record<string, readonly string[] | "*"> = {
  cli: "*",
  mcp: ["workflow", "orchestrator", "worker", "protocol", "rehearsal"],
  dashboard: ["run", "orchestrator", "worker", "protocol"],
  telemetry: ["run", "distributed", "orchestrator", "protocol"],
  run: ["swarm", "workflow", "distributed", "orchestrator", "rehearsal"],
  swarm: ["orchestrator", "worker", "protocol", "rehearsal"],
  workflow: ["orchestrator"],
  distributed: ["orchestrator", "protocol", "rehearsal"],
  orchestrator: ["worker", "protocol"],
  worker: ["protocol"],
  rehearsal: ["protocol"],
  protocol: [],
};

/** Every layer: the folders of src/ (and src/errors.ts), in the order of MAY_IMPORT, then BOTTOM. */
export const LAYERS: readonly string[] = [...Object.keys(MAY_IMPORT), ...BOTTOM];

/** Whether a file of layer `from` may import one of layer `to`. */
export function mayImport(from: string, to: string): boolean {
  if (from === to) return true;
  if ((BOTTOM as readonly string[]).includes(from)) return (BOTTOM as readonly string[]).includes(to);
  const allowed = MAY_IMPORT[from];
  if (allowed === undefined) return false;
  return allowed === "*" || allowed.includes(to) || (BOTTOM as readonly string[]).includes(to);
}
