// `cadre mcp`: serves cadre's session tools to an MCP client over stdio or Streamable HTTP.
import { readFile } from "node:fs/promises";
import process from "node:process";
import { AbortError } from "../errors.ts";
import type { McpRuntime, McpRuntimeOptions } from "../mcp/index.ts";
import type { OrchestratorOptions } from "../orchestrator/index.ts";
import type { RehearsalScripts } from "../rehearsal/index.ts";
import { loadTelemetry, type TelemetrySettings, telemetryHelp, telemetrySettings } from "../telemetry/index.ts";
import { parseAllowedHosts } from "../util/allowed-hosts.ts";
import { parseHostPort } from "../util/http-guard.ts";
import { checkServerToken, numberFlag, parseFlags, UsageError } from "./flags.ts";
import { mcpAddLine } from "./setup-lines.ts";
import { stopOnSignals, stopped } from "./signals.ts";

const USAGE =
  "usage: cadre mcp [--http HOST:PORT] [--token T] [--allowed-hosts A,B] [--config swarm.yaml] [--rehearse] [--scripts FILE] [--warm N] [--otel] [--metrics HOST:PORT] [options]\n       cadre mcp --demo";

/** The help, with the setup line spelled for this cadre's place on disk. */
const help = () => `${USAGE}

Serves cadre's session tools (spawn_session, query_session, wait_sessions, …) to an MCP client,
over stdio unless --http is given. Add it to Claude Code, for every directory, with:
  ${mcpAddLine()}
(Without --scope user, Claude Code uses it only in the directory you ran that in.) Try it
offline first: \`cadre mcp --demo\` shows a scripted parent Claude using the tools; or end
that line with --rehearse, and the children talk to a scripted model, with no account.

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
  --rehearse                children talk to a scripted model, offline: the config's rehearsal
                            scripts, or without any, a reply that repeats each prompt
  --scripts FILE            rehearsal scripts (name → steps, YAML or JSON); implies --rehearse.
                            A child plays the script named like its session name, else like its agent.
  --no-elicitation          never ask the client's user through MCP elicitation
  --demo                    no server: a scripted parent Claude (the real claude CLI, offline)
                            uses cadre mcp --rehearse's tools, and each call is shown
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
  demo: { type: "boolean" },
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

/** What the flags ask for: the runtime's options, HTTP or stdio, and the telemetry. */
interface McpSetup {
  options: McpRuntimeOptions;
  http: { host: string; port: number; allowedHosts: string[]; maxClients: number | undefined } | undefined;
  token: string | undefined;
  telemetry: TelemetrySettings | undefined;
}

const parseMcpFlags = (args: string[]) => parseFlags(args, { options: OPTIONS, allowPositionals: false });
type McpFlags = ReturnType<typeof parseMcpFlags>["values"];

/** The children's scripts under --rehearse: the config's, then --scripts', else replies that echo each prompt. */
async function rehearsalScripts(values: McpFlags, config: RehearsalScripts | undefined): Promise<RehearsalScripts | undefined> {
  if (values.rehearse !== true && values.scripts === undefined) return undefined;
  const scripts = { ...config, ...(values.scripts && (await loadScripts(values.scripts))) };
  if (Object.keys(scripts).length > 0) return scripts;
  return (await import("./mcp-default-replies.ts")).defaultReplies();
}

function httpSetup(values: McpFlags): McpSetup["http"] {
  if (values.http !== undefined) {
    return {
      ...parseHostPort(values.http, "--http"),
      allowedHosts: parseAllowedHosts(values["allowed-hosts"]),
      maxClients: numberFlag("max-clients", values["max-clients"], { integer: true, min: 1 }),
    };
  }
  if (values["allowed-hosts"] !== undefined || values["max-clients"] !== undefined) {
    throw new UsageError(`--${values["allowed-hosts"] !== undefined ? "allowed-hosts" : "max-clients"} applies to --http only`);
  }
  return undefined;
}

/** Reads the flags and the files they name; a UsageError for anything wrong. */
async function mcpSetup(values: McpFlags): Promise<McpSetup> {
  const config = values.config === undefined ? undefined : await loadConfig(values.config);
  const scripts = await rehearsalScripts(values, config?.rehearsal);
  const seconds = (name: string, value: string | undefined) => {
    const s = numberFlag(name, value);
    return s === undefined ? undefined : s * 1000;
  };
  const options: McpRuntimeOptions = {
    ...(config && { orchestrator: config.orchestrator }),
    concurrency: numberFlag("concurrency", values.concurrency, { integer: true, min: 1 }),
    maxSessions: numberFlag("max-sessions", values["max-sessions"], { integer: true, min: 1 }),
    warm: numberFlag("warm", values.warm, { integer: true, min: 0 }),
    idleTimeoutMs: seconds("idle-timeout-s", values["idle-timeout-s"]),
    permissionTimeoutMs: seconds("permission-timeout-s", values["permission-timeout-s"]),
    elicitation: values["no-elicitation"] !== true,
    ...(scripts && { rehearsal: { scripts } }),
  };
  const token = values.token ?? process.env.CADRE_MCP_TOKEN;
  const http = httpSetup(values);
  checkServerToken(http?.host ?? "127.0.0.1", token, "run claude here");
  if (values.metrics !== undefined && !http) throw new UsageError("--metrics goes with --http");
  const prometheus = values.metrics === undefined ? undefined : parseHostPort(values.metrics, "--metrics");
  const telemetry = telemetrySettings({ otel: values.otel, content: values["otel-content"], ...(prometheus && { prometheus }) });
  return { options, http, token, telemetry };
}

/** Serves one client on stdin and stdout until it goes or `stop` aborts. */
async function serveOnStdio(runtime: McpRuntime, stop: AbortSignal): Promise<void> {
  // A person who typed `cadre mcp` sees why nothing happens; an MCP client's pipe is no terminal.
  if (process.stdin.isTTY) {
    process.stderr.write("cadre mcp: serving MCP on stdio, waiting for a client (an MCP client starts this command; Ctrl-C ends it)\n");
  }
  const { serveStdio } = await import("../mcp/stdio.ts");
  await serveStdio(runtime, stop);
}

/** Serves Streamable HTTP, and the dashboard of the children beside it, until `stop` aborts. */
async function serveOnHttp(runtime: McpRuntime, setup: McpSetup, stop: AbortSignal): Promise<void> {
  const { serveHttp } = await import("../mcp/http.ts");
  const { childSessionsDashboard } = await import("./mcp-dashboard.ts");
  const children = childSessionsDashboard(runtime, setup.options.rehearsal !== undefined);
  try {
    const serving = await serveHttp(runtime, { ...setup.http!, token: setup.token, page: children.page });
    // One write: a reader that waits for the address finds the allowed hosts beside it.
    process.stderr.write(`cadre mcp: listening on ${serving.url}\ncadre mcp: allowed hosts (Host and Origin): ${serving.allowedHosts}\n`);
    if (serving.tokenGenerated) process.stderr.write(`cadre mcp: token: ${serving.token}\n`);
    process.stderr.write(`cadre mcp: dashboard of the child sessions: ${children.url(serving)}\n`);
    await stopped(stop);
    await serving.close();
  } finally {
    children.off();
  }
}

/** `cadre mcp`: serves until the client goes (stdio) or a signal (SIGINT, SIGTERM, SIGHUP); every child is closed before it returns. */
export async function mcpCommand(args: string[]): Promise<number> {
  let setup: McpSetup;
  try {
    const { values } = parseMcpFlags(args);
    if (values.help) {
      process.stdout.write(help());
      return 0;
    }
    if (values.demo) {
      if (args.length > 1) throw new UsageError("--demo takes no other options");
      return await (await import("./mcp-demo.ts")).mcpDemo();
    }
    setup = await mcpSetup(values);
  } catch (error) {
    process.stderr.write(`cadre mcp: ${(error as Error).message}\n${error instanceof UsageError ? "" : `${USAGE}\n`}`);
    return 2;
  }

  // A second signal exits at once; the reaper then ends the children.
  const stop = stopOnSignals("the server").signal;
  const { McpRuntime } = await import("../mcp/runtime.ts");
  const runtime = await McpRuntime.start(setup.options);
  // Loaded only when asked for: a plain `cadre mcp` loads no OpenTelemetry module.
  const log = (line: string) => process.stderr.write(`cadre mcp: ${line}\n`);
  const telemetry =
    setup.telemetry && (await (await loadTelemetry()).startProcessTelemetry(setup.telemetry, { role: "mcp", log }, setup.options.concurrency));
  const unobserve = telemetry ? runtime.orchestrator.on(telemetry.observer.apply) : undefined;
  if (telemetry?.prometheusUrl) log(`metrics for Prometheus at ${telemetry.prometheusUrl}`);
  // A spare still starting when the server stops is aborted: no failure to report.
  runtime.spares.catch((error: unknown) => {
    if (!(error instanceof AbortError)) log(`no spare child could start: ${(error as Error).message}`);
  });
  try {
    if (setup.http) await serveOnHttp(runtime, setup, stop);
    else await serveOnStdio(runtime, stop);
    return 0;
  } catch (error) {
    log((error as Error).message);
    return 1;
  } finally {
    await runtime.close();
    unobserve?.();
    await telemetry?.observer.close();
  }
}
