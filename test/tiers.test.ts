// The tiers of test/tiers.ts hold: their lists name real test files once, and the fast tier's guard
// fails a test that starts a process (here, in the fast tier itself, the guard must stop both calls).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { attempts } from "./support/no-processes.ts";
import { FAST, SLOW } from "./tiers.ts";

const ROOT = join(import.meta.dirname, "..");

describe("test tiers", () => {
  it("name existing test files, each in one tier", () => {
    expect([...FAST, ...SLOW].filter((file) => !file.endsWith(".test.ts") || !existsSync(join(ROOT, file)))).toEqual([]);
    expect(new Set([...FAST, ...SLOW]).size).toBe(FAST.length + SLOW.length);
  });

  it("run this file in the fast tier, whose guard refuses to start a process", async () => {
    expect(FAST).toContain("test/tiers.test.ts");
    expect(() => spawnSync("true")).toThrow(/fast tier starts no process/);
    await expect(execa("true")).rejects.toThrow(/fast tier starts no process/);
    // Taken here, so the guard's own check after the test passes.
    expect(attempts.splice(0)).toEqual(["spawnSync(true)", "spawn(true)"]);
  });
});
