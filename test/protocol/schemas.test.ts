import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as protocol from "../../src/protocol/index.ts";
import {
  type CliMessage,
  controlError,
  controlRequest,
  controlSuccess,
  HookOutputSchema,
  InitializeRequestSchema,
  PermissionResultSchema,
  parseCliMessage,
  StdinMessageSchema,
  userMessage,
} from "../../src/protocol/index.ts";

const fixtures = new URL("../fixtures/protocol/", import.meta.url);

/**
 * One example from a protocol document. `expect` says what it must decode to:
 * "cli:<type>[/<subtype>]" through parseCliMessage (subtype of system or of a
 * control_request; "cli:unknown/<reason>" for examples the real CLI contradicts),
 * "stdin:<type>" through StdinMessageSchema, "schema:<export>" through that schema.
 * `payload` names the schema for a control_response's inner `response`.
 */
interface DocExample {
  name: string;
  expect: string;
  payload?: string;
  note?: string;
  message: Record<string, unknown>;
}

function schemaByName(name: string): z.ZodType {
  const schema = (protocol as Record<string, unknown>)[name];
  if (!(schema instanceof z.ZodType)) throw new Error(`no schema exported as ${name}`);
  return schema;
}

/** JSON.stringify of the decoded value must give back every field of the original. */
function expectLossless(decoded: unknown, original: unknown): void {
  expect(JSON.parse(JSON.stringify(decoded))).toStrictEqual(original);
}

function readJsonl(file: string): unknown[] {
  return readFileSync(new URL(`captured/${file}`, fixtures), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as unknown);
}

/** "type" or "type/subtype" of a decoded message, for compact assertions. */
function kind(m: CliMessage): string {
  switch (m.type) {
    case "system":
      return `system/${m.subtype}`;
    case "control_request":
      return `control_request/${m.request.subtype}`;
    case "unknown":
      return `unknown/${m.reason}`;
    default:
      return m.type;
  }
}

// Document 001 is a text-only rendering of document 000 and holds no JSON examples.
describe("examples from the protocol documents", () => {
  const files = readdirSync(new URL("docs/", fixtures)).filter((f) => f.endsWith(".json"));

  it("covers the four documents that contain JSON", () => {
    expect(files.sort()).toStrictEqual([
      "000_fb74083aa658af98.json",
      "002_543c70dc64df7dec.json",
      "003_352f5567a707a87f.json",
      "004_5678cfead4630e71.json",
    ]);
  });

  for (const file of files) {
    const examples = JSON.parse(readFileSync(new URL(`docs/${file}`, fixtures), "utf8")) as DocExample[];
    describe(file, () => {
      it.each(examples.map((e) => [e.name, e] as const))("%s", (_name, example) => {
        const [direction, expected] = example.expect.split(":") as [string, string];
        const { message } = example;
        if (direction === "cli") {
          const decoded = parseCliMessage(message);
          expect(kind(decoded)).toBe(expected);
          if (decoded.type === "unknown") expect(decoded.raw).toBe(message);
          else expectLossless(decoded, message);
        } else if (direction === "stdin") {
          const decoded = StdinMessageSchema.parse(message);
          expect(decoded.type).toBe(expected);
          expectLossless(decoded, message);
        } else {
          expect(direction).toBe("schema");
          expectLossless(schemaByName(expected).parse(message), message);
        }
        if (example.payload !== undefined) {
          const inner = (message.response as { response: unknown }).response;
          expectLossless(schemaByName(example.payload).parse(inner), inner);
        }
      });
    });
  }
});

