// What a swarm file lacks for --rehearse: one line per task without a script.
import { agentScriptName } from "../rehearsal/index.ts";
import { own } from "../util/own.ts";
import type { ResolvedSwarmConfig } from "./config/index.ts";
import { roundBase } from "./config/loops.ts";

/** What a config lacks for --rehearse: one `rehearsal.<key>: …` line per missing script. */
export function missingScripts(config: ResolvedSwarmConfig): string[] {
  const problems: string[] = [];
  if (Object.keys(config.rehearsal).length === 0) return ["rehearsal: the config has no rehearsal section; --rehearse needs a script per task"];
  // A loop task may have a script per round ("review#1", …) instead of one for all.
  const rounds = new Set(Object.keys(config.rehearsal).map(roundBase));
  for (const task of config.tasks) {
    if (own(config.rehearsal, task.name) === undefined && !rounds.has(task.name)) problems.push(`rehearsal: no script for task "${task.name}"`);
  }
  const supervisors = new Set(Object.values(config.hooks).flatMap((entries) => (entries ?? []).flatMap((e) => (e.supervisor ? [e.supervisor] : []))));
  for (const agent of supervisors) {
    const script = agentScriptName("supervisor", agent);
    if (own(config.rehearsal, script) === undefined) problems.push(`rehearsal: no script "${script}" for the hook supervisor "${agent}"`);
  }
  return problems;
}
