// Posted tasks in milliseconds: the run's board over the graph and an in-memory runner (limits, depth, one task per name, waits).
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import type { TaskBoard, TaskResult, TaskRunner, TaskSpec } from "../../src/orchestrator/index.ts";
import { RunTaskBoard } from "../../src/run/task-board.ts";
import type { ResolvedSwarmConfig } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { runSwarm, type SwarmEvent } from "../../src/swarm/runner.ts";
import { result, settledOf } from "../support/swarm.ts";

async function swarm(config: object): Promise<ResolvedSwarmConfig> {
  const parsed = await parseSwarmConfig(JSON.stringify(config), { baseDir: tmpdir(), env: {}, format: "json" });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.config;
}

/** What a worker's model does with the board while its task runs: posts, lists, waits; its answers are kept. */
type Act = (board: TaskBoard, spec: TaskSpec) => Promise<string | Partial<TaskResult>>;

class PostingRunner implements TaskRunner {
  readonly asked: TaskSpec[] = [];
  constructor(
    readonly board: TaskBoard,
    readonly acts: Record<string, Act>,
    /** Tasks that end only once these have resolved. */
    readonly held: Record<string, Promise<void>> = {},
  ) {}

  async run(spec: TaskSpec): Promise<TaskResult> {
    this.asked.push(spec);
    const name = spec.name ?? "";
    await this.held[name];
    const act = this.acts[name] ?? this.acts["*"];
    const made = act && spec.postTasks ? await act(this.board, spec) : `${name} done`;
    return result(name, "succeeded", typeof made === "string" ? { text: made } : made);
  }
}

/** Posts, answering with the name or the refusal's code. */
async function tryPost(board: TaskBoard, poster: string, post: Parameters<TaskBoard["post"]>[1]): Promise<string> {
  try {
    return (await board.post(poster, post)).name;
  } catch (error) {
    return (error as { code: string }).code;
  }
}

/** Waits, answering with the names waited on or the refusal's message. */
function waitOrRefusal(board: TaskBoard, waiter: string, names: string[]): Promise<string> {
  return board.wait(waiter, names, new AbortController().signal).then(
    (results) => `waited: ${results.map((r) => r.name).join(", ")}`,
    (error: Error) => error.message,
  );
}

async function drive(
  config: ResolvedSwarmConfig,
  acts: Record<string, Act>,
  earlier?: ConstructorParameters<typeof RunTaskBoard>[1],
  held?: Record<string, Promise<void>>,
  signal = new AbortController().signal,
) {
  const board = new RunTaskBoard(config, earlier);
  const runner = new PostingRunner(board, acts, held);
  const events: SwarmEvent[] = [];
  for await (const event of runSwarm({ config, orchestrator: runner, signal, posts: board })) {
    board.observe(event);
    events.push(event);
  }
  board.close();
  return { board, runner, events, settled: settledOf(events) };
}

