/**
 * NDJSON codec for the stream-json protocol: one JSON value per line, both ways.
 * Schema-agnostic: it yields plain JSON values; message parsing is a layer above.
 */
import * as nodeBuffer from "node:buffer";
import { Buffer } from "node:buffer";
import { CadreError } from "../errors.ts";

/** Default cap on one line's size. The CLI's largest lines (big tool results) stay far below. */
export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024;

/** A malformed line is reported with at most this many characters of its text. */
export const MALFORMED_PREVIEW_CHARS = 1024;

const LF = 0x0a;
const CR = 0x0d;
// U+2028/U+2029 are legal raw inside JSON strings but are line breaks to some readers.
const LINE_SEPARATORS = /[\u2028\u2029]/g;

/**
 * Encodes one message as exactly one line: JSON + "\n", with no other raw line break.
 * Throws a CadreError (NDJSON_UNENCODABLE) for values JSON cannot represent.
 */
export function encodeLine(message: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(message);
  } catch (cause) {
    // BigInt, cycles, or a throwing toJSON.
    throw new CadreError("NDJSON_UNENCODABLE", `Cannot encode message as JSON: ${(cause as Error).message}`, { cause });
  }
  if (json === undefined) {
    throw new CadreError("NDJSON_UNENCODABLE", `Cannot encode a ${typeof message} as a JSON line: only JSON values can be sent`);
  }
  // JSON text holds these only inside strings, where the escape means the same character.
  return `${json.replace(LINE_SEPARATORS, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"))}\n`;
}

export type NdjsonEvent = { kind: "value"; value: unknown } | { kind: "malformed"; line: string; error: Error };

/** A line grew past the decoder's limit; the stream cannot be decoded further. */
export class LineTooLongError extends CadreError {
  readonly maxLineBytes: number;

  constructor(maxLineBytes: number) {
    super("NDJSON_LINE_TOO_LONG", `An NDJSON line exceeds ${maxLineBytes} bytes; raise maxLineBytes if such lines are expected`);
    this.maxLineBytes = maxLineBytes;
  }
}

export interface NdjsonDecoderOptions {
  /** Largest line accepted, in bytes, not counting its LF or CRLF terminator. */
  maxLineBytes?: number;
}

/**
 * Push-style NDJSON decoder for 'data' handlers. Accepts chunks cut anywhere (even inside a
 * UTF-8 sequence or between CR and LF), LF or CRLF endings; skips blank lines; reports a
 * non-JSON line as a "malformed" event and goes on.
 *
 * It splits on bytes: LF (0x0A) never occurs inside a multi-byte UTF-8 sequence, so every
 * complete line is decoded on its own (see decodeUtf8) and only the unfinished tail of a chunk
 * is copied and kept: at most maxLineBytes + 1 bytes (see bufferedBytes).
 *
 * When a line exceeds the limit, push() throws LineTooLongError at once, without buffering the
 * rest of that line. If that chunk also completed earlier lines, push() first returns their
 * events and the next push() or end() throws. After the error every call throws it again.
 */
export class NdjsonDecoder {
  readonly maxLineBytes: number;
  #parts: Uint8Array[] = [];
  #pendingBytes = 0;
  #failure: LineTooLongError | undefined;

  constructor(options: NdjsonDecoderOptions = {}) {
    const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new CadreError("NDJSON_BAD_OPTION", `maxLineBytes must be a positive integer, got ${max}`);
    }
    this.maxLineBytes = max;
  }

  /** Bytes of the unfinished line held between pushes (never more than maxLineBytes + 1). */
  get bufferedBytes(): number {
    return this.#pendingBytes;
  }

  push(chunk: Uint8Array | string): NdjsonEvent[] {
    if (this.#failure) throw this.#failure;
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const out: NdjsonEvent[] = [];
    const nl = bytes.indexOf(LF);
    if (nl === -1) {
      this.#hold(bytes, 0, out);
      return out;
    }
    let start = 0;
    if (this.#pendingBytes > 0) {
      const length = this.#pendingBytes + nl;
      if (length > this.maxLineBytes) {
        if (this.#tooLong(length, nl > 0 ? bytes[nl - 1] : this.#lastPendingByte())) return this.#fail(out);
      }
      this.#parts.push(bytes.subarray(0, nl));
      const line = Buffer.concat(this.#parts, length);
      this.#parts = [];
      this.#pendingBytes = 0;
      emitLine(decodeUtf8(line, 0, length), out);
      start = nl + 1;
    }
    const last = bytes.lastIndexOf(LF);
    if (last >= start && !this.#lines(bytes, start, last, out)) return this.#fail(out);
    this.#hold(bytes, last + 1, out);
    return out;
  }

  /** Emits the complete lines in bytes[start, end) (end is the last LF); false at a too-long one. */
  #lines(bytes: Buffer, start: number, end: number, out: NdjsonEvent[]): boolean {
    // Fast path, common with small messages: all ASCII, so decode once and split the string.
    if (end - start <= this.maxLineBytes && isAscii(view(bytes, start, end))) {
      emitLines(bytes.toString("latin1", start, end), out);
      return true;
    }
    for (let nl = bytes.indexOf(LF, start); nl !== -1; nl = bytes.indexOf(LF, start)) {
      const length = nl - start;
      if (length > this.maxLineBytes && this.#tooLong(length, bytes[nl - 1])) return false;
      if (length > 0) emitLine(decodeUtf8(bytes, start, nl), out);
      start = nl + 1;
    }
    return true;
  }

  /** Flushes a final line that has no trailing newline; the decoder is then empty. */
  end(): NdjsonEvent[] {
    if (this.#failure) throw this.#failure;
    const out: NdjsonEvent[] = [];
    if (this.#pendingBytes > 0) {
      const line = Buffer.concat(this.#parts, this.#pendingBytes);
      this.#parts = [];
      this.#pendingBytes = 0;
      emitLine(decodeUtf8(line, 0, line.length), out);
    }
    return out;
  }

  /** Keeps bytes[from..] as the start of the next line, or fails if it is already too long. */
  #hold(bytes: Buffer, from: number, out: NdjsonEvent[]): void {
    const tail = bytes.length - from;
    if (tail === 0) return;
    const length = this.#pendingBytes + tail;
    // A trailing CR may be the first half of CRLF: give it the benefit of the doubt.
    if (this.#tooLong(length, bytes[bytes.length - 1])) {
      this.#fail(out);
      return;
    }
    // Copy (Buffer#slice would not): the caller may reuse its chunk, and a view would pin
    // the whole chunk in memory.
    this.#parts.push(new Uint8Array(bytes.subarray(from)));
    this.#pendingBytes = length;
  }

  /** Whether a line of `length` bytes before its LF, ending in `lastByte`, is over the limit. */
  #tooLong(length: number, lastByte: number | undefined): boolean {
    return length > this.maxLineBytes && !(length === this.maxLineBytes + 1 && lastByte === CR);
  }

  #lastPendingByte(): number | undefined {
    const part = this.#parts[this.#parts.length - 1];
    return part?.[part.length - 1];
  }

  /** Records the failure, drops the buffered line, and throws now unless events are due first. */
  #fail(out: NdjsonEvent[]): NdjsonEvent[] {
    this.#failure = new LineTooLongError(this.maxLineBytes);
    this.#parts = [];
    this.#pendingBytes = 0;
    if (out.length === 0) throw this.#failure;
    return out;
  }
}

// SIMD-fast in Node (>= 18.15); where a runtime lacks it, every line takes the general path.
const isAscii: (view: Uint8Array) => boolean = (nodeBuffer as { isAscii?: (view: Uint8Array) => boolean }).isAscii ?? (() => false);

// Node 20's TextDecoder switches from V8's UTF-8 decoder to ICU's once it has seen a stream-mode
// call, and ICU is ~1.4x faster on non-ASCII text. Later calls pass no `stream`, so each line is
// decoded on its own with standard results whatever the runtime does.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
utf8.decode(new Uint8Array(0), { stream: true });

const view = (bytes: Buffer, start: number, end: number) => new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start);

