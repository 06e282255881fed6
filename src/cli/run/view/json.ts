import type { OrchestratorEvent } from "../../../orchestrator/index.ts";
import { encodeLine } from "../../../protocol/ndjson.ts";
import type { RunView, ViewStream } from "./view.ts";

/** `--json`: every orchestrator event as one NDJSON line on `out`; notices go to `err`, never into the data. */
export class JsonView implements RunView {
  constructor(
    private readonly out: ViewStream,
    private readonly err: ViewStream,
  ) {}

  event(event: OrchestratorEvent): void {
    this.out.write(encodeLine(event));
  }

  notice(text: string): void {
    this.err.write(`${text}\n`);
  }

  stop(): void {}
}
