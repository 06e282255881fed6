// The tasks under way (running, or waiting for a slot), by name, and what a user may do to one while the rest go on: message it, interrupt its turn, stop it.
import { NoTurnRunningError, type Worker } from "../worker/index.ts";
import { TaskNotRunningError, TaskStoppedError } from "./errors.ts";
import type { SteerAction, TaskInfo } from "./types.ts";

/** Who did it, as the record and the events name them ("cadre send", "the dashboard", "the library"). */
export interface SteerOrigin {
  from?: string;
}

interface RunningTask {
  info: TaskInfo;
  /** Ends the task with this reason: one that waits ends without starting, one that runs ends its attempt. */
  stop(reason: Error): void;
  /** Its attempt's process, while one serves it. */
  worker: Worker | undefined;
}

/**
 * The orchestrator's tasks under way, so that one of them can be reached by its name while
 * the others go on. A message is written into the task's running turn (Worker.steer), an
 * interrupt ends that turn, a stop ends the task cancelled with its process and tools. A task
 * that waits for a slot (or the start gate, or a back-off) has no turn: only a stop reaches it.
 */
export class RunningTasks {
  readonly #byId = new Map<string, RunningTask>();
  readonly #told: (task: TaskInfo, action: SteerAction, origin: SteerOrigin, text?: string) => void;

  /** `told`: called once a user's action has reached its task. */
  constructor(told: (task: TaskInfo, action: SteerAction, origin: SteerOrigin, text?: string) => void) {
    this.#told = told;
  }

  /** A task is under way; returns what forgets it once it ends (or once another add of the same task replaces it). */
  add(info: TaskInfo, stop: (reason: Error) => void): () => void {
    const task: RunningTask = { info, stop, worker: undefined };
    this.#byId.set(info.id, task);
    return () => {
      if (this.#byId.get(info.id) === task) this.#byId.delete(info.id);
    };
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

  /** Writes `text` into the task's running turn: the agent takes it at its next step. */
  send(name: string, text: string, origin: SteerOrigin = {}): void {
    const task = this.#find(name, "so it has no turn to take a message");
    try {
      this.#worker(task).steer(text);
    } catch (error) {
      if (!(error instanceof NoTurnRunningError)) throw error;
      throw new TaskNotRunningError(name, this.names, "has no turn to take a message now: its prompt has not gone yet, or its answer is in");
    }
    this.#told(task.info, "send", origin, text);
  }

  /** Ends the task's current turn, as Escape does; the task ends as interrupted, its session kept. */
  async interrupt(name: string, origin: SteerOrigin = {}): Promise<void> {
    const task = this.#find(name, "so it has no turn to interrupt");
    await this.#worker(task).interrupt();
    this.#told(task.info, "interrupt", origin);
  }

  /**
   * Ends the task as cancelled at once: its process and tools are killed, its session and worktree kept.
   * A task that waits for a slot ends without starting a process.
   */
  stop(name: string, origin: SteerOrigin = {}): void {
    const task = this.#find(name) ?? this.#waitingNamed(name);
    if (task === undefined) throw new TaskNotRunningError(name, this.names);
    task.stop(new TaskStoppedError(origin.from ?? "the user"));
    void task.worker?.kill();
    this.#told(task.info, "stop", origin);
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
