// The README and the guides in docs/ link to files and headings that exist: a guide moved or a heading renamed
// fails here, not in a reader's browser.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const DOCS = [
  join(ROOT, "README.md"),
  ...readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(ROOT, "docs", f)),
];
const LINK = /\]\(([^)\s]+)\)/g;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8");
  const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!));
  const ids = [...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!);
  return new Set([...headings, ...ids]);
}

/** The links of `file` that lead nowhere: a missing file, or a missing heading in a Markdown file. */
function brokenLinks(file: string, text = readFileSync(file, "utf8")): string[] {
  return [...text.replace(/```[\s\S]*?```/g, "").matchAll(LINK)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/.test(target))
    .filter((target) => {
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const resolved = path === "" ? file : join(dirname(file), path);
      if (!existsSync(resolved)) return true;
      return anchor !== undefined && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor);
    })
    .map((target) => `${relative(ROOT, file)} → ${target}`);
}

describe("the README and docs/", () => {
  it("link only to files and headings that exist", () => {
    expect(DOCS.length).toBeGreaterThan(10);
    expect(DOCS.flatMap((file) => brokenLinks(file))).toEqual([]);
  });

  it("find a broken link (the check can fail)", () => {
    expect(slug("Map over a result, loop until done")).toBe("map-over-a-result-loop-until-done");
    const text = "[x](nowhere.md), [y](#no-such-heading), [z](docs/records.md#resume-a-run-that-stopped), [w](docs/records.md#gone)";
    expect(brokenLinks(join(ROOT, "README.md"), text)).toEqual([
      "README.md → nowhere.md",
      "README.md → #no-such-heading",
      "README.md → docs/records.md#gone",
    ]);
  });

  it("keep the README a front door: short, and naming no path outside the repository", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(200);
    expect(readme).not.toMatch(/\/work\/|\/home\/|\/tmp\/|#\d{2,}\b/);
  });
});
