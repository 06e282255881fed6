// A replay's steering: each recorded message, interrupt and stop done again at the step of its task's conversation it was done at.
import type { Orchestrator } from "../../orchestrator/index.ts";
import type { Divergence } from "../../rehearsal/index.ts";
import type { SummarySteering } from "../record/schema.ts";

/** What a replay steers through: the engine's steering (Orchestrator.sendToTask, …) and its events. */
export type SteeringTarget = Pick<Orchestrator, "sendToTask" | "interruptTask" | "stopTask" | "runningTaskStep" | "on">;

type Placed = SummarySteering & { step: number };

/** "the message \"look at B\" to steer-me at step 1": a recorded action, as a line names it. */
function describe(entry: SummarySteering): string {
  const what = entry.action === "send" ? `the message ${JSON.stringify(entry.text ?? "")} to` : `the ${entry.action} of`;
  return `${what} ${entry.task}${entry.step === undefined ? "" : ` at step ${entry.step}`}`;
}

/** Why an action without a step has no place: an older cadre did not record steps; a message its agent never took in has none either. */
function unplaced(entry: SummarySteering): string {
  const why = entry.action === "send" ? "its agent never took it in, or an older cadre recorded it" : "an older cadre recorded it";
  return `the record has no step for it (${why}), so it cannot be placed`;
}

/**
 * Whether a recorded action is due, by the replay's turns, never by the clock. `asked`: the task's
 * conversation asks for reply `asked` (its request waits for the answer); else cadre has seen `replies`
 * replies of it. A message reached its agent at step n: the CLI took it in between the requests for
 * replies n-1 and n, so it is sent while the CLI waits for reply n-1, and taken in after that reply (and
 * its tools) again, or after a final answer as the next prompt. An interrupt or a stop was done with n
 * replies in the conversation: it is done once cadre has reply n-1, while the CLI runs what it asked.
 * At step 0 either is done as the first reply is asked for.
 */
export function isDue(entry: Placed, now: { asked: number } | { replies: number }): boolean {
  if ("asked" in now) return now.asked === Math.max(entry.step - 1, 0) && (entry.action === "send" || entry.step === 0);
  return entry.action !== "send" && entry.step > 0 && now.replies >= entry.step;
}

/**
 * The recorded run's steering, done again as the replay reaches each action's step: each once, in the
 * recorded order, on the task's conversations (its first attempt's first). An action not done again
 * where it was (it failed, its step never came, a message was taken in at another step or not at all)
 * is a divergence of kind "steering"; one without a step (an older cadre's record) is a warning. A task
 * the replay stopped or interrupted gets no further reply (its process is going): a tool that ends
 * before the kill lands is no divergence.
 */
export class ReplaySteering {
  readonly #waiting: Placed[] = [];
  /** Messages sent again that their agent has not taken in yet, by task, oldest first. */
  readonly #sent = new Map<string, Placed[]>();
  readonly #warnings: string[] = [];
  readonly #divergences: Divergence[] = [];
  /** The tasks stopped or interrupted: their requests from now on are held. */
  readonly #ended = new Set<string>();
  #target: SteeringTarget | undefined;

  constructor(recorded: readonly SummarySteering[]) {
    for (const entry of recorded) {
      const { step } = entry;
      if (step === undefined) this.#warnings.push(`replay: ${describe(entry)} is not done again: ${unplaced(entry)}`);
      else this.#waiting.push({ ...entry, step });
    }
  }

  /** The engine to steer, once it is up (before any turn is asked for). */
  steer(target: SteeringTarget): void {
    this.#target = target;
    target.on((event) => {
      if (event.type === "task_steer_taken") this.#taken(event.task.name, event.step);
      if (event.type !== "task_message" || event.message.type !== "assistant") return;
      const replies = target.runningTaskStep(event.task.name);
      if (replies !== undefined) this.#doDue(event.task.name, { replies });
    });
  }

  /** A conversation asks for a reply (RehearsalServerOptions.onTurn): what is placed there is done before it is answered. */
  turn(turn: { name: string; step: number }): "hold" | undefined {
    this.#doDue(turn.name, { asked: turn.step });
    return this.#ended.has(turn.name) ? "hold" : undefined;
  }

  /** The run is over: an action whose step never came, and a message its agent never took in, diverged. */
  finish(): void {
    for (const entry of this.#waiting.splice(0)) this.#diverge(entry, `not done: its task never reached step ${entry.step}`);
    for (const entry of [...this.#sent.values()].flat()) this.#diverge(entry, "not taken in by its agent");
    this.#sent.clear();
  }

  /** The actions a record without steps cannot place. */
  get warnings(): readonly string[] {
    return this.#warnings;
  }

  get divergences(): readonly Divergence[] {
    return this.#divergences;
  }

  #doDue(task: string, now: Parameters<typeof isDue>[1]): void {
    for (const entry of [...this.#waiting]) {
      if (entry.task !== task || !isDue(entry, now)) continue;
      this.#waiting.splice(this.#waiting.indexOf(entry), 1);
      this.#do(entry);
    }
  }

  #do(entry: Placed): void {
    const origin = entry.from === null ? {} : { from: entry.from };
    const failed = (error: unknown) => this.#diverge(entry, `not done: ${(error as Error).message}`);
    try {
      if (this.#target === undefined) throw new Error("the replay's engine was not up");
      if (entry.action === "send") {
        this.#target.sendToTask(entry.task, entry.text ?? "", origin);
        this.#sent.set(entry.task, [...(this.#sent.get(entry.task) ?? []), entry]);
      } else {
        this.#ended.add(entry.task);
        if (entry.action === "stop") this.#target.stopTask(entry.task, origin);
        else this.#target.interruptTask(entry.task, origin).catch(failed);
      }
    } catch (error) {
      failed(error);
    }
  }

  /** The agent took in the oldest message the replay sent it: at the recorded step, or it diverged. */
  #taken(task: string, step: number): void {
    const entry = this.#sent.get(task)?.shift();
    if (entry !== undefined && entry.step !== step) this.#diverge(entry, `taken in at step ${step}`);
  }

  #diverge(entry: Placed, got: string): void {
    const expected = describe(entry);
    const message = `replay diverged: ${entry.task}, turn ${entry.step}: a recorded ${entry.action} was not done again where it was; expected ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`;
    this.#divergences.push({ script: entry.task, step: entry.step, kind: "steering", expected, got, message });
  }
}
