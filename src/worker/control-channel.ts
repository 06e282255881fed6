// The control channel: requests to the CLI and back, correlated by id in a map of pending requests.
import { randomUUID } from "node:crypto";
import {
  CONTROL_ANSWER_SCHEMAS,
  type ControlAnswer,
  type ControlResponseMessage,
  type ControlSuccess,
  controlError,
  controlRequest,
  controlSuccess,
  type InboundControlRequest,
  type OutboundControlRequest,
  type StdinMessage,
} from "../protocol/index.ts";
import { ControlRequestError, ControlTimeoutError, InvalidControlAnswerError } from "./errors.ts";

/** How many answered CLI request ids a channel remembers, so that none is answered twice. */
const ANSWERED_KEPT = 256;

/** What the channel needs from the transport: write one message; false when the process can take no more input. */
export type WriteMessage = (message: StdinMessage) => boolean;

/** The CLI's success payload for a request cadre sent; a request with nothing to report gets {}. */
export type ControlPayload = NonNullable<ControlSuccess["response"]>;

type InboundSubtype = InboundControlRequest["subtype"];

export interface ControlChannelOptions {
  /** A handler's answer failed its schema: the CLI was sent an error answer instead, and this is told why. */
  onInvalidAnswer?(requestId: string, error: InvalidControlAnswerError): void;
}

interface PendingOutbound {
  subtype: string;
  resolve(payload: ControlPayload): void;
  reject(error: unknown): void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface RunningInbound {
  subtype: string;
  controller: AbortController;
}

export interface InboundOptions {
  /** Answer with an error if the handler has not finished by then. Undefined: no limit. */
  timeoutMs?: number;
}

/**
 * The control protocol's request/response correlation, both directions. Knows
 * request ids, time limits, cancellation and the schema each answer must match,
 * not what the requests mean.
 */
export class ControlChannel {
  readonly #outbound = new Map<string, PendingOutbound>();
  readonly #inbound = new Map<string, RunningInbound>();
  /** The ids of the latest CLI requests answered, oldest first. */
  readonly #answered = new Set<string>();
  #closedWith: unknown;

  readonly #write: WriteMessage;
  readonly #options: ControlChannelOptions;

  constructor(write: WriteMessage, options: ControlChannelOptions = {}) {
    this.#write = write;
    this.#options = options;
  }

  get pendingOutbound(): number {
    return this.#outbound.size;
  }

  /** Whether a CLI request with this id is being answered, or was lately (a list of waiting requests may lag behind). */
  isAnswering(requestId: string): boolean {
    return this.#inbound.has(requestId) || this.#answered.has(requestId);
  }

  get runningInbound(): number {
    return this.#inbound.size;
  }

  /** Sends a control request to the CLI and resolves with its success payload. */
  request(payload: OutboundControlRequest, timeoutMs: number): Promise<ControlPayload> {
    if (this.#closedWith !== undefined) return Promise.reject(this.#closedWith);
    const requestId = `cadre-${randomUUID()}`;
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs > 0 && Number.isFinite(timeoutMs)
          ? setTimeout(() => {
              this.#outbound.delete(requestId);
              reject(new ControlTimeoutError(payload.subtype, timeoutMs));
            }, timeoutMs)
          : undefined;
      this.#outbound.set(requestId, { subtype: payload.subtype, resolve, reject, timer });
      if (!this.#write(controlRequest(requestId, payload))) {
        this.#settle(requestId)?.reject(this.#closedWith ?? new ControlRequestError(payload.subtype, "the process no longer takes input"));
      }
    });
  }

  /** Routes a control_response from the CLI to the request waiting for it. Returns false for an unknown id. */
  handleResponse(response: ControlResponseMessage["response"]): boolean {
    const pending = this.#settle(response.request_id);
    if (!pending) return false;
    if (response.subtype === "success") {
      pending.resolve(response.response ?? {});
    } else {
      pending.reject(new ControlRequestError(pending.subtype, response.error));
    }
    return true;
  }

  /**
   * Runs the handler for a control request from the CLI and answers it: its
   * payload as success once it matches the protocol's schema for that request,
   * a throw, time-out or payload that does not match as error. A cancelled
   * request (control_cancel_request) gets no answer at all.
   */
  handleRequest<S extends InboundSubtype>(
    requestId: string,
    subtype: S,
    handler: (signal: AbortSignal) => Promise<ControlAnswer<S>>,
    options: InboundOptions = {},
  ): Promise<void> {
    const controller = new AbortController();
    this.#inbound.set(requestId, { subtype, controller });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      if (options.timeoutMs === undefined) return;
      timer = setTimeout(() => {
        const error = new Error(`cadre's ${subtype} handler did not answer within ${options.timeoutMs} ms`);
        controller.abort(error);
        reject(error);
      }, options.timeoutMs);
    });
    return Promise.race([Promise.resolve().then(() => handler(controller.signal)), timedOut])
      .then(
        (payload) => {
          if (this.#stillWaiting(requestId, controller)) this.#write(this.#checkedAnswer(requestId, subtype, payload));
        },
        (error: unknown) => {
          if (this.#stillWaiting(requestId, controller)) this.#write(controlError(requestId, errorText(error)));
        },
      )
      .finally(() => clearTimeout(timer));
  }

  /** Answers a request of a kind cadre does not handle: an error saying so. */
  refuse(requestId: string, message: string): void {
    this.#write(controlError(requestId, message));
  }

  /** The CLI withdrew a request: abort its handler; no answer is written. */
  handleCancel(requestId: string): void {
    const running = this.#inbound.get(requestId);
    if (!running) return;
    this.#inbound.delete(requestId);
    running.controller.abort(new Error(`the claude CLI cancelled the ${running.subtype} request`));
  }

  /** The process is gone: reject every pending request and abort every running handler. */
  close(error: unknown): void {
    if (this.#closedWith !== undefined) return;
    this.#closedWith = error;
    for (const id of [...this.#outbound.keys()]) this.#settle(id)?.reject(error);
    for (const [id, running] of this.#inbound) {
      this.#inbound.delete(id);
      running.controller.abort(error);
    }
  }

  /** True, once, for a request the CLI still waits on; false when it was cancelled or the channel closed meanwhile. */
  #stillWaiting(requestId: string, controller: AbortController): boolean {
    if (this.#inbound.get(requestId)?.controller !== controller) return false;
    this.#inbound.delete(requestId);
    this.#answered.add(requestId);
    if (this.#answered.size > ANSWERED_KEPT) this.#answered.delete(this.#answered.values().next().value as string);
    return true;
  }

  /** A malformed answer is never sent: the CLI gets an error answer and the owner hears why. */
  #checkedAnswer<S extends InboundSubtype>(requestId: string, subtype: S, payload: ControlAnswer<S>): ControlResponseMessage {
    const checked = CONTROL_ANSWER_SCHEMAS[subtype].safeParse(payload);
    if (checked.success) return controlSuccess(requestId, payload);
    const error = new InvalidControlAnswerError(subtype, checked.error);
    this.#options.onInvalidAnswer?.(requestId, error);
    return controlError(requestId, error.message);
  }

  #settle(requestId: string): PendingOutbound | undefined {
    const pending = this.#outbound.get(requestId);
    if (!pending) return undefined;
    this.#outbound.delete(requestId);
    clearTimeout(pending.timer);
    return pending;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
