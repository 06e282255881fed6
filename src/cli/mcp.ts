// `cadre mcp`: serves cadre's session tools to an MCP client over stdio or Streamable HTTP.
import { readFile } from "node:fs/promises";
import process from "node:process";
import type { McpRuntimeOptions } from "../mcp/index.ts";
import type { OrchestratorOptions } from "../orchestrator/index.ts";
import type { RehearsalScripts } from "../rehearsal/index.ts";
import { loadTelemetry, type TelemetrySettings, telemetryHelp, telemetrySettings } from "../telemetry/index.ts";
import { parseAllowedHosts } from "../util/allowed-hosts.ts";
import { parseHostPort } from "../util/http-guard.ts";
import { checkServerToken, numberFlag, parseFlags, UsageError } from "./flags.ts";
import { mcpAddLine } from "./setup-lines.ts";
import { stopOnSignals, stopped } from "./signals.ts";

const USAGE =
  "usage: cadre mcp [--http HOST:PORT] [--token T] [--allowed-hosts A,B] [--config swarm.yaml] [--rehearse] [--scripts FILE] [--warm N] [--otel] [--metrics HOST:PORT] [options]";

/** The help, with the setup line spelled for this cadre's place on disk. */
const help = () => `${USAGE}

Serves cadre's session tools (spawn_session, query_session, wait_sessions, …) to an MCP client,
over stdio unless --http is given. Add it to Claude Code, for every directory, with:
  ${mcpAddLine()}
(Without --scope user, Claude Code uses it only in the directory you ran that in.) Try it
offline first: end that line with --rehearse --config <swarm.yaml> (its rehearsal scripts)
or --scripts FILE, and the children talk to a scripted model, with no account.

Options:
  --http HOST:PORT          Streamable HTTP on /mcp instead of stdio (loopback unless --token is given),
                            and at / a web dashboard of the child sessions (the same token)
  --token TOKEN             bearer token for --http (or CADRE_MCP_TOKEN); generated and shown when absent
  --allowed-hosts A,B       names requests may carry in Host and Origin besides loopback and the bound
                            address: "name" (any port) or "name:port"; also needed on 0.0.0.0 or [::]
  --max-clients N           live HTTP clients at once; one more gets 503 (default 64)
  --config FILE             a swarm config: its agents, defaults, budget and concurrency
  --concurrency N           turns running at once over all sessions
  --max-sessions N          live child sessions at once (default 16)
  --warm N                  spare children kept started with the default settings, so that a
                            spawn_session without its own settings starts at once (default 1;
                            0: none). Spares are not sessions and do not count as such
  --idle-timeout-s S        close a child idle this long, and over HTTP a silent client's
                            MCP session that has no children left (default 900; 0: never)
  --permission-timeout-s S  deny a permission request unanswered this long (default 300)
  --rehearse                children talk to a scripted model (the config's rehearsal scripts), offline
  --scripts FILE            rehearsal scripts (name → steps, YAML or JSON); implies --rehearse.
                            A child plays the script named like its session name, else like its agent.
  --no-elicitation          never ask the client's user through MCP elicitation
${telemetryHelp(28)}
  --metrics HOST:PORT       with --http: serve the metrics for Prometheus at http://HOST:PORT/metrics
  -h, --help                show this help

Exit status: 0 the client went away or a signal (SIGINT, SIGTERM, SIGHUP) stopped it,
1 the server failed, 2 the arguments or the config are wrong; a second signal exits
at once with 129, 130 or 143 (the children are ended all the same).
`;

