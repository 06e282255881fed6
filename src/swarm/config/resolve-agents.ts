import { homedir } from "node:os";
import { resolve } from "node:path";
import { type AgentDefinition, normalizeModel } from "../agents/definition.ts";
import { AgentFileError, readAgentFile } from "../agents/file.ts";
import { didYouMean } from "./did-you-mean.ts";
import { POLICY_EVENTS } from "./hooks.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";
import type { SwarmConfig } from "./schema.ts";

/** A path from the config: `~/x` is in the home directory, a relative one is relative to the config file. */
export function resolveConfigPath(baseDir: string, path: string): string {
  if (path === "~" || path.startsWith("~/")) return resolve(homedir(), path.slice(2));
  return resolve(baseDir, path);
}

/** Every agent as a full definition, reading agent files; a file that fails is an issue at `agents.<name>`. */
export async function resolveAgents(
  agents: SwarmConfig["agents"],
  baseDir: string,
): Promise<{ agents: Record<string, AgentDefinition>; issues: ConfigIssue[] }> {
  const resolved: Record<string, AgentDefinition> = {};
  const issues: ConfigIssue[] = [];
  for (const [name, entry] of Object.entries(agents ?? {})) {
    if (typeof entry !== "string") {
      const { model, ...rest } = entry;
      const normalized = normalizeModel(model);
      resolved[name] = { ...rest, name, ...(normalized !== undefined && { model: normalized }) };
      continue;
    }
    const file = resolveConfigPath(baseDir, entry);
    try {
      // The config's key is the agent's name in this swarm, whatever the file calls it.
      resolved[name] = { ...(await readAgentFile(file)), name };
    } catch (error) {
      if (!(error instanceof AgentFileError)) throw error;
      issues.push(
        error.reason === "file not found"
          ? issue(["agents", name], `agent file not found: ${file}`, `paths are relative to the config file's directory (${baseDir})`)
          : issue(["agents", name], `agent file ${file}: ${error.reason}`),
      );
    }
  }
  return { agents: resolved, issues };
}

/** Tasks, hook supervisors and connections may only name agents defined under `agents`. */
export function checkAgentReferences(config: SwarmConfig): ConfigIssue[] {
  const known = Object.keys(config.agents ?? {});
  const issues: ConfigIssue[] = [];
  const check = (path: PathSegment[], name: string) => {
    if (known.includes(name)) return;
    const hint = didYouMean(name, known) ?? (known.length === 0 ? "define it under agents:" : `defined agents: ${known.join(", ")}`);
    issues.push(issue(path, `unknown agent "${name}"`, hint));
  };

  config.tasks.forEach((task, index) => {
    if (task.agent !== undefined) check(["tasks", index, "agent"], task.agent);
  });
  for (const [event, matchers] of Object.entries(config.hooks ?? {})) {
    (matchers ?? []).forEach((matcher, index) => {
      if (matcher.supervisor !== undefined) check(["hooks", event, index, "supervisor"], matcher.supervisor);
      if (matcher.policy !== undefined && !(POLICY_EVENTS as readonly string[]).includes(event)) {
        issues.push(
          issue(["hooks", event, index, "policy"], `a policy judges tool calls before they run, so it works only under ${POLICY_EVENTS.join(", ")}`),
        );
      }
    });
  }
  for (const [from, targets] of Object.entries(config.connections ?? {})) {
    check(["connections", from], from);
    for (const [index, target] of targets.entries()) check(["connections", from, index], target);
  }
  return issues;
}
