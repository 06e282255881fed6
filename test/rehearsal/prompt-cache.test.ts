// The rehearsal server's prompt cache, on request bodies shaped like the CLI's (no processes).
import { describe, expect, it } from "vitest";
import { MIN_CACHEABLE_TOKENS, PromptCache } from "../../src/rehearsal/prompt-cache.ts";

const EPHEMERAL = { type: "ephemeral" };
/** About 2,500 tokens of tools: enough for a cacheable prefix. */
const TOOLS = Array.from({ length: 10 }, (_, i) => ({ name: `Tool${i}`, description: "d".repeat(1000), input_schema: { type: "object" } }));

function request(options: { billing?: string; system?: string; prompt?: string; ttl?: "1h"; model?: string; history?: string[] } = {}) {
  const control = options.ttl ? { ...EPHEMERAL, ttl: options.ttl } : EPHEMERAL;
  const turns = [...(options.history ?? []), options.prompt ?? "hello"];
  const messages = turns.flatMap((text, i) => [
    ...(i > 0 ? [{ role: "assistant", content: [{ type: "text", text: `answer ${i}` }] }] : []),
    { role: "user", content: [{ type: "text", text, ...(i === turns.length - 1 && { cache_control: control }) }] },
  ]);
  return {
    model: options.model ?? "claude-test",
    tools: TOOLS,
    system: [
      { type: "text", text: `x-anthropic-billing-header: cc_version=2.1.330.${options.billing ?? "abc"}; cc_entrypoint=sdk-cli;` },
      { type: "text", text: options.system ?? "You are a Claude agent.", cache_control: control },
    ],
    messages,
  };
}

/** A clock the test moves. */
function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("the rehearsal prompt cache", () => {
  it("writes on a miss and reads the shared prefix once the writing response has begun", () => {
    const cache = new PromptCache();
    const first = cache.lookup(request({ prompt: "task one" }), 10_000);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(MIN_CACHEABLE_TOKENS);
    expect(first.usage.cache_creation.ephemeral_5m_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    // Input tokens are what lies after the last breakpoint: the three add up to the request.
    const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens } = first.usage;
    expect(input_tokens + cache_creation_input_tokens + cache_read_input_tokens).toBe(10_000);

    // Before the writer's response begins, a request with the same prefix misses and writes too.
    const early = cache.lookup(request({ prompt: "task two", billing: "def" }), 10_000);
    expect(early.usage.cache_read_input_tokens).toBe(0);
    first.begin();

    // Afterwards it reads the tools and system prompt (the billing header differs: it is not part of the prompt)
    // and writes only its own conversation.
    const late = cache.lookup(request({ prompt: "task six", billing: "123" }), 10_000);
    expect(late.usage.cache_read_input_tokens).toBeGreaterThan(MIN_CACHEABLE_TOKENS);
    expect(late.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(late.usage.cache_creation_input_tokens).toBeLessThan(20);
    // Prompts of the same length: the same prefix size, split differently.
    expect(late.usage.cache_read_input_tokens + late.usage.cache_creation_input_tokens).toBe(cache_creation_input_tokens);
  });

  it("keys the prefix by model and content: another system prompt or model reads nothing of it", () => {
    const cache = new PromptCache();
    cache.lookup(request(), 10_000).begin();
    expect(cache.lookup(request({ system: "You are a critic." }), 10_000).usage.cache_read_input_tokens).toBe(0);
    expect(cache.lookup(request({ model: "claude-other" }), 10_000).usage.cache_read_input_tokens).toBe(0);
  });

  it("drops a write whose response never began", () => {
    const cache = new PromptCache();
    cache.lookup(request(), 10_000);
    expect(cache.size).toBe(0);
    expect(cache.lookup(request(), 10_000).usage.cache_read_input_tokens).toBe(0);
  });

  it("finds the previous turn's breakpoint within 20 blocks of the new one (a conversation goes on)", () => {
    const cache = new PromptCache();
    const turn1 = cache.lookup(request({ prompt: "first" }), 10_000);
    turn1.begin();
    const turn2 = cache.lookup(request({ history: ["first"], prompt: "second" }), 10_100);
    expect(turn2.usage.cache_read_input_tokens).toBe(turn1.usage.cache_creation_input_tokens);
    expect(turn2.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(turn2.usage.cache_creation_input_tokens).toBeLessThan(20);
  });

  it("keeps an entry 5 minutes from its last use, or 1 hour when the breakpoint asks for it", () => {
    const time = clock();
    const cache = new PromptCache({ now: time.now });
    cache.lookup(request(), 10_000).begin();
    time.advance(4 * 60_000);
    expect(cache.lookup(request(), 10_000).usage.cache_read_input_tokens).toBeGreaterThan(0);
    // That read refreshed it.
    time.advance(4 * 60_000);
    expect(cache.lookup(request(), 10_000).usage.cache_read_input_tokens).toBeGreaterThan(0);
    time.advance(5 * 60_000 + 1);
    expect(cache.lookup(request(), 10_000).usage.cache_read_input_tokens).toBe(0);

    const hour = cache.lookup(request({ ttl: "1h", system: "long-lived" }), 10_000);
    expect(hour.usage.cache_creation.ephemeral_1h_input_tokens).toBe(hour.usage.cache_creation_input_tokens);
    expect(hour.usage.cache_creation.ephemeral_5m_input_tokens).toBe(0);
    hour.begin();
    time.advance(59 * 60_000);
    expect(cache.lookup(request({ ttl: "1h", system: "long-lived" }), 10_000).usage.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it("does not cache a prefix under the minimum length", () => {
    const cache = new PromptCache();
    const small = { model: "m", system: [{ type: "text", text: "short", cache_control: EPHEMERAL }], messages: [{ role: "user", content: "hi" }] };
    const lookup = cache.lookup(small, 50);
    expect(lookup.usage).toMatchObject({ input_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    lookup.begin();
    expect(cache.size).toBe(0);
  });
});

describe("the rehearsal prompt cache's bound", () => {
  it("holds at most maxEntries, dropping the least recently used", () => {
    // Each conversation writes two entries: its system prompt's prefix and its message's.
    const cache = new PromptCache({ maxEntries: 3 });
    const write = (system: string) => cache.lookup(request({ system }), 10_000).begin();
    const reads = (system: string) => cache.lookup(request({ system }), 10_000).usage.cache_read_input_tokens > 0;
    write("a");
    write("b");
    expect(cache.size).toBe(3);
    // Read last: b's entries go first when c needs room.
    expect(reads("a")).toBe(true);
    write("c");
    expect(reads("b")).toBe(false);
    expect(reads("a")).toBe(true);
    expect(reads("c")).toBe(true);
    for (let i = 0; i < 100; i++) write(`many ${i}`);
    expect(cache.size).toBe(3);
  });
});
