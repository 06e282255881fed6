import { randomUUID } from "node:crypto";
import { ControlRequestError, ControlTimeoutError } from "./errors.ts";

/** What the channel needs from the transport: write one message; false when the process can take no more input. */
export type WriteMessage = (message: unknown) => boolean;

interface PendingOutbound {
  subtype: string;
  resolve(payload: Record<string, unknown>): void;
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
 * request ids, time limits and cancellation, not what the requests mean.
 */
export class ControlChannel {
  private readonly outbound = new Map<string, PendingOutbound>();
  private readonly inbound = new Map<string, RunningInbound>();
  private closedWith: unknown;

  constructor(private readonly write: WriteMessage) {}

  get pendingOutbound(): number {
    return this.outbound.size;
  }

  get runningInbound(): number {
    return this.inbound.size;
  }

  /** Sends a control request to the CLI and resolves with its success payload. */
  request(payload: { subtype: string } & Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const requestId = `cadre-${randomUUID()}`;
    return new Promise((resolve, reject) => {
      const timer = timeoutMs > 0 && Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            this.outbound.delete(requestId);
            reject(new ControlTimeoutError(payload.subtype, timeoutMs));
          }, timeoutMs)
        : undefined;
      this.outbound.set(requestId, { subtype: payload.subtype, resolve, reject, timer });
      if (!this.write({ type: "control_request", request_id: requestId, request: payload })) {
        this.settle(requestId)?.reject(this.closedWith ?? new ControlRequestError(payload.subtype, "the process no longer takes input"));
      }
    });
  }

  /** Routes a control_response from the CLI to the request waiting for it. Returns false for an unknown id. */
  handleResponse(response: { subtype: string; request_id: string; response?: unknown; error?: unknown }): boolean {
    const pending = this.settle(response.request_id);
    if (!pending) return false;
    if (response.subtype === "success") {
      pending.resolve(isRecord(response.response) ? response.response : {});
    } else {
      pending.reject(new ControlRequestError(pending.subtype, String(response.error ?? "unknown error")));
    }
    return true;
  }

  /**
   * Runs the handler for a control request from the CLI and answers it: its
   * payload as success, a throw or time-out as error. A cancelled request
   * (control_cancel_request) gets no answer at all.
   */
  handleRequest(
    requestId: string,
    subtype: string,
    handler: (signal: AbortSignal) => Promise<Record<string, unknown>>,
    options: InboundOptions = {},
  ): Promise<void> {
    const controller = new AbortController();
    this.inbound.set(requestId, { subtype, controller });
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
        (payload) => this.answer(requestId, controller, { subtype: "success", request_id: requestId, response: payload }),
        (error: unknown) =>
          this.answer(requestId, controller, { subtype: "error", request_id: requestId, error: errorText(error) }),
      )
      .finally(() => clearTimeout(timer));
  }

  /** The CLI withdrew a request: abort its handler; no answer is written. */
  handleCancel(requestId: string): void {
    const running = this.inbound.get(requestId);
    if (!running) return;
    this.inbound.delete(requestId);
    running.controller.abort(new Error(`the claude CLI cancelled the ${running.subtype} request`));
  }

  /** The process is gone: reject every pending request and abort every running handler. */
  close(error: unknown): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = error;
    for (const id of [...this.outbound.keys()]) this.settle(id)?.reject(error);
    for (const [id, running] of this.inbound) {
      this.inbound.delete(id);
      running.controller.abort(error);
    }
  }

  private answer(requestId: string, controller: AbortController, response: Record<string, unknown>): void {
    // Cancelled or closed meanwhile: the CLI no longer waits for this answer.
    if (this.inbound.get(requestId)?.controller !== controller) return;
    this.inbound.delete(requestId);
    this.write({ type: "control_response", response });
  }

  private settle(requestId: string): PendingOutbound | undefined {
    const pending = this.outbound.get(requestId);
    if (!pending) return undefined;
    this.outbound.delete(requestId);
    clearTimeout(pending.timer);
    return pending;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
