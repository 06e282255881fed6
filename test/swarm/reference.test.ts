// docs/reference/swarm-file.md is generated from the zod schema: every key is in it, with its description.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderSwarmReference, SWARM_REFERENCE_PATH } from "../../scripts/swarm-reference.ts";

describe("docs/reference/swarm-file.md", () => {
  it("is up to date with the zod schema (run `npm run schema` to regenerate)", () => {
    expect(readFileSync(new URL(`../../${SWARM_REFERENCE_PATH}`, import.meta.url), "utf8")).toBe(renderSwarmReference());
  });

  it("says what every key is for", () => {
    const undescribed = renderSwarmReference()
      .split("\n")
      .filter((line) => /^\| `[^`]+`.* \| {2}\|$/.test(line));
    expect(undescribed).toEqual([]);
  });

  it("has a section for the keys of tasks, agents, hooks and rehearsal steps", () => {
    const titles = renderSwarmReference()
      .split("\n")
      .filter((line) => line.startsWith("## "));
    expect(titles).toEqual(
      expect.arrayContaining([
        "## Top level",
        "## `defaults`",
        "## `tasks[]`",
        "## `agents.<name>`",
        "## `hooks.<name>[]`",
        "## `rehearsal.<name>[]`",
      ]),
    );
  });
});
