import type { Redis } from "ioredis";
import type { RedisUnreachableError } from "./errors.ts";
import { CONTROL_CHANNEL, RUNS_KEY, runKeys } from "./keys.ts";
import { connectRedis, DEFAULT_REDIS_LOSS_MS, watchLoss } from "./redis.ts";
import { type HostContext, type HostObserver, RunHost } from "./run-host.ts";
import { type ControlMessage, ControlMessageSchema, type DistributedRun, DistributedRunSchema, readJson } from "./wire.ts";

export interface HostOptions {
  redisUrl: string;
  name: string;
  concurrency: number;
  stallMs: number;
  log(line: string): void;
  /** Redis down this long ends the host with an error. Default 30 s. */
  redisLossMs?: number;
  /** Sees the runs' jobs and events (the host's telemetry). */
  observer?: HostObserver;
}

/** Hosts look for runs on every poke, and this often in case a poke was missed (pub/sub keeps nothing). */
const RESYNC_MS = 5_000;

/**
 * `cadre worker`: one host of the fleet. Serves every run registered in
 * Redis (a RunHost each) until stopped; learns of new runs, cancellations
 * and a reached budget from the control channel.
 */
export class Host {
  readonly #runs = new Map<string, RunHost>();
  readonly #unreadable = new Set<string>();
  readonly #context: HostContext;
  readonly #failed: Promise<RedisUnreachableError>;
  #sync: Promise<void> = Promise.resolve();
  #stopping = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #stopWatching: () => void = () => {};

  private constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly options: HostOptions,
  ) {
    this.#context = {
      redis,
      name: options.name,
      concurrency: options.concurrency,
      stallMs: options.stallMs,
      log: options.log,
      ...(options.observer && { observer: options.observer }),
    };
    this.#failed = new Promise((resolve) => {
      this.#stopWatching = watchLoss(redis, options.redisUrl, options.redisLossMs ?? DEFAULT_REDIS_LOSS_MS, resolve);
    });
  }

  /** Connects (a RedisUnreachableError at once when Redis is not there) and starts serving. */
  static async start(options: HostOptions): Promise<Host> {
    const redis = await connectRedis(options.redisUrl, `cadre-host-${options.name}`);
    const subscriber = redis.duplicate();
    subscriber.on("error", () => {
      // Reported by the watchdog on the main connection.
    });
    const host = new Host(redis, subscriber, options);
    subscriber.on("message", (_channel: string, text: string) => host.#onControl(text));
    await subscriber.subscribe(CONTROL_CHANNEL);
    host.#timer = setInterval(() => host.#resync(), RESYNC_MS);
    await host.#resync();
    return host;
  }

  /** Resolves with the error when Redis has been lost for too long. */
  get failed(): Promise<RedisUnreachableError> {
    return this.#failed;
  }

  /** Runs being served now. */
  get runIds(): string[] {
    return [...this.#runs.keys()];
  }

  /**
   * Stops: takes no new tasks, finishes the running ones, or with `handBack`
   * stops them and puts them back in their queues for other hosts; then
   * closes every worker process and connection.
   */
  async stop(handBack = false): Promise<void> {
    await this.#end((run) => run.stop(handBack));
  }

  /** After Redis was lost: ends every worker process and connection without a word to Redis. */
  async abandon(): Promise<void> {
    await this.#end((run) => run.abandon());
  }

  async #end(stopRun: (run: RunHost) => Promise<void>): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#timer);
    this.#stopWatching();
    await Promise.race([this.#sync, this.#failed]);
    await Promise.all([...this.#runs.values()].map(stopRun));
    this.#runs.clear();
    this.subscriber.disconnect();
    this.redis.disconnect();
  }

  #onControl(text: string): void {
    let message: ControlMessage;
    try {
      message = readJson(ControlMessageSchema, text, "a control message");
    } catch (error) {
      this.options.log(`ignored: ${(error as Error).message}`);
      return;
    }
    if (message.type === "runs") void this.#resync();
    else if (message.type === "cancel") this.#runs.get(message.run)?.cancel(message.job);
    else void this.#runs.get(message.run)?.budgetReached();
  }

  /** Serves the registered runs not yet served; stops serving runs that ended. One at a time. */
  #resync(): Promise<void> {
    this.#sync = this.#sync.then(async () => {
      if (this.#stopping) return;
      try {
        const ids = new Set(await this.redis.smembers(RUNS_KEY));
        for (const [id, run] of this.#runs) {
          if (ids.has(id)) continue;
          this.#runs.delete(id);
          await run.stop();
          this.options.log(`run ${id}: ended`);
        }
        for (const id of ids) {
          if (this.#runs.has(id)) continue;
          if (this.#unreadable.has(id)) continue;
          const text = await this.redis.get(runKeys(id).record);
          if (text === null) continue;
          let record: DistributedRun;
          try {
            record = readJson(DistributedRunSchema, text, `run ${id}`);
          } catch (error) {
            // Said once: another cadre version's run, which this host cannot serve.
            this.#unreadable.add(id);
            this.options.log(`run ${id}: not served: ${(error as Error).message}`);
            continue;
          }
          const run = new RunHost(this.#context, id, record);
          this.#runs.set(id, run);
          await run.start();
        }
      } catch (error) {
        this.options.log(`could not read the runs: ${(error as Error).message}`);
      }
    });
    return this.#sync;
  }
}
