import { spawn } from "node:child_process";
import { once } from "node:events";
import { createReadStream } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import fc from "fast-check";
import { describe, expect } from "vitest";
import { CadreError } from "../../src/errors.ts";
import {
  DEFAULT_MAX_LINE_BYTES,
  decodeNdjson,
  encodeLine,
  LineTooLongError,
  MALFORMED_PREVIEW_CHARS,
  NdjsonDecoder,
  type NdjsonEvent,
} from "../../src/protocol/ndjson.ts";
import { it } from "../support/fixtures.ts";
import { collect } from "../support/streams.ts";

// Strings dense in what breaks line codecs: line breaks, quotes, backslashes, multi-byte UTF-8.
const trickyString = fc.string({
  unit: fc.constantFrom("a", "\n", "\r", "\u2028", "\u2029", '"', "\\", "é", "中", "😀", " ", "\t", "\u0000"),
});
const jsonValue = fc.oneof(
  fc.jsonValue({ stringUnit: "binary" }),
  fc.jsonValue({ stringUnit: "grapheme" }),
  fc.dictionary(trickyString, trickyString),
  trickyString,
);
const jsonValues = fc.array(jsonValue, { maxLength: 12 });

/** What a value looks like after a JSON round trip (drops -0, undefined members, …). */
const viaJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** Sorted cut positions in [0, length], from arbitrary naturals (duplicates kept: empty chunks). */
const cutPoints = (length: number, points: number[]) => points.map((p) => p % (length + 1)).sort((a, b) => a - b);

/** Splits `bytes` at the given positions. */
function cut(bytes: Uint8Array, points: number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const p of cutPoints(bytes.length, points)) {
    chunks.push(bytes.subarray(from, p));
    from = p;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

function decodeAll(chunks: Iterable<Uint8Array | string>, maxLineBytes?: number): NdjsonEvent[] {
  const decoder = new NdjsonDecoder({ maxLineBytes });
  const events: NdjsonEvent[] = [];
  for (const chunk of chunks) {
    events.push(...decoder.push(chunk));
    expect(decoder.bufferedBytes).toBeLessThanOrEqual(decoder.maxLineBytes + 1);
  }
  events.push(...decoder.end());
  return events;
}

const valuesOf = (events: NdjsonEvent[]) => events.map((e) => (e.kind === "value" ? e.value : e));
const utf8 = (text: string) => new TextEncoder().encode(text);

describe("encodeLine", () => {
  it("writes exactly one line for strings with \\n, \\r, U+2028 and U+2029, and round-trips", () => {
    const message = { text: "a\nb\rc\r\nd\u2028e\u2029f", nested: ["\u2028\u2029", { "k\ney": "\n" }] };
    const line = encodeLine(message);
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\n\r\u2028\u2029]/);
    expect(line).toContain("\\u2028");
    expect(line).toContain("\\u2029");
    expect(JSON.parse(line)).toEqual(message);
  });

  it("never lets a line break through, for any JSON value", () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const line = encodeLine(value);
        expect(line.at(-1)).toBe("\n");
        expect(line.slice(0, -1)).not.toMatch(/[\n\r\u2028\u2029]/);
        expect(JSON.parse(line)).toEqual(viaJson(value));
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ["undefined", undefined],
    ["a function", () => 1],
    ["a symbol", Symbol("s")],
    ["a BigInt", 10n],
    ["a nested BigInt", { usage: { tokens: 1n } }],
    [
      "a cycle",
      (() => {
        const o: Record<string, unknown> = {};
        o.self = o;
        return o;
      })(),
    ],
  ])("throws NDJSON_UNENCODABLE for %s", (_, value) => {
    let caught: unknown;
    try {
      encodeLine(value);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CadreError);
    expect((caught as CadreError).code).toBe("NDJSON_UNENCODABLE");
  });
});

