// `cadre send | stop | interrupt`: reach one task of a running `cadre run` from another terminal, through the run's control socket.
import { type Dirent, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { askRun, type ControlRequest, controlSocketPath, RunNotReachableError, runListens, SteerTextSchema } from "../run/index.ts";
import { parseFlags } from "./flags.ts";
import { RUNS_DIR } from "./run/prepare.ts";

type Action = ControlRequest["action"];

const USAGE: Record<Action, string> = {
  send: "usage: cadre send <run-dir | latest> <task> <message>",
  stop: "usage: cadre stop <run-dir | latest> <task>",
  interrupt: "usage: cadre interrupt <run-dir | latest> <task>",
};

const WHAT: Record<Action, string> = {
  send: `Writes a message into the running turn of one task of a running cadre run: the
agent takes it at its next step (between tool calls), as "The user sent a new
message while you were working: ...", and the task's result is its answer after
it. The message is text only: never a command, a file read or a flag (put -- before
a message that starts with -). Words after <task> are joined with spaces.`,
  stop: `Stops one task of a running cadre run while the rest goes on: it ends cancelled,
its claude process and tools killed, its worktree and session kept (a task that
waits for a slot ends without starting); the tasks that depend on it are skipped,
and cadre run --resume runs it again.`,
  interrupt: `Ends the current turn of one task of a running cadre run, as Escape does in
Claude Code: the task ends as interrupted, its session kept for cadre run --resume.`,
};

function help(action: Action): string {
  return `${USAGE[action]}

${WHAT[action]}

<run-dir> is the run's directory (its summary.json is there); latest is the run
started last under ${RUNS_DIR} (a resumed run included) that still answers: a
newer run that was killed is passed over, saying so. The run is reached through the Unix socket in <run-dir>/control/,
which only the user who started the run can use. A task is named as in the run's
view: a swarm task's name, or a workflow script's agent() row.

Options:
  -h, --help  show this help

Exit status: 0 done, 2 the run has ended, the task is not running, or wrong
arguments. See docs/steering.md.
`;
}

/** `cadre send|stop|interrupt RUN-DIR TASK [MESSAGE]`: one request to the run, and one line saying how it went. */
export async function steerCommand(action: Action, args: string[]): Promise<number> {
  let positionals: string[];
  try {
    const parsed = parseFlags(args, { options: { help: { type: "boolean", short: "h" } }, allowPositionals: true });
    if (parsed.values.help) {
      process.stdout.write(help(action));
      return 0;
    }
    positionals = parsed.positionals;
  } catch (error) {
    return refuse(action, `${(error as Error).message}; ${USAGE[action]}`);
  }
  const [given, task, ...words] = positionals;
  const text = words.join(" ");
  if (given === undefined || task === undefined || (action === "send") !== text.length > 0) return refuse(action, USAGE[action]);
  const checked = SteerTextSchema.safeParse(text);
  if (action === "send" && !checked.success) return refuse(action, checked.error.issues[0]!.message);
  const runDir = given === "latest" ? await latestRunDir(action) : resolve(given);
  if (runDir === undefined) return refuse(action, `no run under ${resolve(RUNS_DIR)}; give the run's directory`);
  const request: ControlRequest = action === "send" ? { action, task, text } : { action, task };
  try {
    const reply = await askRun(runDir, request);
    if (!reply.ok) return refuse(action, reply.message);
  } catch (error) {
    if (error instanceof RunNotReachableError) return refuse(action, error.message);
    throw error;
  }
  process.stdout.write(`cadre ${action}: ${DONE[action]} ${task}\n`);
  return 0;
}

const DONE: Record<Action, string> = { send: "sent to", stop: "stopped", interrupt: "interrupted" };

/**
 * The run started last under .cadre/runs: of the directories with a control socket, the one whose socket was made
 * last and still answers, so that a resumed older run is found beside newer runs that ended, and a newer run that was
 * SIGKILLed (its socket file stays, nothing listens) is passed over, saying so. When no socket answers, the one made
 * last, else the newest directory (they are named by their start time): its run has ended, and asking it says so.
 */
async function latestRunDir(action: Action): Promise<string | undefined> {
  const runs = resolve(RUNS_DIR);
  let entries: Dirent[];
  try {
    entries = readdirSync(runs, { withFileTypes: true });
  } catch {
    return undefined;
  }
  const dirs = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(runs, entry.name))
    .sort();
  const newestFirst = dirs
    .map((dir) => ({ dir, madeAt: socketMadeAt(dir) }))
    .filter((run): run is { dir: string; madeAt: number } => run.madeAt !== undefined)
    .sort((a, b) => b.madeAt - a.madeAt)
    .map((run) => run.dir);
  for (const [i, dir] of newestFirst.entries()) {
    if (!(await runListens(dir))) continue;
    if (i > 0) process.stderr.write(`cadre ${action}: latest is ${dir}: ${passedOver(newestFirst.slice(0, i))}\n`);
    return dir;
  }
  return newestFirst[0] ?? dirs.at(-1);
}

/** Why `latest` is not the newer runs it passed over: their sockets stay, but nothing answers there. */
function passedOver(dirs: readonly string[]): string {
  return dirs.length === 1
    ? `the newer ${dirs[0]} does not answer (its run was killed)`
    : `the newer ${dirs.join(", ")} do not answer (their runs were killed)`;
}

/** When the socket of the run in `dir` was made, or undefined when it has none (or none cadre could reach). */
function socketMadeAt(dir: string): number | undefined {
  const path = controlSocketPath(dir);
  return path === undefined ? undefined : statSync(path, { throwIfNoEntry: false })?.mtimeMs;
}

function refuse(action: Action, problem: string): number {
  process.stderr.write(`cadre ${action}: ${problem}\n`);
  return 2;
}
