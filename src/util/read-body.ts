// Reading an HTTP request's body up to a size limit.
import type http from "node:http";

/** The request body was larger than the server accepts (answer 413). */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/** How much of an oversized body is read and thrown away so the client, done sending, can read the 413. */
const DRAIN_FACTOR = 16;

/**
 * Reads a request body up to `limit` bytes. Past it, the rest is read and
 * dropped before rejecting: a client still writing would otherwise see its
 * connection cut (EPIPE) instead of the 413. A body beyond DRAIN_FACTOR times
 * the limit is not drained; the connection is cut.
 */
export function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number(req.headers["content-length"] ?? 0) > limit;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
      else if (size > limit * DRAIN_FACTOR) {
        req.destroy();
        reject(new BodyTooLargeError(limit));
      }
    });
    req.on("end", () => (tooLarge ? reject(new BodyTooLargeError(limit)) : resolve(Buffer.concat(chunks))));
    req.on("error", reject);
  });
}
