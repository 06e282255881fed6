/**
 * The key Claude Code's workflow runtime (2.1.332) gives each agent() call in
 * its journal (`v2:<sha256>`), computed as the CLI computes it, so that cadre
 * can give a call the result the CLI recorded for it. Read from the pinned
 * CLI's own code: a call's key is the SHA-256 of the key before it in its
 * strand, a NUL, its prompt, a NUL, and its options (schema, model, effort,
 * isolation, agentType, disallowedTools, bashCommandClamp; keys sorted, as
 * JSON). The script's top level is one strand, starting from ""; each
 * parallel() or pipeline() forks the strand it is called in (its key becomes
 * the fork's), gives each item a strand of its own (from the fork's base and
 * the item's place), and joins them once all have settled (the strand goes on
 * from the fork and every item's last key).
 */
import { createHash } from "node:crypto";

/** The journal's format: keys of another version are another runtime's. */
export const CLAUDE_CODE_KEY_VERSION = "v2";

/** The options that make a call's key, in the CLI's order (the digest sorts them anyway). */
const KEYED_OPTIONS = ["schema", "model", "effort", "isolation", "agentType", "disallowedTools", "bashCommandClamp"] as const;
/** Options the CLI keeps sorted and without repeats (and leaves out when empty). */
const SORTED_LISTS = new Set(["disallowedTools", "bashCommandClamp"]);

/** Plain objects with their keys sorted, at every depth (the CLI's canonical form before JSON). */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) if (key !== "__proto__") sorted[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/** agent()'s options as the key reads them: the options as the script gave them (JSON data), the keyed ones only. */
export function keyedOptionsText(raw: unknown): string {
  const options = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const picked: Record<string, unknown> = {};
  for (const name of KEYED_OPTIONS) {
    let value = options[name];
    if (SORTED_LISTS.has(name) && Array.isArray(value)) value = value.length === 0 ? undefined : [...new Set(value)].sort();
    if (value !== undefined) picked[name] = value;
  }
  return JSON.stringify(sortedKeys(picked));
}

const sha256 = (...parts: string[]) => {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash;
};

/** A call's key, from the key before it in its strand. */
export function claudeCodeKey(previous: string, prompt: string, rawOptions: unknown): string {
  return `${CLAUDE_CODE_KEY_VERSION}:${sha256(previous, "\0", prompt, "\0", keyedOptionsText(rawOptions)).digest("hex")}`;
}

/** Which of the dialect's functions forked a strand: it is part of the digest. */
export type StrandFork = "parallel" | "pipeline";

/** A step of a fork in the digest: its start, an item's strand, or its join over the items' last keys. */
function forkDigest(base: string, kind: StrandFork, step: number | "fork" | readonly string[]): string {
  const hash = sha256(base, "\0", kind, "\0");
  if (typeof step === "number") hash.update(`slot:${step}`);
  else if (step === "fork") hash.update("fork");
  else {
    hash.update("join");
    for (const last of step) hash.update("\0").update(last);
  }
  return hash.digest("hex");
}

/** A fork: the strand it was called in, its base (that strand's key before it), and its items' strands. */
interface Fork {
  strand: number;
  kind: StrandFork;
  base: string;
  items: number[];
}

/**
 * The strands of one script run (a nested workflow() has its own) and the
 * key each has reached; strand 0 is the script's top level. The sandbox says
 * which strand each call, fork and item belongs to (prelude.ts).
 */
export class ClaudeCodeStrands {
  /** By strand: its last key. */
  readonly #last: string[] = [""];
  readonly #forks: Fork[] = [];

  /** The key of a call made in `strand`, which goes on from it. */
  next(strand: number, prompt: string, rawOptions: unknown): string {
    const key = claudeCodeKey(this.#last[strand] ?? "", prompt, rawOptions);
    this.#last[strand] = key;
    return key;
  }

  /** A parallel() or pipeline() called in `strand`: the fork's number. */
  fork(strand: number, kind: StrandFork): number {
    const base = this.#last[strand] ?? "";
    this.#last[strand] = forkDigest(base, kind, "fork");
    return this.#forks.push({ strand, kind, base, items: [] }) - 1;
  }

  /** The strand of the fork's item `index`. */
  item(fork: number, index: number): number {
    const { base, kind, items } = this.#forks[fork]!;
    items[index] ??= this.#last.push(forkDigest(base, kind, index)) - 1;
    return items[index];
  }

  /** Every item of the fork has settled: its strand goes on from them. */
  join(fork: number): void {
    const { strand, kind, items } = this.#forks[fork]!;
    const lasts = Array.from(items, (item) => (item === undefined ? "" : this.#last[item]!));
    this.#last[strand] = forkDigest(this.#last[strand] ?? "", kind, lasts);
  }
}
