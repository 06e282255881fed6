/**
 * Placeholders in a rehearsal step ({{prompt}}, {{task}}, {{tool_result}}, {{tool_result /PATTERN/}},
 * {{message}}, {{step}}, {{script}}) and how their values are read from a Messages API request.
 */

export interface TemplateContext {
  /** The last text the user typed (system reminders left out). */
  prompt: string;
  /**
   * The prompt without a harness's frame: when its first line is a bracketed
   * frame and every later line is indented by two spaces (how Claude Code and
   * cadre hand a workflow script's computed prompt to an agent), those lines
   * unindented; otherwise the prompt.
   */
  task: string;
  /** The text of the tool results in the last user message, joined by newlines. */
  tool_result: string;
  /** The latest message the user sent while the turn ran (cadre send), as the CLI framed it for the model; "" when none. */
  message: string;
  step: number;
  script: string;
}

/** A message as the Messages API carries it; content is a string or blocks. */
export interface RequestMessage {
  role: string;
  content: unknown;
}

const PLACEHOLDER = /\{\{\s*(prompt|task|tool_result|message|step|script)\s*\}\}/g;
// What a scripted model picks out of what it was given, e.g. a run id for its next tool call: {{tool_result /wf_[\w-]+/}}.
const PICKED = /\{\{\s*tool_result\s+\/(.+?)\/\s*\}\}/g;
// How the CLI (2.1.332) hands the model a message written on stdin while a turn runs: the message, then a paragraph of its own.
const MID_TURN_MESSAGE = /The user sent a new message while you were working:\n([\s\S]*?)(?:\n\nThis is how Claude Code surfaces|$)/;
// The CLI wraps injected context (git attribution, reminders) in these tags
// inside user messages; they are not what the user said.
const SYSTEM_REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/g;
// A local command such as /clear leaves its record before the user's next words (CLI 2.1.330).
const LOCAL_COMMAND = /<(local-command-caveat|command-name|command-message|command-args|local-command-stdout|local-command-stderr)>[\s\S]*?<\/\1>/g;
// After an interrupt the CLI puts this marker before the user's next words.
const INTERRUPT_MARKER = /^\[Request interrupted by user[^\]]*\]$/;

/** The task inside a framed prompt (see TemplateContext.task). */
function unframed(prompt: string): string {
  const [first, ...rest] = prompt.split("\n");
  if (!first?.startsWith("[") || rest.length === 0 || !rest.every((line) => line.startsWith("  ") || line === "")) return prompt;
  return rest.map((line) => line.slice(2)).join("\n");
}

/** Unknown placeholders (and a pattern that is not a regular expression) stay as written, so a typo shows up in the reply. */
export function renderTemplate(text: string, context: TemplateContext): string {
  return text
    .replace(PICKED, (written, pattern: string) => picked(context.tool_result, pattern) ?? written)
    .replace(PLACEHOLDER, (_match, key: keyof TemplateContext) => String(context[key]));
}

/** The first match of `pattern` in the tool results (its first group, if it has one); "" when none; undefined for a pattern that cannot be read. */
function picked(toolResult: string, pattern: string): string | undefined {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern);
  } catch {
    return undefined;
  }
  const found = regex.exec(toolResult);
  return found === null ? "" : (found[1] ?? found[0]);
}

/** Renders every string inside a JSON-like value (tool inputs). */
export function renderDeep(value: unknown, context: TemplateContext): unknown {
  if (typeof value === "string") return renderTemplate(value, context);
  if (Array.isArray(value)) return value.map((item) => renderDeep(item, context));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderDeep(item, context)]));
  }
  return value;
}

function blocks(content: unknown): Record<string, unknown>[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.filter((block): block is Record<string, unknown> => block !== null && typeof block === "object");
}

/** Text of a tool_result's content: a string or text blocks (images are skipped). */
function toolResultText(content: unknown): string {
  return blocks(content)
    .filter((block) => block.type === "text" && typeof block.text === "string")
    .map((block) => block.text as string)
    .join("\n");
}

/** The user's words in a user message, or "" when it holds only reminders, markers and tool results. */
export function userText(message: RequestMessage): string {
  return blocks(message.content)
    .filter((block) => block.type === "text" && typeof block.text === "string")
    .map((block) => (block.text as string).replace(SYSTEM_REMINDER, "").replace(LOCAL_COMMAND, "").trim())
    .filter((text) => text !== "" && !INTERRUPT_MARKER.test(text))
    .join("\n");
}

/**
 * Reads {{prompt}} and {{tool_result}} from the conversation. The CLI also
 * sends messages with role "system" (environment context) after the user's
 * message, so "last user message" means the last one whose role is user.
 */
export function templateContext(messages: readonly RequestMessage[], step: number, script: string): TemplateContext {
  const userMessages = messages.filter((message) => message.role === "user");
  let prompt = "";
  for (let i = userMessages.length - 1; i >= 0 && prompt === ""; i--) {
    prompt = userText(userMessages[i]!);
  }
  const last = userMessages.at(-1);
  const toolResult = last
    ? blocks(last.content)
        .filter((block) => block.type === "tool_result")
        .map((block) => toolResultText(block.content))
        .join("\n")
    : "";
  return { prompt, task: unframed(prompt), tool_result: toolResult, message: midTurnMessage(messages), step, script };
}

/** The latest message sent into a running turn, in whichever message (of any role) the CLI put it. */
function midTurnMessage(messages: readonly RequestMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    for (const block of blocks(messages[i]!.content).reverse()) {
      const found = typeof block.text === "string" ? MID_TURN_MESSAGE.exec(block.text) : null;
      if (found) return found[1]!.trim();
    }
  }
  return "";
}
