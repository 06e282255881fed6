// The scripted replies `cadre mcp --rehearse` plays when it is given no scripts: every child echoes its prompt.
import type { RehearsalScripts } from "../rehearsal/index.ts";

/** Queries one child can take before its script runs out (the scripted model then answers with an error that says so). */
const DEFAULT_STEPS = 100;

/** What a child without a script of its own answers each prompt. */
export const DEFAULT_REPLY = 'Scripted reply to "{{prompt}}" (cadre mcp --rehearse; --scripts FILE gives your own).';

/**
 * One script whose name is a placeholder, so that it stands for every session name (as
 * "fix-{{item}}" stands for "fix-a.ts"): whatever a parent names a child, it answers.
 */
export function defaultReplies(): RehearsalScripts {
  return { "{{session}}": Array.from({ length: DEFAULT_STEPS }, () => ({ text: DEFAULT_REPLY })) };
}
