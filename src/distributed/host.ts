// `cadre worker`'s host: serves every run registered in Redis until stopped, and rides out Redis being lost.
import type { Redis } from "ioredis";
import { CONTROL_CHANNEL, RUNS_KEY, runKeys } from "./keys.ts";
import { connectRedis, DEFAULT_REDIS_LOSS_MS, deleteMatching, evictionWarning, RECONNECT_CAP_MS, watchLoss } from "./redis.ts";
import { type HostContext, type HostObserver, RunHost } from "./run-host.ts";
import { redactUrl } from "./url.ts";
import { type ControlMessage, ControlMessageSchema, type DistributedRun, DistributedRunSchema, readJson } from "./wire.ts";

export interface HostOptions {
  redisUrl: string;
  name: string;
  concurrency: number;
  stallMs: number;
  log(line: string): void;
  /** Redis down this long stops the tasks running here (the host reconnects and serves again). Default 30 s. */
  redisLossMs?: number;
  /** Sees the runs' jobs and events (the host's telemetry). */
  observer?: HostObserver;
}

/** Hosts look for runs and steering requests on every poke, and this often in case a poke was missed (pub/sub keeps nothing). */
const RESYNC_MS = 5_000;
/** A run whose keys vanished without its coordinator ending it (Redis restarted empty, flushed) is served this long for its coordinator to make them again. */
const VANISHED_RUN_MS = 10 * 60_000;

/**
 * `cadre worker`: one host of the fleet. Serves every run registered in
 * Redis (a RunHost each) until stopped; learns of new runs, cancellations,
 * a reached budget and steering requests for its tasks from the control
 * channel. Redis lost for long stops the tasks here, not the host: it
 * reconnects and serves again.
 */
export class Host {
  readonly #runs = new Map<string, RunHost>();
  readonly #unreadable = new Set<string>();
  /** Runs gone from Redis that their coordinator did not end: since when. */
  readonly #vanished = new Map<string, number>();
  readonly #context: HostContext;
  #sync: Promise<void> = Promise.resolve();
  #stopping = false;
  /** True from the loss of Redis (past the limit) until it is back. */
  #lost = false;
  #onLost: Array<() => void> = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #stopWatching: () => void;

  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #options: HostOptions;

  private constructor(redis: Redis, subscriber: Redis, options: HostOptions) {
    this.#redis = redis;
    this.#subscriber = subscriber;
    this.#options = options;

    this.#context = {
      redis,
      name: options.name,
      concurrency: options.concurrency,
      stallMs: options.stallMs,
      log: options.log,
      ...(options.observer && { observer: options.observer }),
    };
    this.#stopWatching = watchLoss(redis, options.redisUrl, options.redisLossMs ?? DEFAULT_REDIS_LOSS_MS, (error) => void this.#lose(error.message));
    redis.on("ready", () => this.#back());
  }

