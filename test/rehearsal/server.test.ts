import { describe, expect, it, onTestFinished } from "vitest";
import type { RehearsalScriptsInput } from "../../src/rehearsal/script.ts";
import { type RehearsalServer, startRehearsalServer } from "../../src/rehearsal/server.ts";
import { createRehearsal } from "../support/rehearsal.ts";

/** Unit tests of the scripted Messages API with plain fetch, no CLI. */

interface SseEvent {
  event: string;
  data: Record<string, unknown> & { type: string };
}

/** A strict reader of the SSE framing: `event:` then `data:` then a blank line, nothing else. */
function parseSse(text: string): SseEvent[] {
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((frame) => {
      const lines = frame.split("\n");
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^event: \w+$/);
      expect(lines[1]).toMatch(/^data: \{/);
      const event = lines[0]!.slice("event: ".length);
      const data = JSON.parse(lines[1]!.slice("data: ".length)) as SseEvent["data"];
      expect(data.type).toBe(event);
      return { event, data };
    });
}

type Message = { role: string; content: unknown };

function body(messages: Message[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: "claude-rehearsal-test",
    max_tokens: 32000,
    stream: true,
    system: [{ type: "text", text: "You are a test." }],
    tools: [{ name: "Bash", input_schema: { type: "object" } }],
    messages,
    ...extra,
  };
}

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (text = "earlier reply"): Message => ({ role: "assistant", content: [{ type: "text", text }] });

function post(url: string, payload: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(payload),
  });
}

/** The streamed reply reassembled: text, tool calls (inputs parsed from the partial JSON), stop reason. */
async function play(url: string, payload: unknown) {
  const response = await post(url, payload);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  const events = parseSse(await response.text());
  let text = "";
  const tools: { id: string; name: string; input: unknown; chunks: number }[] = [];
  const partial = new Map<number, string[]>();
  for (const { data } of events) {
    if (data.type === "content_block_start") {
      const block = data.content_block as { type: string; id: string; name: string };
      if (block.type === "tool_use") {
        tools.push({ id: block.id, name: block.name, input: undefined, chunks: 0 });
        partial.set(data.index as number, []);
      }
    }
    if (data.type === "content_block_delta") {
      const delta = data.delta as { type: string; text?: string; partial_json?: string };
      if (delta.type === "text_delta") text += delta.text;
      else partial.get(data.index as number)!.push(delta.partial_json!);
    }
  }
  for (const [i, pieces] of [...partial.values()].entries()) {
    tools[i]!.input = JSON.parse(pieces.join(""));
    tools[i]!.chunks = pieces.length;
  }
  const delta = events.find((e) => e.event === "message_delta")!.data;
  const start = events[0]!.data.message as { model: string; usage: { input_tokens: number } };
  return {
    events,
    text,
    tools,
    start,
    stopReason: (delta.delta as { stop_reason: string }).stop_reason,
    outputTokens: (delta.usage as { output_tokens: number }).output_tokens,
  };
}

