// The zod schema of a swarm file as people write it: the one source of its types, its checks and its JSON Schema.
import { z } from "zod";
import { DEFAULT_CONCURRENCY, DEFAULT_RETRIES, MAX_AUTO_CONCURRENCY } from "../../orchestrator/index.ts";
import { RehearsalScriptSchema } from "../../rehearsal/index.ts";
import { SwarmPermissionModeSchema } from "../agents/definition.ts";
import { controlKeys } from "./controls.ts";
import { HooksSchema } from "./hooks.ts";
import { OutputSchemaSchema, reachKeys } from "./settings.ts";

/**
 * The swarm config as written (YAML or JSON). Objects are strict: a misspelt
 * key is an error with a suggestion, not a silently ignored setting. Strings
 * may use ${VAR} and ${VAR:-default}; relative paths are relative to the config
 * file. This schema also generates schema/swarm.schema.json for editors.
 */

const ToolNames = z.array(z.string().min(1));
const Seconds = z.number().positive();
const Retries = z
  .int()
  .min(0)
  .describe(
    `Further attempts after a transient failure (rate limit, overload, a worker that died before any tool ran); default ${DEFAULT_RETRIES}, as in the library.`,
  );

/** The most tasks a run's agents may post (post_task) unless the file says otherwise. */
export const DEFAULT_MAX_POSTED_TASKS = 100;
/** How deep posts may nest (a task posted by a posted task is at depth 2) unless the file says otherwise. */
export const DEFAULT_MAX_POST_DEPTH = 3;

/** The key defaults, agents and tasks take to give their workers post_task, list_tasks and wait_tasks. */
const postKeys = {
  post_tasks: z
    .boolean()
    .optional()
    .describe(
      "Give the workers post_task, list_tasks and wait_tasks on cadre's MCP server: they add tasks to this run, which run as its other tasks do (limits, budgets, retries, record). Default false.",
    ),
};

export const ReuseSchema = z
  .union([z.boolean(), z.int().positive()])
  .describe(
    "Let a finished task's claude process serve the next task with identical worker settings, after a reset to a fresh session " +
      "(saves the process start); a number caps the tasks per process (true: 50). A process whose task could leave state behind is ended instead. " +
      "Default: true when the run's concurrency is chosen by cadre (no `concurrency`), else false.",
  );

export const DefaultsSchema = z
  .strictObject({
    model: z.string().min(1).optional().describe("Model alias or id for every worker unless its task or agent says otherwise."),
    permission_mode: SwarmPermissionModeSchema.optional().describe(
      "How the CLI treats a tool call no rule allows: default (denied, as nobody is there to ask), acceptEdits, plan, dontAsk or bypassPermissions.",
    ),
    append_system_prompt: z.string().optional().describe("Text appended to every worker's system prompt."),
    allowed_tools: ToolNames.optional().describe('Tools that run without asking, e.g. ["Read", "Bash(git diff:*)"].'),
    disallowed_tools: ToolNames.optional().describe("Tools no worker may use."),
    cwd: z.string().min(1).optional().describe("Working directory of the workers, relative to this file; default: this file's directory."),
    max_turns: z.int().positive().optional().describe("Model turns per task; default: no limit."),
    timeout_s: Seconds.optional().describe("Time limit of one task, in seconds; default: none, as in the library."),
    retries: Retries.optional(),
    fallback_model: z.string().min(1).optional().describe("Models to fall back to, comma-separated in order, when the main one is overloaded."),
    betas: z.array(z.string().min(1)).optional().describe("API beta headers (API-key users only; the CLI sends only betas it knows)."),
    plugin_dirs: z.array(z.string().min(1)).optional().describe("Claude Code plugin directories every worker loads, relative to this file."),
    ...reachKeys,
    ...controlKeys,
    ...postKeys,
    reuse: ReuseSchema.optional(),
  })
  .describe("Settings every task starts from.");

