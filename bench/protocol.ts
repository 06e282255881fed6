/**
 * Throughput of the stdout decoding path on realistic stream-json traffic (npm run bench:protocol).
 *
 *   (a) JSON.parse over pre-split lines: the baseline, no byte handling at all
 *   (b) NdjsonDecoder over the raw bytes in 64 KiB chunks, as a pipe delivers them
 *   (c) (b) + parseCliMessage on every value, if src/protocol/parse.ts exists
 *   (r) reference: UTF-8 decoding alone, which (b) must do and (a) never pays for
 *   (a') and (b') again on the ASCII-only lines of the same traffic, where decoding is a copy
 *
 * After a warm-up round, the variants of a group run in turns for REPS rounds, so that load from
 * other processes hits them alike; "vs (a)" is the median over rounds of (a)'s time / its time
 * in the same round. MB/s is over the UTF-8 bytes of the stream.
 */
import { Buffer, isAscii } from "node:buffer";
import { existsSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { encodeLine, NdjsonDecoder, type NdjsonEvent } from "../src/protocol/ndjson.ts";
import { realisticMessages } from "./realistic-messages.ts";

const TARGET_BYTES = 100 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
const REPS = 5;

// A full collection before each run keeps one run's garbage from being billed to the next.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

interface Dataset {
  bytes: Buffer;
  /** The lines without terminators, cut from `bytes` so each string has its natural representation. */
  lines: string[];
  chunks: Buffer[];
}

function dataset(bytes: Buffer): Dataset {
  const lines: string[] = [];
  for (let start = 0, nl = bytes.indexOf(0x0a); nl !== -1; start = nl + 1, nl = bytes.indexOf(0x0a, start)) {
    lines.push(bytes.toString("utf8", start, nl));
  }
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) chunks.push(bytes.subarray(at, at + CHUNK_BYTES));
  return { bytes, lines, chunks };
}

interface Variant {
  name: string;
  /** Returns how many values it decoded, checked against the line count. */
  run: () => number;
  seconds: number[];
  ratios: number[];
}

let sink: unknown;

function measure(data: Dataset, variants: Variant[]): void {
  for (let round = 0; round <= REPS; round++) {
    let baseline = 0;
    for (const variant of variants) {
      gc();
      const start = performance.now();
      const count = variant.run();
      const elapsed = (performance.now() - start) / 1000;
      if (count !== data.lines.length) {
        throw new Error(`${variant.name}: decoded ${count} values, expected ${data.lines.length}`);
      }
      if (round === 0) continue;
      if (variant === variants[0]) baseline = elapsed;
      variant.seconds.push(elapsed);
      variant.ratios.push(baseline / elapsed);
    }
  }
}

const variant = (name: string, run: () => number): Variant => ({ name, run, seconds: [], ratios: [] });

const parseLines = (data: Dataset) => () => {
  for (const line of data.lines) sink = JSON.parse(line);
  return data.lines.length;
};

const decodeChunks = (data: Dataset, onValue: (value: unknown) => void) => () => {
  const decoder = new NdjsonDecoder();
  let count = 0;
  const take = (events: NdjsonEvent[]) => {
    for (const event of events) {
      if (event.kind !== "value") throw new Error(`malformed line: ${event.line}`);
      onValue(event.value);
      count++;
    }
  };
  for (const chunk of data.chunks) take(decoder.push(chunk));
  take(decoder.end());
  return count;
};

const started = performance.now();
const encoded: string[] = [];
let size = 0;
for (const message of realisticMessages(1)) {
  const line = encodeLine(message);
  encoded.push(line);
  size += Buffer.byteLength(line);
  if (size >= TARGET_BYTES) break;
}
const full = dataset(Buffer.from(encoded.join("")));
const ascii = dataset(Buffer.from(encoded.filter((line) => isAscii(Buffer.from(line))).join("")));
encoded.length = 0;

const lineBytes = full.lines.map((line) => Buffer.byteLength(line));
console.log(
  `${(full.bytes.length / 1e6).toFixed(1)} MB, ${full.lines.length} lines (${lineBytes.filter((b) => b >= 100_000).length} of 100 KB+, ` +
    `largest ${(Math.max(...lineBytes) / 1e3).toFixed(0)} KB), ` +
    `${(100 - (ascii.bytes.length / full.bytes.length) * 100).toFixed(0)}% of bytes in lines with non-ASCII text; ` +
    `node ${process.version}; generated in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);

const main: Variant[] = [
  variant("(a) JSON.parse, pre-split lines", parseLines(full)),
  variant(
    "(b) NdjsonDecoder, 64 KiB chunks",
    decodeChunks(full, (value) => (sink = value)),
  ),
];
const parsePath = new URL("../src/protocol/parse.ts", import.meta.url);
let unknownMessages = 0;
if (existsSync(parsePath)) {
  const { parseCliMessage } = (await import(parsePath.href)) as { parseCliMessage: (value: unknown) => unknown };
  main.push(
    variant(
      "(c) (b) + parseCliMessage",
      decodeChunks(full, (value) => {
        const message = parseCliMessage(value) as { type?: unknown };
        if (message.type === "unknown") unknownMessages++;
        sink = message;
      }),
    ),
  );
}
main.push(
  variant("(r) UTF-8 decoding alone", () => {
    const decoder = new TextDecoder();
    for (const chunk of full.chunks) sink = decoder.decode(chunk, { stream: true });
    return full.lines.length;
  }),
);
const asciiOnly: Variant[] = [
  variant(`(a') (a), ASCII lines only (${(ascii.bytes.length / 1e6).toFixed(0)} MB)`, parseLines(ascii)),
  variant(
    "(b') (b), ASCII lines only",
    decodeChunks(ascii, (value) => (sink = value)),
  ),
];
// The small group first: after the large one (and zod's allocations) its figures come out lower.
measure(ascii, asciiOnly);
measure(full, main);

const median = (values: number[]) => [...values].sort((x, y) => x - y)[values.length >> 1]!;
console.log("".padEnd(40) + ["MB/s best", "MB/s median", "vs (a)"].map((c) => c.padStart(13)).join(""));
for (const [data, variants] of [
  [full, main],
  [ascii, asciiOnly],
] as const) {
  const mb = data.bytes.length / 1e6;
  for (const v of variants) {
    const cells = [(mb / Math.min(...v.seconds)).toFixed(0), (mb / median(v.seconds)).toFixed(0)];
    cells.push(`${(median(v.ratios) * 100).toFixed(0)}%`);
    console.log(v.name.padEnd(40) + cells.map((c) => c.padStart(13)).join(""));
  }
}
if (!main.some((v) => v.name.startsWith("(c)"))) console.log("(c) skipped: src/protocol/parse.ts does not exist");
if (unknownMessages > 0) {
  console.log(`(c) parseCliMessage returned "unknown" for ${unknownMessages / (REPS + 1)} messages per run`);
}
console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
void sink;
