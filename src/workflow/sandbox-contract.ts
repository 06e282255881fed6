/** What a sandboxed script may reach and spend: the dialect's host functions, and the limits of its run. */
import type { StrandFork } from "./claude-code-keys.ts";

/** The host side of the dialect: what the script's calls reach. Values cross as plain JSON data. */
export interface SandboxHost {
  /** `strand`: where in the script the call is made, as Claude Code's journal keys it (claude-code-keys.ts). */
  agent(prompt: unknown, options: unknown, strand: number): Promise<unknown>;
  /** A parallel() or pipeline() called in `strand` forks it: the fork's number. */
  fork(strand: number, kind: StrandFork): number;
  /** The strand of a fork's item. */
  item(fork: number, index: number): number;
  /** Every item of a fork has settled. */
  join(fork: number): void;
  /** `strand`: where the workflow() call is made; the nested workflow's calls go on in it. */
  workflow(ref: unknown, args: unknown, strand: number): Promise<unknown>;
  log(message: string): void;
  phase(title: string): void;
  /** Throws past the run's agent cap or token budget (parallel() and pipeline() ask before they start). */
  checkCaps(): void;
  /** Output tokens spent so far (budget.spent()). */
  spent(): number;
  /** Dollars the run's agents spent so far (budget.usd.spent()). */
  spentUsd(): number;
  /** What is left of the tightest dollar budget over an agent call of this agent type (budget.usd.remaining()); Infinity when none has a limit. */
  remainingUsd(agentType: string | undefined): number;
}

/** One budget for a run's scripts (a nested workflow() shares it): their computation, their memory, and what they hand out. */
export interface SandboxLimits {
  /** The script's own CPU time over the whole run, waits on agents left out. */
  cpuTimeMs: number;
  /** The engine's heap. */
  memoryBytes: number;
  /**
   * What the scripts hand the host, in UTF-8 bytes, over the whole run: their args, their `log()` lines and `phase()`
   * titles, their results; and the most any one value they pass may be (an agent's prompt and options, a workflow()'s args).
   */
  outputBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { cpuTimeMs: 30_000, memoryBytes: 256 * 1024 * 1024, outputBytes: 16 * 1024 * 1024 };

/** One script to run in a context of its own: the body from checkWorkflowScript, and what its globals hold. */
export interface SandboxScript {
  body: string;
  /** Shown in the script's stack traces. */
  filename: string;
  args: unknown;
  budgetTotal: number | null;
  /** A script run by workflow(): its own workflow() throws. */
  nested: boolean;
  /** The strand its top level goes on (claude-code-keys.ts): a nested workflow's, that of its workflow() call; default 0. */
  strand?: number;
  host: SandboxHost;
}
