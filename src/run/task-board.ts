// The run's side of post_task, list_tasks and wait_tasks: a post checked against the run's limits becomes a task of its graph.
import {
  type BoardResult,
  type BoardTask,
  MAX_POSTED_PROMPT_BYTES,
  type TaskBoard,
  type TaskPost,
  TaskPostRefusedError,
  type TaskResult,
} from "../orchestrator/index.ts";
import {
  copiesMayTake,
  hasAgent,
  type PostedOrigin,
  type PostIntake,
  postedTask,
  postLimits,
  type ResolvedSwarmConfig,
  type ResolvedTask,
} from "../swarm/index.ts";
import type { PlanEvent } from "./plan.ts";
import type { SummaryTask } from "./record/schema.ts";

/** A posted name: short, and nothing a shell or a path could read as more than a name. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Why a post is refused once the run's signal has aborted (a signal, a refusal, its caller gone). */
const STOPPING = "the run is stopping: no new task is taken";
/** Why a post is refused once the run is over. */
const ENDED = "the run is ending: no task can be posted now";
/** How much of a result list_tasks shows. */
const SHORT_RESULT = 200;

/** One task of the run as the board follows it. */
interface Entry {
  name: string;
  agent: string | undefined;
  postedBy: string | undefined;
  /** 0 for the plan's own tasks; a posted task is one deeper than its poster. */
  depth: number;
  /** The tasks it starts after. */
  dependsOn: readonly string[];
  /** The agent whose budget its work counts to: its own, else (posted) its poster's. */
  budgetAgent: string | undefined;
  status: BoardTask["status"];
  result?: TaskResult;
  /** A posted task: resolved once its post is in the record. */
  journaled?: Promise<void>;
  markJournaled?: () => void;
}

/** A post the record kept: enough to post it again when the run is resumed. */
type EarlierPost = Pick<SummaryTask, "name" | "agent" | "depends_on" | "posted_by" | "post_depth" | "prompt">;

function refuse(code: ConstructorParameters<typeof TaskPostRefusedError>[0], message: string): never {
  throw new TaskPostRefusedError(code, message);
}

function short(result: TaskResult): string {
  const text = result.status === "succeeded" ? result.text : (result.error?.message ?? result.text);
  return text.length > SHORT_RESULT ? `${text.slice(0, SHORT_RESULT)}…` : text;
}

/**
 * The run's tasks as the workers that may post see them (TaskBoard), and the
 * way posts come into the graph (PostIntake). A post is checked here (its
 * name, its agent, what it waits on, the run's limits) and answered once the
 * record holds it; SwarmRun tells the board every event of the plan
 * (`observe`), after the recorder.
 */
export class RunTaskBoard implements TaskBoard, PostIntake {
  readonly #config: ResolvedSwarmConfig;
  readonly #limits: { maxPosted: number; maxDepth: number };
  readonly #tasks = new Map<string, Entry>();
  readonly #posted = new Set<string>();
  /** Posts an earlier attempt recorded: posted again as the run starts. */
  readonly #earlier: readonly EarlierPost[];
  readonly #changed = new Set<() => void>();
  /** The wait_tasks calls under way: who waits, on what. */
  readonly #waits = new Set<{ waiter: string; names: readonly string[] }>();
  #add: ((task: ResolvedTask) => boolean) | undefined;
  /** Why no post is taken any more (the run is stopping, or over); undefined while posts are taken. */
  #closed: string | undefined;
  /** The run's concurrency when it is a number (--concurrency, else the file's); undefined when cadre chooses it. */
  readonly #concurrency: number | undefined;

  constructor(config: ResolvedSwarmConfig, earlier: readonly SummaryTask[] = [], concurrency = config.concurrency) {
    this.#config = config;
    this.#concurrency = concurrency;
    this.#limits = postLimits(config);
    this.#earlier = earlier.filter((row) => row.posted_by !== undefined && row.prompt !== undefined);
    for (const task of config.tasks) this.#track(task.name, task.agent, undefined, 0, task.depends_on);
  }

