// The first worker's check that the API can be reached and someone is logged in, before the others start.
import type { CadreError } from "../errors.ts";
import type { CliMessage } from "../protocol/index.ts";
import { EventHub } from "../util/event-hub.ts";
import { saysNotLoggedIn } from "../worker/index.ts";
import { ApiUnreachableError, NotLoggedInError } from "./errors.ts";

type Verdict = { open: true } | { open: false; error: CadreError };

/** What the check tells the orchestrator: the API is unreachable and the others wait, or no work can run. */
export type AccessNews = { kind: "waiting"; message: string } | { kind: "refused"; error: CadreError };

/**
 * How long after the probe's request went out, with no sign of failure, the
 * others may start: a missing login shows within milliseconds of it, a
 * refused connection within a second (measured: 0.5 to 2 s, and the others
 * stop starting again when it shows); a first reply may take minutes. On a
 * machine so loaded that the probe's process took longer than this to start
 * and send its request, the grace is that long instead: the CLI's own answer
 * to a missing login, measured there, came 1 to 3 s after the request.
 */
const GRACE_MS = 1_000;

/**
 * One check, before fanning out, that the CLI can reach the model at all: the
 * first piece of work starts alone (the probe), and the others wait until its
 * worker's answers tell. A real answer from the API opens the way for all; a
 * "Not logged in" closes it (NotLoggedInError), so no second worker starts;
 * an API that cannot be reached keeps the others waiting while the probe's
 * CLI retries (about 190 s), and closes the way (ApiUnreachableError) if its
 * retries fail. A probe that ends without telling (its process died) hands
 * the probe to the next one waiting. The others do not wait for a slow first
 * reply: GRACE_MS after the probe's request went out with no sign of
 * failure, they start (and stop starting again if the API then turns out
 * unreachable). Measured on the pinned CLI: without a login, its first
 * answer is a synthetic reply and an error result within a second or two;
 * `claude auth status` tells as much but cannot see an agent's own
 * environment, and says nothing of the API.
 *
 * A waiting task may start its process ahead meanwhile (pass's `startAhead`),
 * once the probe has taken its own (probeLeased), so that the cores the probe
 * leaves idle prepare the next workers; such a process is no task's yet and
 * sends nothing until the way is open.
 */
export class AccessCheck {
  #probing = false;
  /** The probe has its process (or is getting it): a process started now is not the one it takes. */
  #probeLeased = false;
  #verdict: Verdict | undefined;
  #unreachable: string | undefined;
  /** The probe's request went out GRACE_MS ago and nothing failed: the others start, unless the API turns out unreachable. */
  #graceOver = false;
  #grace: ReturnType<typeof setTimeout> | undefined;
  /** When the probe asked for its process (Date.now()). */
  #leasedAt: number | undefined;
  readonly #changes = new EventHub<void>();
  readonly #onNews: (news: AccessNews) => void;

  constructor(onNews: (news: AccessNews) => void) {
    this.#onNews = onNews;
  }

  /**
   * Before a worker starts. Resolves true for the probe (which must call
   * probeLeased as it asks for its process, and probeEnded when its attempt
   * ends), false once the way is open; rejects with the check's error, or the
   * signal's reason. `startAhead` is called at most once, while this caller
   * waits and the probe has its process.
   */
  async pass(signal: AbortSignal, startAhead?: () => void): Promise<boolean> {
    for (;;) {
      signal.throwIfAborted();
      if (this.#verdict?.open === true) return false;
      if (this.#verdict?.open === false) throw this.#verdict.error;
      if (this.#graceOver && this.#unreachable === undefined) return false;
      if (!this.#probing) {
        this.#probing = true;
        return true;
      }
      if (this.#probeLeased && startAhead) {
        startAhead();
        startAhead = undefined;
      }
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          off();
          reject(signal.reason);
        };
        const off = this.#changes.on(() => {
          signal.removeEventListener("abort", onAbort);
          off();
          resolve();
        });
        signal.addEventListener("abort", onAbort, { once: true });
      });
    }
  }

  /** Why no work can run, once that is known. */
  get refusal(): CadreError | undefined {
    return this.#verdict?.open === false ? this.#verdict.error : undefined;
  }

  /** The probe is taking its process: the others waiting may start theirs. */
  probeLeased(): void {
    if (!this.#probing || this.#probeLeased) return;
    this.#probeLeased = true;
    this.#leasedAt = Date.now();
    this.#changes.emit();
  }

  /** The probe's attempt is over; if it told nothing, the next one waiting probes. */
  probeEnded(): void {
    if (!this.#probing) return;
    this.#probing = false;
    this.#probeLeased = false;
    this.#changes.emit();
  }

  /** Every message of every worker: the first that tells decides. */
  observe(message: CliMessage): void {
    if (this.#verdict !== undefined) return;
    const verdict = this.#read(message);
    if (verdict !== undefined) this.#decide(verdict);
  }

  /** What a message tells of the way to the model, if anything. */
  #read(message: CliMessage): Verdict | undefined {
    if (message.type === "system" && message.subtype === "status" && message.status === "requesting" && this.#grace === undefined) {
      const startedInMs = this.#leasedAt === undefined ? 0 : Date.now() - this.#leasedAt;
      this.#grace = setTimeout(
        () => {
          this.#graceOver = true;
          this.#changes.emit();
        },
        Math.max(GRACE_MS, startedInMs),
      );
      this.#grace.unref();
      return undefined;
    }
    if (message.type === "system" && message.subtype === "api_retry") {
      // A status is an answer (a 429 or a 529 is the API, busy); none is a connection that failed.
      if (message.error_status !== null) return { open: true };
      if (this.#unreachable === undefined) {
        this.#unreachable = `API ${message.error}: retry ${message.attempt}/${message.max_retries}`;
        this.#onNews({ kind: "waiting", message: `the API cannot be reached (${this.#unreachable}); no other task starts while the CLI retries` });
      }
      return undefined;
    }
    if (message.type === "assistant") {
      if (message.message.model !== "<synthetic>") return { open: true };
      // The CLI answered itself (no login, an error it gave up on): its result, next, tells; the others wait for it.
      if (!this.#graceOver) {
        clearTimeout(this.#grace);
        this.#grace = undefined;
      }
      return undefined;
    }
    if (message.type !== "result") return undefined;
    if (saysNotLoggedIn(message)) return { open: false, error: new NotLoggedInError() };
    const said = [message.result, ...(message.errors ?? [])].join(" ");
    // The CLI gave up on the API ("success" with is_error: its API-error path); an interrupted turn ends otherwise.
    if (message.is_error && message.subtype === "success" && this.#unreachable !== undefined && message.api_error_status == null) {
      return { open: false, error: new ApiUnreachableError(`${this.#unreachable}, then: ${said}`) };
    }
    // Any other end of a turn: the model was reached, or what failed was not the way to it.
    return { open: true };
  }

  #decide(verdict: Verdict): void {
    clearTimeout(this.#grace);
    this.#verdict = verdict;
    this.#probing = false;
    this.#probeLeased = false;
    if (!verdict.open) this.#onNews({ kind: "refused", error: verdict.error });
    this.#changes.emit();
  }
}
