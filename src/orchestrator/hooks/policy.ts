// A built-in hook policy: denied and allowed commands and tools, decided without starting a process.
import { z } from "zod";
import type { HookCallback } from "../../worker/index.ts";
import { HookPolicyError } from "./errors.ts";
import { denyResult, noOpinion } from "./results.ts";

const RegexSchema = z
  .string()
  .min(1)
  .superRefine((pattern, ctx) => {
    try {
      new RegExp(pattern);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: `not a valid regular expression: ${(error as Error).message}` });
    }
  });

/** The built-in rule set of a `policy` hook action (config key `policy`), checked where it enters. */
export const HookPolicySchema = z.object({
  deny_commands: z
    .array(RegexSchema)
    .optional()
    .describe("Bash commands matching any of these regular expressions (JavaScript syntax, unanchored) are denied."),
  allow_commands: z
    .array(RegexSchema)
    .optional()
    .describe("An allow-list: when given, every Bash command must match one of these, or it is denied. deny_commands still wins."),
  deny_tools: z
    .array(z.string().min(1))
    .optional()
    .describe("Tool names that are denied outright (e.g. WebFetch, mcp__github__*), as Claude Code reads a matcher: names, A|B lists, or patterns."),
});
export type HookPolicy = z.infer<typeof HookPolicySchema>;

interface Rule {
  /** Names the rule in a denial, e.g. `deny_commands[0] "rm\s"`. */
  label: string;
  test: (value: string) => boolean;
}

/** A plain name or "A|B" list: exact names, as in Claude Code's matchers. */
const NAME_LIST = /^[A-Za-z0-9_|-]+$/;

function label(list: string, index: number, pattern: string): string {
  return `${list}[${index}] ${JSON.stringify(pattern)}`;
}

function compile(list: string, index: number, pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (cause) {
    throw new HookPolicyError(`${list}[${index}]`, pattern, cause);
  }
}

function regexRules(list: string, patterns: readonly string[] | undefined): Rule[] {
  return (patterns ?? []).map((pattern, index) => {
    const regex = compile(list, index, pattern);
    return { label: label(list, index, pattern), test: (value) => regex.test(value) };
  });
}

function toolRules(patterns: readonly string[] | undefined): Rule[] {
  return (patterns ?? []).map((pattern, index) => {
    if (pattern === "*") return { label: label("deny_tools", index, pattern), test: () => true };
    if (NAME_LIST.test(pattern)) {
      const names = new Set(pattern.split("|").filter((name) => name !== ""));
      return { label: label("deny_tools", index, pattern), test: (tool) => names.has(tool) };
    }
    const regex = compile("deny_tools", index, pattern);
    return { label: label("deny_tools", index, pattern), test: (tool) => regex.test(tool) };
  });
}

/**
 * A PreToolUse hook that applies a policy without starting a process: it
 * denies a call that a rule forbids, naming the rule in the reason the model
 * reads, and otherwise has no opinion, so the normal permission flow decides.
 * Every pattern is compiled here; an invalid one throws HookPolicyError.
 */
export function policyHook(policy: { readonly [K in keyof HookPolicy]?: readonly string[] }): HookCallback {
  const denyTools = toolRules(policy.deny_tools);
  const denyCommands = regexRules("deny_commands", policy.deny_commands);
  const allowCommands = policy.allow_commands === undefined ? undefined : regexRules("allow_commands", policy.allow_commands);

  return (input) => {
    const event = input.hook_event_name;
    const tool = input.tool_name;
    // A skill's shell line (PreSkillShellCommand) is a Bash command like any other.
    if ((event !== "PreToolUse" && event !== "PreSkillShellCommand") || typeof tool !== "string") return noOpinion();
    const deniedTool = denyTools.find((rule) => rule.test(tool));
    if (deniedTool) return denyResult(event, `cadre policy denies the tool ${tool} (rule ${deniedTool.label})`);

    const toolInput = input.tool_input as { command?: unknown } | undefined;
    if (tool !== "Bash" || typeof toolInput?.command !== "string") return noOpinion();
    const command = toolInput.command;
    const deniedCommand = denyCommands.find((rule) => rule.test(command));
    if (deniedCommand) return denyResult(event, `cadre policy denies this Bash command (rule ${deniedCommand.label})`);
    if (allowCommands && !allowCommands.some((rule) => rule.test(command))) {
      const patterns = allowCommands.map((rule) => rule.label).join(", ");
      return denyResult(event, `cadre policy denies this Bash command: it matches no allow_commands pattern (${patterns || "none given"})`);
    }
    return noOpinion();
  };
}
