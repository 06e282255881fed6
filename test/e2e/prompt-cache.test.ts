// The rehearsal server's prompt cache as the real CLI sees it: usage and cost follow cache writes and reads.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { Worker, type WorkerOptions } from "../../src/worker/index.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

async function sharedOptions(baseUrl: string): Promise<WorkerOptions> {
  const home = await tempHome();
  const cwd = join(home, "work");
  await mkdir(cwd);
  return { cwd, inheritEnv: false, env: offlineClaudeEnv({ baseUrl, home }) };
}

async function start(options: WorkerOptions): Promise<Worker> {
  const worker = await Worker.start(options);
  onTestFinished(async () => void (await worker.close()));
  return worker;
}

const tokens = (usage: Record<string, unknown>, field: string) => usage[field] as number;

describe("prompt caching on the rehearsal server, through the real CLI", () => {
  it("a second worker reads the prefix the first one wrote, and pays far less for its turn", async () => {
    const server = await createRehearsal({ review: [{ text: "reviewed" }] });
    const options = await sharedOptions(server.baseUrlFor("review"));
    const first = await (await start(options)).run("review a.ts");
    const second = await (await start(options)).run("review b.ts");

    expect(tokens(first.usage, "cache_read_input_tokens")).toBe(0);
    // Claude Code's tools and system prompt: about 20,000 tokens on the pinned CLI.
    expect(tokens(first.usage, "cache_creation_input_tokens")).toBeGreaterThan(15_000);
    expect(tokens(second.usage, "cache_read_input_tokens")).toBeGreaterThan(15_000);
    // It writes only its own conversation: the prompt and the environment block after it.
    expect(tokens(second.usage, "cache_creation_input_tokens")).toBeLessThan(tokens(second.usage, "cache_read_input_tokens") / 4);
    // The CLI prices reads far below writes; its cost follows the usage the server reported.
    expect(second.costUsd).toBeLessThan(first.costUsd / 3);
    expect(server.requests.map((r) => r.usage?.cache_read_input_tokens)).toEqual([0, tokens(second.usage, "cache_read_input_tokens")]);
  }, 60_000);

  it("a prefix is readable only once the response that wrote it has begun: two prompts sent together both write it", async () => {
    // The model takes 5 s to start answering: prompts sent together both ask before either answer begins.
    const server = await createRehearsal({ slow: [{ text: "done", delay_ms: 5_000 }] });
    const options = await sharedOptions(server.baseUrlFor("slow"));
    const [a, b] = await Promise.all([start(options), start(options)]);
    await Promise.all([a.run("review a.ts"), b.run("review b.ts")]);
    const [first, second] = server.requests;
    expect(second!.at).toBeLessThan(first!.respondedAt!);
    expect(first!.usage!.cache_read_input_tokens).toBe(0);
    expect(second!.usage!.cache_read_input_tokens).toBe(0);
  }, 60_000);
});
