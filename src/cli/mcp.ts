import { readFile } from "node:fs/promises";
import process from "node:process";
import { parseArgs } from "node:util";
import { DashboardError, dashboardHandler, dashboardUrl, LiveRun, singleRun } from "../dashboard/index.ts";
import { serveHttp } from "../mcp/http.ts";
import { McpRuntime, type McpRuntimeOptions } from "../mcp/runtime.ts";
import { serveStdio } from "../mcp/stdio.ts";
import { loadRehearsalScripts, type RehearsalScripts } from "../rehearsal/index.ts";
import { loadSwarmConfig, orchestratorOptionsFor, type ResolvedSwarmConfig } from "../swarm/config/index.ts";
import { formatIssue } from "../swarm/config/issues.ts";
import { parseHostPort } from "../util/http-guard.ts";
import { checkServerToken, numberFlag, UsageError } from "./flags.ts";
import { stopped, stopSignal } from "./stop.ts";

const USAGE = "usage: cadre mcp [--http HOST:PORT] [--token T] [--config swarm.yaml] [--rehearse] [--scripts FILE] [options]";

const HELP = `${USAGE}

Serves cadre's session tools (spawn_session, query_session, wait_sessions, …) to an MCP client,
over stdio unless --http is given. Add it to Claude Code with:
  claude mcp add cadre -- npx cadre mcp

Options:
  --http HOST:PORT          Streamable HTTP on /mcp instead of stdio (loopback unless --token is given),
                            and at / a web dashboard of the child sessions (the same token)
  --token TOKEN             bearer token for --http (or CADRE_MCP_TOKEN); generated and shown when absent
  --config FILE             a swarm config: its agents, defaults, budget and concurrency
  --concurrency N           turns running at once over all sessions
  --max-sessions N          live child sessions at once (default 16)
  --idle-timeout-s S        close a child idle this long, and over HTTP a silent client's
                            MCP session that has no children left (default 900; 0: never)
  --permission-timeout-s S  deny a permission request unanswered this long (default 300)
  --rehearse                children talk to a scripted model (the config's rehearsal scripts), offline
  --scripts FILE            rehearsal scripts (name → steps, YAML or JSON); implies --rehearse.
                            A child plays the script named like its session name, else like its agent.
  --no-elicitation          never ask the client's user through MCP elicitation
`;

const OPTIONS = {
  http: { type: "string" },
  token: { type: "string" },
  config: { type: "string" },
  concurrency: { type: "string" },
  "max-sessions": { type: "string" },
  "idle-timeout-s": { type: "string" },
  "permission-timeout-s": { type: "string" },
  rehearse: { type: "boolean" },
  scripts: { type: "string" },
  "no-elicitation": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

async function loadConfig(path: string): Promise<ResolvedSwarmConfig> {
  const result = await loadSwarmConfig(path);
  if (result.ok) return result.config;
  throw new UsageError(`${path} is not valid:\n${result.errors.map((issue) => `  ${formatIssue(issue, path)}`).join("\n")}`);
}

async function loadScripts(path: string): Promise<RehearsalScripts> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read --scripts ${path}: ${(error as Error).message}`);
  }
  return loadRehearsalScripts(text);
}

/** The dashboard of the children of every client: their state and conversations, and their permission requests to answer. */
function childSessionsDashboard(runtime: McpRuntime): { live: LiveRun; off: () => void } {
  const live = new LiveRun({
    id: "sessions",
    title: "cadre mcp: child sessions",
    mode: "sessions",
    startedAt: Date.now(),
    budgetUsd: runtime.orchestrator.options.budgetUsd,
    scheduler: runtime.orchestrator.scheduler,
    answer: (id, requestId, answer) => {
      const session = runtime.registry.get(id);
      if (!session) throw new DashboardError("UNKNOWN_SESSION", `no child session ${id}`);
      session.answer(requestId, answer);
    },
  });
  return { live, off: runtime.orchestrator.on((event) => live.apply(event)) };
}

/** `cadre mcp`: serves until the client goes (stdio) or a signal; every child is closed before it returns. */
export async function mcpCommand(args: string[]): Promise<number> {
  let options: McpRuntimeOptions;
  let http: { host: string; port: number } | undefined;
  let token: string | undefined;
  try {
    const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true });
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const config = values.config === undefined ? undefined : await loadConfig(values.config);
    const rehearse = values.rehearse === true || values.scripts !== undefined;
    const scripts = rehearse ? { ...config?.rehearsal, ...(values.scripts && (await loadScripts(values.scripts))) } : undefined;
    if (scripts && Object.keys(scripts).length === 0) {
      throw new UsageError("--rehearse needs scripts: a --config with a rehearsal section, or --scripts FILE");
    }
    const seconds = (name: string, value: string | undefined) => {
      const s = numberFlag(name, value);
      return s === undefined ? undefined : s * 1000;
    };
    options = {
      ...(config && { orchestrator: orchestratorOptionsFor(config) }),
      concurrency: numberFlag("concurrency", values.concurrency, { integer: true, min: 1 }),
      maxSessions: numberFlag("max-sessions", values["max-sessions"], { integer: true, min: 1 }),
      idleTimeoutMs: seconds("idle-timeout-s", values["idle-timeout-s"]),
      permissionTimeoutMs: seconds("permission-timeout-s", values["permission-timeout-s"]),
      elicitation: values["no-elicitation"] !== true,
      ...(scripts && { rehearsal: { scripts } }),
    };
    token = values.token ?? process.env.CADRE_MCP_TOKEN;
    if (values.http !== undefined) http = parseHostPort(values.http, "--http");
    checkServerToken(http?.host ?? "127.0.0.1", token, "run claude here");
  } catch (error) {
    process.stderr.write(`cadre mcp: ${(error as Error).message}\n${error instanceof UsageError ? "" : `${USAGE}\n`}`);
    return 2;
  }

  const stop = stopSignal();
  const runtime = await McpRuntime.start(options);
  try {
    if (!http) {
      await serveStdio(runtime, stop);
      return 0;
    }
    const children = childSessionsDashboard(runtime);
    try {
      const serving = await serveHttp(runtime, { ...http, token, page: dashboardHandler(singleRun(children.live)) });
      process.stderr.write(`cadre mcp: listening on ${serving.url}\n`);
      if (serving.tokenGenerated) process.stderr.write(`cadre mcp: token: ${serving.token}\n`);
      const page = dashboardUrl(serving.origin, { token: serving.token, generated: serving.tokenGenerated });
      process.stderr.write(`cadre mcp: dashboard of the child sessions: ${page}\n`);
      await stopped(stop);
      await serving.close();
    } finally {
      children.off();
    }
    return 0;
  } catch (error) {
    process.stderr.write(`cadre mcp: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await runtime.close();
  }
}
