// The rehearsal script format: what the scripted model says, step by step, and how scripts are loaded.
import { z } from "zod";
import { CadreError } from "../errors.ts";
import { RecordedToolResultSchema, ReplyBlockSchema, SeenSchema } from "../protocol/index.ts";
import { parseYamlOrThrow } from "../util/yaml.ts";
import { RehearsalPlanWindowSchema } from "./plan-window.ts";

/**
 * The rehearsal script format: what the scripted model says, step by step.
 * Written by people in YAML, so field names are snake_case and most fields
 * are optional. Steps are numbered from 0: step n answers the request whose
 * conversation already holds n assistant messages.
 */

export const RehearsalToolUseSchema = z
  .looseObject({
    name: z.string().min(1).describe('The tool the model calls: "Bash", "Read", "Agent", "mcp__cadre__ask_peer", …'),
    input: z.record(z.string(), z.unknown()).default({}).describe("The tool's input; strings in it are templates ({{prompt}}, {{tool_result}}, …)."),
    id: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, "tool_use ids may hold only letters, digits, _ and -")
      .optional()
      .describe("The tool call's id (letters, digits, _ and -); made up, unique per server, when absent."),
  })
  .describe("A tool call the model makes; the CLI runs the tool and the next step sees its result.");

/**
 * Answers a step with an HTTP error in the Messages API's shape. Without
 * `times`, every attempt fails, so the turn fails (after the CLI's own
 * retries: a 400 is resent twice, a 429 or 5xx up to ten times). With
 * `times: n`, the first n attempts fail and then the step plays (a retry
 * that succeeds).
 */
export const RehearsalFailSchema = z
  .looseObject({
    status: z.number().int().min(400).max(599).describe("The HTTP status of the error: 400, 401, 429, 500, 529, …"),
    times: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("How many attempts of this step get the error before it plays normally; absent: every attempt, so the turn fails."),
    message: z.string().optional().describe("The error's message, which the CLI reports (default: says it is scripted)."),
  })
  .describe("Answer this step with an API error: the turn fails, or with `times`, recovers after that many failed attempts.");

/**
 * What a replayed step expects the request to carry (replies.jsonl's record
 * of what the model was given before it replied): a request that carries
 * something else has diverged from the run it replays.
 */
export const RehearsalExpectSchema = z
  .looseObject({
    prompt: SeenSchema.optional().describe("The user's words since the previous reply (a task's prompt), as a digest and an excerpt."),
    tool_results: z.array(RecordedToolResultSchema).optional().describe("The tool results sent back since the previous reply, in order."),
  })
  .describe("What the request this step answers must carry (a replay's recorded input): anything else is a divergence.");

/** What a step may say; one of these, or `fail`, makes a step. */
const ContentKeys = ["text", "long_text", "tool_use", "tool_uses", "content"] as const;

