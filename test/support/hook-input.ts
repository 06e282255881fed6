import process from "node:process";
import type { HookInput } from "../../src/protocol/index.ts";

/** A hook input as the CLI sends one: the fields every event carries, around those a test is about. */
export function hookInput(fields: Pick<HookInput, "hook_event_name"> & Partial<HookInput>): HookInput {
  return { session_id: "s1", transcript_path: "/dev/null", cwd: process.cwd(), ...fields };
}
