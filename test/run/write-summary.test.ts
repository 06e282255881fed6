// A compaction writes summary.json in pieces: the file is the same as written whole, emoji across a piece's edge included.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeSummarySync } from "../../src/run/index.ts";
import { writeSummary } from "../../src/run/record.ts";
import type { Summary } from "../../src/swarm/record.ts";
import { tempHome } from "../support/rehearsal.ts";

describe("writeSummary", () => {
  it("writes a long record in pieces as writeSummarySync writes it whole, or gives way to a newer one", async () => {
    const dir = await tempHome("cadre-write-summary-");
    // Text of emoji (two UTF-16 units each), at either parity: in one of the two a pair falls across a piece's edge.
    let summary = {} as Summary;
    for (const lead of ["", "x"]) {
      const text = `${lead}${"🙂".repeat(400_000)}`;
      summary = { swarm: "s", tasks: [{ name: "t", text }], sessions: [] } as unknown as Summary;
      const bytes = await writeSummary(dir, summary, join(dir, "compact.tmp"), () => false);
      const pieces = await readFile(join(dir, "summary.json"), "utf8");
      const { bytes: whole } = writeSummarySync(dir, summary);
      expect(pieces).toBe(await readFile(join(dir, "summary.json"), "utf8"));
      expect(bytes).toBe(whole);
      expect(JSON.parse(pieces).tasks[0].text).toBe(text);
    }

    const older = { ...summary, swarm: "older" };
    expect(await writeSummary(dir, older, join(dir, "compact.tmp"), () => true)).toBeUndefined();
    expect(JSON.parse(await readFile(join(dir, "summary.json"), "utf8")).swarm).toBe("s");
  });
});