describe("tasks agents post", () => {
  it("runs the posts under max_posted_tasks as tasks of the run naming their poster, and refuses the one past it, saying which limit", async () => {
    const config = await swarm({ max_posted_tasks: 3, tasks: [{ name: "lead", prompt: "plan", post_tasks: true }] });
    const answers: string[] = [];
    const { runner, events, settled } = await drive(config, {
      lead: async (board) => {
        for (const n of [1, 2, 3, 4]) answers.push(await tryPost(board, "lead", { name: `fix-${n}`, prompt: `fix module ${n}` }));
        return "posted";
      },
    });
    expect(answers).toEqual(["fix-1", "fix-2", "fix-3", "MAX_POSTED_TASKS"]);
    expect(runner.asked.map((spec) => spec.name).sort()).toEqual(["fix-1", "fix-2", "fix-3", "lead"]);
    // A posted prompt goes as text only.
    expect(runner.asked.find((spec) => spec.name === "fix-1")).toMatchObject({ prompt: "fix module 1", verbatim: true });
    const added = events.flatMap((e) => (e.type === "tasks_added" ? e.tasks.map((task) => ({ parent: e.parent, ...task })) : []));
    expect(added.map((task) => [task.name, task.parent, task.posted?.by, task.posted?.depth])).toEqual([
      ["fix-1", "lead", "lead", 1],
      ["fix-2", "lead", "lead", 1],
      ["fix-3", "lead", "lead", 1],
    ]);
    expect(settled.map((e) => e.task.name).sort()).toEqual(["fix-1", "fix-2", "fix-3", "lead"]);
  });

  it("refuses a prompt past 256 KB, saying so, and takes one of 256 KB", async () => {
    const config = await swarm({ tasks: [{ name: "lead", prompt: "plan", post_tasks: true }] });
    const answers: string[] = [];
    const { runner } = await drive(config, {
      lead: async (board) => {
        // Counted in bytes as UTF-8: "é" is two.
        answers.push(await tryPost(board, "lead", { name: "fits", prompt: "é".repeat(128 * 1024) }));
        answers.push(await board.post("lead", { name: "huge", prompt: `${"é".repeat(128 * 1024)}!` }).then(String, (e: Error) => e.message));
        answers.push(await tryPost(board, "lead", { name: "many-mb", prompt: "x".repeat(8 * 1024 * 1024) }));
        return "posted";
      },
    });
    expect(answers).toEqual([
      "fits",
      "refused: the prompt is 262,145 bytes; a posted prompt may be at most 256 KB (262,144 bytes): " +
        "write the long part to a file and name the file in the prompt",
      "POST_TOO_LARGE",
    ]);
    expect(runner.asked.map((spec) => spec.name)).toEqual(["lead", "fits"]);
  });

  it("refuses a post once the run is stopping, rather than answering with a task cancelled at once", async () => {
    const config = await swarm({ tasks: [{ name: "lead", prompt: "plan", post_tasks: true }] });
    const stop = new AbortController();
    const answers: string[] = [];
    const { runner } = await drive(
      config,
      {
        lead: async (board) => {
          answers.push(await tryPost(board, "lead", { name: "before", prompt: "do it" }));
          stop.abort(new Error("SIGINT"));
          answers.push(await board.post("lead", { name: "after", prompt: "do it" }).then(String, (e: Error) => e.message));
          return "posted";
        },
      },
      undefined,
      undefined,
      stop.signal,
    );
    expect(answers).toEqual(["before", "the run is stopping: no new task is taken"]);
    expect(runner.asked.map((spec) => spec.name)).not.toContain("after");
  });

  it("stops posts of posted tasks at max_post_depth", async () => {
    const config = await swarm({ max_post_depth: 2, defaults: { post_tasks: true }, tasks: [{ name: "lead", prompt: "plan" }] });
    const answers: Record<string, string> = {};
    await drive(config, {
      "*": async (board, spec) => {
        answers[spec.name!] = await tryPost(board, spec.name!, { name: `${spec.name}-sub`, prompt: "go on" });
        return "ok";
      },
    });
    expect(answers).toEqual({ lead: "lead-sub", "lead-sub": "lead-sub-sub", "lead-sub-sub": "MAX_POST_DEPTH" });
  });

  it("keeps one task per name, refuses an unknown agent or dependency, and waits for results", async () => {
    const config = await swarm({
      agents: { fixer: { description: "fixes", prompt: "fix" } },
      tasks: [{ name: "lead", prompt: "plan", post_tasks: true }],
    });
    let waited: unknown;
    const answers: string[] = [];
    const { runner, board } = await drive(config, {
      lead: async (board) => {
        answers.push(await tryPost(board, "lead", { name: "a", prompt: "do a", agent: "fixer" }));
        answers.push(await tryPost(board, "lead", { name: "a", prompt: "do a again" }));
        answers.push(await tryPost(board, "lead", { name: "b", prompt: "do b", agent: "constructor" }));
        answers.push(await tryPost(board, "lead", { name: "c", prompt: "do c", dependsOn: ["nope"] }));
        answers.push(await tryPost(board, "lead", { name: "d", prompt: "after a", dependsOn: ["a"] }));
        answers.push(await tryPost(board, "lead", { name: "../x", prompt: "bad name" }));
        // Unnamed posts get the poster's name, numbered past any name taken.
        answers.push(await tryPost(board, "lead", { name: "lead.3", prompt: "named like a made name" }));
        answers.push(await tryPost(board, "lead", { prompt: "unnamed" }));
        waited = await board.wait("lead", ["a", "d"], new AbortController().signal);
        return "done";
      },
    });
    expect(answers).toEqual(["a", "a", "POST_INVALID", "POST_INVALID", "d", "POST_INVALID", "lead.3", "lead.4"]);
    expect(runner.asked.filter((spec) => spec.name === "a")).toEqual([expect.objectContaining({ agent: "fixer" })]);
    expect(waited).toEqual([
      { name: "a", status: "succeeded", text: "a done" },
      { name: "d", status: "succeeded", text: "d done" },
    ]);
    expect(board.list().find((task) => task.name === "d")).toMatchObject({ status: "succeeded", postedBy: "lead", result: "d done" });
  });

  it("refuses a name the copies of a for_each over a result may take, so that a post cannot fail that task", async () => {
    const config = await swarm({
      tasks: [
        { name: "lead", prompt: "plan", post_tasks: true, output_schema: { type: "object", properties: { files: { type: "array" } } } },
        { name: "fix", depends_on: ["lead"], for_each: "{{results.lead.structured.files}}", prompt: "fix {{item}}", post_tasks: true },
        // Named by its item alone: its copies may take any name, which reserves none.
        { name: "{{item}}", depends_on: ["lead"], for_each: "{{results.lead.structured.files}}", prompt: "check {{item}}" },
      ],
    });
    const answers: string[] = [];
    const { settled } = await drive(config, {
      lead: async (board) => {
        answers.push(await tryPost(board, "lead", { name: "fix-0", prompt: "fix the first myself" }));
        answers.push(await tryPost(board, "lead", { name: "fixes", prompt: "a name of its own" }));
        return { text: "posted", structuredOutput: { files: ["a.ts", "b.ts"] } };
      },
      // A copy's unnamed post is named after it: that name is the run's own choice, not one kept for the copies.
      "*": async (board, spec) => (spec.name === "fix-0" ? tryPost(board, spec.name, { prompt: "a part of a.ts" }) : "ok"),
    });
    expect(answers).toEqual(["POST_INVALID", "fixes"]);
    const byName = new Map(settled.map((e) => [e.task.name, e.result]));
    expect(byName.get("fix-0")?.text).toBe("fix-0.2");
    const names = ["fixes", "fix-0", "fix-1", "fix-0.2", "fix", "a.ts", "b.ts", "{{item}}"];
    expect(names.map((name) => byName.get(name)?.status)).toEqual(names.map(() => "succeeded"));
  });

  it("posts again, as the run starts, what an earlier attempt's record kept", async () => {
    const config = await swarm({ tasks: [{ name: "lead", prompt: "plan", post_tasks: true }] });
    const row = { name: "fix-1", agent: null, depends_on: [], posted_by: "lead", post_depth: 1, prompt: "fix module 1" };
    const earlier = [row as unknown as NonNullable<ConstructorParameters<typeof RunTaskBoard>[1]>[number]];
    const { runner, settled } = await drive(
      config,
      { lead: async (board) => `existed: ${(await board.post("lead", { name: "fix-1", prompt: "fix module 1" })).existed}` },
      earlier,
    );
    // The lead that runs again and posts the same name gets the one task.
    expect(runner.asked.filter((spec) => spec.name === "fix-1")).toHaveLength(1);
    expect(settled.find((e) => e.task.name === "lead")?.result.text).toBe("existed: true");
  });

  it("refuses a wait that could never end: the waiter holds the run's only slot", async () => {
    const config = await swarm({ concurrency: 1, tasks: [{ name: "lead", prompt: "plan", post_tasks: true }] });
    let refusal = "";
    let release = () => {};
    const held = { a: new Promise<void>((resolve) => (release = resolve)) };
    const lead: Act = async (board) => {
      await board.post("lead", { name: "a", prompt: "do a" });
      refusal = await board.wait("lead", ["a"], new AbortController().signal).then(
        () => "waited",
        (error: Error) => error.message,
      );
      release();
      return "done";
    };
    await drive(config, { lead }, undefined, held);
    expect(refusal).toContain("the run's concurrency is 1, and you hold its one slot");
  });

  it("refuses a wait that could never end: every slot of the run is held by a task that waits", async () => {
    const config = await swarm({ concurrency: 2, defaults: { post_tasks: true }, tasks: [{ name: "lead", prompt: "plan" }] });
    const answers: Record<string, string> = {};
    let leadWaits = () => {};
    const held = { a: new Promise<void>((resolve) => (leadWaits = resolve)) };
    await drive(
      config,
      {
        lead: async (board) => {
          await board.post("lead", { name: "a", prompt: "a" });
          const waited = waitOrRefusal(board, "lead", ["a"]);
          leadWaits();
          answers.lead = await waited;
          return "lead done";
        },
        // lead holds one slot waiting on a, a holds the other: b would never start.
        a: async (board) => {
          await board.post("a", { name: "b", prompt: "b" });
          answers.a = await waitOrRefusal(board, "a", ["b"]);
          return "a done";
        },
      },
      undefined,
      held,
    );
    expect(answers).toEqual({
      a: "waiting would never end: the run's concurrency is 2, and its slots are all held by tasks that wait (lead, a); end your turn instead, the tasks run after it",
      lead: "waited: a",
    });
  });

  it("refuses a wait that could never end: every slot of an agent is held by its tasks that wait on its tasks", async () => {
    const config = await swarm({
      defaults: { post_tasks: true },
      agents: { fixer: { description: "fixes", prompt: "fix", max_concurrency: 2 } },
      tasks: [{ name: "lead", prompt: "plan" }],
    });
    const answers: Record<string, string> = {};
    let aWaits = () => {};
    let bAnswered = () => {};
    // This runner keeps no max_concurrency: c is held as the run would hold it, until b has its answer.
    const held = { b: new Promise<void>((resolve) => (aWaits = resolve)), c: new Promise<void>((resolve) => (bAnswered = resolve)) };
    const { settled } = await drive(
      config,
      {
        lead: async (board) => {
          for (const name of ["a", "b"]) await board.post("lead", { name, prompt: name, agent: "fixer" });
          return "posted";
        },
        // a and b hold fixer's two slots; a waits on c, a fixer's task: b's wait on d, another, would leave none to start either.
        a: async (board) => {
          await board.post("a", { name: "c", prompt: "c", agent: "fixer" });
          const waited = waitOrRefusal(board, "a", ["c"]);
          aWaits();
          answers.a = await waited;
          return "a done";
        },
        b: async (board) => {
          await board.post("b", { name: "d", prompt: "d", agent: "fixer" });
          answers.b = await waitOrRefusal(board, "b", ["d"]);
          bAnswered();
          return "b done";
        },
      },
      undefined,
      held,
    );
    expect(answers).toEqual({
      a: "waited: c",
      b: "waiting would never end: agent fixer's max_concurrency is 2, and its slots are all held by tasks that wait (a, b); end your turn instead, the tasks run after it",
    });
    expect(settled.map((e) => e.result.status)).toEqual(settled.map(() => "succeeded"));
  });

  it("takes a wait in an agent full of waiters when one of them waits on a task outside it, which can end", async () => {
    const config = await swarm({
      defaults: { post_tasks: true },
      agents: { fixer: { description: "fixes", prompt: "fix", max_concurrency: 2 } },
      tasks: [{ name: "lead", prompt: "plan" }],
    });
    const answers: Record<string, string> = {};
    let aWaits = () => {};
    const held = { b: new Promise<void>((resolve) => (aWaits = resolve)) };
    await drive(
      config,
      {
        lead: async (board) => {
          for (const name of ["a", "b"]) await board.post("lead", { name, prompt: name, agent: "fixer" });
          return "posted";
        },
        // z has no agent: it runs beside a and b, and once it ends a's slot frees for d.
        a: async (board) => {
          await board.post("a", { name: "z", prompt: "z" });
          const waited = waitOrRefusal(board, "a", ["z"]);
          aWaits();
          answers.a = await waited;
          return "a done";
        },
        b: async (board) => {
          await board.post("b", { name: "d", prompt: "d", agent: "fixer" });
          answers.b = await waitOrRefusal(board, "b", ["d"]);
          return "b done";
        },
      },
      undefined,
      held,
    );
    expect(answers).toEqual({ a: "waited: z", b: "waited: d" });
  });

  it("refuses a wait on a task that cannot end before the waiter does: one that depends on it, or waits on it", async () => {
    const config = await swarm({ defaults: { post_tasks: true }, tasks: [{ name: "lead", prompt: "plan" }] });
    const refusals: Record<string, string> = {};
    let bothWaiting = () => {};
    const aWaits = new Promise<void>((resolve) => (bothWaiting = resolve));
    const { settled } = await drive(config, {
      lead: async (board) => {
        await board.post("lead", { name: "p", prompt: "p" });
        await board.post("lead", { name: "b", prompt: "b" });
        await board.post("lead", { name: "a", prompt: "a" });
        return "posted";
      },
      // p posts q after itself, and r after q: waiting on either would wait on p's own end.
      p: async (board) => {
        await board.post("p", { name: "q", prompt: "q", dependsOn: ["p"] });
        await board.post("p", { name: "r", prompt: "r", dependsOn: ["q"] });
        refusals.p = await waitOrRefusal(board, "p", ["r"]);
        return "p done";
      },
      // a waits on b while b asks to wait on a: the second wait would close the circle.
      a: async (board) => {
        const waited = waitOrRefusal(board, "a", ["b"]);
        bothWaiting();
        refusals.a = await waited;
        return "a done";
      },
      b: async (board) => {
        await aWaits;
        refusals.b = await waitOrRefusal(board, "b", ["a"]);
        return "b done";
      },
    });
    expect(refusals).toEqual({
      p: 'waiting would never end: "r" cannot end before you do (r waits for q, q waits for p); end your turn instead, the tasks run after it',
      a: "waited: b",
      b: 'waiting would never end: "a" cannot end before you do (a waits for b); end your turn instead, the tasks run after it',
    });
    expect(settled.map((e) => [e.task.name, e.result.status]).sort()).toEqual(["a", "b", "lead", "p", "q", "r"].map((name) => [name, "succeeded"]));
  });

  it("counts a posted task to its poster's agent's budget unless its own agent has one", async () => {
    const config = await swarm({
      agents: { planner: { description: "plans", prompt: "plan", budget_usd: 1 }, fixer: { description: "fixes", prompt: "fix" } },
      tasks: [{ name: "lead", agent: "planner", prompt: "plan", post_tasks: true }],
    });
    const { runner } = await drive(config, {
      lead: async (board) => (await board.post("lead", { name: "a", prompt: "do a", agent: "fixer" })).name,
    });
    expect(runner.asked.find((spec) => spec.name === "a")).toMatchObject({ agent: "fixer", budgetAgent: "planner" });
  });
});