describe("messages captured from claude 2.1.330", () => {
  const files = readdirSync(new URL("captured/", fixtures)).filter((f) => f.endsWith(".jsonl"));
  const stdoutFiles = files.filter((f) => !f.endsWith(".stdin.jsonl"));
  const decoded = new Map(stdoutFiles.map((f) => [f, readJsonl(f).map((raw) => ({ raw, m: parseCliMessage(raw) }))]));
  const all = [...decoded.values()].flat();
  const of = (file: string) => decoded.get(file)?.map(({ m }) => m) ?? [];

  it.each(stdoutFiles)("%s: every line decodes to a known type without losing a field", (file) => {
    const lines = decoded.get(file) ?? [];
    expect(lines.length).toBeGreaterThan(0);
    for (const { raw, m } of lines) {
      expect(m.type === "unknown" ? (m.issues ?? m.reason) : "known").toBe("known");
      expectLossless(m, raw);
    }
  });

  it("covers the message kinds the scenarios were built to provoke", () => {
    const kinds = new Set(all.map(({ m }) => kind(m)));
    for (const k of [
      "control_response",
      "system/init",
      "system/status",
      "system/api_retry",
      "system/compact_boundary",
      "system/hook_started",
      "system/hook_response",
      "system/task_started",
      "system/task_updated",
      "system/task_notification",
      "system/background_tasks_changed",
      "assistant",
      "user",
      "stream_event",
      "result",
      "control_request/can_use_tool",
      "control_request/hook_callback",
      "control_request/mcp_message",
      "control_cancel_request",
    ]) {
      expect(kinds, k).toContain(k);
    }
  });

  it("hook_callback carries callback_id and the PreToolUse hook input", () => {
    const hook = of("hook.jsonl").find((m) => m.type === "control_request" && m.request.subtype === "hook_callback");
    expect(hook?.type === "control_request" && hook.request).toMatchObject({
      subtype: "hook_callback",
      callback_id: "hook_0",
      tool_use_id: "toolu_01",
      input: {
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "touch y" },
        tool_use_id: "toolu_01",
        permission_mode: "default",
      },
    });
  });

  it("can_use_tool for an MCP tool names the server and display name", () => {
    const ask = of("mcp.jsonl").find((m) => m.type === "control_request" && m.request.subtype === "can_use_tool");
    expect(ask?.type === "control_request" && ask.request).toMatchObject({
      tool_name: "mcp__x__echo",
      mcp_server: { name: "x", source: "sdk" },
      display_name: "Echo",
      input: { text: "ping" },
    });
  });

  it("mcp_message requests arrive in MCP handshake order with tool-call metadata", () => {
    const methods = of("mcp.jsonl").flatMap((m) =>
      m.type === "control_request" && m.request.subtype === "mcp_message" ? [m.request.message.method] : [],
    );
    expect(methods).toStrictEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"]);
    const call = of("mcp.jsonl").find(
      (m) => m.type === "control_request" && m.request.subtype === "mcp_message" && m.request.message.method === "tools/call",
    );
    expect(call?.type === "control_request" && call.request.subtype === "mcp_message" && call.request.message.params).toMatchObject({
      name: "echo",
      arguments: { text: "ping" },
      _meta: { "claudecode/toolUseId": "toolu_01" },
    });
  });

  it("a 429 shows up as api_retry messages before the result", () => {
    const retries = of("retry.jsonl").filter((m) => m.type === "system" && m.subtype === "api_retry");
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatchObject({ attempt: 1, max_retries: 10, error_status: 429, error: "rate_limit" });
    expect(of("retry.jsonl").at(-1)).toMatchObject({ type: "result", subtype: "success", is_error: false });
  });

  it("error results: an API error is subtype success with is_error; limits have their own subtypes", () => {
    expect(of("error.jsonl").at(-1)).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: true,
      api_error_status: 400,
      terminal_reason: "api_error",
    });
    expect(of("maxturns.jsonl").at(-1)).toMatchObject({ type: "result", subtype: "error_max_turns", is_error: true });
    expect(of("resume.jsonl")).toMatchObject([{ type: "result", subtype: "error_during_execution", is_error: true }]);
  });

  it("every line the host wrote is a valid stdin message, except the deliberately unknown request", () => {
    const lines = files.filter((f) => f.endsWith(".stdin.jsonl")).flatMap(readJsonl);
    const rejected = lines.filter((line) => !StdinMessageSchema.safeParse(line).success);
    expect(lines.length).toBeGreaterThan(20);
    expect(rejected).toStrictEqual([{ type: "control_request", request_id: "host_6", request: { subtype: "no_such_subtype" } }]);
  });
});

