// Asking a running run, through its control socket, to reach one of its tasks: what `cadre send|stop|interrupt` do.
import { type Stats, statSync } from "node:fs";
import { connect } from "node:net";
import { CadreError } from "../errors.ts";
import { type ControlReply, ControlReplySchema, type ControlRequest, controlSocketPath, lineJson } from "./control-wire.ts";

/** Nothing answers at the run's socket: the run has ended, was killed, or never had one (a library run, another user's). */
export class RunNotReachableError extends CadreError {
  constructor(runDir: string, why: string, cause?: unknown) {
    super("RUN_NOT_REACHABLE", `cannot reach the run in ${runDir}: ${why}`, { cause });
  }
}

/** A run that closed its socket while a request was in flight. */
const ENDED_FIRST = "the run ended before it answered (the task may or may not have been reached)";

/** How long the run may take to answer (an interrupt waits for the CLI's answer). */
const REPLY_TIMEOUT_MS = 35_000;

/** Sends one request to the run in `runDir` and resolves with its reply; rejects with RunNotReachableError when no run answers. */
export function askRun(runDir: string, request: ControlRequest): Promise<ControlReply> {
  const path = controlSocketPath(runDir);
  if (path === undefined) return Promise.reject(new RunNotReachableError(runDir, "its path is too long for a socket; run from nearer to it"));
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let received = "";
    socket.setEncoding("utf8");
    socket.setTimeout(REPLY_TIMEOUT_MS, () =>
      socket.destroy(new RunNotReachableError(runDir, `it did not answer within ${REPLY_TIMEOUT_MS / 1000} s`)),
    );
    socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: string) => {
      received += chunk;
    });
    socket.on("error", (error: NodeJS.ErrnoException) => reject(error instanceof CadreError ? error : unreachable(runDir, error)));
    socket.on("end", () => {
      // The run closes its socket as it ends, a request in flight included: whether it reached its task is not known.
      if (received.trim() === "") return reject(new RunNotReachableError(runDir, ENDED_FIRST));
      const parsed = ControlReplySchema.safeParse(lineJson(received.trim()));
      if (parsed.success) resolve(parsed.data);
      else reject(new RunNotReachableError(runDir, "its socket answered with something that is not a reply"));
    });
  });
}

/** Whether a run listens at the control socket of `runDir` now: one still going, not a socket a killed run left. */
export function runListens(runDir: string): Promise<boolean> {
  const path = controlSocketPath(runDir);
  if (path === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function unreachable(runDir: string, error: NodeJS.ErrnoException): RunNotReachableError {
  // A path that is no directory at all is a wrong argument, not a run that ended.
  const given = kindOf(runDir);
  if (given === undefined) return new RunNotReachableError(runDir, "there is no such directory", error);
  if (!given.isDirectory()) return new RunNotReachableError(runDir, "it is not a directory (give the run's directory, or latest)", error);
  if (error.code === "ENOENT" || error.code === "ECONNREFUSED")
    return new RunNotReachableError(runDir, "the run has ended (nothing listens at its control socket)", error);
  if (error.code === "EACCES")
    return new RunNotReachableError(runDir, "its control socket is not yours (only the user who started the run may reach it)", error);
  return new RunNotReachableError(runDir, error.message, error);
}

/** The file at `path`, or undefined when there is none (under a file, or where it may not be looked at, alike). */
function kindOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
