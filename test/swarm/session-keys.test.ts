// The swarm keys for the CLI's session options: each reaches the worker options, paths resolved.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { layerWorkerOptions } from "../../src/orchestrator/compose.ts";
import { orchestratorOptionsFor } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { it } from "../support/fixtures.ts";

describe("session keys of a swarm file", () => {
  it("fallback_model, betas, plugin_dirs and session_persistence become worker options", async ({ tmp }) => {
    await mkdir(join(tmp, "plugins", "lint"), { recursive: true });
    const text = [
      "session_persistence: false",
      "defaults:",
      "  fallback_model: claude-haiku-4-5",
      "  betas: [context-1m-2025-08-07]",
      "  plugin_dirs: [plugins/lint]",
      "tasks:",
      "  - { name: one, prompt: hi }",
    ].join("\n");
    const result = await parseSwarmConfig(text, { baseDir: tmp, env: {} });
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    const options = orchestratorOptionsFor(result.config);
    expect(layerWorkerOptions({ defaults: options.defaults })).toMatchObject({
      fallbackModel: "claude-haiku-4-5",
      betas: ["context-1m-2025-08-07"],
      pluginDirs: [join(tmp, "plugins", "lint")],
      persistSession: false,
    });
  });

  it("keeps sessions by default, and names a plugin directory that is missing", async ({ tmp }) => {
    const kept = await parseSwarmConfig("tasks: [{ name: one, prompt: hi }]", { baseDir: tmp, env: {} });
    if (!kept.ok) throw new Error(JSON.stringify(kept.errors));
    expect(orchestratorOptionsFor(kept.config).defaults?.persistSession).toBeUndefined();

    const missing = await parseSwarmConfig("defaults: { plugin_dirs: [nowhere] }\ntasks: [{ name: one, prompt: hi }]", { baseDir: tmp, env: {} });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.errors.map((e) => e.path)).toContain("defaults.plugin_dirs[0]");
  });
});
