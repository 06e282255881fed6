// The swarms the steering tests run: agents in long Bash calls, each touching a file as its tool starts; and two tasks for one slot.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { runWorkflow, type Summary, type SwarmRun, TaskNotRunningError } from "../../src/index.ts";

/**
 * `steer-me` lists until the test calls releaseSteerMe (a minute at most; at once once released, as in a replay) then
 * answers with the message sent into its turn; `stop-me` waits a minute the first time (at once when --resume runs it
 * again; every time with `waitEveryTime`, as a replay of its stop needs); with `dependent`, `after-stop` waits on
 * stop-me. Files go in `tmp`.
 */
export function steeringSwarm(tmp: string, options: { dependent: boolean; waitEveryTime?: boolean }): string {
  const ranOnce = join(tmp, "stop-me-ran-once");
  const wait = `touch ${join(tmp, "stop-me")}; sleep 60`;
  const stopMeCommand = options.waitEveryTime ? wait : `test -e ${ranOnce} || { touch ${ranOnce}; ${wait}; }`;
  return [
    "name: steering",
    "concurrency: 3",
    "defaults: { allowed_tools: [Bash] }",
    "tasks:",
    "  - { name: steer-me, prompt: list A }",
    "  - { name: stop-me, prompt: wait long }",
    ...(options.dependent ? ["  - { name: after-stop, prompt: 'go on from {{results.stop-me}}', depends_on: [stop-me] }"] : []),
    "rehearsal:",
    "  steer-me:",
    `    - tool_use: { name: Bash, input: { command: 'touch ${join(tmp, "steer-me")}; ${untilReleased(tmp)}', description: list } }`,
    "    - text: 'turned to: {{message}}'",
    "  stop-me:",
    `    - tool_use: { name: Bash, input: { command: '${stopMeCommand}', description: wait } }`,
    "    - text: waited",
    ...(options.dependent ? ["  after-stop: [{ text: 'after: {{prompt}}' }]"] : []),
    "",
  ].join("\n");
}

/** A shell loop that ends once releaseSteerMe was called, or after a minute: a message sent before it ends is taken at the next step, however slow the machine. */
function untilReleased(tmp: string): string {
  return `for i in $(seq 600); do test -e ${join(tmp, "steer-me-go")} && break; sleep 0.1; done`;
}

/** Ends steer-me's Bash call (see steeringSwarm): call it once the message was sent. */
export async function releaseSteerMe(tmp: string): Promise<void> {
  await writeFile(join(tmp, "steer-me-go"), "");
}

/** Both agents of steeringSwarm are inside their Bash calls. */
export function bothAgentsBusy(tmp: string): boolean {
  return existsSync(join(tmp, "steer-me")) && existsSync(join(tmp, "stop-me"));
}

/**
 * Two tasks, `a` and `b`, under concurrency 1: whichever takes the slot first sits in a Bash call until the test calls
 * releaseSlot (at once when --resume runs it again) and answers "<name> done"; the other waits for the slot. With
 * `dependent`, `after` waits on both.
 */
export function oneSlotSwarm(tmp: string, options: { dependent: boolean }): string {
  const ran = (name: string) => join(tmp, `ran-${name}`);
  const command = (name: string) => `test -e ${ran(name)} || { touch ${ran(name)}; until test -e ${join(tmp, "release")}; do sleep 0.2; done; }`;
  const task = (name: string) =>
    `  ${name}: [{ tool_use: { name: Bash, input: { command: '${command(name)}', description: work } } }, { text: ${name} done }]`;
  return [
    "name: one-slot",
    "concurrency: 1",
    "defaults: { allowed_tools: [Bash] }",
    "tasks:",
    "  - { name: a, prompt: work }",
    "  - { name: b, prompt: work }",
    ...(options.dependent ? ["  - { name: after, prompt: 'after {{results.a}} {{results.b}}', depends_on: [a, b] }"] : []),
    "rehearsal:",
    task("a"),
    task("b"),
    ...(options.dependent ? ["  after: [{ text: 'after: {{prompt}}' }]"] : []),
    "",
  ].join("\n");
}

/** Ends the Bash call of the task of oneSlotSwarm that holds the slot. */
export async function releaseSlot(tmp: string): Promise<void> {
  await writeFile(join(tmp, "release"), "");
}

/** Once one task of oneSlotSwarm is in its Bash call: the one that waits for the slot, and the one in it. */
export function slotTaken(tmp: string): { waiting: string; working: string } | undefined {
  const [a, b] = [existsSync(join(tmp, "ran-a")), existsSync(join(tmp, "ran-b"))];
  if (a && b) throw new Error("both tasks have run: the first left the slot before the test looked");
  return a ? { waiting: "b", working: "a" } : b ? { waiting: "a", working: "b" } : undefined;
}

/**
 * A workflow script of two agent() calls at work: `steer-me` gets "look at B instead" as soon as it has a turn (it comes
 * while the model writes its only answer, so the CLI takes it after that answer, as the next prompt: `{{prompt}}`; between
 * a tool call and its result it is `{{message}}`), and `stop-me` is stopped. Resolves with the run's record.
 */
export async function steeredWorkflow(options: { outDir: string; cwd: string }): Promise<Summary> {
  const script = [
    'export const meta = { name: "pair", description: "two agents at work" }',
    'return await parallel([() => agent("list A", { label: "steer-me" }), () => agent("wait long", { label: "stop-me" })])',
  ].join("\n");
  let run: SwarmRun | undefined;
  const seen = new Set<string>();
  const running = runWorkflow(script, {
    ...options,
    rehearsal: {
      "steer-me": [{ text: "listing A", delay_ms: 4_000 }, { text: "turned to: {{message}}{{prompt}}" }],
      "stop-me": [{ text: "never", delay_ms: 60_000 }],
    },
    onStart: (started) => (run = started),
    onEvent: (event) => {
      if (event.type === "task_started") seen.add(event.task.name);
    },
  });
  await expect.poll(() => seen.has("steer-me") && seen.has("stop-me"), { timeout: 60_000 }).toBe(true);
  // A process waits for its prompt a moment (the cache stagger): until it has sent it, it has no turn to take a message.
  const sent = async () => {
    try {
      await run?.send("steer-me", "look at B instead");
      return true;
    } catch (error) {
      if (!(error instanceof TaskNotRunningError)) throw error;
      return false;
    }
  };
  await expect.poll(sent, { timeout: 10_000 }).toBe(true);
  await run?.stopTask("stop-me");
  return (await running).summary;
}
