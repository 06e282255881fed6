import { z } from "zod";
import { CadreError } from "../errors.ts";
import { RecordedToolResultSchema, ReplyBlockSchema, SeenSchema } from "../protocol/index.ts";
import { parseYamlOrThrow } from "../util/yaml.ts";

/**
 * The rehearsal script format: what the scripted model says, step by step.
 * Written by people in YAML, so field names are snake_case and most fields
 * are optional. Steps are numbered from 0: step n answers the request whose
 * conversation already holds n assistant messages.
 */

export const RehearsalToolUseSchema = z.looseObject({
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()).default({}),
  /** Generated (unique per server) when absent. */
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "tool_use ids may hold only letters, digits, _ and -")
    .optional(),
});

/**
 * Answers the first `times` attempts of a step with an HTTP error. The CLI
 * retries 429/5xx itself (up to 10 times) but resends a 400 only twice, so
 * `status: 400, times: 3` or more is what makes a turn fail.
 */
export const RehearsalFailSchema = z.looseObject({
  status: z.number().int().min(400).max(599),
  /** How many attempts of this step get the error before it plays normally. */
  times: z.number().int().min(1).default(1),
  message: z.string().optional(),
});

/**
 * What a replayed step expects the request to carry (replies.jsonl's record
 * of what the model was given before it replied): a request that carries
 * something else has diverged from the run it replays.
 */
export const RehearsalExpectSchema = z.looseObject({
  /** The user's words since the previous reply (a task's prompt). */
  prompt: SeenSchema.optional(),
  /** The tool results sent back since the previous reply, in order. */
  tool_results: z.array(RecordedToolResultSchema).optional(),
});

const ContentKeys = ["text", "long_text", "tool_use", "tool_uses", "content"] as const;

export const RehearsalStepSchema = z
  .looseObject({
    text: z.string().optional(),
    /** A text reply of exactly this many characters (for large-output tests). */
    long_text: z.number().int().min(1).optional(),
    tool_use: RehearsalToolUseSchema.optional(),
    /** Several tool calls in one reply (parallel tool use). */
    tool_uses: z.array(RehearsalToolUseSchema).min(1).optional(),
    /** The reply's content blocks exactly as given (text, tool_use, thinking): no placeholders are filled (a replay's recorded replies). */
    content: z.array(ReplyBlockSchema).min(1).optional(),
    expect: RehearsalExpectSchema.optional(),
    /** Wait this long before the reply starts. */
    delay_ms: z.number().int().min(0).optional(),
    /** Stream text one word at a time with this pause between deltas. */
    chunk_delay_ms: z.number().int().min(0).optional(),
    fail: RehearsalFailSchema.optional(),
    /** Defaults to tool_use when the step calls tools, else end_turn. */
    stop_reason: z.string().min(1).optional(),
  })
  // Unknown keys pass (house rule), so a misspelt key would silently play an
  // empty reply; requiring some content catches most such typos.
  .refine((step) => ContentKeys.some((key) => step[key] !== undefined), {
    message: `a step needs at least one of ${ContentKeys.join(", ")}`,
  })
  .refine((step) => step.tool_use === undefined || step.tool_uses === undefined, {
    message: "give either tool_use or tool_uses, not both",
  })
  .refine((step) => step.content === undefined || ContentKeys.every((key) => key === "content" || step[key] === undefined), {
    message: "content is the whole reply: give it alone, without text, long_text, tool_use or tool_uses",
  });

export const RehearsalScriptSchema = z.array(RehearsalStepSchema);

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