const BudgetUsd = z.number().positive();

const AgentFile = z.string().min(1).describe("Path to a Markdown agent file (Claude Code's subagent format), relative to this file.");

/** What Claude Code knows of an agent: the keys of a subagent, and of every agent. */
const definitionKeys = {
  description: z.string().min(1).describe("What the agent is for (shown by `cadre agents`, and to peers)."),
  prompt: z.string().min(1).describe("The agent's system prompt."),
  tools: ToolNames.optional().describe("The tools it may use; absent means all, [] none."),
  disallowed_tools: ToolNames.optional().describe("Tools its workers may not use."),
  model: z.string().min(1).optional().describe('Model alias or id; "inherit" or absent means the default model.'),
  permission_mode: SwarmPermissionModeSchema.optional().describe(
    "How the CLI treats a tool call no rule allows: default (denied, as nobody is there to ask), acceptEdits, plan, dontAsk or bypassPermissions.",
  ),
  max_turns: z.int().positive().optional().describe("Model turns per task."),
};

export const SubagentEntrySchema = z.union([
  AgentFile,
  z.strictObject(definitionKeys).describe("A subagent defined in place, as in a Claude Code agent file's front matter and body."),
]);

export const InlineAgentSchema = z
  .strictObject({
    ...definitionKeys,
    description: definitionKeys.description.optional(),
    prompt: definitionKeys.prompt.optional(),
    file: AgentFile.optional().describe("Take the definition from this agent file; the keys given here override it."),
    max_concurrency: z.int().positive().optional().describe("At most this many of the agent's tasks run at once (within the global concurrency)."),
    budget_usd: BudgetUsd.optional().describe(
      "The most the agent may spend, all its tasks and sessions together (peers, supervisors and spawned children included): reached, its work stops within the turn in flight and none of it starts again.",
    ),
    subagents: z
      .record(z.string().min(1), SubagentEntrySchema)
      .optional()
      .describe("Agents the agent's Claude may delegate to with its Agent tool: name → inline definition or path to an agent file."),
    output_schema: OutputSchemaSchema.optional(),
    ...reachKeys,
    ...controlKeys,
    ...postKeys,
    reuse: ReuseSchema.optional().describe("Reuse this agent's processes across its tasks (see defaults.reuse); wins over defaults.reuse."),
  })
  .superRefine((agent, ctx) => {
    if (agent.file !== undefined && agent.prompt !== undefined) {
      ctx.addIssue({ code: "custom", path: ["prompt"], message: "give prompt or file, not both (the file's body is the prompt)" });
    } else if (agent.prompt !== undefined && agent.description === undefined) {
      ctx.addIssue({ code: "custom", path: ["description"], message: "required key is missing", input: undefined });
    }
  })
  .describe(
    "An agent defined in place (description and prompt), from a file (file), or, with neither, the agent of this name that `cadre agents` lists; the other keys set how its workers run.",
  );

export type InlineAgent = z.infer<typeof InlineAgentSchema>;

export const AgentEntrySchema = z.union([AgentFile, InlineAgentSchema]);
export type SubagentEntry = z.infer<typeof SubagentEntrySchema>;

/** The most copies a for_each over a result makes unless the task says otherwise. */
export const DEFAULT_MAX_ITEMS = 100;

export const ForEachItemSchema = z.union([z.string(), z.number(), z.record(z.string(), z.unknown())]);
export type ForEachItem = z.infer<typeof ForEachItemSchema>;