/** Decodes bytes[start, end) (whole UTF-8 sequences), keeping ASCII as a one-byte string. */
function decodeUtf8(bytes: Buffer, start: number, end: number): string {
  const part = view(bytes, start, end);
  // JSON.parse reads one-byte strings fastest, and latin1 is a plain copy.
  return isAscii(part) ? bytes.toString("latin1", start, end) : utf8.decode(part);
}

/** Emits every line of `text` (lines separated by "\n", no terminator after the last). */
function emitLines(text: string, out: NdjsonEvent[]): void {
  let pos = 0;
  for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", pos)) {
    emitLine(text.slice(pos, nl), out);
    pos = nl + 1;
  }
  emitLine(pos === 0 ? text : text.slice(pos), out);
}

function emitLine(line: string, out: NdjsonEvent[]): void {
  // A CR left over from CRLF is JSON whitespace: JSON.parse ignores it.
  if (line.length === 0 || line === "\r") return;
  try {
    out.push({ kind: "value", value: JSON.parse(line) });
  } catch (error) {
    if (line.trim() === "") return;
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    out.push({
      kind: "malformed",
      line: text.length > MALFORMED_PREVIEW_CHARS ? `${text.slice(0, MALFORMED_PREVIEW_CHARS)}…` : text,
      error: error as Error,
    });
  }
}

/**
 * Decodes an async byte or text stream (a child's stdout, an async generator) into events.
 * Ends when the source ends; when `signal` aborts it stops reading, releases the source and
 * rejects with the signal's reason. Throws LineTooLongError as NdjsonDecoder.push does.
 */
export async function* decodeNdjson(
  source: AsyncIterable<Uint8Array | string>,
  options: { maxLineBytes?: number; signal?: AbortSignal } = {},
): AsyncIterable<NdjsonEvent> {
  const { signal } = options;
  const decoder = new NdjsonDecoder(options);
  const iterator = source[Symbol.asyncIterator]();
  let done = false;
  let waiting = false;
  try {
    signal?.throwIfAborted();
    for (;;) {
      waiting = true;
      const next = signal ? await nextOrAbort(iterator, signal) : await iterator.next();
      waiting = false;
      if (next.done) {
        done = true;
        break;
      }
      for (const event of decoder.push(next.value)) {
        signal?.throwIfAborted();
        yield event;
      }
    }
    for (const event of decoder.end()) {
      signal?.throwIfAborted();
      yield event;
    }
  } finally {
    if (!done) release(source, iterator, waiting);
  }
}

/**
 * Lets go of a source read no further (abort, error, consumer break). An async iterator cannot
 * run return() while its next() is pending, so a Node stream is destroyed directly then.
 */
function release(source: object, iterator: AsyncIterator<unknown>, waiting: boolean): void {
  const destroy = (source as { destroy?: unknown }).destroy;
  if (waiting && typeof destroy === "function") destroy.call(source);
  else if (iterator.return) Promise.resolve(iterator.return()).catch(() => {});
}

/** iterator.next(), or the signal's reason as a rejection as soon as it aborts. */
function nextOrAbort<T>(iterator: AsyncIterator<T>, signal: AbortSignal): Promise<IteratorResult<T>> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    iterator.next().then(
      (result) => {
        signal.removeEventListener("abort", onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