export const RehearsalStepSchema = z
  .looseObject({
    text: z.string().optional().describe("What the model says: a template ({{prompt}}, {{tool_result}}, {{message}}, {{script}}, {{step}})."),
    long_text: z.number().int().min(1).optional().describe("A text reply of exactly this many characters, in numbered lines (for large outputs)."),
    tool_use: RehearsalToolUseSchema.optional(),
    tool_uses: z.array(RehearsalToolUseSchema).min(1).optional().describe("Several tool calls in one reply (parallel tool use)."),
    content: z
      .array(ReplyBlockSchema)
      .min(1)
      .optional()
      .describe("The reply's content blocks exactly as given (text, tool_use, thinking): no placeholders are filled (a replay's recorded replies)."),
    expect: RehearsalExpectSchema.optional(),
    delay_ms: z.number().int().min(0).optional().describe("Wait this long, in milliseconds, before the reply (or the error) starts."),
    chunk_delay_ms: z.number().int().min(0).optional().describe("Stream the text one word at a time, with this pause in milliseconds between words."),
    fail: RehearsalFailSchema.optional(),
    plan_window: RehearsalPlanWindowSchema.optional().describe(
      "Answer as the API answers a subscription near (or past) its plan's window (the anthropic-ratelimit-unified-* headers).",
    ),
    stop_reason: z.string().min(1).optional().describe('The reply\'s stop_reason; default "tool_use" when the step calls tools, else "end_turn".'),
  })
  // Unknown keys pass (house rule), so a misspelt key would silently play an
  // empty reply; requiring some content catches most such typos.
  .refine((step) => step.fail !== undefined || ContentKeys.some((key) => step[key] !== undefined), {
    message: `a step needs at least one of ${ContentKeys.join(", ")}, or fail`,
  })
  .refine((step) => step.fail?.times === undefined || ContentKeys.some((key) => step[key] !== undefined), {
    message: `a step whose fail has times plays after those attempts: give it one of ${ContentKeys.join(", ")}`,
  })
  .refine((step) => step.tool_use === undefined || step.tool_uses === undefined, {
    message: "give either tool_use or tool_uses, not both",
  })
  .refine((step) => step.content === undefined || ContentKeys.every((key) => key === "content" || step[key] === undefined), {
    message: "content is the whole reply: give it alone, without text, long_text, tool_use or tool_uses",
  })
  .describe("One reply of the scripted model. Step n answers the request whose conversation already holds n replies of the model.");

export const RehearsalScriptSchema = z.array(RehearsalStepSchema).describe("What the scripted model says, step by step, numbered from 0.");

/** Script name → steps. The name is chosen by the URL path prefix /s/<name>. */
export const RehearsalScriptsSchema = z.record(z.string().min(1), RehearsalScriptSchema);

export type RehearsalExpect = z.infer<typeof RehearsalExpectSchema>;
export type RehearsalToolUse = z.infer<typeof RehearsalToolUseSchema>;
export type RehearsalFail = z.infer<typeof RehearsalFailSchema>;
export type RehearsalStep = z.infer<typeof RehearsalStepSchema>;
export type RehearsalScript = z.infer<typeof RehearsalScriptSchema>;
export type RehearsalScripts = z.infer<typeof RehearsalScriptsSchema>;
/** What callers may write: defaults (tool input, fail times) not yet applied. */
export type RehearsalScriptsInput = z.input<typeof RehearsalScriptsSchema>;
export type RehearsalScriptInput = z.input<typeof RehearsalScriptSchema>;

export class RehearsalScriptError extends CadreError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("REHEARSAL_SCRIPT_INVALID", message, options);
  }
}

/** One line per problem, each naming its path: `  review[1].tool_use.name: expected string`. */
function describeIssues(error: z.ZodError, root: string): string {
  return error.issues
    .map((issue) => {
      let path = root;
      for (const key of issue.path) {
        path += typeof key === "number" ? `[${key}]` : path === "" ? String(key) : `.${String(key)}`;
      }
      return `  ${path || "(top level)"}: ${issue.message}`;
    })
    .join("\n");
}

/**
 * Parses rehearsal scripts from YAML or JSON text (JSON is YAML) or from an
 * already-parsed object; errors name the path of every problem.
 */
export function loadRehearsalScripts(source: unknown): RehearsalScripts {
  let data: unknown = source;
  if (typeof source === "string") {
    try {
      data = parseYamlOrThrow(source);
    } catch (cause) {
      throw new RehearsalScriptError(`rehearsal scripts are not valid YAML or JSON: ${(cause as Error).message}`, { cause });
    }
  }
  return parseScripts(data);
}

export function parseScripts(data: unknown): RehearsalScripts {
  const parsed = RehearsalScriptsSchema.safeParse(data);
  if (!parsed.success) {
    throw new RehearsalScriptError(`invalid rehearsal scripts:\n${describeIssues(parsed.error, "")}`, { cause: parsed.error });
  }
  return parsed.data;
}

export function parseScript(name: string, steps: unknown): RehearsalScript {
  const parsed = RehearsalScriptSchema.safeParse(steps);
  if (!parsed.success) {
    throw new RehearsalScriptError(`invalid rehearsal script "${name}":\n${describeIssues(parsed.error, name)}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}
