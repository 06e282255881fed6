/**
 * Metrics from cadre's events: tasks by status, task and queue durations,
 * live workers, tokens by kind, cost, the prompt cache's share, rate-limit
 * back-offs, the effective concurrency limit and each budget's use. The same instruments serve
 * OTLP and the Prometheus endpoint.
 */
import type { Attributes, Counter, Histogram, Meter, UpDownCounter } from "@opentelemetry/api";
import { type BudgetUse, budgetLabel, cacheReadShare, emptyUsage, type OrchestratorEvent, type Usage } from "../orchestrator/index.ts";
import { GEN_AI_SYSTEM, GEN_AI_TOKEN_TYPE } from "./attributes.ts";

/** Token kinds, as gen_ai.token.type names the first two and cadre the cache's. */
const TOKEN_KINDS: [keyof Usage, string][] = [
  ["inputTokens", "input"],
  ["outputTokens", "output"],
  ["cacheReadInputTokens", "cache_read"],
  ["cacheCreationInputTokens", "cache_creation"],
];

/** Seconds: the unit OpenTelemetry and Prometheus both expect of durations. */
const DURATION_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export class EventMetrics {
  readonly #tasks: Counter;
  readonly #taskDuration: Histogram;
  readonly #queueDuration: Histogram;
  readonly #workers: UpDownCounter;
  readonly #tokens: Counter;
  readonly #cost: Counter;
  readonly #backoffs: Counter;
  readonly #usage = emptyUsage();
  /** Tasks whose attempt holds a worker now. */
  readonly #running = new Set<string>();
  /** Each agent's and task's budget, by label, as last reported. */
  readonly #budgets = new Map<string, BudgetUse>();
  #limit: number | undefined;
  #backoffUntil: number | null = null;

  /** `base`: attributes of every point (the run's id, say). */
  constructor(
    meter: Meter,
    readonly base: Attributes = {},
  ) {
    this.#tasks = meter.createCounter("cadre.tasks", { description: "Tasks that ended, by status" });
    const buckets = { advice: { explicitBucketBoundaries: DURATION_BUCKETS } };
    this.#taskDuration = meter.createHistogram("cadre.task.duration", { unit: "s", description: "A task's run time, retries included", ...buckets });
    this.#queueDuration = meter.createHistogram("cadre.queue.duration", {
      unit: "s",
      description: "How long a task waited for its first slot",
      ...buckets,
    });
    this.#workers = meter.createUpDownCounter("cadre.workers.live", { description: "Task workers running now" });
    this.#tokens = meter.createCounter("cadre.tokens", { unit: "{token}", description: "Tokens by kind: input, output, cache_read, cache_creation" });
    this.#cost = meter.createCounter("cadre.cost", { unit: "USD", description: "What the workers spent, as the CLI reports it" });
    this.#backoffs = meter.createCounter("cadre.rate_limit.backoffs", { description: "Times the scheduler backed off after a rate limit" });
    meter
      .createObservableGauge("cadre.cache.read_share", { unit: "1", description: "Share of input tokens read from the prompt cache" })
      .addCallback((result) => {
        const share = cacheReadShare(this.#usage);
        if (share !== undefined) result.observe(share, this.base);
      });
    meter
      .createObservableGauge("cadre.concurrency.effective", { description: "The concurrency limit new starts obey now (lowered by rate limits)" })
      .addCallback((result) => {
        if (this.#limit !== undefined) result.observe(this.#limit, this.base);
      });
    meter
      .createObservableGauge("cadre.budget.spent", {
        unit: "USD",
        description: "What each agent's or task's budget has spent (cadre.budget names it)",
      })
      .addCallback((result) => {
        for (const [label, use] of this.#budgets) result.observe(use.spentUsd, { ...this.base, "cadre.budget": label });
      });
    meter
      .createObservableGauge("cadre.budget.limit", { unit: "USD", description: "Each agent's or task's budget (cadre.budget names it)" })
      .addCallback((result) => {
        for (const [label, use] of this.#budgets) result.observe(use.limitUsd, { ...this.base, "cadre.budget": label });
      });
  }

  /** The limit before any rate limit lowered it. */
  set limit(value: number | undefined) {
    this.#limit ??= value;
  }

  apply(event: OrchestratorEvent): void {
    switch (event.type) {
      case "task_started":
        if (!this.#running.has(event.task.id)) this.#workers.add(1, this.#agent(event.task.agent));
        this.#running.add(event.task.id);
        return;
      case "task_retry":
        this.#stopped(event.task.id, event.task.agent);
        return;
      case "task_finished": {
        const { result } = event;
        const attributes = { ...this.#agent(result.agent), "cadre.status": result.status };
        this.#stopped(event.task.id, result.agent);
        this.#tasks.add(1, attributes);
        if (result.startedAt !== undefined) this.#taskDuration.record(result.durationMs / 1000, attributes);
        this.#queueDuration.record(result.queuedMs / 1000, this.#agent(result.agent));
        this.#spent(result.costUsd, result.usage, result.agent);
        return;
      }
      case "agent_turn":
        this.#spent(event.turn.costUsd, event.turn.usage, event.agent);
        return;
      case "cost":
        for (const use of event.budgets ?? []) this.#budgets.set(budgetLabel(use.scope), use);
        return;
      case "rate_limit":
        this.#limit = event.state.effectiveLimit;
        if (event.state.backoffUntil !== null && event.state.backoffUntil !== this.#backoffUntil) this.#backoffs.add(1, this.base);
        this.#backoffUntil = event.state.backoffUntil;
        return;
      default:
        return;
    }
  }

  #agent(agent: string | undefined): Attributes {
    return { ...this.base, ...(agent !== undefined && { "cadre.agent": agent }) };
  }

  #stopped(id: string, agent: string | undefined): void {
    if (this.#running.delete(id)) this.#workers.add(-1, this.#agent(agent));
  }

  #spent(usd: number, usage: Usage, agent: string | undefined): void {
    for (const [key] of TOKEN_KINDS) this.#usage[key] += usage[key];
    const attributes = { ...this.#agent(agent), [GEN_AI_SYSTEM]: "anthropic" };
    for (const [key, kind] of TOKEN_KINDS) if (usage[key] > 0) this.#tokens.add(usage[key], { ...attributes, [GEN_AI_TOKEN_TYPE]: kind });
    if (usd > 0) this.#cost.add(usd, attributes);
  }
}
