/**
 * Deterministic generator of stream-json messages shaped like what `claude -p --output-format
 * stream-json --verbose --include-partial-messages` emits: a system/init with a long tools list,
 * streamed deltas, assistant text and tool_use, tool_result echoes with command output (the
 * CLI repeats it in tool_use_result), permission control_requests and results with usage and
 * modelUsage. Text mixes ASCII, emoji and CJK, quotes, backslashes and newlines; now and then a
 * Read of a large file makes a line of 100 KB or more.
 */

const MODEL = "claude-sonnet-4-5-20250929";

const TOOLS = [
  "Task",
  "Bash",
  "Glob",
  "Grep",
  "ExitPlanMode",
  "Read",
  "Edit",
  "Write",
  "NotebookEdit",
  "WebFetch",
  "TodoWrite",
  "WebSearch",
  "BashOutput",
  "KillShell",
  "SlashCommand",
  "Skill",
  "AskUserQuestion",
  "ListMcpResourcesTool",
  "ReadMcpResourceTool",
  ...[
    "spawn_session",
    "query_session",
    "get_session",
    "list_sessions",
    "wait_sessions",
    "interrupt_session",
    "close_session",
    "get_transcript",
    "answer_permission",
  ].map((t) => `mcp__cadre__${t}`),
  ...[
    "navigate",
    "click",
    "fill",
    "screenshot",
    "evaluate",
    "select_option",
    "hover",
    "press_key",
    "wait_for",
    "console_messages",
    "network_requests",
    "tabs",
    "close",
  ].map((t) => `mcp__playwright__browser_${t}`),
  ...[
    "create_issue",
    "get_issue",
    "list_issues",
    "create_pull_request",
    "get_pull_request",
    "list_commits",
    "search_code",
    "get_file_contents",
    "push_files",
    "create_branch",
  ].map((t) => `mcp__github__${t}`),
];

const SLASH_COMMANDS = [
  "compact",
  "context",
  "cost",
  "init",
  "output-style:new",
  "pr-comments",
  "release-notes",
  "todos",
  "review",
  "security-review",
  "statusline",
  "memory",
  "agents",
  "mcp",
  "model",
  "permissions",
];

const PROSE = [
  "I'll start by looking at the project structure to understand how the pieces fit together.",
  "The failing test expects `parseConfig` to reject an empty `tasks` list, but it returns `{ tasks: [] }`.",
  'Let me check the "worker" module: the spawn logic lives in `src/worker/spawn.ts`.',
  "Done ✅ — all 42 tests pass and the type checker is clean.",
  "This looks like a race: the `close` event can fire before `exit` on Linux 🐧.",
  "我来检查一下配置文件的加载逻辑，看看为什么默认值没有生效。",
  "テストが失敗している原因を調べます。まずログを確認しましょう。",
  "설정 파일을 읽는 부분에서 경로가 잘못 해석되고 있습니다.",
  "The path contains a backslash on Windows (C:\\Users\\dev\\project), so we need path.win32 here.",
  "Summary:\n- fixed the off-by-one in the chunk splitter\n- added a regression test\n- updated the docs 📝",
  "Here's the diff I'm proposing:\n```ts\nconst line = buf.toString(\"utf8\", start, end);\n```",
  "Größere Änderungen sind nicht nötig; nur die Zeitüberschreitung muss angepasst werden. 🚀",
];

const CODE_LINES = [
  'import { describe, it, expect } from "vitest";',
  "export async function runWorker(options: WorkerOptions): Promise<WorkerResult> {",
  '  const child = execa("claude", ["-p", "--output-format", "stream-json"], { stdin: "pipe" });',
  "  if (line.length > maxLineBytes) throw new LineTooLongError(maxLineBytes);",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a line of TypeScript as sample text, template and all.
  '    console.log(`worker ${id} finished in ${ms} ms — "${status}"`);',
  "  // 注意: 这里的超时单位是毫秒",
  "  return { ok: true, value: JSON.parse(text) };",
  "}",
  "",
  '  expect(result.stdout).toContain("✔ 128 passed");',
  "const re = /\\\\n|\\\\r\\\\n/g; // split on escaped newlines",
  "\tfor (const [key, value] of Object.entries(config)) {",
];

