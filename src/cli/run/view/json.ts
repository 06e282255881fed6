// `cadre run --json`: every event of the run as one NDJSON line.
import { encodeLine } from "../../../protocol/index.ts";
import type { RunEvent } from "../../../run/index.ts";
import type { RunView, ViewStream } from "./view.ts";

/** `--json`: every event of the run (the orchestrator's and the swarm's) as one NDJSON line on `out`; notices go to `err`, never into the data. */
export class JsonView implements RunView {
  readonly #out: ViewStream;
  readonly #err: ViewStream;

  constructor(out: ViewStream, err: ViewStream) {
    this.#out = out;
    this.#err = err;
  }

  event(event: RunEvent): void {
    this.#out.write(encodeLine(event));
  }

  notice(text: string): void {
    this.#err.write(`${text}\n`);
  }

  stop(): void {}
}