export const TaskSchema = z.strictObject({
  name: z.string().min(1).describe("Unique task name; with for_each, use {{item}} or {{item.field}} to tell the copies apart."),
  agent: z.string().min(1).optional().describe("An agent defined under agents; absent: a plain worker with the defaults."),
  prompt: z
    .string()
    .min(1)
    .describe("The task's first user message. {{item}} / {{item.field}} with for_each; {{results.<task>}} for a dependency's result."),
  for_each: z
    .union([
      z.array(ForEachItemSchema).min(1),
      z
        .string()
        .regex(/^\s*\{\{\s*results\.[^{}]+\}\}\s*$/, 'a list, or one "{{results.<task>.structured.<field>}}"')
        .describe("A dependency's result that is a list, e.g. {{results.plan.structured.files}}: one copy per element, made once it has succeeded."),
    ])
    .optional()
    .describe("Run one copy of this task per item (strings, numbers or objects), listed here or read from a dependency's result."),
  depends_on: z
    .array(z.string().min(1))
    .optional()
    .describe("Tasks that must finish first. Naming a for_each task as written (with {{item}}) means all of its copies."),
  max_items: z
    .int()
    .positive()
    .optional()
    .describe(`With for_each from a result: the most copies it may make (default ${DEFAULT_MAX_ITEMS}); a longer list fails the task.`),
  model: z.string().min(1).optional().describe("Model alias or id for this task; wins over its agent's and the defaults'."),
  cwd: z.string().min(1).optional().describe("Working directory, relative to this file."),
  timeout_s: Seconds.optional().describe("Time limit of this task, in seconds (its run, not its wait for a slot); wins over defaults.timeout_s."),
  retries: Retries.optional(),
  priority: z.int().default(0).describe("Higher runs first among tasks that are ready."),
  budget_usd: BudgetUsd.optional().describe(
    "The most this task may spend, all its attempts (and a loop's rounds) together: reached, it stops within the turn in flight. Each for_each copy has its own.",
  ),
  when: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Run only if this condition (CEL) holds once the dependencies have ended, e.g. results.triage.structured.kind == "bug"; false skips the task. ' +
        "It reads results.<task>.status, .text, .structured…, .branch, .commit of its dependencies, and success(), failure(), always(), cancelled(). " +
        "Without one of those, every dependency must also have succeeded; absent: success().",
    ),
  output_schema: OutputSchemaSchema.optional(),
  ...reachKeys,
  ...controlKeys,
  ...postKeys,
});
export type TaskConfig = z.infer<typeof TaskSchema>;

export const LoopSchema = z
  .strictObject({
    name: z.string().min(1).optional().describe("The loop's name in the record and the views; default: its tasks' names joined by +."),
    tasks: z.array(z.string().min(1)).min(1).describe("The tasks (by name) that run again each round, in their dependency order."),
    until: z.string().min(1).describe("A CEL expression over this round's results (results.<task>…); the loop ends, succeeded, when it holds."),
    max_rounds: z
      .int()
      .positive()
      .max(100)
      .describe("The most rounds it runs; reached without `until` holding, its tasks end failed (LOOP_MAX_ROUNDS)."),
    fresh: z
      .union([z.boolean(), z.array(z.string().min(1))])
      .optional()
      .describe(
        "true: each round starts new claude sessions; a list: those tasks do (a reviewer that should judge each draft afresh). Default false: each task continues its own session of the round before.",
      ),
    next_prompts: z
      .record(z.string().min(1), z.string().min(1))
      .optional()
      .describe("Task name → the prompt it gets from round 2 on (default: its own prompt); {{previous.<task>…}} reads the round before."),
  })
  .describe("Tasks that repeat, each round seeing the one before ({{previous.<task>}}), until a condition holds or max_rounds is reached.");
export type LoopConfig = z.infer<typeof LoopSchema>;

