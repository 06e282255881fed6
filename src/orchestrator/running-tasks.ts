// The tasks running now, by name, and what a user may do to one while the rest go on: message it, interrupt its turn, stop it.
import { NoTurnRunningError, type Worker } from "../worker/index.ts";
import { TaskNotRunningError, TaskStoppedError } from "./errors.ts";
import type { SteerAction, TaskInfo } from "./types.ts";

/** Who did it, as the record and the events name them ("cadre send", "the dashboard", "the library"). */
export interface SteerOrigin {
  from?: string;
}

interface RunningTask {
  info: TaskInfo;
  /** Ends the task's attempt with this reason; false while the task has not started. */
  stop(reason: Error): boolean;
  /** Its attempt's process, while one serves it. */
  worker: Worker | undefined;
}

/**
 * The orchestrator's running tasks, so that one of them can be reached by its name while
 * the others go on. A message is written into the task's running turn (Worker.steer), an
 * interrupt ends that turn, a stop ends the task cancelled with its process and tools.
 */
export class RunningTasks {
  readonly #byId = new Map<string, RunningTask>();
  readonly #told: (task: TaskInfo, action: SteerAction, origin: SteerOrigin, text?: string) => void;

  /** `told`: called once a user's action has reached its task. */
  constructor(told: (task: TaskInfo, action: SteerAction, origin: SteerOrigin, text?: string) => void) {
    this.#told = told;
  }

  /** A task is under way; returns what forgets it once it ends. */
  add(info: TaskInfo, stop: (reason: Error) => boolean): () => void {
    this.#byId.set(info.id, { info, stop, worker: undefined });
    return () => this.#byId.delete(info.id);
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
    const task = this.#find(name);
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
    const task = this.#find(name);
    const worker = this.#worker(task);
    // The CLI acknowledges an interrupt with no turn to end: the user would be told of one that did nothing.
    if (!worker.turnReachable)
      throw new TaskNotRunningError(name, this.names, "has no turn to interrupt now: its prompt has not gone yet, or its answer is in");
    await worker.interrupt();
    this.#told(task.info, "interrupt", origin);
  }

  /** Ends the task as cancelled at once: its process and tools are killed, its session and worktree kept. */
  stop(name: string, origin: SteerOrigin = {}): void {
    const task = this.#find(name);
    if (!task.stop(new TaskStoppedError(origin.from ?? "the user"))) throw new TaskNotRunningError(name, this.names);
    void task.worker?.kill();
    this.#told(task.info, "stop", origin);
  }

  #serving(): RunningTask[] {
    const serving = [...this.#byId.values()].filter((task) => task.worker !== undefined);
    return [...serving.filter((task) => task.info.parentId === undefined), ...serving.filter((task) => task.info.parentId !== undefined)];
  }

  #find(name: string): RunningTask {
    const task = this.#serving().find((each) => each.info.name === name);
    if (task === undefined) throw new TaskNotRunningError(name, this.names);
    return task;
  }

  #worker(task: RunningTask): Worker {
    if (task.worker === undefined) throw new TaskNotRunningError(task.info.name, this.names);
    return task.worker;
  }
}
