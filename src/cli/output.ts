// Writes to a stdout or stderr whose reader is gone (a closed pipe, a hung-up terminal) go nowhere instead of failing.
import process from "node:process";

/** The codes of a write whose reader is gone: a pipe's reader exited (`| head`), or a terminal hung up. */
const READER_GONE = new Set(["EPIPE", "EIO"]);

/** A write to a reader that is gone: nowhere, at once, as a successful one would be. */
function writeNowhere(...args: unknown[]): boolean {
  const callback = args.findLast((arg) => typeof arg === "function") as (() => void) | undefined;
  if (callback) queueMicrotask(callback);
  return true;
}

/**
 * Keeps a command going when the reader of its stdout or stderr goes away
 * (`cadre run --json | head -1`): instead of the error ending the process,
 * the stream's later writes go nowhere (Node ignores SIGPIPE, and keeps stdio
 * open: each write would fail again). `onClosed` is told once per stream, so
 * the command can say so where it still can. Any other write error stays one.
 */
export function surviveClosedOutput(onClosed: (name: "stdout" | "stderr") => void): void {
  for (const [name, stream] of [
    ["stdout", process.stdout],
    ["stderr", process.stderr],
  ] as const) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === undefined || !READER_GONE.has(error.code)) throw error;
      if (stream.write === writeNowhere) return;
      // Every writer (the views, notices, the final table) writes through the stream itself: one place stops them all.
      stream.write = writeNowhere;
      onClosed(name);
    });
  }
}
