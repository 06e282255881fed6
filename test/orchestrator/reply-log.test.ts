// replies.jsonl is on disk line by line as the replies come, not when the run closes it: a run that exits at once
// (a second Ctrl-C, SIGTERM twice: process.exit) keeps every reply it had received.

import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReplyLog } from "../../src/orchestrator/reply-log.ts";
import { type CliMessage, parseCliMessage } from "../../src/protocol/index.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-reply-log-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const assistant = (text: string): CliMessage =>
  parseCliMessage({
    type: "assistant",
    session_id: "s1",
    parent_tool_use_id: null,
    message: { id: "msg_1", role: "assistant", model: "claude", content: [{ type: "text", text }] },
  });

describe("ReplyLog", () => {
  it("has each line in the file once message() returns, before close(): nothing waits in this process", async () => {
    const path = join(dir, "replies.jsonl");
    const log = new ReplyLog(path, { runId: "r1" });
    log.prompt("t1", "say hello");
    log.message("t1", "greet", assistant("hello"));
    // Read at once, synchronously: what a process.exit() right now would leave.
    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      { replies: 1, run_id: "r1" },
      { name: "greet", session: "s1", prompt: expect.objectContaining({ excerpt: "say hello" }) },
      { name: "greet", session: "s1", reply: { id: "msg_1", content: [{ type: "text", text: "hello" }] } },
    ]);
    await log.close();
    // A message after the close (a worker killed at once still talking) is dropped, not an error.
    log.message("t1", "greet", assistant("late"));
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(3);
  });

  it("a file that cannot be opened does not end the run: it writes nothing", () => {
    const log = new ReplyLog(join(dir, "missing", "replies.jsonl"), { runId: "r1" });
    expect(() => log.message("t1", "greet", assistant("hello"))).not.toThrow();
  });
});
