// Every option of the public API's option types carries a doc comment, so an editor completes it
// with a line that says what it does and what it defaults to.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";

const OPTION_TYPES: [file: string, name: string][] = [
  ["src/worker/options.ts", "WorkerOptions"],
  ["src/orchestrator/types.ts", "OrchestratorOptions"],
  ["src/orchestrator/types.ts", "TaskSpec"],
  ["src/orchestrator/types.ts", "AgentSpec"],
  ["src/orchestrator/session.ts", "SessionSpec"],
  ["src/run/run-swarm-file.ts", "RunSwarmFileOptions"],
  ["src/run/swarm-run.ts", "SwarmRunOptions"],
  ["src/run/workflow-run.ts", "WorkflowFileRunOptions"],
  ["src/rehearsal/env.ts", "OfflineClaudeEnvOptions"],
  ["src/rehearsal/server.ts", "RehearsalServerOptions"],
];

/** The members of `export interface <name>` (its own lines, not nested types') that no doc comment precedes. */
function undocumentedMembers(source: string, name: string): string[] {
  const start = source.search(new RegExp(`export interface ${name}\\b[^{]*\\{`));
  if (start < 0) throw new Error(`no interface ${name}`);
  const undocumented: string[] = [];
  let depth = 0;
  let previous = "";
  for (const line of source.slice(start).split("\n")) {
    const member = /^ {2}(?:readonly )?([A-Za-z]\w*)\??:/.exec(line);
    if (depth === 1 && member && !previous.trimEnd().endsWith("*/")) undocumented.push(member[1]!);
    depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
    if (line.trim() !== "") previous = line;
    if (depth === 0 && line.includes("}")) break;
  }
  return undocumented;
}

describe("the public option types", () => {
  it("find an undocumented member", () => {
    expect(undocumentedMembers("export interface A {\n  /** Said. */\n  said?: number;\n  bare: string;\n}\n", "A")).toEqual(["bare"]);
  });

  it.each(OPTION_TYPES)("%s: every member of %s has a doc comment", async (file, name) => {
    expect(undocumentedMembers(await readFile(file, "utf8"), name)).toEqual([]);
  });
});
