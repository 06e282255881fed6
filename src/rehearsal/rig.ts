// The rehearsal rig: a scripted model server, and the environment that points each worker at its script.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeDirectory } from "../util/make-directory.ts";
import { own } from "../util/own.ts";
import { removeOnExit } from "../util/reaper.ts";
import { offlineClaudeEnv } from "./env.ts";
import type { RehearsalScript, RehearsalScripts } from "./script.ts";
import { alternateName, SUBAGENT_SCRIPT_SUFFIX } from "./scripting.ts";
import { type RehearsalServer, type RehearsalServerOptions, startRehearsalServer } from "./server.ts";

/**
 * The worker to point at a script, as the orchestrator describes it (its
 * WorkerContext). Declared here, by shape, so that the rehearsal layer
 * imports nothing from the layers that use it.
 */
export interface ScriptedWorker {
  /** "task", "session", "peer" or "supervisor". */
  kind: string;
  /** The task or session name; the agent name for peers and supervisors. */
  name: string;
  agent: string | undefined;
}

/** The workers that answer for an agent rather than run a task: ask_peer's peer, a hook's supervisor. */
export type AgentSessionKind = "peer" | "supervisor";

const AGENT_SCRIPT = /^(peer|supervisor):(.+)$/;

/** The script an agent's peer or supervisor session plays: "peer:<agent>" or "supervisor:<agent>". */
export function agentScriptName(kind: AgentSessionKind, agent: string): string {
  return `${kind}:${agent}`;
}

/** What a script name such as "peer:critic" is for; undefined for the name of a task or session. */
export function parseAgentScriptName(name: string): { kind: AgentSessionKind; agent: string } | undefined {
  const match = AGENT_SCRIPT.exec(name);
  return match ? { kind: match[1] as AgentSessionKind, agent: match[2]! } : undefined;
}

/**
 * The script a worker plays under rehearsal: the sessions that answer
 * ask_peer and decide supervised hooks play "peer:<agent>" and
 * "supervisor:<agent>"; a task or session plays the script named like it,
 * else the one named like its agent.
 */
export function rehearsalScriptFor(context: ScriptedWorker, scripts: RehearsalScripts): string {
  if ((context.kind === "peer" || context.kind === "supervisor") && context.agent !== undefined) return agentScriptName(context.kind, context.agent);
  if (own(scripts, context.name) !== undefined) return context.name;
  const named = madeAtRunTime(context.name, scripts);
  if (named !== undefined) return named;
  if (context.agent !== undefined && own(scripts, context.agent) !== undefined) return context.agent;
  return context.name;
}

/**
 * The script a worker plays in a replay: the recorded conversations of its
 * own name, never another's. A round or a call the record lacks ("review#3",
 * "verify#4") then diverges under its own name, instead of playing the
 * conversation of the name it was made from.
 */
function replayScriptFor(context: ScriptedWorker): string {
  if ((context.kind === "peer" || context.kind === "supervisor") && context.agent !== undefined) return agentScriptName(context.kind, context.agent);
  return context.name;
}

/**
 * The script of a task named while the run goes on: a loop's round
 * ("review#2") plays its task's script ("review"), and a copy of a for_each
 * over a result ("fix-a.ts") the one named like its copies ("fix-{{item}}").
 */
function madeAtRunTime(name: string, scripts: RehearsalScripts): string | undefined {
  const round = /^(.+)#\d+((?:\/child)*)$/.exec(name);
  if (round !== null && own(scripts, round[1]! + round[2]!) !== undefined) return round[1]! + round[2]!;
  const base = round === null ? name : round[1]! + round[2]!;
  return Object.keys(scripts).find((key) => key.includes("{{") && patternOf(key).test(base));
}

