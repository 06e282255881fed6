// Who a process works for now (a spare or reused process changes task), read at each moment of use.
import type { PermissionHandler, Worker } from "../worker/index.ts";
import type { ProcessSetup, TaskInfo, WorkerContext } from "./types.ts";

/**
 * Who a process works for now. A spare has no task yet and a reused process
 * changes task, so everything the orchestrator routes for a worker
 * (permission requests, hook failures, the peer tools, spawned children's
 * parent) reads it at the moment of use, not at the start.
 */
export interface Binding<R extends { info: TaskInfo }> {
  context: WorkerContext;
  /** The task or session record; undefined for a spare, a peer or a supervisor. */
  record: R | undefined;
  /** The session's own permission handler (a session's `permissions`). */
  canUseTool: PermissionHandler | undefined;
  /** Who waits on the turn now running (peer and supervisor sessions). */
  chain: () => readonly string[];
  /** A permission answer since the last bind granted rules or a mode for the rest of the session. */
  grantedPermissions: boolean;
}

/** The cwd and permission mode a process's sessions start in: a reset must come back to them. */
export interface SessionBaseline {
  cwd: string | undefined;
  permissionMode: string | undefined;
}

/** One process and who it works for; what the worker pool keeps and hands on. */
export class BoundWorker<R extends { info: TaskInfo }> {
  #baseline: SessionBaseline | undefined;

  constructor(
    readonly worker: Worker,
    /** Equal for processes whose worker settings are identical (see WorkerFactory). */
    readonly key: string,
    readonly binding: Binding<R>,
    readonly process: ProcessSetup | undefined,
    /** Names of the MCP servers the CLI runs itself: their state lives outside cadre's reach. */
    readonly externalMcpServers: readonly string[],
    /** Tasks and sessions this process has served. */
    public served: number,
  ) {}

  /** From the first session this process ran (its init message); known once it has served a task. */
  get baseline(): SessionBaseline | undefined {
    return this.#baseline;
  }

  /** Hands the process to other work: routing reads the new owner from now on. */
  bindTo(context: WorkerContext, record: R | undefined, canUseTool: PermissionHandler | undefined): void {
    Object.assign(this.binding, { context, record, canUseTool, grantedPermissions: false });
    this.served++;
    this.process?.bind(context);
  }

  /** Between tasks: nobody's requests are routed to a finished task. */
  unbind(): void {
    const init = this.worker.session;
    if (!this.#baseline && init) this.#baseline = { cwd: init.cwd, permissionMode: init.permissionMode };
    this.binding.record = undefined;
    this.binding.canUseTool = undefined;
  }
}
