// `cadre validate script.js`: the before-launch checks of a workflow script, every problem in one pass.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { cadre } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";

describe("cadre validate on a workflow script", () => {
  it("lists every problem, one line each, and exits 2", async ({ tmp }) => {
    const file = join(tmp, "bad.js");
    await writeFile(
      file,
      'export const meta = { name: "x" + 1, description: "d" }\nimport a from "b"\nconst t = Date.now()\nconst r = Math.random()\n',
    );
    const run = await cadre(["validate", file]);
    expect(run.exitCode).toBe(2);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(/`meta` must be a pure literal/),
      expect.stringMatching(/line 2 imports/),
      expect.stringMatching(/line 3 reads the clock/),
      expect.stringMatching(/line 4 reads the clock or randomness/),
      expect.stringMatching(/would be refused before launch \(4 problems\)$/),
    ]);
  });

  it("says what a valid script is", async () => {
    const run = await cadre(["validate", "examples/workflows/review.js"]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/workflow "review" \(.*\), phases Review, Verify: ready to run/);
  });
});
