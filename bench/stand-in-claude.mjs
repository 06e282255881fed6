#!/usr/bin/env node
// A stand-in for claude in benchmarks of cadre's own overhead (BENCH_STAND_IN=1 in
// bench/scale-sweep.ts), where tens of thousands of tasks would need more CPU for real
// workers than a machine here has. It speaks the stream-json protocol as CLI 2.1.330 does
// for a one-turn task: initialize, then per prompt a system/init, one assistant message
// and a result; "/clear" as the CLI answers it (conversation_reset, a new session's init,
// a result of no turns). It runs no model and no tools: never a stand-in in the tests.
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";

const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
let session = randomUUID();

function init() {
  write({
    type: "system",
    subtype: "init",
    session_id: session,
    cwd: process.cwd(),
    tools: ["Bash", "Read"],
    mcp_servers: [],
    model: "stand-in",
    permissionMode: "default",
    apiKeySource: "none",
    uuid: randomUUID(),
  });
}

function result(text, turns) {
  write({
    type: "result",
    subtype: "success",
    is_error: false,
    result: text,
    session_id: session,
    num_turns: turns,
    duration_ms: 1,
    duration_api_ms: turns,
    total_cost_usd: turns * 0.0001,
    usage: { input_tokens: turns * 10, output_tokens: turns * 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    uuid: randomUUID(),
  });
}

function promptOf(message) {
  const content = message.message?.content;
  if (typeof content === "string") return content;
  return (content ?? []).map((block) => block.text ?? "").join("");
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "control_request") {
    const response = message.request.subtype === "initialize" ? { commands: [], models: [], account: {} } : {};
    write({ type: "control_response", response: { subtype: "success", request_id: message.request_id, response } });
    return;
  }
  if (message.type !== "user") return;
  const prompt = promptOf(message);
  if (prompt.trim() === "/clear") {
    const next = randomUUID();
    write({ type: "conversation_reset", new_conversation_id: next, session_id: session, uuid: randomUUID() });
    session = next;
    init();
    result("", 0);
    return;
  }
  init();
  write({
    type: "assistant",
    message: {
      id: `msg_${randomUUID()}`,
      type: "message",
      role: "assistant",
      model: "stand-in",
      content: [{ type: "text", text: `done ${prompt}` }],
      stop_reason: "end_turn",
      usage: { input_tokens: 10, output_tokens: 5 },
    },
    parent_tool_use_id: null,
    session_id: session,
    uuid: randomUUID(),
  });
  result(`done ${prompt}`, 1);
});
lines.on("close", () => process.exit(0));
