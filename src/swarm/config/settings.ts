// The worker settings a swarm file may give on defaults, an agent or a task: MCP servers, permissions, env, worktree.
import { z } from "zod";

/**
 * The worker settings a swarm file may give on `defaults`, an agent or a task
 * beyond model and prompt: the tools and directories a worker reaches, its
 * environment, the shape of its answer, and whether it works in its own git
 * worktree. Spelt the way Claude Code spells them where it has a spelling
 * (`.mcp.json` servers, permission rules).
 */

const ServerName = z.string().regex(/^[A-Za-z0-9_-]+$/, "a server name may hold only letters, digits, _ and -");

export const McpServerEntrySchema = z
  .strictObject({
    type: z.enum(["stdio", "http", "sse"]).optional().describe('"stdio" (the default when command is given), "http" or "sse".'),
    command: z.string().min(1).optional().describe("stdio: the program to start (in the worker's directory)."),
    args: z.array(z.string()).optional().describe("stdio: its arguments."),
    env: z.record(z.string(), z.string()).optional().describe("stdio: variables set for it."),
    url: z.url().optional().describe("http/sse: the server's URL."),
    headers: z.record(z.string(), z.string()).optional().describe("http/sse: request headers (e.g. Authorization)."),
  })
  .superRefine((server, ctx) => {
    const remote = server.type === "http" || server.type === "sse";
    if (!remote && server.command === undefined && server.url !== undefined) {
      ctx.addIssue({ code: "custom", path: ["command"], message: 'a stdio server needs command (give type: "http" for a server at a URL)' });
      return;
    }
    const misplaced = (remote ? (["command", "args", "env"] as const) : (["url", "headers"] as const)).filter((key) => server[key] !== undefined);
    for (const key of misplaced) {
      ctx.addIssue({ code: "custom", path: [key], message: `not a key of ${remote ? `an ${server.type}` : "a stdio"} server` });
    }
    if (remote && server.url === undefined) ctx.addIssue({ code: "custom", path: ["url"], message: `an ${server.type} server needs url` });
    if (!remote && server.command === undefined) ctx.addIssue({ code: "custom", path: ["command"], message: "a stdio server needs command" });
  })
  .describe("One MCP server, as in Claude Code's .mcp.json: { command, args, env } or { type: http, url, headers }.");
export type McpServerEntry = z.infer<typeof McpServerEntrySchema>;

export const McpServersSchema = z
  .record(ServerName, McpServerEntrySchema)
  .describe("MCP servers the worker's Claude connects to, by name (Claude Code's .mcp.json `mcpServers`). Its tools are mcp__<name>__<tool>.");

// `Tool` or `Tool(specifier)`: Bash(git diff:*), Read(./src/**), WebFetch(domain:example.com), mcp__github.
const RULE = /^[^\s()]+(\(.*\))?$/;
const Rule = z.string().regex(RULE, 'a permission rule is Tool or Tool(specifier), e.g. "Bash(git diff:*)" or "Read(./src/**)"');

export const PermissionsSchema = z
  .strictObject({
    allow: z.array(Rule).optional().describe('Tool calls that run without asking, e.g. ["Bash(git diff:*)", "Edit(./src/**)"].'),
    deny: z.array(Rule).optional().describe('Tool calls that never run, e.g. ["Bash(rm:*)", "Read(./.env)"]. A deny beats any allow.'),
  })
  .describe(
    "Permission rules in Claude Code's syntax. Every layer adds to them (defaults, agent, task); a call no rule allows and no mode lets through is denied, since nobody is there to ask.",
  );
export type Permissions = z.infer<typeof PermissionsSchema>;

export const EnvSchema = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "not a variable name"), z.union([z.string(), z.number(), z.boolean()]))
  .describe("Environment variables for the worker (and the tools and MCP servers it starts); layers merge, a higher one wins per name.");

export const AddDirsSchema = z
  .array(z.string().min(1))
  .describe("More directories the worker may read and edit (--add-dir), relative to this file; layers add up.");

export const WorktreeSchema = z
  .union([
    z.boolean(),
    z.strictObject({
      base: z
        .string()
        .min(1)
        .optional()
        .describe(
          'The commit, branch or tag to start from (default: the commit checked out when the run started), e.g. "{{results.<task>.branch}}".',
        ),
    }),
  ])
  .describe(
    "Run the task in its own git worktree, on a new branch cadre/<run-id>/<task>; what it changed is committed there when it ends, and the worktree removed. false turns off one set by a lower layer.",
  );
export type WorktreeSetting = z.infer<typeof WorktreeSchema>;

export const OutputSchemaSchema = z
  .record(z.string(), z.unknown())
  .superRefine((schema, ctx) => {
    if (schema.type !== "object") {
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message: "the output schema must describe an object (type: object): the model answers through a tool, whose input is an object",
      });
    }
  })
  .describe(
    "A JSON Schema (type: object) the worker's final answer must match. It lands in summary.json as structured_output; later tasks read fields of it as {{results.<task>.structured.<field>}}.",
  );

/** The keys defaults, agents and tasks all take. */
export const reachKeys = {
  mcp_servers: McpServersSchema.optional(),
  permissions: PermissionsSchema.optional(),
  env: EnvSchema.optional(),
  add_dirs: AddDirsSchema.optional(),
  worktree: WorktreeSchema.optional(),
};
