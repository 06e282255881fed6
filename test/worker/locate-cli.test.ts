// Where cadre finds claude by default: in a clone, the pinned CLI inside the Agent SDK's platform package.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { afterEach, describe, expect, it, vi } from "vitest";
import manifest from "../../package.json" with { type: "json" };
import { locateClaude } from "../../src/worker/locate-cli.ts";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("locateClaude", () => {
  it("finds the CLI of the Agent SDK devDependency's platform package, which a clone's npm install brings", () => {
    vi.stubEnv("CADRE_CLAUDE_BIN", "");
    const found = locateClaude();
    const carrier = `@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}`;
    expect(found).toMatch(new RegExp(`/node_modules/${carrier}(-musl)?/claude(\\.exe)?$`));
    // The platform package is the SDK's own version: the SDK that cadre's protocol types are read from.
    const { version } = JSON.parse(readFileSync(join(dirname(found), "package.json"), "utf8")) as { version: string };
    expect(version).toBe(manifest.devDependencies["@anthropic-ai/claude-agent-sdk"]);
  });

  it("takes CADRE_CLAUDE_BIN over it, and refuses one that is not an executable file", () => {
    vi.stubEnv("CADRE_CLAUDE_BIN", "");
    const own = locateClaude();
    vi.stubEnv("CADRE_CLAUDE_BIN", process.execPath);
    expect(locateClaude()).toBe(process.execPath);
    vi.stubEnv("CADRE_CLAUDE_BIN", join(dirname(own), "package.json"));
    expect(() => locateClaude()).toThrow(expect.objectContaining({ code: "CLAUDE_NOT_FOUND" }));
  });
});