const OPTIONS = {
  http: { type: "string" },
  token: { type: "string" },
  "allowed-hosts": { type: "string" },
  "max-clients": { type: "string" },
  config: { type: "string" },
  concurrency: { type: "string" },
  "max-sessions": { type: "string" },
  warm: { type: "string" },
  "idle-timeout-s": { type: "string" },
  "permission-timeout-s": { type: "string" },
  rehearse: { type: "boolean" },
  scripts: { type: "string" },
  "no-elicitation": { type: "boolean" },
  otel: { type: "boolean" },
  "otel-content": { type: "boolean" },
  metrics: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

// The modules behind an option load only when the option is given: `cadre mcp` starts with every
// Claude Code session, and a plain stdio server needs neither YAML nor an HTTP stack.

/** What `cadre mcp` takes from a swarm config: the orchestrator it describes, and its rehearsal scripts. */
async function loadConfig(path: string): Promise<{ orchestrator: OrchestratorOptions; rehearsal: RehearsalScripts }> {
  const { formatIssue, loadSwarmConfig, orchestratorOptionsFor } = await import("../swarm/config/index.ts");
  const result = await loadSwarmConfig(path);
  if (result.ok) return { orchestrator: orchestratorOptionsFor(result.config), rehearsal: result.config.rehearsal };
  throw new UsageError(`${path} is not valid:\n${result.errors.map((issue) => `  ${formatIssue(issue, path)}`).join("\n")}`);
}

async function loadScripts(path: string): Promise<RehearsalScripts> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read --scripts ${path}: ${(error as Error).message}`);
  }
  const { loadRehearsalScripts } = await import("../rehearsal/index.ts");
  return loadRehearsalScripts(text);
}

/** `cadre mcp`: serves until the client goes (stdio) or a signal (SIGINT, SIGTERM, SIGHUP); every child is closed before it returns. */
export async function mcpCommand(args: string[]): Promise<number> {
  let options: McpRuntimeOptions;
  let http: { host: string; port: number; allowedHosts: string[]; maxClients: number | undefined } | undefined;
  let token: string | undefined;
  let telemetrySetup: TelemetrySettings | undefined;
  try {
    const { values } = parseFlags(args, { options: OPTIONS, allowPositionals: false });
    if (values.help) {
      process.stdout.write(help());
      return 0;
    }
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
      ...(config && { orchestrator: config.orchestrator }),
      concurrency: numberFlag("concurrency", values.concurrency, { integer: true, min: 1 }),
      maxSessions: numberFlag("max-sessions", values["max-sessions"], { integer: true, min: 1 }),
      warm: numberFlag("warm", values.warm, { integer: true, min: 0 }),
      idleTimeoutMs: seconds("idle-timeout-s", values["idle-timeout-s"]),
      permissionTimeoutMs: seconds("permission-timeout-s", values["permission-timeout-s"]),
      elicitation: values["no-elicitation"] !== true,
      ...(scripts && { rehearsal: { scripts } }),
    };
    token = values.token ?? process.env.CADRE_MCP_TOKEN;
    if (values.http !== undefined) {
      http = {
        ...parseHostPort(values.http, "--http"),
        allowedHosts: parseAllowedHosts(values["allowed-hosts"]),
        maxClients: numberFlag("max-clients", values["max-clients"], { integer: true, min: 1 }),
      };
    } else if (values["allowed-hosts"] !== undefined || values["max-clients"] !== undefined) {
      throw new UsageError(`--${values["allowed-hosts"] !== undefined ? "allowed-hosts" : "max-clients"} applies to --http only`);
    }
    checkServerToken(http?.host ?? "127.0.0.1", token, "run claude here");
    if (values.metrics !== undefined && !http) throw new UsageError("--metrics goes with --http");
    const prometheus = values.metrics === undefined ? undefined : parseHostPort(values.metrics, "--metrics");
    telemetrySetup = telemetrySettings({ otel: values.otel, content: values["otel-content"], ...(prometheus && { prometheus }) });
  } catch (error) {
    process.stderr.write(`cadre mcp: ${(error as Error).message}\n${error instanceof UsageError ? "" : `${USAGE}\n`}`);
    return 2;
  }

  // A second signal exits at once; the reaper then ends the children.
  const stop = stopOnSignals("the server").signal;
  const { McpRuntime } = await import("../mcp/runtime.ts");
  const runtime = await McpRuntime.start(options);
  // Loaded only when asked for: a plain `cadre mcp` loads no OpenTelemetry module.
  const log = (line: string) => process.stderr.write(`cadre mcp: ${line}\n`);
  const telemetry =
    telemetrySetup && (await (await loadTelemetry()).startProcessTelemetry(telemetrySetup, { role: "mcp", log }, options.concurrency));
  const unobserve = telemetry ? runtime.orchestrator.on(telemetry.observer.apply) : undefined;
  if (telemetry?.prometheusUrl) log(`metrics for Prometheus at ${telemetry.prometheusUrl}`);
  runtime.spares.catch((error: unknown) => process.stderr.write(`cadre mcp: no spare child could start: ${(error as Error).message}\n`));
  try {
    if (!http) {
      const { serveStdio } = await import("../mcp/stdio.ts");
      await serveStdio(runtime, stop);
      return 0;
    }
    const { serveHttp } = await import("../mcp/http.ts");
    const { childSessionsDashboard } = await import("./mcp-dashboard.ts");
    const children = childSessionsDashboard(runtime, options.rehearsal !== undefined);
    try {
      const serving = await serveHttp(runtime, { ...http, token, page: children.page });
      // One write: a reader that waits for the address finds the allowed hosts beside it.
      process.stderr.write(`cadre mcp: listening on ${serving.url}\ncadre mcp: allowed hosts (Host and Origin): ${serving.allowedHosts}\n`);
      if (serving.tokenGenerated) process.stderr.write(`cadre mcp: token: ${serving.token}\n`);
      process.stderr.write(`cadre mcp: dashboard of the child sessions: ${children.url(serving)}\n`);
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
    unobserve?.();
    await telemetry?.observer.close();
  }
}