  /** Connects (a RedisUnreachableError at once when Redis is not there) and starts serving. */
  static async start(options: HostOptions): Promise<Host> {
    const redis = await connectRedis(options.redisUrl, `cadre-host-${options.name}`);
    const warning = await evictionWarning(redis, options.redisUrl);
    if (warning) options.log(`warning: ${warning}`);
    const subscriber = redis.duplicate();
    subscriber.on("error", () => {
      // Reported by the watchdog on the main connection.
    });
    const host = new Host(redis, subscriber, options);
    subscriber.on("message", (_channel: string, text: string) => host.#onControl(text));
    await subscriber.subscribe(CONTROL_CHANNEL);
    host.#timer = setInterval(() => {
      void host.#resync();
      host.#steerAll();
    }, RESYNC_MS);
    await host.#resync();
    return host;
  }

  /** Runs being served now. */
  get runIds(): string[] {
    return [...this.#runs.keys()];
  }

  /**
   * Stops: takes no new tasks, finishes the running ones, or with `handBack`
   * stops them and puts them back in their queues for other hosts; then
   * closes every worker process and connection. With Redis lost, the tasks
   * here end at once (nothing can be handed back or reported).
   */
  async stop(handBack = false): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#timer);
    const lost = new Promise<void>((resolve) => (this.#lost ? resolve() : this.#onLost.push(resolve)));
    await Promise.race([this.#sync, lost]);
    // A second stop (handing back) meets the runs the first is finishing.
    await Promise.all(
      [...this.#runs.values()].map(async (run) => {
        const how = await Promise.race([run.stop(handBack).then(() => "stopped" as const), lost.then(() => "lost" as const)]);
        if (how === "lost") await run.abandon();
      }),
    );
    this.#runs.clear();
    this.#stopWatching();
    this.#subscriber.disconnect();
    this.#redis.disconnect();
  }

  /** Redis lost past the limit: every worker process here ends (their locks run out, so the tasks go to a later attempt); the host reconnects. */
  async #lose(detail: string): Promise<void> {
    this.#lost = true;
    for (const wake of this.#onLost.splice(0)) wake();
    const runs = [...this.#runs.values()];
    this.#runs.clear();
    await Promise.all(runs.map((run) => run.abandon()));
    const stopped = runs.length > 0 ? ` Stopped the tasks of ${runs.length} run${runs.length === 1 ? "" : "s"} here.` : "";
    this.#options.log(`${detail}${stopped} Reconnecting (every ${RECONNECT_CAP_MS / 1000} s at most) until it is back.`);
  }

  #back(): void {
    if (!this.#lost || this.#stopping) return;
    this.#lost = false;
    this.#options.log(`Redis at ${redactUrl(this.#options.redisUrl)} is back: serving runs again`);
    void this.#resync();
  }

  #onControl(text: string): void {
    let message: ControlMessage;
    try {
      message = readJson(ControlMessageSchema, text, "a control message");
    } catch (error) {
      this.#options.log(`ignored: ${(error as Error).message}`);
      return;
    }
    if (message.type === "runs") void this.#resync();
    else if (message.type === "cancel") this.#runs.get(message.run)?.cancel(message.job);
    else if (message.type === "steer") {
      if (message.host === this.#options.name) this.#runs.get(message.run)?.steer();
    } else void this.#runs.get(message.run)?.budgetReached();
  }

  /** Looks for steering requests of every run served here (a poke may have been missed). */
  #steerAll(): void {
    if (this.#stopping || this.#lost) return;
    for (const run of this.#runs.values()) run.steer();
  }

  /** Serves the registered runs not yet served; stops serving runs that ended. One at a time. */
  #resync(): Promise<void> {
    this.#sync = this.#sync.then(async () => {
      if (this.#stopping || this.#lost) return;
      try {
        const ids = new Set(await this.#redis.smembers(RUNS_KEY));
        for (const [id, run] of this.#runs) {
          if (ids.has(id)) {
            this.#vanished.delete(id);
            continue;
          }
          const why = await this.#goneBecause(id);
          if (why === undefined) continue;
          this.#runs.delete(id);
          this.#vanished.delete(id);
          await run.stop();
          // Its queue's worker here may have written keys again after the coordinator removed them (BullMQ's stalled
          // check runs on a timer, and recreates the queue's meta hash): the run is over, so they go with it.
          if (why === "ended") await deleteMatching(this.#redis, runKeys(id).queueKeys);
          this.#options.log(`run ${id}: ${why}`);
        }
        for (const id of ids) {
          if (this.#runs.has(id)) continue;
          if (this.#unreadable.has(id)) continue;
          const text = await this.#redis.get(runKeys(id).record);
          if (text === null) continue;
          let record: DistributedRun;
          try {
            record = readJson(DistributedRunSchema, text, `run ${id}`);
          } catch (error) {
            // Said once: another cadre version's run, which this host cannot serve.
            this.#unreadable.add(id);
            this.#options.log(`run ${id}: not served: ${(error as Error).message}`);
            continue;
          }
          const run = new RunHost(this.#context, id, record);
          this.#runs.set(id, run);
          await run.start();
        }
      } catch (error) {
        this.#options.log(`could not read the runs: ${(error as Error).message}`);
      }
    });
    return this.#sync;
  }

  /**
   * Why a run served here, no longer registered, is over: its coordinator
   * ended it, or it vanished long ago. Undefined while it may come back: only
   * its coordinator ends a run, and one that finds Redis emptied makes it again.
   */
  async #goneBecause(id: string): Promise<string | undefined> {
    if ((await this.#redis.exists(runKeys(id).ended)) === 1) return "ended";
    const since = this.#vanished.get(id);
    if (since === undefined) {
      this.#vanished.set(id, Date.now());
      this.#options.log(`run ${id}: its keys are gone from Redis (restarted empty, or flushed?); served on until its coordinator makes them again`);
      return undefined;
    }
    return Date.now() - since >= VANISHED_RUN_MS
      ? `gone from Redis for ${VANISHED_RUN_MS / 60_000} min, and no coordinator made it again; no longer served`
      : undefined;
  }
}
