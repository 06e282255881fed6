// A running run's control socket: its owner's other processes (`cadre send|stop|interrupt`) reach one of its tasks through it.
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import process from "node:process";
import { CadreError } from "../errors.ts";
import type { SteerOrigin } from "../orchestrator/index.ts";
import {
  CONTROL_DIR,
  type ControlReply,
  type ControlRequest,
  ControlRequestSchema,
  controlSocketPath,
  lineJson,
  MAX_REQUEST_BYTES,
} from "./control-wire.ts";
import type { SwarmRun } from "./swarm-run.ts";

/** What the socket reaches: the run's steering (SwarmRun's). */
export type SteerableRun = Pick<SwarmRun, "send" | "stopTask" | "interrupt" | "runningTasks">;

/** How long a connection may take to say what it wants. */
const REQUEST_TIMEOUT_MS = 10_000;

/** The socket could not be opened; the run goes on without it. */
export class ControlSocketError extends CadreError {
  constructor(problem: string, cause?: unknown) {
    super("CONTROL_SOCKET", `cadre send/stop/interrupt cannot reach this run: ${problem}`, { cause });
  }
}

/**
 * A Unix socket in `<run dir>/control/`, a folder only the run's owner may enter
 * (0700), the socket itself 0600: no network port, and no other user can connect.
 * Each connection sends one JSON line and gets one back. Close it when the run ends:
 * the socket file goes, and a later `cadre send` says the run has ended.
 */
export class ControlSocket {
  readonly path: string;
  readonly #server: Server;
  readonly #run: SteerableRun;
  readonly #sockets = new Set<Socket>();

  private constructor(path: string, server: Server, run: SteerableRun) {
    this.path = path;
    this.#server = server;
    this.#run = run;
  }

  /** Opens the socket of the run in `runDir`; rejects with ControlSocketError when it cannot (the run goes on without it). */
  static async open(runDir: string, run: SteerableRun): Promise<ControlSocket> {
    const path = controlSocketPath(runDir);
    if (path === undefined)
      throw new ControlSocketError(`the path of ${runDir} is too long for a socket; run from nearer to it, or with a shorter --out`);
    try {
      return await ControlSocket.#listen(join(runDir, CONTROL_DIR), path, run);
    } catch (error) {
      // A runtime without Unix sockets, a file system that takes none: one line, no crash.
      throw error instanceof ControlSocketError ? error : new ControlSocketError(`cannot listen on ${path}: ${(error as Error).message}`, error);
    }
  }

  static async #listen(folder: string, path: string, run: SteerableRun): Promise<ControlSocket> {
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      // A resumed run's: the socket of its earlier attempt is gone with its process.
      rmSync(path, { force: true });
    }
    chmodSync(folder, 0o700);
    const server = createServer();
    const socket = new ControlSocket(path, server, run);
    server.on("connection", (connection) => socket.#serve(connection));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, resolve);
    });
    chmodSync(path, 0o600);
    process.once("exit", socket.#removeAtExit);
    return socket;
  }

  /** Stops listening, ends the connections still open, and removes the socket and its folder. */
  async close(): Promise<void> {
    process.off("exit", this.#removeAtExit);
    const closed = new Promise<void>((resolve) => this.#server.once("close", () => resolve()));
    this.#remove();
    await closed;
  }

  /** A process that exits without close() (a second signal, a stray error) leaves no socket for a later `cadre send`. */
  readonly #removeAtExit = () => this.#remove();

  #remove(): void {
    for (const connection of this.#sockets) connection.destroy();
    this.#server.close();
    // The socket's folder is cadre's alone: the run directory is left as a run without a socket leaves it.
    rmSync(dirname(this.path), { recursive: true, force: true });
  }

  #serve(connection: Socket): void {
    this.#sockets.add(connection);
    connection.on("close", () => this.#sockets.delete(connection));
    connection.on("error", () => connection.destroy());
    connection.setTimeout(REQUEST_TIMEOUT_MS, () => connection.destroy());
    let received = "";
    connection.setEncoding("utf8");
    connection.on("data", (chunk: string) => {
      received += chunk;
      const end = received.indexOf("\n");
      if (end === -1 && Buffer.byteLength(received) <= MAX_REQUEST_BYTES) return;
      connection.removeAllListeners("data");
      // The request is in; its answer may take a while (an interrupt waits for its CLI, a distributed run for the task's host): the client bounds that wait.
      connection.setTimeout(0);
      const reply =
        end === -1
          ? Promise.resolve(refusal("REQUEST_TOO_LARGE", `a request is one line of at most ${MAX_REQUEST_BYTES} bytes`))
          : this.#answer(received.slice(0, end));
      void reply.then((answer) => connection.end(`${JSON.stringify(answer)}\n`));
    });
  }

  async #answer(line: string): Promise<ControlReply> {
    const parsed = ControlRequestSchema.safeParse(lineJson(line));
    if (!parsed.success) {
      // A well-formed send whose message is only whitespace is told so; anything else is no request at all.
      const emptyText = parsed.error.issues.find((issue) => issue.path.join(".") === "text" && issue.code === "invalid_format");
      return refusal("BAD_REQUEST", emptyText?.message ?? "not a request this run takes (send, stop or interrupt, as cadre send writes them)");
    }
    const request: ControlRequest = parsed.data;
    const origin: SteerOrigin = { from: `cadre ${request.action}` };
    try {
      if (request.action === "send") await this.#run.send(request.task, request.text, origin);
      else if (request.action === "stop") await this.#run.stopTask(request.task, origin);
      else await this.#run.interrupt(request.task, origin);
    } catch (error) {
      if (error instanceof CadreError) return refusal(error.code, error.message);
      return refusal("FAILED", (error as Error).message);
    }
    return { ok: true, running: this.#run.runningTasks };
  }
}

function refusal(code: string, message: string): ControlReply {
  return { ok: false, code, message };
}