const OUTPUT_LINES = [
  " ✓ test/protocol/ndjson.test.ts (14 tests) 412ms",
  " ✓ test/orchestrator/queue.test.ts (9 tests) 1033ms",
  " ❯ test/worker/spawn.test.ts (6 tests | 1 failed) 5120ms",
  "   × kills the process group on SIGTERM 5003ms",
  "     → Test timed out in 5000ms.",
  "npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
  "drwxr-xr-x  9 dev dev  4096 Nov 21 23:18 src",
  "-rw-r--r--  1 dev dev 113865 Nov 21 23:08 package-lock.json",
  'src/worker/spawn.ts:42:17 - error TS2345: Argument of type "string | undefined" is not assignable.',
  "    at Object.<anonymous> (/home/dev/cadre/src/cli/main.ts:17:9)",
  "Compiling 243 files… done in 1.8s",
  "警告: 未使用的变量 'tmp'",
  '{"level":"info","msg":"listening","port":43117}',
];

/** mulberry32: small, fast, deterministic. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function* realisticMessages(seed = 1): Generator<Record<string, unknown>> {
  const random = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const hex = (n: number) => {
    let s = "";
    while (s.length < n) {
      const word = Math.floor(random() * 0x100000000);
      s += word.toString(16).padStart(8, "0");
    }
    return s.slice(0, n);
  };
  const uuid = () => {
    const h = hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
  };
  const lines = (pool: readonly string[], n: number) => Array.from({ length: n }, () => pick(pool)).join("\n");
  const prose = (n: number) => Array.from({ length: n }, () => pick(PROSE)).join(" ");

  const sessionId = uuid();
  const base = () => ({ parent_tool_use_id: null, session_id: sessionId, uuid: uuid() });
  const usage = () => ({
    input_tokens: int(1, 20),
    cache_creation_input_tokens: int(0, 4000),
    cache_read_input_tokens: int(10_000, 90_000),
    cache_creation: { ephemeral_5m_input_tokens: int(0, 4000), ephemeral_1h_input_tokens: 0 },
    output_tokens: int(1, 2000),
    service_tier: "standard",
  });
  const streamEvent = (event: Record<string, unknown>) => ({ type: "stream_event", event, ...base() });

  yield {
    type: "system",
    subtype: "init",
    cwd: "/home/dev/projects/cadre",
    session_id: sessionId,
    tools: TOOLS,
    mcp_servers: [
      { name: "cadre", status: "connected" },
      { name: "playwright", status: "connected" },
      { name: "github", status: "failed" },
    ],
    model: MODEL,
    permissionMode: "default",
    slash_commands: SLASH_COMMANDS,
    apiKeySource: "ANTHROPIC_API_KEY",
    claude_code_version: "2.1.330",
    output_style: "default",
    agents: ["general-purpose", "statusline-setup", "Explore", "Plan", "reviewer", "tester"],
    skills: [],
    plugins: [],
    uuid: uuid(),
  };

  for (let turn = 1; ; turn++) {
    const steps = int(1, 6);
    for (let step = 0; step < steps; step++) {
      const msgId = `msg_01${hex(22)}`;
      yield streamEvent({
        type: "message_start",
        message: { model: MODEL, id: msgId, type: "message", role: "assistant", content: [], stop_reason: null, stop_sequence: null, usage: usage() },
      });
      // Streamed text, a few words per delta, then the assembled assistant message.
      const text = prose(int(1, 4));
      yield streamEvent({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
      for (let at = 0; at < text.length; ) {
        const n = int(4, 40);
        yield streamEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: text.slice(at, at + n) } });
        at += n;
      }
      yield streamEvent({ type: "content_block_stop", index: 0 });
      yield {
        type: "assistant",
        message: {
          id: msgId,
          type: "message",
          role: "assistant",
          model: MODEL,
          content: [{ type: "text", text }],
          stop_reason: null,
          stop_sequence: null,
          usage: usage(),
          context_management: null,
        },
        ...base(),
      };

      const toolUseId = `toolu_01${hex(22)}`;
      const bigRead = random() < 0.03;
      const tool = bigRead ? "Read" : pick(["Bash", "Bash", "Read", "Grep", "Edit"]);
      const input =
        tool === "Bash"
          ? {
              command: pick(["npm test 2>&1 | tail -50", "git status --short", "ls -la src", 'grep -rn "TODO" src/']),
              description: "Run the test suite",
            }
          : tool === "Read"
            ? { file_path: `/home/dev/projects/cadre/src/${pick(["worker", "protocol", "orchestrator"])}/${hex(6)}.ts` }
            : tool === "Grep"
              ? { pattern: "maxLineBytes", path: "src", output_mode: "content", "-n": true }
              : { file_path: "/home/dev/projects/cadre/src/errors.ts", old_string: lines(CODE_LINES, 3), new_string: lines(CODE_LINES, 4) };
      const json = JSON.stringify(input);
      yield streamEvent({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: toolUseId, name: tool, input: {} } });
      for (let at = 0; at < json.length; at += 24) {
        yield streamEvent({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: json.slice(at, at + 24) } });
      }
      yield streamEvent({ type: "content_block_stop", index: 1 });
      yield {
        type: "assistant",
        message: {
          id: msgId,
          type: "message",
          role: "assistant",
          model: MODEL,
          content: [{ type: "tool_use", id: toolUseId, name: tool, input }],
          stop_reason: null,
          stop_sequence: null,
          usage: usage(),
          context_management: null,
        },
        ...base(),
      };
      yield streamEvent({ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: int(20, 800) } });
      yield streamEvent({ type: "message_stop" });

      if (tool === "Bash" && random() < 0.3) {
        yield {
          type: "control_request",
          request_id: uuid(),
          request: {
            subtype: "can_use_tool",
            tool_name: "Bash",
            display_name: "Bash",
            input,
            permission_suggestions: [
              { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test:*" }], behavior: "allow", destination: "localSettings" },
            ],
            tool_use_id: toolUseId,
          },
        };
      }

      // The tool's output, echoed as a user message; the CLI repeats it in tool_use_result.
      if (tool === "Read") {
        const numLines = bigRead ? int(1500, 4000) : int(20, 300);
        const content = Array.from({ length: numLines }, (_, i) => `${String(i + 1).padStart(6)}→${pick(CODE_LINES)}`).join("\n");
        yield {
          type: "user",
          message: { role: "user", content: [{ tool_use_id: toolUseId, type: "tool_result", content }] },
          ...base(),
          tool_use_result: { type: "text", file: { filePath: input.file_path, content, numLines, startLine: 1, totalLines: numLines } },
        };
      } else {
        const stdout = lines(OUTPUT_LINES, int(2, 120));
        yield {
          type: "user",
          message: { role: "user", content: [{ tool_use_id: toolUseId, type: "tool_result", content: stdout, is_error: false }] },
          ...base(),
          tool_use_result: { stdout, stderr: "", interrupted: false, isImage: false },
        };
      }
    }

    const inputTokens = int(5_000, 150_000);
    const outputTokens = int(100, 8_000);
    yield {
      type: "result",
      subtype: "success",
      is_error: false,
      duration_ms: int(2_000, 120_000),
      duration_api_ms: int(2_000, 120_000),
      num_turns: turn,
      result: prose(int(1, 3)),
      stop_reason: "end_turn",
      session_id: sessionId,
      total_cost_usd: inputTokens * 3e-6 + outputTokens * 15e-6,
      usage: { ...usage(), server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 } },
      modelUsage: {
        [MODEL]: {
          inputTokens,
          outputTokens,
          cacheReadInputTokens: int(0, 500_000),
          cacheCreationInputTokens: int(0, 50_000),
          webSearchRequests: 0,
          costUSD: inputTokens * 3e-6 + outputTokens * 15e-6,
          contextWindow: 200_000,
          maxOutputTokens: 64_000,
        },
        "claude-haiku-4-5-20251001": {
          inputTokens: int(100, 5000),
          outputTokens: int(10, 500),
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          webSearchRequests: 0,
          costUSD: 0.0012,
          contextWindow: 200_000,
          maxOutputTokens: 64_000,
        },
      },
      permission_denials: [],
      uuid: uuid(),
    };
  }
}
