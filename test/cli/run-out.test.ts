// `cadre run -o DIR` where no run directory can be: one line, exit 2, before anything starts (no hang under /proc).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDirectory } from "../../src/util/make-directory.ts";
import { bin, repo } from "../support/cli.ts";

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-run-out-"));
  await writeFile(join(dir, "a-file"), "");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("cadre run with an output directory that cannot be used", () => {
  // Node's recursive mkdir spun forever at /proc/nope; the process is killed at 30 s if it still does.
  it.each([
    ["/proc/nope", "no directory can be made in /proc (ENOENT)"],
    ["/proc/nope/deeper", "no directory can be made in /proc (ENOENT)"],
    ["a file", "is not a directory (ENOTDIR)"],
    ["a path under a file", "is not a directory (ENOTDIR)"],
  ])(
    "%s: one line on stderr, exit 2, nothing run",
    async (name, reason) => {
      const out = name === "a file" ? join(dir, "a-file") : name === "a path under a file" ? join(dir, "a-file", "run") : name;
      const result = await execa("node", [bin, "run", join(repo, "examples", "code-review.yaml"), "--rehearse", "-o", out, "--json"], {
        cwd: repo,
        reject: false,
        timeout: 30_000,
      });
      expect(result.timedOut).toBe(false);
      expect(result.exitCode).toBe(2);
      expect(result.stdout).toBe("");
      const lines = result.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`cadre run: the output directory cannot be used: cannot write ${out}: `);
      expect(lines[0]).toContain(reason);
    },
    60_000,
  );
});

describe("makeDirectory", () => {
  it("makes the missing parents, accepts a directory that is there, and ends where Node's recursive mkdir spins", () => {
    const deep = join(dir, "x", "y", "z");
    makeDirectory(deep);
    makeDirectory(deep);
    expect(() => makeDirectory("/proc/nope/deeper")).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(() => makeDirectory(join(dir, "a-file"))).toThrow(expect.objectContaining({ code: "ENOTDIR" }));
  });
});
