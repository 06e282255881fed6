// rewind_session_files: restores the files a child changed to how they were before one of its turns.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { SessionBusyError } from "../errors.ts";
import { ok, SessionIdSchema, type ToolContext } from "./common.ts";

export const RewindResultSchema = z.object({
  session_id: z.string(),
  turn: z.number().describe("the files are as they were when this turn began"),
  dry_run: z.boolean(),
  files_changed: z.array(z.string()).describe("the files the rewind changes (or, on a dry run, would change)"),
  insertions: z.number().optional(),
  deletions: z.number().optional(),
});
export type RewindResult = z.infer<typeof RewindResultSchema>;

function renderRewind(result: RewindResult): string {
  const files = result.files_changed.length === 0 ? "no files" : result.files_changed.join(", ");
  const verb = result.dry_run ? "would restore" : "restored";
  return `session ${result.session_id}: ${verb} ${files} to their state before turn ${result.turn}`;
}

/** rewind_session_files: undo a child's file edits (children run with file checkpoints). */
export function registerFileTools(server: McpServer, context: ToolContext): void {
  const { registry, owner } = context;
  server.registerTool(
    "rewind_session_files",
    {
      title: "Undo a child's file edits",
      description:
        "Restore the files a child session edited to how they were when one of its turns began: turn 1 undoes every edit the child made, " +
        "turn N the edits of turn N and later. The conversation is kept. Use dry_run to see which files would change.",
      inputSchema: {
        session_id: SessionIdSchema,
        turn: z.int().min(1).default(1).describe("1 = before the child's first turn (the default); see turns in get_session."),
        dry_run: z.boolean().default(false),
      },
      outputSchema: RewindResultSchema,
      annotations: { destructiveHint: true },
    },
    async ({ session_id, turn, dry_run }) => {
      const session = registry.find(owner, session_id);
      // Rewinding under a running turn would race the child's own edits.
      if (session.busy) throw new SessionBusyError(session.id, session.status);
      // A real rewind reports no files: the dry run before it says which ones it restores.
      const answer = await session.session.rewindFiles(turn, { dryRun: true });
      if (!dry_run) await session.session.rewindFiles(turn);
      const result: RewindResult = {
        session_id: session.id,
        turn,
        dry_run,
        files_changed: answer.filesChanged ?? [],
        ...(answer.insertions !== undefined && { insertions: answer.insertions }),
        ...(answer.deletions !== undefined && { deletions: answer.deletions }),
      };
      return ok(result, renderRewind(result));
    },
  );
}