  open(add: (task: ResolvedTask) => boolean, stopping: AbortSignal): void {
    this.#add = add;
    // A post once the run is stopping would be cancelled at once: it is refused rather than answered "posted".
    if (stopping.aborted) this.close(STOPPING);
    else stopping.addEventListener("abort", () => this.close(STOPPING), { once: true });
    for (const row of this.#earlier) {
      const depth = row.post_depth ?? 1;
      const posted = this.#origin(row.posted_by!, depth);
      const input = { name: row.name, prompt: row.prompt!, depends_on: row.depends_on, posted };
      this.#join(postedTask(this.#config, row.agent === null ? input : { ...input, agent: row.agent }));
    }
  }

  async post(poster: string, post: TaskPost): Promise<{ name: string; existed: boolean }> {
    const name = post.name ?? this.#freshName(poster);
    const known = this.#tasks.get(name);
    if (known?.journaled !== undefined) {
      await known.journaled;
      return { name, existed: true };
    }
    const task = this.#checked(poster, post, name);
    await this.#join(task).journaled;
    return { name, existed: false };
  }

  /** A name for an unnamed post: the poster's (made a name), numbered, one no task has. */
  #freshName(poster: string): string {
    const base = poster.replaceAll(/[^A-Za-z0-9._-]/g, "-").slice(0, 56);
    for (let n = this.#posted.size + 1; ; n++) if (!this.#tasks.has(`${base}.${n}`)) return `${base}.${n}`;
  }

