// PreSkillShellCommand on the real CLI: a skill's shell line reaches the library's hook, which lets it run or stops it.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { HookInput } from "../../src/protocol/index.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { startRehearsedWorker } from "../support/worker.ts";

// The output differs from the line itself, so the model's request shows whether the line ran.
const COMMAND = "printf 'SKILL%sOUTPUT' -PROBE-";
const SKILL = ["---", "name: probe", "description: prints a marker", "---", `Marker: !\`${COMMAND}\``, ""].join("\n");

describe("PreSkillShellCommand", () => {
  it.each([
    ["allow", true],
    ["deny", false],
  ] as const)("a skill's shell line is shown to the hook before it runs; %s decides whether it runs", async (decision, runs) => {
    const server = await createRehearsal({ s: [{ text: "probed" }] });
    const inputs: HookInput[] = [];
    const { worker, cwd } = await startRehearsedWorker(server, "s", {
      settingSources: ["project"],
      skills: "all",
      hooks: {
        PreSkillShellCommand: [
          {
            hooks: [
              (input) => {
                inputs.push(input);
                return {
                  hookSpecificOutput: {
                    hookEventName: "PreSkillShellCommand",
                    permissionDecision: decision,
                    permissionDecisionReason: "the test says so",
                  },
                };
              },
            ],
          },
        ],
      },
    });
    await mkdir(join(cwd, ".claude", "skills", "probe"), { recursive: true });
    await writeFile(join(cwd, ".claude", "skills", "probe", "SKILL.md"), SKILL);
    await worker.reloadSkills();
    // A host-typed slash command: the skill loads, invoked by the user, with no model turn needed to call it.
    await worker.run("/probe", { verbatim: false });
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({
      hook_event_name: "PreSkillShellCommand",
      tool_input: { command: COMMAND },
      command_name: "probe",
      invoked_by: "user",
    });
    expect(JSON.stringify(server.requests).includes("SKILL-PROBE-OUTPUT")).toBe(runs);
  });
});