export const SwarmConfigSchema = z
  .strictObject({
    $schema: z.string().optional().describe("The JSON Schema this file follows (for editors)."),
    name: z.string().min(1).optional().describe("The swarm's name; default: the config file's name."),
    concurrency: z
      .int()
      .positive()
      .optional()
      .describe(
        `How many workers may run at once (--concurrency overrides). Default: cadre chooses, from the machine's cores (as many to start), its free memory and how much of each turn waits on the model (more workers for work that waits, up to ${MAX_AUTO_CONCURRENCY}), and reuses finished workers for the next task of the same settings unless \`reuse\` says otherwise. A distributed run's default is ${DEFAULT_CONCURRENCY}.`,
      ),
    budget_usd: BudgetUsd.optional().describe("Stop starting tasks, and interrupt running ones, once the swarm has spent this much."),
    budget_forecast: z
      .boolean()
      .optional()
      .describe(
        "Default true: before a task starts, what is left of its budgets is compared with the median cost of its agent's succeeded tasks, and a task that plainly cannot finish is not started (skipped, saying so). false: start it anyway.",
      ),
    plan_usage: z
      .strictObject({
        pause_at: z
          .number()
          .min(1)
          .max(100)
          .describe("From this percent of a subscription's plan window (5-hour, 7-day), no task starts until the window resets."),
      })
      .optional()
      .describe(
        "A subscription run (claude.ai login) reads the plan's windows as the CLI reports them; a refused turn always waits for the reset. API-key runs are not affected.",
      ),
    cache_stagger: z
      .boolean()
      .optional()
      .describe(
        "Default true: of tasks whose workers share a prompt prefix (same agent, model, tools, directory), one sends its first prompt at once and the others when its response begins, so they read the prefix from the API's cache instead of each writing it. false: all at once.",
      ),
    peer_tools: z
      .boolean()
      .optional()
      .describe(
        "The built-in `cadre` MCP server (list_peers, ask_peer, tell_peer, read_inbox, spawn_worker). Default: only the workers of an agent that `connections` lets reach another agent (with no `connections`, any agent when the swarm has two or more). true: every worker; false: none.",
      ),
    max_posted_tasks: z
      .int()
      .min(0)
      .optional()
      .describe(
        `The most tasks the run's agents may post (post_task), all posters together; a post past it is refused to the model. Default ${DEFAULT_MAX_POSTED_TASKS}.`,
      ),
    max_post_depth: z
      .int()
      .positive()
      .optional()
      .describe(
        `How deep posts may nest: a task posted by a file's task is at depth 1, one it posts at 2; a post deeper is refused to the model. Default ${DEFAULT_MAX_POST_DEPTH}.`,
      ),
    session_persistence: z
      .boolean()
      .default(true)
      .describe("false: workers write no session files under ~/.claude/projects (their sessions cannot be resumed)."),
    defaults: DefaultsSchema.optional(),
    agents: z
      .record(z.string().min(1), AgentEntrySchema)
      .optional()
      .describe("Agent name → inline definition or path to an agent file. Agents `cadre agents` lists need no entry to be used by name."),
    tasks: z.array(TaskSchema).min(1).describe("What to do; each task runs in its own worker."),
    loops: z.array(LoopSchema).optional().describe("Groups of tasks that run in rounds until a condition holds."),
    hooks: HooksSchema.optional(),
    keep_worktrees: z
      .boolean()
      .optional()
      .describe("Keep each task's git worktree after it ends (default false: only its branch stays). summary.json says where each one is."),
    connections: z
      .record(z.string().min(1), z.array(z.string().min(1)))
      .optional()
      .describe("Agent name → the agents its workers may reach with ask_peer / tell_peer; default: every agent may reach every other."),
    rehearsal: z
      .record(z.string().min(1), RehearsalScriptSchema)
      .optional()
      .describe(
        'Task name → script the scripted model plays for it under --rehearse (a for_each task as written covers all copies); "<task>/child" for the workers it spawns, "peer:<agent>" for the agent\'s ask_peer answers, "supervisor:<agent>" for its hook decisions.',
      ),
  })
  .meta({ title: "cadre swarm config", description: "A swarm for `cadre run`: agents, tasks, hooks and who may talk to whom." });
export type SwarmConfig = z.infer<typeof SwarmConfigSchema>;
