// rewind_session_files: a parent undoes what a child wrote, through a real MCP client and real claude children.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, startStdioCadre, textOf } from "../support/mcp.ts";
import { tempHome } from "../support/rehearsal.ts";

describe("rewind_session_files", () => {
  it("previews, then restores the files a child wrote, and refuses a turn the child never took", async () => {
    const cwd = await tempHome("cadre-rewind-");
    const file = join(cwd, "draft.md");
    await writeFile(file, "parent's text\n");
    const { client } = await startStdioCadre({
      writer: [{ tool_use: { name: "Write", input: { file_path: file, content: "child's draft\n" } } }, { text: "drafted" }],
    });
    const spawned = await call(client, "spawn_session", { prompt: "draft it", name: "writer", permission_mode: "acceptEdits", cwd });
    expect(spawned.structuredContent).toMatchObject({ status: "idle", turns: 1 });
    expect(await readFile(file, "utf8")).toBe("child's draft\n");

    const preview = await call(client, "rewind_session_files", { session_id: "writer", dry_run: true });
    expect(preview.structuredContent).toMatchObject({ turn: 1, dry_run: true, files_changed: [file] });
    expect(await readFile(file, "utf8")).toBe("child's draft\n");

    const rewound = await call(client, "rewind_session_files", { session_id: "writer" });
    expect(rewound.isError).toBeFalsy();
    expect(rewound.structuredContent).toMatchObject({ dry_run: false, files_changed: [file] });
    expect(textOf(rewound)).toContain("restored");
    expect(await readFile(file, "utf8")).toBe("parent's text\n");

    const tooFar = await call(client, "rewind_session_files", { session_id: "writer", turn: 2 });
    expect(tooFar.isError).toBe(true);
    expect(textOf(tooFar)).toContain("1 finished turn");
  });
});
