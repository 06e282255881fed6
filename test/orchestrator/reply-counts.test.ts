// The step steering is recorded at: a session's model replies, each once, its subagents' and API errors left out.
import { describe, expect, it } from "vitest";
import { ReplyCounts } from "../../src/orchestrator/reply-counts.ts";
import { type CliMessage, parseCliMessage } from "../../src/protocol/index.ts";

const block = (id: string, options: { session?: string; parent?: string; model?: string } = {}): CliMessage =>
  parseCliMessage({
    type: "assistant",
    session_id: options.session ?? "s1",
    parent_tool_use_id: options.parent ?? null,
    message: { id, role: "assistant", model: options.model ?? "claude", content: [{ type: "text", text: id }] },
  });

describe("ReplyCounts", () => {
  it("counts a reply streamed as several blocks once, per session, without its subagents' replies or API errors", () => {
    const counts = new ReplyCounts();
    expect(counts.of("s1")).toBe(0);
    counts.observe(block("msg_1"));
    counts.observe(block("msg_1"));
    counts.observe(block("msg_sub", { parent: "toolu_1" }));
    counts.observe(block("msg_err", { model: "<synthetic>" }));
    counts.observe(block("msg_2"));
    counts.observe(block("msg_a", { session: "s2" }));
    expect([counts.of("s1"), counts.of("s2"), counts.of(undefined)]).toEqual([2, 1, 0]);
  });
});
