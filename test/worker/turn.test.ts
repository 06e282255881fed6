// How a turn's result reads, from results the real CLI sent (test/fixtures/protocol/captured).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseCliMessage, type ResultMessage } from "../../src/protocol/index.ts";
import { turnResult } from "../../src/worker/turn.ts";

function capturedResult(file: string): ResultMessage {
  const lines = readFileSync(new URL(`../fixtures/protocol/captured/${file}`, import.meta.url), "utf8")
    .trim()
    .split("\n");
  const result = lines.map((line) => parseCliMessage(JSON.parse(line))).find((message) => message.type === "result");
  if (result?.type !== "result") throw new Error(`${file} has no result`);
  return result;
}

describe("a turn's result", () => {
  it("an interrupted turn says interrupted, not the CLI's internal diagnostics", () => {
    const result = capturedResult("cancel.jsonl");
    expect(result.errors?.[0]).toMatch(/^\[ede_diagnostic\]/);
    const turn = turnResult(result, [], undefined);
    expect([turn.isError, turn.interrupted, turn.errors]).toEqual([true, true, ["interrupted"]]);
  });

  it("any other error keeps the CLI's words", () => {
    const turn = turnResult(capturedResult("maxturns.jsonl"), [], undefined);
    expect([turn.isError, turn.interrupted, turn.errors]).toEqual([true, false, ["Reached maximum number of turns (1)"]]);
  });
});
