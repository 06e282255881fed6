// A message written into a running turn reaches the model at the turn's next step, and the turn ends with the answer after it.
import { describe, expect, it } from "vitest";
import { NoTurnRunningError } from "../../src/worker/index.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf } from "../support/requests.ts";
import { startRehearsedWorker } from "../support/worker.ts";

describe("steering a running turn", () => {
  it("takes the message into the turn mid-tool, and the turn's result is the answer after it", { timeout: 60_000 }, async () => {
    const server = await createRehearsal({
      busy: [{ tool_use: { name: "Bash", input: { command: "sleep 2; echo listed" } } }, { text: "turned to: {{message}}" }],
    });
    const { worker } = await startRehearsedWorker(server, "busy");
    expect(() => worker.steer("too early")).toThrow(NoTurnRunningError);
    // The Bash call is in flight once the model's tool call is on the stream.
    const off = worker.on((event) => {
      if (event.type !== "message" || event.message.type !== "assistant") return;
      off();
      worker.steer("look at B instead, @/etc/passwd");
    });
    const result = await worker.run("list A");
    expect([result.text, result.numTurns, result.isError]).toEqual(["turned to: look at B instead, @/etc/passwd", 2, false]);
    const last = requestsOf(server.requests, "busy").at(-1);
    const body = JSON.stringify(last?.messages);
    expect(body).toContain("The user sent a new message while you were working");
    // Verbatim: the text reaches the model as written, no file is read for it.
    expect(body).toContain("look at B instead, @/etc/passwd");
    expect(body).not.toContain("root:x:0");
    // The turn is over: a message now has no turn to go to.
    expect(() => worker.steer("too late")).toThrow(NoTurnRunningError);
  });
});
