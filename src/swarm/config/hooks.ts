// The hooks section of a swarm file: per event, a matcher and exactly one action (policy, command or supervisor).
import { z } from "zod";
import { HookPolicySchema } from "../../orchestrator/index.ts";
import { type HookEvent, HookEventSchema } from "../../protocol/index.ts";

/** The hook events a `policy` can decide on: it judges tool calls before they run. */
export const POLICY_EVENTS: readonly HookEvent[] = ["PreToolUse", "PreSkillShellCommand"];

export const PolicySchema = z
  .strictObject(HookPolicySchema.shape)
  .superRefine((policy, ctx) => {
    if (policy.deny_commands === undefined && policy.deny_tools === undefined && policy.allow_commands === undefined) {
      ctx.addIssue({ code: "custom", message: "a policy needs at least one of deny_commands, allow_commands or deny_tools" });
    }
  })
  .describe("A built-in rule set cadre applies itself, without starting a process.");
export type Policy = z.infer<typeof PolicySchema>;

const ACTIONS = ["policy", "command", "supervisor"] as const;

export const SwarmHookMatcherSchema = z
  .strictObject({
    matcher: z
      .string()
      .min(1)
      .optional()
      .describe('Which tools (or sources) this applies to, as Claude Code understands it: "Bash", "Write|Edit", "mcp__.*". Absent: all.'),
    policy: PolicySchema.optional(),
    command: z
      .string()
      .min(1)
      .optional()
      .describe("A shell command run per event with the hook input JSON on stdin (Claude Code's hook contract: exit 2 or a JSON decision blocks)."),
    supervisor: z.string().min(1).optional().describe("The name of an agent (under agents) that reads the event and decides allow or deny."),
    timeout_s: z.number().positive().optional().describe("How long the action may take, in seconds."),
    on_error: z.enum(["deny", "allow"]).default("deny").describe("What happens when the action fails or times out (default deny: fail closed)."),
  })
  .superRefine((matcher, ctx) => {
    const given = ACTIONS.filter((action) => matcher[action] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message:
          given.length === 0
            ? `needs an action: one of ${ACTIONS.join(", ")}`
            : `has ${given.join(" and ")}; give exactly one action per entry (split it into two entries)`,
      });
    }
  });
export type SwarmHookMatcher = z.infer<typeof SwarmHookMatcherSchema>;

export const HooksSchema = z
  .partialRecord(HookEventSchema, z.array(SwarmHookMatcherSchema))
  .describe("Hook event → entries, each with an optional matcher and exactly one action: policy, command or supervisor.");
export type Hooks = z.infer<typeof HooksSchema>;
