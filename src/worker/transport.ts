// The seam between a worker and the bytes of its claude process: one JSON value per line each way, and an exit that is always observed.
import type { ExitDetails } from "./errors.ts";

/** What a transport starts: the command line the worker's options make. */
export interface TransportSpec {
  command: string;
  args: string[];
  cwd?: string;
  /** The child's whole environment (the parent's is not merged in here). */
  env: Record<string, string | undefined>;
  maxLineBytes?: number;
  /** How much of stderr to keep for error messages. */
  stderrTailBytes?: number;
}

/** Where a transport's lines go. */
export interface TransportHandlers {
  /** One decoded JSON value per stdout line. */
  onValue(value: unknown): void;
  /** A stdout line that is not JSON: reported, reading goes on. */
  onMalformedLine(line: string, error: Error): void;
  /** Reading cannot go on (e.g. a line over the size limit); the process is being killed. */
  onFatal(error: Error): void;
}

export interface TerminateOptions {
  /** How long to wait for a clean exit after stdin is closed. */
  graceMs?: number;
  /** How long to wait after SIGTERM before SIGKILL. */
  termMs?: number;
}

/**
 * What a Worker needs of the other end, as the Agent SDK's Transport: write a
 * message as a line, end input, end the other end gently or at once, and
 * learn how it exited. It knows nothing of messages: the worker's protocol
 * logic is the same over a process (ProcessTransport) or in memory (tests).
 */
export interface Transport {
  /** Resolves once the other end has ended, however it ended. */
  readonly exited: Promise<ExitDetails>;
  readonly pid: number | undefined;
  readonly hasExited: boolean;
  /** Writes one message as one line; false when the other end can no longer take input. */
  write(message: unknown): boolean;
  endInput(): void;
  /** Ends the other end: close its input, wait, then harder. Resolves once it has exited. */
  terminate(options?: TerminateOptions): Promise<ExitDetails>;
  /** Ends it at once, with everything it started. */
  kill(): Promise<ExitDetails>;
}

/** Starts a transport for a worker, its lines going to `handlers`. */
export type TransportFactory = (spec: TransportSpec, handlers: TransportHandlers) => Transport;
