// Telemetry off costs nothing: no file the built command line loads before a command asks for
// telemetry holds OpenTelemetry code. The command chunks (run, worker, mcp) reach the SDK only
// through import(), which runs when OTEL_* settings, --otel or --metrics are given.
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { repo } from "../support/cli.ts";

/** Every file of dist/cli that `entry` reaches through static imports (dynamic ones are loaded only when run). */
async function staticallyReached(entry: string): Promise<Map<string, string>> {
  const reached = new Map<string, string>();
  const visit = async (file: string) => {
    if (reached.has(file)) return;
    const text = await readFile(file, "utf8");
    reached.set(file, text);
    for (const match of text.matchAll(/^(?:import|export)\b[^;]*?from "(\.[^"]+)"|^import "(\.[^"]+)"/gm)) {
      await visit(resolve(dirname(file), match[1] ?? match[2]!));
    }
  };
  await visit(entry);
  return reached;
}

describe("telemetry off", () => {
  it("loads no OpenTelemetry module: `cadre run`, `cadre worker` and `cadre mcp` reach the SDK only by import()", async () => {
    const dist = join(repo, "dist", "cli");
    const main = await readFile(join(dist, "main.js"), "utf8");
    const commands = [...main.matchAll(/import\("(\.\/chunks\/(?:run|worker|mcp)-[^"]+)"\)/g)].map((m) => join(dist, m[1]!));
    expect(commands).toHaveLength(3);
    for (const command of [join(dist, "main.js"), ...commands]) {
      const files = await staticallyReached(command);
      const withSdk = [...files].filter(([, text]) => text.includes("node_modules/@opentelemetry/")).map(([file]) => file);
      expect(withSdk, command).toEqual([]);
      // …and the SDK is there, behind the import() of the telemetry chunk.
      expect([...files.values()].some((text) => /import\("\.\/load-[^"]+"\)/.test(text)) || command.endsWith("main.js")).toBe(true);
    }
  });
});
