// `cadre worker`: one host of distributed runs, taking their tasks from Redis and running them here.
import { hostname } from "node:os";
import process from "node:process";
import type { Host } from "../distributed/index.ts";
import { redactUrl, redisUrlProblem } from "../distributed/index.ts";
import { DEFAULT_CONCURRENCY } from "../orchestrator/index.ts";
import { loadTelemetry, type TelemetrySettings, telemetryHelp, telemetrySettings } from "../telemetry/index.ts";
import { parseHostPort } from "../util/http-guard.ts";
import { loadWithPeers } from "../util/peer.ts";
import { parseFlags } from "./flags.ts";

type LoadedTelemetry = Awaited<ReturnType<typeof loadTelemetry>>;

const USAGE = "usage: cadre worker --redis URL [--concurrency N] [--name NAME] [--stall-s S] [--otel [--otel-content]] [--metrics HOST:PORT]";

const HELP = `${USAGE}

One host of a distributed run: takes the tasks of every \`cadre run --redis URL\`
from Redis and runs them here, with the run's agents, hooks and peers.
Start one on each machine; the runs' limits and budget hold over all of them.

Options:
  --redis URL          the Redis server the runs use (redis://host:port)
  -c, --concurrency N  tasks this host runs at once, per run (default ${DEFAULT_CONCURRENCY})
  --name NAME          how this host appears in summaries and logs (default <hostname>-<pid>)
  --stall-s S          a host silent this long (died, or lost Redis) loses its tasks to
                       the other hosts (default 30)
${telemetryHelp(23)}
  --metrics HOST:PORT  serve the host's metrics for Prometheus at http://HOST:PORT/metrics
  -h, --help           show this help

Ctrl-C (or SIGTERM) once: take no new tasks, finish the running ones, exit.
Twice: stop the running tasks and put them back in the queue for other hosts.
Redis lost for long (30 s) stops the tasks running here; the host keeps reconnecting
and serves again once Redis is back.
Needs bullmq and ioredis beside cadre (optional peer dependencies; npm install bullmq ioredis).

Exit status: 0 stopped after finishing its tasks, 1 Redis is not reachable at start
(or bullmq and ioredis are not installed), 2 the arguments are wrong, 130 stopped with tasks handed back.
`;

const DEFAULT_STALL_S = 30;

interface WorkerArgs {
  redis: string;
  concurrency: number;
  name: string;
  stallMs: number;
  telemetry: TelemetrySettings | undefined;
}

function parseWorkerArgs(args: string[]): WorkerArgs | { help: true } | { error: string } {
  let values: {
    redis?: string;
    concurrency?: string;
    name?: string;
    "stall-s"?: string;
    otel?: boolean;
    "otel-content"?: boolean;
    metrics?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseFlags(args, {
      options: {
        redis: { type: "string" },
        concurrency: { type: "string", short: "c" },
        name: { type: "string" },
        "stall-s": { type: "string" },
        otel: { type: "boolean" },
        "otel-content": { type: "boolean" },
        metrics: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: false,
    }));
  } catch (error) {
    return { error: (error as Error).message };
  }
  if (values.help) return { help: true };
  if (values.redis === undefined) return { error: "--redis URL is required" };
  const problem = redisUrlProblem(values.redis);
  if (problem) return { error: problem };
  const concurrency = Number(values.concurrency ?? DEFAULT_CONCURRENCY);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    return { error: `--concurrency wants a whole number of at least 1, got "${values.concurrency}"` };
  const stallS = Number(values["stall-s"] ?? DEFAULT_STALL_S);
  if (!Number.isFinite(stallS) || stallS < 1) return { error: `--stall-s wants a number of seconds of at least 1, got "${values["stall-s"]}"` };
  const name = values.name ?? `${hostname()}-${process.pid}`;
  if (name.trim() === "") return { error: "--name must not be empty" };
  let telemetry: TelemetrySettings | undefined;
  try {
    const prometheus = values.metrics === undefined ? undefined : parseHostPort(values.metrics, "--metrics");
    telemetry = telemetrySettings({ otel: values.otel, content: values["otel-content"], ...(prometheus && { prometheus }) });
  } catch (error) {
    return { error: (error as Error).message };
  }
  return { redis: values.redis, concurrency, name, stallMs: Math.round(stallS * 1000), telemetry };
}

/** A host runs for days: its log lines carry the whole time, to the millisecond. */
function log(line: string): void {
  process.stdout.write(`${new Date().toISOString()} ${line}\n`);
}

/** `cadre worker`: serves distributed runs until SIGINT/SIGTERM, through losses of Redis. */
export async function workerCommand(args: string[]): Promise<number> {
  const parsed = parseWorkerArgs(args);
  if ("help" in parsed) {
    process.stdout.write(HELP);
    return 0;
  }
  if ("error" in parsed) {
    process.stderr.write(`cadre worker: ${parsed.error}; ${USAGE}\n`);
    return 2;
  }
  // Loaded only when asked for (OTEL_* settings, --otel, --metrics): otherwise no OpenTelemetry module loads.
  let telemetry: Awaited<ReturnType<LoadedTelemetry["startProcessTelemetry"]>> | undefined;
  let host: Host;
  try {
    telemetry =
      parsed.telemetry &&
      (await (await loadTelemetry()).startProcessTelemetry(parsed.telemetry, { role: "worker", host: parsed.name, log }, parsed.concurrency));
    // Loaded only here: BullMQ and ioredis are optional peers, installed by those who run hosts.
    const { Host } = await loadWithPeers(["bullmq", "ioredis"], "--redis", () => import("../distributed/host.ts"));
    host = await Host.start({
      redisUrl: parsed.redis,
      name: parsed.name,
      concurrency: parsed.concurrency,
      stallMs: parsed.stallMs,
      log,
      ...(telemetry && { observer: telemetry.observer }),
    });
  } catch (error) {
    await telemetry?.observer.close();
    process.stderr.write(`cadre worker: ${(error as Error).message}\n`);
    return 1;
  }
  log(`host ${parsed.name}: serving runs from ${redactUrl(parsed.redis)}, ${parsed.concurrency} at once`);
  if (telemetry?.prometheusUrl) log(`host ${parsed.name}: metrics for Prometheus at ${telemetry.prometheusUrl}`);

  let signals = 0;
  const stopped = new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      if (signals === 1) {
        log(`${signal}: taking no new tasks; finishing the running ones (again to hand them back)`);
        // A second signal meanwhile makes this stop one that handed tasks back.
        void host.stop().then(() => resolve(signals > 1 ? 130 : 0));
      } else if (signals === 2) {
        log(`${signal}: handing the running tasks back to the queue`);
        void host.stop(true).then(() => resolve(130));
      }
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
  const code = await stopped;
  await telemetry?.observer.close();
  log(`host ${parsed.name}: stopped`);
  return code;
}
