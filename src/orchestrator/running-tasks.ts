// The tasks under way (running, or waiting for a slot), by name, and what a user may do to one while the rest go on: message it, interrupt its turn, stop it.
import type { CliMessage } from "../protocol/index.ts";
import { NoTurnRunningError, type Worker } from "../worker/index.ts";
import { TaskNotRunningError, TaskStoppedError } from "./errors.ts";
import type { SteerAction, TaskInfo } from "./types.ts";

/** Who did it, as the record and the events name them ("cadre send", "the dashboard", "the library"). */
export interface SteerOrigin {
  from?: string;
}

/** An action that reached its task; `step`: the model replies its conversation held then (a send's is known once taken, see RunningTasks). */
export interface SteerTold {
  action: SteerAction;
  origin: SteerOrigin;
  text?: string;
  step?: number;
}

/** What the orchestrator hears of steering: an action reached its task; a message sent into its turn was taken in by its agent. */
export interface SteerListener {
  told(task: TaskInfo, told: SteerTold): void;
  /** The agent took in the oldest message sent to it that it had not, with `step` model replies in its conversation. */
  taken(task: TaskInfo, step: number): void;
}

interface RunningTask {
  info: TaskInfo;
  /** Ends the task with this reason: one that waits ends without starting, one that runs ends its attempt. */
  stop(reason: Error): void;
  /** The model replies its session's conversation holds now. */
  step(): number;
  /** Its attempt's process, while one serves it. */
  worker: Worker | undefined;
  /** The messages sent into its turn that its agent has not taken in yet, by the id they were written with. */
  sent: Set<string>;
}

/**
 * The orchestrator's tasks under way, so that one of them can be reached by its name while
 * the others go on. A message is written into the task's running turn (Worker.steer), an
 * interrupt ends that turn, a stop ends the task cancelled with its process and tools. A task
 * that waits for a slot (or the start gate, or a back-off) has no turn: only a stop reaches it.
 */
export class RunningTasks {
  readonly #byId = new Map<string, RunningTask>();
  readonly #listener: SteerListener;

  constructor(listener: SteerListener) {
    this.#listener = listener;
  }

  /** A task is under way; `step` counts its conversation's model replies. Returns what forgets it once it ends (or once another add of the same task replaces it). */
  add(info: TaskInfo, stop: (reason: Error) => void, step: () => number): () => void {
    const task: RunningTask = { info, stop, step, worker: undefined, sent: new Set() };
    this.#byId.set(info.id, task);
    return () => {
      if (this.#byId.get(info.id) === task) this.#byId.delete(info.id);
    };
  }

  /**
   * A message from the task's worker: the CLI starts on a message sent into the turn between
   * two requests to the model, so the replies counted then are the step that message reached
   * its agent at, the one a replay sends it again at (whatever the time it was sent).
   */
  observe(id: string, message: CliMessage): void {
    if (message.type !== "command_lifecycle" || message.state !== "started") return;
    const task = this.#byId.get(id);
    if (task?.sent.delete(message.command_uuid)) this.#listener.taken(task.info, task.step());
  }

  /** The task's attempt has its process; returns what detaches it when the attempt ends. */
  attach(id: string, worker: Worker): () => void {
    const task = this.#byId.get(id);
    if (task) task.worker = worker;
    return () => {
      if (task?.worker === worker) task.worker = undefined;
    };
  }

  /** The names of the tasks that have a process now (a run's own tasks first). */
  get names(): string[] {
    return this.#serving().map((task) => task.info.name);
  }

  /** The model replies the conversation of the task of that name holds now; undefined while it has no process. */
  step(name: string): number | undefined {
    return this.#serving()
      .find((task) => task.info.name === name)
      ?.step();
  }

  /** Writes `text` into the task's running turn: the agent takes it at its next step. */
  send(name: string, text: string, origin: SteerOrigin = {}): void {
    const task = this.#find(name, "so it has no turn to take a message");
    try {
      task.sent.add(this.#worker(task).steer(text));
    } catch (error) {
      if (!(error instanceof NoTurnRunningError)) throw error;
      throw new TaskNotRunningError(name, this.names, "has no turn to take a message now: its prompt has not gone yet, or its answer is in");
    }
    this.#listener.told(task.info, { action: "send", origin, text });
  }

  /** Ends the task's current turn, as Escape does; the task ends as interrupted, its session kept. */
  async interrupt(name: string, origin: SteerOrigin = {}): Promise<void> {
    const task = this.#find(name, "so it has no turn to interrupt");
    const worker = this.#worker(task);
    // The CLI acknowledges an interrupt with no turn to end: the user would be told of one that did nothing.
    if (!worker.turnReachable)
      throw new TaskNotRunningError(name, this.names, "has no turn to interrupt now: its prompt has not gone yet, or its answer is in");
    const step = task.step();
    await worker.interrupt();
    this.#listener.told(task.info, { action: "interrupt", origin, step });
  }

  /**
   * Ends the task as cancelled at once: its process and tools are killed, its session and worktree kept.
   * A task that waits for a slot ends without starting a process.
   */
  stop(name: string, origin: SteerOrigin = {}): void {
    const task = this.#find(name) ?? this.#waitingNamed(name);
    if (task === undefined) throw new TaskNotRunningError(name, this.names);
    const step = task.step();
    task.stop(new TaskStoppedError(origin.from ?? "the user"));
    void task.worker?.kill();
    this.#listener.told(task.info, { action: "stop", origin, step });
  }

  #serving(): RunningTask[] {
    const serving = [...this.#byId.values()].filter((task) => task.worker !== undefined);
    return [...serving.filter((task) => task.info.parentId === undefined), ...serving.filter((task) => task.info.parentId !== undefined)];
  }

  /** The task of that name that has a process. With `noTurn` (what a waiting task lacks), throws when there is none. */
  #find(name: string): RunningTask | undefined;
  #find(name: string, noTurn: string): RunningTask;
  #find(name: string, noTurn?: string): RunningTask | undefined {
    const task = this.#serving().find((each) => each.info.name === name);
    if (task !== undefined || noTurn === undefined) return task;
    if (this.#waitingNamed(name) !== undefined)
      throw new TaskNotRunningError(name, this.names, `waits for a slot: it has no process now, ${noTurn} (a stop ends it)`);
    throw new TaskNotRunningError(name, this.names);
  }

  /** The task of that name that is under way without a process: waiting for a slot, the start gate, or a retry. */
  #waitingNamed(name: string): RunningTask | undefined {
    for (const task of this.#byId.values()) if (task.worker === undefined && task.info.name === name) return task;
    return undefined;
  }

  #worker(task: RunningTask): Worker {
    if (task.worker === undefined) throw new TaskNotRunningError(task.info.name, this.names);
    return task.worker;
  }
}