describe("parseCliMessage rules", () => {
  it("turns an unknown type into UnknownMessage with the very same raw object", () => {
    const raw = { type: "streamlined_text", text: "hi" };
    const m = parseCliMessage(raw);
    expect(m).toStrictEqual({ type: "unknown", raw, reason: "unknown_type" });
    expect(m.type === "unknown" && m.raw).toBe(raw);
  });

  it("treats non-objects and type-less objects as unknown, without throwing", () => {
    for (const raw of [null, 42, "text", [], [{ type: "result" }], {}, { type: 7 }]) {
      expect(parseCliMessage(raw)).toStrictEqual({ type: "unknown", raw, reason: "unknown_type" });
    }
  });

  it("does not match inherited keys such as __proto__ or constructor", () => {
    for (const line of ['{"type":"__proto__"}', '{"type":"constructor"}', '{"type":"system","subtype":"toString"}']) {
      expect(parseCliMessage(JSON.parse(line))).toMatchObject({ type: "unknown", reason: "unknown_type" });
    }
  });

  it("treats an unknown system subtype as unknown_type", () => {
    const raw = { type: "system", subtype: "turn_duration", session_id: "s", duration_ms: 5 };
    expect(parseCliMessage(raw)).toStrictEqual({ type: "unknown", raw, reason: "unknown_type" });
  });

  it("treats an unknown control_request subtype as unknown, keeping request_id reachable", () => {
    const raw = { type: "control_request", request_id: "req_9", request: { subtype: "some_future_request", message: "?" } };
    const m = parseCliMessage(raw);
    expect(m).toMatchObject({ type: "unknown", reason: "unknown_type" });
    expect(m.type === "unknown" && (m.raw as { request_id: string }).request_id).toBe("req_9");
  });

  it("keeps fields no schema names, at the top and nested", () => {
    const raw = {
      type: "assistant",
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" }, caller: { type: "direct" } }],
        brand_new: [1, 2],
      },
      session_id: "s",
      added_later: { deep: true },
    };
    const m = parseCliMessage(structuredClone(raw));
    expect(m.type).toBe("assistant");
    expectLossless(m, raw);
  });

  it("reports a known type that fails validation as invalid, with issues, never throwing", () => {
    const cases: unknown[] = [
      { type: "assistant" },
      { type: "result" },
      { type: "system", subtype: "api_retry", session_id: "s", attempt: "one" },
      { type: "control_request", request_id: 5, request: { subtype: "can_use_tool" } },
      { type: "control_request", request_id: "r", request: { subtype: "can_use_tool", tool_name: "Bash" } },
      { type: "control_response", response: { subtype: "maybe", request_id: "r" } },
    ];
    for (const raw of cases) {
      const m = parseCliMessage(raw);
      expect(m).toMatchObject({ type: "unknown", reason: "invalid", raw });
      expect(m.type === "unknown" && m.issues).toMatch(/\S/);
    }
  });

  it("survives an object whose property access throws", () => {
    const raw = Object.defineProperty({ type: "result" }, "subtype", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    const m = parseCliMessage(raw);
    expect(m.type === "unknown" && [m.reason, m.raw === raw]).toStrictEqual(["invalid", true]);
  });

  it("accepts a result with a subtype nobody has seen yet", () => {
    const raw = { type: "result", subtype: "error_max_wallclock", is_error: true, errors: ["took too long"] };
    const m = parseCliMessage(raw);
    expect(m.type).toBe("result");
    expect(m.type === "result" && m.subtype).toBe("error_max_wallclock");
    expectLossless(m, raw);
  });

  it("does not modify its input", () => {
    const raw = readJsonl("task.jsonl");
    const before = structuredClone(raw);
    raw.forEach(parseCliMessage);
    expect(raw).toStrictEqual(before);
  });

  it("narrows on type and subtype without casts", () => {
    const describeMessage = (m: CliMessage): string => {
      switch (m.type) {
        case "system":
          return m.subtype === "api_retry" ? `retry ${m.attempt}/${m.max_retries} after ${m.retry_delay_ms}ms` : m.subtype;
        case "control_request":
          return m.request.subtype === "can_use_tool" ? `ask ${m.request.tool_name}` : m.request.subtype;
        case "result":
          return `${m.subtype}${m.is_error ? " (error)" : ""}`;
        case "unknown":
          return m.reason;
        default:
          return m.type;
      }
    };
    expect(readJsonl("retry.jsonl").map((l) => describeMessage(parseCliMessage(l)))).toStrictEqual([
      "control_response",
      "init",
      "retry 1/10 after 616ms",
      "retry 2/10 after 1064ms",
      "assistant",
      "success",
    ]);
    expect(readJsonl("bash.jsonl").map((l) => describeMessage(parseCliMessage(l)))).toContain("ask Bash");
  });
});

