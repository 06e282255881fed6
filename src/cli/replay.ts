// `cadre replay RUN-DIR`: `cadre run --replay RUN-DIR`, with the recorded run's swarm file or script unless --config names another.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { runCommand } from "./run.ts";

const HELP = `usage: cadre replay <run-dir> [--config FILE] [--override FILE] [--in-place] [cadre run's options]

Runs a recorded run (of a swarm file or a workflow script) again with the real
claude against the replies its record (replies.jsonl) kept, instead of the
model: offline, at no cost. Tool calls, hooks, permissions, routing, when:,
maps, loops, a script's control flow and the messages, interrupts and stops
sent to its tasks (at the same step) happen again; tools run for real, so
replay in a test checkout (--config FILE: its copy of the swarm file; a
script's replay runs the copy its run kept, its agents in this directory).
A session that asks for a reply the record does not have stops there, and the
replay reports where (task, turn, expected, got) and exits 1.

Options:
  --config FILE     the swarm file or script to run (default: the recorded run's)
  --override FILE   replies to give instead of recorded ones (session → turn → reply)
  --in-place        run even in the working tree the recorded run worked in
  and cadre run's (cadre run --help): --out, --json, --ui, --concurrency, ...
  (a script's: --out, --json, --concurrency, --args, --budget, ...)
See docs/replay.md.
`;

export function replayCommand(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(HELP);
    return Promise.resolve(0);
  }
  const configAt = args.findIndex((arg) => arg === "--config" || arg.startsWith("--config="));
  const config = configAt === -1 ? undefined : args[configAt]!.includes("=") ? args[configAt]!.slice("--config=".length) : args[configAt + 1];
  const rest = configAt === -1 ? args : args.filter((_, index) => index !== configAt && (args[configAt]!.includes("=") || index !== configAt + 1));
  const [dir, ...flags] = rest;
  if (dir === undefined || dir.startsWith("-")) {
    process.stderr.write("cadre replay: give the run directory to replay; see cadre replay --help\n");
    return Promise.resolve(2);
  }
  if (!isDirectory(dir)) {
    process.stderr.write(`cadre replay: no run directory at ${resolve(dir)}\n`);
    return Promise.resolve(2);
  }
  return runCommand([...(config === undefined ? [] : [config]), "--replay", dir, ...flags]);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
