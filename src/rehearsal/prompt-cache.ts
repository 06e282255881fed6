// Prompt caching as the Messages API documents it, so a rehearsal bills cache writes and reads as the API would.
import { createHash } from "node:crypto";
import { PROMPT_CACHE_TTL_MS } from "../protocol/index.ts";
import { estimateTokens } from "./reply.ts";

/**
 * Prompt caching as the Messages API documents it, so that a rehearsal bills
 * cache writes and reads the way the real API would and the CLI's cost
 * follows from them.
 *
 * - The prompt is read in the API's order, tools, then system, then messages,
 *   as a sequence of blocks; a block with `cache_control` is a breakpoint.
 * - A request reads the longest cached prefix that ends at a breakpoint, or
 *   at one of the 20 blocks before one (the API's lookback), and writes the
 *   prefixes of its later breakpoints: cache_read_input_tokens is the prefix
 *   it read, cache_creation_input_tokens what lies between that and its last
 *   breakpoint, input_tokens the rest.
 * - A written entry is readable only once the response that wrote it has
 *   begun (its message_start); a request that arrives before then misses and
 *   writes again. A write whose response never begins is dropped.
 * - An entry lives 5 minutes (1 hour with `cache_control.ttl: "1h"`) from its
 *   last write or read. Prefixes under 1,024 tokens are not cached (the
 *   documented minimum for most models).
 *
 * Measured on claude 2.1.330: the CLI marks its two main system blocks and the
 * last block of the conversation. The first system block is a billing header
 * ("x-anthropic-billing-header: cc_version=2.1.330.<hash of the conversation>;
 * …") that differs per conversation; the API takes it as metadata, not as
 * part of the prompt, so it is left out here too. Everything else in the
 * shared part (tools, system prompt, which names the working directory and
 * HOME in its memory path) is identical across workers configured alike.
 * Tokens are estimated at four characters each of a block's JSON, and the
 * cache key is a hash of the model and the blocks without their cache_control.
 */

export const MIN_CACHEABLE_TOKENS = 1024;
const LOOKBACK_BLOCKS = 20;
const BILLING_HEADER = "x-anthropic-billing-header:";

/** The input side of a response's usage, in the API's field names. */
export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** What one request finds in the cache. Its writes become readable at `begin()`, when its response starts; without it they never do. */
export interface CacheLookup {
  usage: CacheUsage;
  begin(): void;
}

interface Position {
  key: string;
  tokens: number;
  /** Set on breakpoints: how long an entry written here lives. */
  ttlMs: number | undefined;
}

interface Entry {
  ttlMs: number;
  expiresAt: number;
}

type Block = Record<string, unknown>;

function isBlock(value: unknown): value is Block {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function contentBlocks(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter(isBlock) : [];
}

function ttlOf(block: Block): number | undefined {
  const control = block.cache_control;
  if (!isBlock(control)) return undefined;
  return control.ttl === "1h" ? PROMPT_CACHE_TTL_MS["1h"] : PROMPT_CACHE_TTL_MS["5m"];
}

/** The blocks of a request in cache order, each with what it adds to the prefix. */
function promptBlocks(body: Record<string, unknown>): { block: Block; tag: string }[] {
  const blocks: { block: Block; tag: string }[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools.filter(isBlock) : []) blocks.push({ block: tool, tag: "tool" });
  for (const block of contentBlocks(body.system)) {
    if (typeof block.text === "string" && block.text.startsWith(BILLING_HEADER)) continue;
    blocks.push({ block, tag: "system" });
  }
  for (const message of Array.isArray(body.messages) ? body.messages.filter(isBlock) : []) {
    for (const [index, block] of contentBlocks(message.content).entries()) {
      blocks.push({ block, tag: `${String(message.role)}${index === 0 ? "^" : ""}` });
    }
  }
  return blocks;
}

/** A running hash and token count after each block. */
function positions(body: Record<string, unknown>): Position[] {
  const result: Position[] = [];
  let key = createHash("sha256").update(String(body.model)).digest("hex");
  let chars = 0;
  for (const { block, tag } of promptBlocks(body)) {
    const { cache_control: _control, ...rest } = block;
    const text = JSON.stringify(rest);
    chars += text.length;
    key = createHash("sha256").update(key).update(tag).update(text).digest("hex");
    result.push({ key, tokens: estimateTokens(chars), ttlMs: ttlOf(block) });
  }
  return result;
}

/** The most entries a cache holds: past it the least recently used goes (a run of many distinct prompts stays bounded). */
const MAX_CACHE_ENTRIES = 10_000;
/** Expired entries are swept at most this often, not at every request. */
const PRUNE_EVERY_MS = 1_000;

export class PromptCache {
  /** In order of last use, least recent first. */
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;
  readonly #maxEntries: number;
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(options: { now?: () => number; maxEntries?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#maxEntries = options.maxEntries ?? MAX_CACHE_ENTRIES;
  }

  /** Readable entries now. */
  get size(): number {
    this.#prune(true);
    return this.#entries.size;
  }

  /** Looks the request's prompt up; `totalTokens` is the whole request's estimate. */
  lookup(body: Record<string, unknown>, totalTokens: number): CacheLookup {
    this.#prune();
    const all = positions(body);
    const breakpoints = all.flatMap((position, index) => (position.ttlMs !== undefined && position.tokens >= MIN_CACHEABLE_TOKENS ? [index] : []));
    let hit = -1;
    for (const breakpoint of breakpoints) {
      for (let index = breakpoint; index >= Math.max(0, breakpoint - LOOKBACK_BLOCKS) && index > hit; index--) {
        if (this.#readable(all[index]!.key)) {
          hit = index;
          break;
        }
      }
    }
    const read = hit >= 0 ? all[hit]!.tokens : 0;
    if (hit >= 0) this.#touch(all[hit]!.key);

    const writes = breakpoints.filter((index) => index > hit).map((index) => all[index]!);
    const creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    let covered = read;
    for (const write of writes) {
      const span = write.tokens - covered;
      if (write.ttlMs === PROMPT_CACHE_TTL_MS["1h"]) creation.ephemeral_1h_input_tokens += span;
      else creation.ephemeral_5m_input_tokens += span;
      covered = write.tokens;
    }
    const usage: CacheUsage = {
      input_tokens: Math.max(0, totalTokens - covered),
      cache_creation_input_tokens: covered - read,
      cache_read_input_tokens: read,
      cache_creation: creation,
    };
    return {
      usage,
      begin: () => {
        for (const write of writes) {
          const ttlMs = write.ttlMs ?? PROMPT_CACHE_TTL_MS["5m"];
          this.#entries.delete(write.key);
          this.#entries.set(write.key, { ttlMs, expiresAt: this.#now() + ttlMs });
        }
        for (const key of this.#entries.keys()) {
          if (this.#entries.size <= this.#maxEntries) break;
          this.#entries.delete(key);
        }
      },
    };
  }

  /** A read refreshes the entry's lifetime (and makes it the most recently used). */
  #touch(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    entry.expiresAt = this.#now() + entry.ttlMs;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
  }

  /** Held and not expired: the sweep is only now and then. */
  #readable(key: string): boolean {
    const entry = this.#entries.get(key);
    return entry !== undefined && entry.expiresAt > this.#now();
  }

  #prune(always = false): void {
    const now = this.#now();
    if (!always && now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }
}