describe("stdin builders", () => {
  it("userMessage wraps a string in one text block, in the shape the CLI accepts", () => {
    const m = userMessage("hi");
    expect(m).toStrictEqual({
      type: "user",
      session_id: "",
      message: { role: "user", content: [{ type: "text", text: "hi" }] },
      parent_tool_use_id: null,
    });
    expect(StdinMessageSchema.parse(m)).toStrictEqual(m);
  });

  it("userMessage passes content blocks through", () => {
    const blocks = [
      { type: "text" as const, text: "what is this?" },
      { type: "image" as const, source: { type: "base64" as const, media_type: "image/png", data: "iVBORw0KGgo=" } },
    ];
    expect(StdinMessageSchema.parse(userMessage(blocks))).toMatchObject({ message: { content: blocks } });
  });

  it("controlRequest builds a valid initialize request", () => {
    const m = controlRequest("init_1", {
      subtype: "initialize",
      hooks: { PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_0"] }] },
      sdkMcpServers: ["x"],
      agents: { reviewer: { description: "Reviews code", prompt: "You review code.", tools: ["Read"] } },
    });
    expect(m).toMatchObject({ type: "control_request", request_id: "init_1", request: { subtype: "initialize" } });
    expect(StdinMessageSchema.parse(m)).toStrictEqual(m);
  });

  it("controlSuccess and controlError build valid control responses", () => {
    const allow = controlSuccess("r1", { behavior: "allow", updatedInput: { command: "touch x" }, toolUseID: "t1" });
    expect(allow).toStrictEqual({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: "r1",
        response: { behavior: "allow", updatedInput: { command: "touch x" }, toolUseID: "t1" },
      },
    });
    const failure = controlError("r2", "no handler for this request");
    expect(failure).toStrictEqual({
      type: "control_response",
      response: { subtype: "error", request_id: "r2", error: "no handler for this request" },
    });
    for (const m of [allow, failure]) expect(StdinMessageSchema.parse(m)).toStrictEqual(m);
  });
});

describe("response payload schemas", () => {
  it("PermissionResult needs a message to deny and a known behavior", () => {
    expect(PermissionResultSchema.safeParse({ behavior: "deny", message: "no" }).success).toBe(true);
    expect(PermissionResultSchema.safeParse({ behavior: "deny" }).success).toBe(false);
    expect(PermissionResultSchema.safeParse({ behavior: "maybe", message: "?" }).success).toBe(false);
  });

  it("HookOutput accepts {} and async, and checks PreToolUse decisions", () => {
    expect(HookOutputSchema.safeParse({}).success).toBe(true);
    expect(HookOutputSchema.safeParse({ async: true, asyncTimeout: 5000 }).success).toBe(true);
    const pre = (permissionDecision: string) => ({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision, permissionDecisionReason: "policy" },
    });
    expect(HookOutputSchema.safeParse(pre("deny")).success).toBe(true);
    expect(HookOutputSchema.safeParse(pre("perhaps")).success).toBe(false);
  });

  it("initialize hooks need callback ids and a known event", () => {
    const init = (hooks: unknown) => InitializeRequestSchema.safeParse({ subtype: "initialize", hooks }).success;
    expect(init({ PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_0"], timeout: 30 }] })).toBe(true);
    expect(init({ PreToolUse: [{ matcher: "Bash" }] })).toBe(false);
    expect(init({ BeforeEverything: [{ hookCallbackIds: ["hook_0"] }] })).toBe(false);
  });
});

describe("hook output", () => {
  it("checks the fields of known events and passes newer events through", async () => {
    const { SyncHookOutputSchema } = await import("../../src/protocol/hooks.ts");
    const newer = { hookSpecificOutput: { hookEventName: "SomeFutureEvent", anything: 1 } };
    expect(SyncHookOutputSchema.parse(newer)).toEqual(newer);
    expect(SyncHookOutputSchema.safeParse({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "maybe" } }).success).toBe(false);
    expect(SyncHookOutputSchema.safeParse({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } }).success).toBe(true);
  });
});
