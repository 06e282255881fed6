// Helpers shared by the reliability scenarios: a long-running tool, and checking that a whole process tree is gone by a deadline.
import { readdir } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { descendants, isGone } from "./processes.ts";

/** A Bash tool that runs for a minute: a shell loop, since the CLI refuses a bare long sleep. */
export const MINUTE_OF_BASH = { name: "Bash", input: { command: "for i in $(seq 60); do sleep 1; done", description: "wait a minute" } };

export type ProcessTree = { pid: number; comm: string }[];

/** Every process below `root` once one of them is a `sleep` (a MINUTE_OF_BASH tool is running). Polled without vitest: the Deno tests use it too. */
export async function treeWithBashTool(root: number, timeoutMs = 45_000): Promise<ProcessTree> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tree = await descendants(root);
    if (tree.some((p) => p.comm === "sleep")) return tree;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for a Bash tool below pid ${root}`);
    await sleep(50);
  }
}

/** The processes of `tree` still alive at `deadline` (epoch ms). */
export async function survivors(tree: ProcessTree, deadline: number): Promise<ProcessTree> {
  const left: ProcessTree = [];
  for (const p of tree) if (!(await isGone(p.pid, Math.max(0, deadline - Date.now())))) left.push(p);
  return left;
}

/** The rehearsal HOMEs cadre left in `tmp`, waiting up to `withinMs` for them to go. */
export async function rehearsalHomesLeft(tmp: string, withinMs = 0): Promise<string[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const left = (await readdir(tmp)).filter((name) => name.startsWith("cadre-rehearse-"));
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