describe("rehearsal server", () => {
  it("streams a scripted text reply in the Messages SSE framing, echoing the model", async () => {
    const server = await createRehearsal({ default: [{ text: "Hello from the script, in several words." }] });
    const reply = await play(server.url, body([user("hi")]));
    expect(reply.events.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      ...reply.events.filter((e) => e.event === "content_block_delta").map(() => "content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(reply.events.filter((e) => e.event === "content_block_delta").length).toBeGreaterThan(1);
    expect(reply.text).toBe("Hello from the script, in several words.");
    expect(reply.start.model).toBe("claude-rehearsal-test");
    expect(reply.start.usage.input_tokens).toBeGreaterThan(10);
    expect(reply.outputTokens).toBeGreaterThan(0);
    expect(reply.stopReason).toBe("end_turn");
  });

  it("streams tool calls as input_json_delta pieces that join into the rendered input", async () => {
    const server = await createRehearsal({
      default: [
        {
          text: "Let me look.",
          tool_uses: [
            { name: "Bash", input: { command: "echo {{prompt}}", options: { tags: ["step-{{step}}"] } } },
            { name: "Read", id: "toolu_fixed", input: { file_path: "/tmp/x" } },
          ],
        },
      ],
    });
    const reply = await play(server.url, body([user("marker-7")]));
    expect(reply.text).toBe("Let me look.");
    expect(reply.stopReason).toBe("tool_use");
    expect(reply.tools.map((t) => t.name)).toEqual(["Bash", "Read"]);
    expect(reply.tools[0]!.input).toEqual({ command: "echo marker-7", options: { tags: ["step-0"] } });
    expect(reply.tools[0]!.id).toMatch(/^toolu_[A-Za-z0-9_]+$/);
    expect(reply.tools[0]!.chunks).toBeGreaterThan(1);
    expect(reply.tools[1]!.id).toBe("toolu_fixed");
  });

  it("plays the step numbered by the assistant messages in the request, and warns when the script runs out", async () => {
    const server = await createRehearsal({ default: [{ text: "zero" }, { text: "one" }] });
    expect((await play(server.url, body([user("a")]))).text).toBe("zero");
    expect((await play(server.url, body([user("a"), assistant(), user("b")]))).text).toBe("one");
    // A retry of step 0 (same conversation prefix) plays step 0 again: no hidden state.
    expect((await play(server.url, body([user("a")]))).text).toBe("zero");
    // A spent script is not an answer the model could give: an API error with that message, which fails the turn.
    const exhausted = await post(server.url, body([user("a"), assistant(), user("b"), assistant(), user("c")]));
    expect(exhausted.status).toBe(400);
    expect(((await exhausted.json()) as { error: { message: string } }).error.message).toBe(
      'rehearsal: script "default" has no step 2 (it has 2 steps, numbered from 0)',
    );
    expect(server.warnings).toEqual([expect.stringContaining('script "default" has no step 2')]);
    expect(server.requests.map((r) => [r.step, r.outcome])).toEqual([
      [0, "played"],
      [1, "played"],
      [0, "played"],
      [2, "exhausted"],
    ]);
  });

  it("does not count the CLI's placeholder for a turn that got no reply: a resumed session plays the step it never got", async () => {
    const server = await createRehearsal({ default: [{ text: "zero" }, { text: "one" }] });
    // What a session interrupted before its first reply sends once resumed, as measured on the pinned CLI.
    const resumed = [user("say a"), user("[Request interrupted by user]"), assistant("No response requested."), user("say a")];
    expect((await play(server.url, body(resumed))).text).toBe("zero");
    expect((await play(server.url, body([...resumed, assistant("zero"), user("more")]))).text).toBe("one");
  });

  it("selects the script by the /s/<name> path prefix", async () => {
    const server = await createRehearsal({ alpha: [{ text: "from alpha" }], "task one:2": [{ text: "{{script}}" }] });
    expect((await play(server.baseUrlFor("alpha"), body([user("x")]))).text).toBe("from alpha");
    expect((await play(server.baseUrlFor("task one:2"), body([user("x")]))).text).toBe("task one:2");
    expect(server.requests.map((r) => r.script)).toEqual(["alpha", "task one:2"]);
  });

  it("plays, on a process's /p/<token> route, the script the process is bound to now", async () => {
    const server = await createRehearsal({ alpha: [{ text: "from alpha" }], beta: [{ text: "from beta" }] });
    const url = server.baseUrlForProcess("proc 1");
    expect(url).toBe(`${server.url}/p/proc%201`);
    const unbound = await post(url, body([user("x")]));
    expect(unbound.status).toBe(400);
    expect(((await unbound.json()) as { error: { message: string } }).error.message).toContain("unbound process proc 1");
    server.bind("proc 1", "alpha");
    expect((await play(url, body([user("x")]))).text).toBe("from alpha");
    server.bind("proc 1", "beta");
    expect((await play(url, body([user("x")]))).text).toBe("from beta");
    server.unbind("proc 1");
    expect((await post(url, body([user("x")]))).status).toBe(400);
    expect(server.requests.map((r) => r.outcome)).toEqual(["unknown_script", "played", "played", "unknown_script"]);
  });

  it("answers an unknown script name with a 400 API error naming the known scripts", async () => {
    const server = await createRehearsal({ alpha: [{ text: "a" }], beta: [{ text: "b" }] });
    const response = await post(server.baseUrlFor("gamma"), body([user("x")]));
    expect(response.status).toBe(400);
    const error = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(error.type).toBe("error");
    expect(error.error.type).toBe("invalid_request_error");
    expect(error.error.message).toContain('"gamma"');
    expect(error.error.message).toContain('"alpha", "beta"');
    // No prefix means script "default", which does not exist here either.
    expect((await post(server.url, body([user("x")]))).status).toBe(400);
    expect(server.warnings).toHaveLength(2);
  });

  it("fails a step `times` times with the API error shape, then plays it", async () => {
    const server = await createRehearsal({
      default: [{ text: "first" }, { fail: { status: 429, times: 2 }, text: "ok after retries" }],
    });
    const second = body([user("a"), assistant(), user("b")]);
    for (const attempt of [1, 2]) {
      const response = await post(server.url, second);
      expect(response.status).toBe(429);
      expect(response.headers.get("retry-after")).toBe("0");
      const error = (await response.json()) as { error: { type: string; message: string } };
      expect(error.error.type).toBe("rate_limit_error");
      expect(error.error.message).toContain(`attempt ${attempt} of 2`);
    }
    expect((await play(server.url, second)).text).toBe("ok after retries");
    expect((await play(server.url, second)).text).toBe("ok after retries");
    expect(server.requests.map((r) => r.outcome)).toEqual(["failed", "failed", "played", "played"]);
    expect(server.outcomes).toMatchObject({ failed: 2, played: 2 });

    // setScript replaces the script and starts counting attempts afresh.
    server.setScript("default", [{ text: "first" }, { fail: { status: 529, times: 1 }, text: "after overload" }]);
    const overloaded = await post(server.url, second);
    expect(overloaded.status).toBe(529);
    expect(((await overloaded.json()) as { error: { type: string } }).error.type).toBe("overloaded_error");
    expect((await play(server.url, second)).text).toBe("after overload");

    // Without times, fail does what it says on every attempt, text or not; a step may be only fail.
    server.setScript("refused", [{ text: "nope", fail: { status: 400 } }]);
    server.setScript("outage", [{ fail: { status: 400, message: "down" } }]);
    for (let attempt = 0; attempt < 4; attempt++) {
      expect((await post(server.baseUrlFor("refused"), body([user("a")]))).status).toBe(400);
      const down = await post(server.baseUrlFor("outage"), body([user("a")]));
      expect([down.status, ((await down.json()) as { error: { message: string } }).error.message]).toEqual([400, "down"]);
    }

    server.setScript("plain", [{ fail: { status: 500, times: 1, message: "scripted outage" }, text: "x" }]);
    const internal = await post(server.baseUrlFor("plain"), body([user("a")]));
    expect(internal.status).toBe(500);
    expect(internal.headers.get("retry-after")).toBeNull();
    expect(((await internal.json()) as { error: { message: string } }).error.message).toBe("scripted outage");
  });

  it("keeps only the latest `keepRequests` requests, and counts every one by outcome", async () => {
    const server = await startRehearsalServer({ scripts: { default: [{ text: "{{prompt}}" }] }, keepRequests: 3 });
    try {
      for (let i = 0; i < 5; i++) await play(server.url, body([user(`turn ${i}`)]));
      await post(server.baseUrlFor("nobody"), body([user("lost")]));
      expect(server.requests.map((r) => r.outcome)).toEqual(["played", "played", "unknown_script"]);
      expect(JSON.stringify(server.requests[0]!.messages)).toContain("turn 3");
      expect(server.outcomes).toMatchObject({ played: 5, unknown_script: 1, failed: 0 });
    } finally {
      await server.close();
    }
  });

  it("renders {{prompt}} without system reminders and {{tool_result}} from the last user message", async () => {
    const server = await createRehearsal({
      s: [{ text: "unused" }, { text: "prompt=[{{prompt}}] result=[{{tool_result}}] step={{step}} script={{script}} {{nope}}" }],
    });
    const messages: Message[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "<system-reminder>\nignore me\n</system-reminder>\n" },
          { type: "text", text: "count the files" },
        ],
      },
      { role: "system", content: "environment details" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "first output" },
          { type: "tool_result", tool_use_id: "t2", content: [{ type: "text", text: "second output" }] },
          { type: "text", text: "<system-reminder>also ignored</system-reminder>" },
        ],
      },
    ];
    const reply = await play(server.baseUrlFor("s"), body(messages));
    expect(reply.text).toBe("prompt=[count the files] result=[first output\nsecond output] step=1 script=s {{nope}}");
  });

  it('plays "<name>:subagent" for subagent calls, never the main script', async () => {
    const server = await createRehearsal({
      main: [{ tool_use: { name: "Agent", input: { prompt: "help" } } }, { text: "main again" }],
      "main:subagent": [{ text: "subagent reply" }],
      lonely: [{ tool_use: { name: "Agent", input: { prompt: "help" } } }],
    });
    const agent = { "x-claude-code-agent-id": "a1b2c3" };
    const sub = await post(server.baseUrlFor("main"), body([user("help")], { stream: false }), agent);
    expect(((await sub.json()) as { content: { text: string }[] }).content[0]!.text).toBe("subagent reply");
    // Without a subagent script a subagent gets a plain text reply, not the main script's tool call.
    const unscripted = await post(server.baseUrlFor("lonely"), body([user("help")], { stream: false }), agent);
    const reply = (await unscripted.json()) as { content: { type: string; text: string }[] };
    expect(reply.content).toEqual([{ type: "text", text: expect.stringContaining('no script "lonely:subagent"') }]);
    await post(server.baseUrlFor("lonely"), body([user("help")], { stream: false }), agent);
    expect(server.warnings).toEqual([expect.stringContaining('no script "lonely:subagent"')]);
    expect(server.requests.map((r) => [r.script, r.outcome, r.agentId])).toEqual([
      ["main:subagent", "played", "a1b2c3"],
      ["lonely:subagent", "unscripted_subagent", "a1b2c3"],
      ["lonely:subagent", "unscripted_subagent", "a1b2c3"],
    ]);
  });

  it("leaves the CLI's interrupt marker out of {{prompt}}", async () => {
    const server = await createRehearsal({ default: [{ text: "partial" }, { text: "[{{prompt}}]" }] });
    const messages: Message[] = [
      user("first"),
      assistant("par"),
      {
        role: "user",
        content: [
          { type: "text", text: "[Request interrupted by user]" },
          { type: "text", text: "second prompt" },
        ],
      },
    ];
    expect((await play(server.url, body(messages))).text).toBe("[second prompt]");
  });

  it("leaves the record /clear leaves in the next conversation out of {{prompt}}", async () => {
    const server = await createRehearsal({ default: [{ text: "[{{prompt}}]" }] });
    // The first user message of a conversation after /clear, as CLI 2.1.330 sends it.
    const content = [
      "<local-command-caveat>The command below was run directly in Claude Code, not sent to you as a request, and its output goes straight to the user. It's recorded here as context for later messages.</local-command-caveat>\n",
      "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>\n",
      "<local-command-stdout></local-command-stdout>\n",
      "next task",
    ].map((text) => ({ type: "text", text }));
    expect((await play(server.url, body([{ role: "user", content }]))).text).toBe("[next task]");
  });

  it("answers stream: false with one JSON message", async () => {
    const server = await createRehearsal({ default: [{ tool_use: { name: "Bash", input: { command: "ls" } } }] });
    const response = await post(server.url, body([user("x")], { stream: false }));
    expect(response.status).toBe(200);
    const message = (await response.json()) as Record<string, unknown>;
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-rehearsal-test",
      stop_reason: "tool_use",
      content: [{ type: "tool_use", name: "Bash", input: { command: "ls" } }],
    });
    expect((message.usage as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
  });

  it("plays long_text as exactly that many characters", async () => {
    const server = await createRehearsal({ default: [{ long_text: 200_000 }] });
    const reply = await play(server.url, body([user("x")]));
    expect(reply.text).toHaveLength(200_000);
    expect(reply.text.startsWith("line 000001")).toBe(true);
    expect(reply.outputTokens).toBe(50_000);
  });

  it("counts tokens, and answers other routes with a 404 API error", async () => {
    const server = await createRehearsal({ default: [{ text: "x" }] });
    const counted = await fetch(`${server.baseUrlFor("default")}/v1/messages/count_tokens?beta=true`, {
      method: "POST",
      body: JSON.stringify(body([user("count me")])),
    });
    expect(counted.status).toBe(200);
    expect(((await counted.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(10);
    for (const [method, path] of [
      ["GET", "/v1/messages"],
      ["POST", "/v1/complete"],
      ["HEAD", "/api/hello"],
      ["POST", "/s/default/v2/messages"],
    ] as const) {
      const response = await fetch(`${server.url}${path}`, { method, body: method === "POST" ? "{}" : undefined });
      expect(response.status, `${method} ${path}`).toBe(404);
      if (method !== "HEAD") {
        expect(((await response.json()) as { error: { type: string } }).error.type).toBe("not_found_error");
      }
    }
    expect(server.requests).toHaveLength(0);
  });

  it("rejects a body over the limit with 413 and a body that is not JSON with 400", async () => {
    const server = await startRehearsalServer({ scripts: { default: [{ text: "x" }] }, maxBodyBytes: 1024 });
    onTestFinished(() => server.close());
    const big = await post(server.url, body([user("y".repeat(4096))]));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { type: string } }).error.type).toBe("request_too_large");
    const broken = await fetch(`${server.url}/v1/messages`, { method: "POST", body: "{not json" });
    expect(broken.status).toBe(400);
    expect(server.requests).toHaveLength(0);
  });

  it("records requests without credentials", async () => {
    const server = await createRehearsal({ default: [{ text: "x" }] });
    await play(server.url, {
      ...body([user("hello there")]),
      system: [
        { type: "text", text: "part one" },
        { type: "text", text: "part two" },
      ],
    });
    const secret = "sk-ant-secret-value-123";
    await (await post(server.url, body([user("again")]), { "x-api-key": secret, authorization: `Bearer ${secret}-2` })).text();
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]).toMatchObject({
      script: "default",
      model: "claude-rehearsal-test",
      system: "part one\npart two",
      tools: ["Bash"],
      stream: true,
      maxTokens: 32000,
      messages: [user("hello there")],
    });
    expect(typeof server.requests[0]!.at).toBe("number");
    expect(JSON.stringify(server.requests)).not.toContain("secret-value");
  });

  it("tells the CLI's side probes apart so they do not use a step's failures", async () => {
    const server = await createRehearsal({ default: [{ fail: { status: 429, times: 1 }, text: "real" }] });
    const quota = await post(server.url, { model: "m", max_tokens: 1, messages: [{ role: "user", content: "quota" }] });
    expect(quota.status).toBe(200);
    const probe = (await quota.json()) as { content: { text: string }[] };
    expect(probe.content[0]!.text).toBe("rehearsal");
    expect((await post(server.url, body([user("x")]))).status).toBe(429);
    expect((await play(server.url, body([user("x")]))).text).toBe("real");
    expect(server.requests.map((r) => [r.outcome, r.step])).toEqual([
      ["side", null],
      ["failed", 0],
      ["played", 0],
    ]);
  });

  it("waits delay_ms, streams word by word with chunk_delay_ms, and tracks requests in flight", async () => {
    const server = await createRehearsal({
      default: [{ delay_ms: 150, chunk_delay_ms: 20, text: "one two three four five" }],
    });
    const started = Date.now();
    const [a, b] = await Promise.all([play(server.url, body([user("x")])), play(server.url, body([user("y")]))]);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(150 + 4 * 20);
    expect(a.text).toBe("one two three four five");
    expect(b.events.filter((e) => e.event === "content_block_delta").map((e) => (e.data.delta as { text: string }).text)).toEqual([
      "one ",
      "two ",
      "three ",
      "four ",
      "five",
    ]);
    expect(server.peakInFlight).toBe(2);
    expect(server.inFlight).toBe(0);
  });

  it("stops streaming when the client goes away, and close() cuts open streams", async () => {
    const server = await createRehearsal({ default: [{ chunk_delay_ms: 50, text: "word ".repeat(200) }] });
    const aborter = new AbortController();
    const response = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      body: JSON.stringify(body([user("x")])),
      signal: aborter.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    aborter.abort();
    await expect.poll(() => server.inFlight).toBe(0);

    const second = await fetch(`${server.url}/v1/messages`, { method: "POST", body: JSON.stringify(body([user("x")])) });
    const secondReader = second.body!.getReader();
    await secondReader.read();
    const closing = server.close();
    await expect(
      (async () => {
        for (;;) if ((await secondReader.read()).done) return "ended";
      })(),
    ).rejects.toThrow();
    await closing;
  });
});

describe("rehearsal server startup", () => {
  it("rejects invalid scripts naming the path of the problem", async () => {
    await expect(
      startRehearsalServer({ scripts: { review: [{ text: "ok" }, { tool_use: { input: {} } }] } as RehearsalScriptsInput }),
    ).rejects.toThrow(/review\[1\]\.tool_use\.name/);
  });

  it("listens on an ephemeral loopback port by default", async () => {
    const a: RehearsalServer = await createRehearsal();
    const b = await createRehearsal();
    expect(a.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(a.url).not.toBe(b.url);
    expect(b.baseUrlFor("x y")).toBe(`${b.url}/s/x%20y`);
  });
});