/** The names a task name written with placeholders stands for: "fix-{{item}}" → /^fix-.+$/. */
export function patternOf(template: string): RegExp {
  const parts = template.split(/\{\{[^{}]*\}\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".+")}$`);
}

/**
 * A recorded run's conversations for a replay, by the name of who held them:
 * several for a name (its attempts, the children a task spawned under one
 * name) in the order they began; `subagents` by the name of the session
 * whose Agent tool started them.
 */
export interface RecordedConversations {
  conversations: Record<string, RehearsalScript[]>;
  subagents: Record<string, RehearsalScript[]>;
  /** Lines of the record that could not be read, named: a divergence names them too, since a reply may have been on one. */
  unreadable?: readonly string[];
}

/** The scripts that serve recorded conversations: "name", "name (2)", …, and "name:subagent", … (see RehearsalServer's replay). */
export function replayScripts(recorded: RecordedConversations): RehearsalScripts {
  const scripts: RehearsalScripts = {};
  const add = (name: string, conversations: RehearsalScript[]) => {
    for (const [index, steps] of conversations.entries()) scripts[alternateName(name, index + 1)] = steps;
  };
  for (const [name, conversations] of Object.entries(recorded.conversations)) add(name, conversations);
  for (const [name, conversations] of Object.entries(recorded.subagents)) add(`${name}${SUBAGENT_SCRIPT_SUFFIX}`, conversations);
  return scripts;
}

/** One process's route to the scripted model; bound to the script of whoever the process works for now. */
export interface ScriptedProcess {
  options: { env: Record<string, string> };
  bind(context: ScriptedWorker): void;
  release(): void;
}

/** The scripted model and a private HOME for the workers of one run; close() stops the one and removes the other (unless it was given). */
export interface RehearsalRig {
  server: RehearsalServer;
  /** For OrchestratorOptions.workerOptions: the offline environment, the same for every worker. */
  workerOptions: () => { inheritEnv: false; env: Record<string, string> };
  /**
   * For OrchestratorOptions.processOptions: each process talks to its own
   * route, bound to the script of whoever it works for now, so that a spare
   * or a reused process plays the script of its next task.
   */
  processOptions: () => ScriptedProcess;
  close(): Promise<void>;
}

/**
 * `home`: a HOME to keep (made if missing), so that the CLI's session files
 * outlive the run and a resumed rehearsal can continue its sessions; by
 * default a temporary one, removed on close. `replay`: play a run's
 * recorded conversations instead of `given`; a request they do not answer
 * is a divergence (RehearsalServerOptions.replay). `onTurn`: told of each
 * request for a turn before it is answered (RehearsalServerOptions.onTurn).
 */
export async function startRehearsalRig(
  given: RehearsalScripts,
  options: { home?: string; replay?: RecordedConversations } & Pick<RehearsalServerOptions, "onTurn"> = {},
): Promise<RehearsalRig> {
  const scripts = options.replay ? replayScripts(options.replay) : given;
  // Nothing here reads the requests: keep a few, for a look while debugging, not a long run's history.
  const server = await startRehearsalServer({
    scripts,
    keepRequests: 20,
    replay: options.replay !== undefined,
    ...(options.replay?.unreadable !== undefined && { unreadable: options.replay.unreadable }),
    ...(options.onTurn && { onTurn: options.onTurn }),
  });
  const kept = options.home;
  if (kept !== undefined) makeDirectory(kept);
  const home = kept ?? (await mkdtemp(join(tmpdir(), "cadre-rehearse-")));
  // Also when cadre is killed or exits at once (a second Ctrl-C), without reaching close(); a kept HOME stays.
  const removed = kept === undefined ? removeOnExit(home) : () => {};
  let processes = 0;
  return {
    server,
    // Not inherited: the user's CLAUDE_CONFIG_DIR, credentials or endpoint must not leak into a rehearsal.
    workerOptions: () => ({ inheritEnv: false, env: offlineClaudeEnv({ baseUrl: server.url, home }) }),
    processOptions: () => {
      const token = String(++processes);
      return {
        options: { env: { ANTHROPIC_BASE_URL: server.baseUrlForProcess(token) } },
        bind: (context) => server.bind(token, options.replay ? replayScriptFor(context) : rehearsalScriptFor(context, scripts)),
        release: () => server.unbind(token),
      };
    },
    async close() {
      await server.close();
      if (kept === undefined) await rm(home, { recursive: true, force: true, maxRetries: 3 });
      removed();
    },
  };
}
