// Starting a child in a process group of its own, and signalling the whole group, with the reaper as a back-up.
import type { ChildProcess } from "node:child_process";
import process from "node:process";
import { execa, type Options } from "execa";
import { reaper } from "./reaper.ts";
import { within } from "./within.ts";

/** How long a kill handed to the reaper may take before the group is signalled directly. */
const REAPER_KILL_MS = 2_000;

export type GroupSignal = "SIGSTOP" | "SIGTERM" | "SIGKILL";

/**
 * Signals the process group led by `pid`, or the process alone where it leads none. Never throws.
 * Once the leader has exited, pass `leaderExited`: only its group, which keeps the id while a
 * member lives, is signalled, since the pid alone may already be another process's.
 */
export function signalGroup(pid: number, name: GroupSignal, leaderExited = false): void {
  for (const target of leaderExited ? [-pid] : [-pid, pid]) {
    try {
      process.kill(target, name);
      return;
    } catch {
      // No such group (not a group leader where groups do not exist), or already gone.
    }
  }
}

/**
 * Starts a command as the leader of a process group and session of its own, watched by
 * the reaper: if cadre ends, however it ends, the reaper kills it with everything below
 * it. It also passes a mark to every process below it (see reaper-script.ts), so the
 * reaper finds them after the leader died and they were reparented: a tool the claude
 * CLI starts in a session of its own, left behind by a CLI killed from outside, ends
 * when the reaper hears that the CLI is gone.
 *
 * A group of its own also means a Ctrl-C or a closing terminal reaches cadre, which
 * ends the group in order, and not the group behind cadre's back.
 */
export function startGroup<O extends Options>(file: string, args: readonly string[], options: O) {
  const { mark, env } = reaper().nextMark();
  const child = execa(file, args, {
    ...options,
    env: { ...options.env, ...env },
    detached: true,
    // execa's own cleanup cannot outlive a SIGKILL of cadre; the reaper can.
    cleanup: false,
  } as O & { detached: true; cleanup: false });
  const pid = child.pid;
  if (pid !== undefined) {
    reaper().watch(pid, mark);
    // The leader is gone: the reaper ends what it left behind, and forgets its pid.
    (child as unknown as ChildProcess).once("exit", () => reaper().forget(pid));
  }
  return child;
}

/** The group's leader is still running: its pid cannot yet be someone else's. */
function leads(child: { pid?: number | undefined; exitCode: number | null; signalCode: string | null }): number | undefined {
  return child.exitCode === null && child.signalCode === null ? child.pid : undefined;
}

/** Signals a group started by startGroup while its leader runs (after that its pid may be reused). */
export function signalLiveGroup(child: Parameters<typeof leads>[0], name: GroupSignal): void {
  const pid = leads(child);
  if (pid !== undefined) signalGroup(pid, name);
}

/**
 * Kills a group started by startGroup at once, with everything below its leader, also
 * what runs in sessions of its own (which a signal to the group does not reach): the
 * leader is stopped first, then the reaper walks its tree; should the reaper not answer
 * within a moment, the group is killed directly. Resolves once the leader has exited.
 */
export async function killGroup(child: Parameters<typeof leads>[0], exited: Promise<unknown>): Promise<void> {
  signalLiveGroup(child, "SIGSTOP");
  const pid = leads(child);
  if (pid !== undefined && reaper().killTree(pid) && (await settlesWithin(exited, REAPER_KILL_MS))) return;
  signalLiveGroup(child, "SIGKILL");
  await exited;
}

/** True when `promise` settles within `ms`. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return (
    (await within(
      promise.then(() => true as const),
      ms,
    )) ?? false
  );
}
