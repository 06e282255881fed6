// What a view of a run is: the interface the terminal, plain-line and JSON views implement.
import type { RunEvent } from "../../../run/index.ts";

/** How a run is shown. The command applies each event to the RunModel first, then hands it to the view. */
export interface RunView {
  event(event: RunEvent): void;
  /** A message about the run itself (start, interrupt). */
  notice(text: string): void;
  /** The run is over: stop drawing; the final table follows. */
  stop(): void;
}

/** What any output stream offers a view. */
export interface ViewStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}
