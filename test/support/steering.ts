// The swarm the steering tests run: two agents in long Bash calls, each touching a file as its tool starts, and a task that waits on the second.
import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * `steer-me` lists for `steerSeconds` then answers with the message sent into its turn; `stop-me` waits a minute the first
 * time (at once when --resume runs it again; every time with `waitEveryTime`, as a replay of its stop needs); with
 * `dependent`, `after-stop` waits on stop-me. Files go in `tmp`.
 */
export function steeringSwarm(tmp: string, options: { steerSeconds: number; dependent: boolean; waitEveryTime?: boolean }): string {
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
    `    - tool_use: { name: Bash, input: { command: 'touch ${join(tmp, "steer-me")} && sleep ${options.steerSeconds}', description: list } }`,
    "    - text: 'turned to: {{message}}'",
    "  stop-me:",
    `    - tool_use: { name: Bash, input: { command: '${stopMeCommand}', description: wait } }`,
    "    - text: waited",
    ...(options.dependent ? ["  after-stop: [{ text: 'after: {{prompt}}' }]"] : []),
    "",
  ].join("\n");
}

/** Both agents of steeringSwarm are inside their Bash calls. */
export function bothAgentsBusy(tmp: string): boolean {
  return existsSync(join(tmp, "steer-me")) && existsSync(join(tmp, "stop-me"));
}
