// What crosses a run's control socket: one request line from `cadre send|stop|interrupt`, one reply line; and where the socket is.
import { join, relative } from "node:path";
import { z } from "zod";

/** The folder of the socket inside the run directory: owner-only (0700), so that no other user reaches the socket at all. */
export const CONTROL_DIR = "control";
/** The socket's name in CONTROL_DIR; the socket itself is 0600. */
export const CONTROL_SOCKET = "run.sock";
/** Longest request line the run reads: a message is text a person wrote, not a file. */
export const MAX_REQUEST_BYTES = 256 * 1024;

/**
 * A message to a running task, wherever it comes from (cadre send, the socket, the dashboard): sent verbatim, its
 * spaces and newlines included; one that holds nothing but whitespace says nothing, and is refused.
 */
export const SteerTextSchema = z.string().regex(/\S/, "the message is empty (only whitespace): type what to send");

/** A request: the task is a name and the text is data: neither is ever run, read as a path or taken as a flag. */
export const ControlRequestSchema = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("send"), task: z.string().min(1), text: SteerTextSchema }),
  z.strictObject({ action: z.literal("stop"), task: z.string().min(1) }),
  z.strictObject({ action: z.literal("interrupt"), task: z.string().min(1) }),
]);
export type ControlRequest = z.infer<typeof ControlRequestSchema>;

/** The run's answer: done (with the tasks running now), or why not, with the error's stable code. */
export const ControlReplySchema = z.union([
  z.strictObject({ ok: z.literal(true), running: z.array(z.string()) }),
  z.strictObject({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
export type ControlReply = z.infer<typeof ControlReplySchema>;

/** One line of the socket read as JSON, or undefined when it is not JSON (the schemas above then refuse it). */
export function lineJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Longest socket path the kernel takes (sun_path is 108 bytes with its NUL on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 103;

/** The socket's path for a run directory: absolute, or relative to the working directory when only that fits a socket's length. */
export function controlSocketPath(runDir: string): string | undefined {
  const absolute = join(runDir, CONTROL_DIR, CONTROL_SOCKET);
  const fromHere = relative(process.cwd(), absolute);
  const shortest = [absolute, fromHere].sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b))[0]!;
  return Buffer.byteLength(shortest) <= MAX_SOCKET_PATH ? shortest : undefined;
}
