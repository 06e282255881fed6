// The sessions agents answer in: a peer's for ask_peer, a supervisor's for hooks, each started once and recorded.
import type { TurnResult, Worker } from "../worker/index.ts";
import type { Budget } from "./budget.ts";

export type SessionKind = "peer" | "supervisor";

/**
 * Starts the worker behind an agent session (and keeps its record); `chain`
 * reads who waits on its current turn; `asker` is the task whose question starts it.
 */
export type StartAgentWorker = (
  kind: SessionKind,
  agent: string,
  chain: () => readonly string[],
  asker: string | undefined,
  askerNow: () => string | undefined,
) => Promise<Worker>;

interface AgentSession {
  worker: Promise<Worker>;
  /** Turns run one at a time; this is the tail of the line. */
  tail: Promise<unknown>;
  /** Who waits on the turn now running (outermost first). */
  chain: readonly string[];
  /** The task whose question the running turn answers. */
  asker: string | undefined;
  busy: boolean;
}

/**
 * Long-lived workers that answer for an agent: a peer that other workers ask
 * (ask_peer), a supervisor that decides hooks. One worker per (kind, agent),
 * started on first use, its turns one at a time so that the wait chain of the
 * running turn is always known.
 */
export class AgentSessions {
  readonly #sessions = new Map<string, AgentSession>();
  #closed = false;

  readonly #startWorker: StartAgentWorker;
  readonly #budgetsOf: (agent: string) => readonly Budget[];

  /** `budgetsOf` names the budgets over an agent's sessions: a question to an agent whose budget is spent is refused, and its turn in flight stopped. */
  constructor(startWorker: StartAgentWorker, budgetsOf: (agent: string) => readonly Budget[]) {
    this.#startWorker = startWorker;
    this.#budgetsOf = budgetsOf;
  }

  status(kind: SessionKind, agent: string): "not_started" | "idle" | "busy" {
    const session = this.#sessions.get(`${kind}:${agent}`);
    if (!session) return "not_started";
    return session.busy ? "busy" : "idle";
  }

  /**
   * Runs one turn on the agent's session for a caller whose own wait chain is
   * `chain`, on behalf of the task `asker` (undefined when no task asks).
   */
  ask(kind: SessionKind, agent: string, prompt: string, chain: readonly string[], signal: AbortSignal, asker?: string): Promise<TurnResult> {
    if (this.#closed) return Promise.reject(new Error("the orchestrator is closing; no new questions are taken"));
    const budgets = this.#budgetsOf(agent);
    for (const budget of budgets) budget.throwIfExceeded();
    const stop = AbortSignal.any([signal, ...budgets.map((b) => b.signal)]);
    const session = this.#session(kind, agent, asker);
    const turn = session.tail.then(async () => {
      stop.throwIfAborted();
      const worker = await session.worker;
      session.chain = chain;
      session.asker = asker;
      session.busy = true;
      try {
        // Another model wrote the question (or the hook input it carries): it is text, never a file read or a command.
        return await worker.run(prompt, { signal: stop, verbatim: true, reject: false });
      } finally {
        session.busy = false;
        session.chain = [];
        session.asker = undefined;
      }
    });
    session.tail = turn.catch(() => undefined);
    return turn;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const workers = [...this.#sessions.values()].map((s) => s.worker.catch(() => undefined));
    this.#sessions.clear();
    await Promise.all(workers.map(async (w) => (await w)?.close()));
  }

  #session(kind: SessionKind, agent: string, asker: string | undefined): AgentSession {
    const key = `${kind}:${agent}`;
    const existing = this.#sessions.get(key);
    if (existing) return existing;
    const forget = () => {
      if (this.#sessions.get(key) === session) this.#sessions.delete(key);
    };
    const session: AgentSession = {
      worker: this.#startWorker(
        kind,
        agent,
        () => session.chain,
        asker,
        () => session.asker,
      ),
      tail: Promise.resolve(),
      chain: [],
      asker: undefined,
      busy: false,
    };
    // A session whose worker failed to start or has died is forgotten, so the next ask starts a new one.
    session.worker.then((worker) => worker.exited.then(forget), forget);
    this.#sessions.set(key, session);
    return session;
  }
}