describe("NdjsonDecoder", () => {
  it("decodes encoded values cut into arbitrary byte chunks (inside UTF-8 sequences too)", () => {
    fc.assert(
      fc.property(jsonValues, fc.array(fc.nat(), { maxLength: 20 }), fc.boolean(), (values, points, final) => {
        let text = values.map(encodeLine).join("");
        if (!final) text = text.slice(0, -1); // last line without its newline: flushed by end()
        const events = decodeAll(cut(utf8(text), points));
        expect(events.every((e) => e.kind === "value")).toBe(true);
        expect(valuesOf(events)).toEqual(values.map(viaJson));
      }),
      { numRuns: 500 },
    );
  });

  it("decodes CRLF lines with blank and whitespace-only lines interspersed", () => {
    const blank = fc.constantFrom("", " ", "\t", "  \t ", "\r");
    fc.assert(
      fc.property(
        fc.array(fc.tuple(jsonValue, fc.array(blank, { maxLength: 2 })), { maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (entries, points) => {
          const text = entries.map(([value, blanks]) => `${blanks.map((b) => `${b}\r\n`).join("")}${encodeLine(value).slice(0, -1)}\r\n`).join("");
          const events = decodeAll(cut(utf8(text), points));
          expect(valuesOf(events)).toEqual(entries.map(([value]) => viaJson(value)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("accepts string chunks", () => {
    fc.assert(
      fc.property(jsonValues, fc.array(fc.nat(), { maxLength: 10 }), (values, points) => {
        // Cut on code point boundaries, as a stream with setEncoding("utf8") delivers text.
        const codePoints = Array.from(values.map(encodeLine).join(""));
        const chunks: string[] = [];
        let from = 0;
        for (const p of [...cutPoints(codePoints.length, points), codePoints.length]) {
          chunks.push(codePoints.slice(from, p).join(""));
          from = p;
        }
        expect(valuesOf(decodeAll(chunks))).toEqual(values.map(viaJson));
      }),
      { numRuns: 200 },
    );
  });

  it("keeps its own copy of an unfinished line, so callers may reuse their chunk buffer", () => {
    const decoder = new NdjsonDecoder();
    const buffer = new Uint8Array(64);
    const feed = (text: string) => {
      buffer.fill(0x20);
      buffer.set(utf8(text));
      return decoder.push(buffer.subarray(0, utf8(text).length));
    };
    expect(feed('{"a":"héllo')).toEqual([]);
    expect(valuesOf(feed(' wörld"}\n'))).toEqual([{ a: "héllo wörld" }]);
  });

  it("reports a malformed line between two good ones as one event, in order", () => {
    const notJson = fc
      .string({ unit: fc.constantFrom("{", "}", "x", "1", '"', ":", ",", " ", "é", "😀", "\r", "["), minLength: 1 })
      .filter((s) => s.trim() !== "" && !isJson(s));
    fc.assert(
      fc.property(jsonValue, notJson, jsonValue, fc.array(fc.nat(), { maxLength: 10 }), (a, bad, b, points) => {
        const text = `${encodeLine(a)}${bad}\n${encodeLine(b)}`;
        const events = decodeAll(cut(utf8(text), points));
        expect(events.map((e) => e.kind)).toEqual(["value", "malformed", "value"]);
        const [first, malformed, last] = events as [NdjsonEvent, NdjsonEvent, NdjsonEvent];
        expect(first).toEqual({ kind: "value", value: viaJson(a) });
        expect(last).toEqual({ kind: "value", value: viaJson(b) });
        if (malformed.kind !== "malformed") throw new Error("unreachable");
        expect(malformed.line).toBe(bad.replace(/\r$/, ""));
        expect(malformed.error).toBeInstanceOf(Error);
      }),
      { numRuns: 300 },
    );
  });

  it("truncates the text of a long malformed line", () => {
    const events = decodeAll([utf8(`${"x".repeat(10_000)}\n`)]);
    expect(events).toHaveLength(1);
    const event = events[0]!;
    expect(event.kind).toBe("malformed");
    if (event.kind === "malformed") {
      expect(event.line.length).toBeLessThanOrEqual(MALFORMED_PREVIEW_CHARS + 1);
      expect(event.line.startsWith("xxxx")).toBe(true);
    }
  });

  it("defaults the limit to 32 MiB", () => {
    expect(DEFAULT_MAX_LINE_BYTES).toBe(32 * 1024 * 1024);
    expect(new NdjsonDecoder().maxLineBytes).toBe(DEFAULT_MAX_LINE_BYTES);
  });
});

describe("line limit", () => {
  const max = 100;
  /** A JSON string line of exactly `bytes` bytes, multi-byte characters included. */
  const lineOf = (bytes: number) => `"${"é".repeat((bytes - 2 - ((bytes - 2) % 2)) / 2)}${"a".repeat((bytes - 2) % 2)}"`;

  it("accepts a line of exactly maxLineBytes bytes (LF, CRLF, final line), in any chunking", () => {
    const line = lineOf(max);
    expect(utf8(line).length).toBe(max);
    fc.assert(
      fc.property(fc.constantFrom("\n", "\r\n", ""), fc.array(fc.nat(), { maxLength: 8 }), (end, points) => {
        const text = `1\n${line}${end}`;
        expect(valuesOf(decodeAll(cut(utf8(text), points), max))).toEqual([1, JSON.parse(line)]);
      }),
      { numRuns: 200 },
    );
  });

  it("throws LineTooLongError for one byte more, in any chunking", () => {
    const line = lineOf(max + 1);
    expect(utf8(line).length).toBe(max + 1);
    fc.assert(
      fc.property(fc.constantFrom("\n", "\r\n", ""), fc.array(fc.nat(), { maxLength: 8 }), (end, points) => {
        let caught: unknown;
        try {
          decodeAll(cut(utf8(`${line}${end}2\n`), points), max);
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(LineTooLongError);
        expect((caught as LineTooLongError).code).toBe("NDJSON_LINE_TOO_LONG");
        expect((caught as LineTooLongError).maxLineBytes).toBe(max);
      }),
      { numRuns: 200 },
    );
  });

  it("returns the events completed before the long line, then throws on the next call", () => {
    const decoder = new NdjsonDecoder({ maxLineBytes: max });
    expect(valuesOf(decoder.push(utf8(`{"a":1}\n${"x".repeat(max + 5)}`)))).toEqual([{ a: 1 }]);
    expect(() => decoder.push(utf8("\n{}\n"))).toThrow(LineTooLongError);
    expect(() => decoder.end()).toThrow(LineTooLongError);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it("fails fast on a 100 MB line with a 1 MB limit, holding at most the limit", () => {
    const limit = 1024 * 1024;
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    const decoder = new NdjsonDecoder({ maxLineBytes: limit });
    const arrayBuffersBefore = process.memoryUsage().arrayBuffers;
    let pushed = 0;
    let caught: unknown;
    try {
      for (let total = 0; total < 100 * 1024 * 1024; total += chunk.length) {
        pushed++;
        decoder.push(chunk);
        expect(decoder.bufferedBytes).toBeLessThanOrEqual(limit);
      }
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(LineTooLongError);
    expect(pushed).toBe(limit / chunk.length + 1);
    expect(decoder.bufferedBytes).toBe(0);
    expect(process.memoryUsage().arrayBuffers - arrayBuffersBefore).toBeLessThan(limit + 2 * chunk.length);
  });

  it("rejects a nonsensical limit", () => {
    expect(() => new NdjsonDecoder({ maxLineBytes: 0 })).toThrow(CadreError);
    expect(() => new NdjsonDecoder({ maxLineBytes: Number.NaN })).toThrow(CadreError);
  });
});

describe("decodeNdjson", () => {
  const messages = [
    { type: "system", subtype: "init", tools: ["Bash", "Read"] },
    { type: "assistant", message: { content: [{ type: "text", text: 'héllo 世界 😀\n"quoted"' }] } },
    { type: "result", subtype: "success", usage: { input_tokens: 3 } },
  ];
  const text = messages.map(encodeLine).join("");

  it("reads a file stream delivered in 7-byte chunks", async ({ tmp: dir }) => {
    const file = join(dir, "out.ndjson");
    await writeFile(file, text);
    const events = await collect(decodeNdjson(createReadStream(file, { highWaterMark: 7 })));
    expect(valuesOf(events)).toEqual(messages);
  });

  it("reads a child process's stdout, as text too", async () => {
    // The child writes the lines in 5-byte pieces with pauses, so reads split lines.
    const script = `const t = ${JSON.stringify(text)}; const b = Buffer.from(t); let i = 0;
      const tick = () => { if (i >= b.length) return; process.stdout.write(b.subarray(i, i += 5)); setTimeout(tick, 1); }; tick();`;
    for (const encoding of [undefined, "utf8"] as const) {
      const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
      if (encoding) child.stdout.setEncoding(encoding);
      const events = await collect(decodeNdjson(child.stdout));
      expect(valuesOf(events)).toEqual(messages);
      await once(child, "close");
    }
  });

  it("reads an async generator and flushes a final unterminated line", async () => {
    async function* source() {
      const bytes = utf8(`${text}{"last":true}`);
      for (let i = 0; i < bytes.length; i += 3) yield bytes.subarray(i, i + 3);
    }
    expect(valuesOf(await collect(decodeNdjson(source())))).toEqual([...messages, { last: true }]);
  });

  it("ends with the signal's reason when aborted while waiting, and releases the source", { timeout: 5_000 }, async () => {
    const stream = new PassThrough();
    const controller = new AbortController();
    const iterator = decodeNdjson(stream, { signal: controller.signal })[Symbol.asyncIterator]();
    stream.write(encodeLine({ n: 1 }));
    expect(await iterator.next()).toEqual({ done: false, value: { kind: "value", value: { n: 1 } } });
    const pending = iterator.next(); // waits: the stream stays open
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(stream.destroyed).toBe(true);
  });

  it("ends an async generator source that never yields again", { timeout: 5_000 }, async () => {
    const controller = new AbortController();
    async function* stuck() {
      yield utf8(encodeLine({ n: 1 }));
      await new Promise(() => {});
    }
    const seen: unknown[] = [];
    const run = (async () => {
      for await (const event of decodeNdjson(stuck(), { signal: controller.signal })) {
        seen.push(event);
        controller.abort(new Error("stop"));
      }
    })();
    await expect(run).rejects.toThrow("stop");
    expect(valuesOf(seen as NdjsonEvent[])).toEqual([{ n: 1 }]);
  });

  it("does not start on an already aborted signal", async () => {
    const source = (async function* () {
      yield encodeLine(1);
    })();
    await expect(collect(decodeNdjson(source, { signal: AbortSignal.abort() }))).rejects.toMatchObject({
      name: "AbortError",
    });
  });

  it("yields the events before a too-long line, then throws LineTooLongError", async () => {
    async function* source() {
      yield utf8(`{"a":1}\n${"x".repeat(50)}\n{"b":2}\n`);
    }
    const seen: NdjsonEvent[] = [];
    await expect(
      (async () => {
        for await (const event of decodeNdjson(source(), { maxLineBytes: 20 })) seen.push(event);
      })(),
    ).rejects.toBeInstanceOf(LineTooLongError);
    expect(valuesOf(seen)).toEqual([{ a: 1 }]);
  });
});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