  /** A post as a task of the graph, or the refusal that says which rule or limit it broke. */
  #checked(poster: string, post: TaskPost, name: string): ResolvedTask {
    const { maxPosted, maxDepth } = this.#limits;
    if (this.#closed !== undefined || this.#add === undefined) refuse("POST_CLOSED", this.#closed ?? ENDED);
    const promptBytes = Buffer.byteLength(post.prompt, "utf8");
    if (promptBytes > MAX_POSTED_PROMPT_BYTES)
      refuse(
        "POST_TOO_LARGE",
        `refused: the prompt is ${promptBytes.toLocaleString("en-US")} bytes; a posted prompt may be at most 256 KB ` +
          `(${MAX_POSTED_PROMPT_BYTES.toLocaleString("en-US")} bytes): write the long part to a file and name the file in the prompt`,
      );
    if (!NAME.test(name)) refuse("POST_INVALID", `"${name}" is not a task name: use up to 64 letters, digits, ".", "_" and "-"`);
    if (this.#tasks.has(name)) refuse("POST_INVALID", `the run already has a task named "${name}" that was not posted; choose another name`);
    // A name the model chose; one the board made for an unnamed post is the board's, whatever it looks like.
    const copies = post.name === undefined ? undefined : copiesMayTake(this.#config, name);
    if (copies !== undefined) refuse("POST_INVALID", `"${name}" is kept for the copies of the for_each task "${copies}"; choose another name`);
    const depth = (this.#tasks.get(poster)?.depth ?? 0) + 1;
    if (depth > maxDepth)
      refuse("MAX_POST_DEPTH", `refused: the run's max_post_depth (${maxDepth}) is reached: "${poster}" was itself posted ${depth - 1} deep`);
    if (this.#posted.size >= maxPosted)
      refuse("MAX_POSTED_TASKS", `refused: the run's max_posted_tasks (${maxPosted}) is reached; do the work yourself or wait for posted tasks`);
    if (post.agent !== undefined && !hasAgent(this.#config, post.agent)) {
      const known = Object.keys(this.#config.agents);
      refuse("POST_INVALID", `no agent "${post.agent}" in this run; its agents: ${known.join(", ") || "none (leave agent out)"}`);
    }
    const unknown = (post.dependsOn ?? []).filter((dependency) => !this.#posted.has(dependency));
    if (unknown.length > 0) refuse("POST_INVALID", `depends_on names no posted task: ${unknown.join(", ")} (see list_tasks)`);
    const input = { name, prompt: post.prompt, depends_on: [...new Set(post.dependsOn ?? [])], posted: this.#origin(poster, depth) };
    return postedTask(this.#config, post.agent === undefined ? input : { ...input, agent: post.agent });
  }

  /** Where a task `poster` posts comes from, and the budget it counts to when its own agent has none. */
  #origin(poster: string, depth: number): PostedOrigin {
    const budgetAgent = this.#tasks.get(poster)?.budgetAgent;
    return { by: poster, depth, ...(budgetAgent !== undefined && { budget_agent: budgetAgent }) };
  }

  /** Puts a posted task into the graph and follows it; its post resolves once the record has it. */
  #join(task: ResolvedTask): Entry {
    const entry = this.#track(task.name, task.agent, task.posted?.by, task.posted?.depth ?? 1, task.depends_on);
    let markJournaled = () => {};
    entry.journaled = new Promise<void>((resolve) => {
      markJournaled = resolve;
    });
    entry.markJournaled = markJournaled;
    this.#posted.add(task.name);
    if (!this.#add?.(task)) {
      this.#tasks.delete(task.name);
      this.#posted.delete(task.name);
      refuse("POST_INVALID", `the run already has a task named "${task.name}"; choose another name`);
    }
    return entry;
  }

  #track(name: string, agent: string | undefined, postedBy: string | undefined, depth: number, dependsOn: readonly string[] = []): Entry {
    const budgetAgent = agent ?? (postedBy === undefined ? undefined : this.#tasks.get(postedBy)?.budgetAgent);
    const entry: Entry = { name, agent, postedBy, depth, dependsOn, budgetAgent, status: "pending" };
    this.#tasks.set(name, entry);
    return entry;
  }

  list(): BoardTask[] {
    return [...this.#tasks.values()].map(({ name, agent, postedBy, status, result }) => ({
      name,
      status,
      ...(agent !== undefined && { agent }),
      ...(postedBy !== undefined && { postedBy }),
      ...(result !== undefined && { result: short(result) }),
    }));
  }

  async wait(waiter: string, names: readonly string[], signal: AbortSignal): Promise<BoardResult[]> {
    const unknown = names.filter((name) => !this.#tasks.has(name));
    if (unknown.length > 0) refuse("POST_INVALID", `no task named ${unknown.join(", ")} in this run (see list_tasks)`);
    const posters = this.#postersOf(waiter);
    const circular = names.filter((name) => name === waiter || posters.has(name));
    if (circular.length > 0)
      refuse("POST_INVALID", `you cannot wait on ${circular.join(", ")}: it is you, or it posted you and may be waiting on you`);
    const entries = names.map((name) => this.#tasks.get(name)!);
    const blocked = this.#heldBy(waiter, names) ?? this.#waitsFor(waiter, names);
    if (blocked !== undefined) refuse("POST_INVALID", `waiting would never end: ${blocked}; end your turn instead, the tasks run after it`);
    const wait = { waiter, names };
    this.#waits.add(wait);
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (signal.aborted) reject(signal.reason);
        else if (!entries.every((entry) => entry.result !== undefined)) return;
        else resolve();
        this.#changed.delete(check);
        signal.removeEventListener("abort", check);
      };
      this.#changed.add(check);
      signal.addEventListener("abort", check, { once: true });
      check();
    }).finally(() => this.#waits.delete(wait));
    return entries.map(({ name, result }) => ({
      name,
      status: result!.status,
      text: result!.text,
      ...(result!.error && { error: result!.error.message }),
    }));
  }

  /**
   * Why a wait of `waiter` on these tasks could never end, or undefined. A
   * waiting task holds its slots: the run's, and its agent's. Once every slot
   * of such a lane is held by tasks that wait, each on a task of that lane not
   * ended (one that needs a slot of it to start, or holds one and waits too),
   * no slot of it frees and none of those waits ends.
   */
  #heldBy(waiter: string, names: readonly string[]): string | undefined {
    const waits = this.#waitsWith(waiter, names);
    const open = (name: string) => this.#tasks.get(name)?.result === undefined;
    for (const lane of this.#lanesOf(names.filter(open))) {
      const inLane = (name: string) => lane.agent === undefined || this.#tasks.get(name)?.agent === lane.agent;
      const holders = [...waits.keys()].filter(inLane);
      if (holders.length < lane.limit || !holders.every((holder) => waits.get(holder)!.some((name) => open(name) && inLane(name)))) continue;
      const setting = lane.agent === undefined ? "the run's concurrency" : `agent ${lane.agent}'s max_concurrency`;
      const held =
        holders.length === 1 && holders[0] === waiter ? "you hold its one slot" : `its slots are all held by tasks that wait (${holders.join(", ")})`;
      return `${setting} is ${lane.limit}, and ${held}`;
    }
    return undefined;
  }

  /** The lanes these tasks take a slot of: the run's when its concurrency is a number, and each one's agent's when it has max_concurrency. */
  #lanesOf(names: readonly string[]): { agent: string | undefined; limit: number }[] {
    const run = this.#concurrency === undefined ? [] : [{ agent: undefined, limit: this.#concurrency }];
    const agents = new Set(names.map((name) => this.#tasks.get(name)?.agent));
    const limited = [...agents].flatMap((agent) => {
      const limit = agent === undefined ? undefined : this.#config.agents[agent]?.max_concurrency;
      return limit === undefined ? [] : [{ agent, limit }];
    });
    return [...run, ...limited];
  }

  /** The tasks in a wait_tasks call not ended, with what they wait on, `waiter` (waiting on `names` too) last. */
  #waitsWith(waiter: string, names: readonly string[]): Map<string, string[]> {
    const waits = new Map<string, string[]>();
    for (const wait of this.#waits)
      if (this.#tasks.get(wait.waiter)?.result === undefined) waits.set(wait.waiter, [...(waits.get(wait.waiter) ?? []), ...wait.names]);
    const own = [...(waits.get(waiter) ?? []), ...names];
    waits.delete(waiter);
    return waits.set(waiter, own);
  }

  /**
   * Why one of `names` cannot end before `waiter` does, or undefined: a task
   * not ended that starts after the waiter, or waits on it in wait_tasks,
   * directly or through other tasks (a circle of waits that nothing breaks).
   */
  #waitsFor(waiter: string, names: readonly string[]): string | undefined {
    // Each task reached, with the one that reached it: the chain of waits back to a name.
    const reachedFrom = new Map<string, string | undefined>(names.map((name) => [name, undefined]));
    for (const [name] of reachedFrom) {
      if (this.#tasks.get(name)?.result !== undefined) continue;
      if (name === waiter) return this.#circle(reachedFrom, name);
      for (const next of this.#awaitedBy(name)) if (!reachedFrom.has(next)) reachedFrom.set(next, name);
    }
    return undefined;
  }

  /** What `name` waits for before it can end: the tasks it depends on, and those its wait_tasks calls wait on. */
  #awaitedBy(name: string): string[] {
    const waited = [...this.#waits].filter((wait) => wait.waiter === name).flatMap((wait) => wait.names);
    return [...(this.#tasks.get(name)?.dependsOn ?? []), ...waited];
  }

  /** `"a" cannot end before you do (a waits for b, b waits for you)`, from the chain that reached the waiter. */
  #circle(reachedFrom: ReadonlyMap<string, string | undefined>, waiter: string): string {
    const chain = [waiter];
    for (let by = reachedFrom.get(waiter); by !== undefined; by = reachedFrom.get(by)) chain.unshift(by);
    const steps = chain.slice(1).map((name, k) => `${chain[k]} waits for ${name}`);
    return `"${chain[0]}" cannot end before you do (${steps.join(", ")})`;
  }

  /** The tasks that posted `name`, directly or not. */
  #postersOf(name: string): Set<string> {
    const posters = new Set<string>();
    for (let by = this.#tasks.get(name)?.postedBy; by !== undefined && !posters.has(by); by = this.#tasks.get(by)?.postedBy) posters.add(by);
    return posters;
  }

  /** What became of the run's tasks: a post is answered once the recorder has journaled its tasks_added. */
  observe(event: PlanEvent): void {
    if (event.type === "tasks_added") {
      for (const task of event.tasks) {
        const entry = this.#tasks.get(task.name) ?? this.#track(task.name, task.agent, undefined, 0);
        entry.markJournaled?.();
      }
    } else if (event.type === "task_ready") {
      const entry = this.#tasks.get(event.task.name);
      if (entry !== undefined && entry.result === undefined) entry.status = "running";
    } else if (event.type === "task_settled") {
      const entry = this.#tasks.get(event.task.name) ?? this.#track(event.task.name, event.task.agent, undefined, 0);
      entry.status = event.result.status;
      entry.result = event.result;
      for (const check of [...this.#changed]) check();
    }
  }

  /** No more posts, saying why (the run is over, unless it said first that it is stopping). */
  close(why = ENDED): void {
    this.#closed ??= why;
  }
}
