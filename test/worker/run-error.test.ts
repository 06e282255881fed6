// Worker.run() rejects with a typed error when the turn ends in error, as execa rejects a failed command; send() streams it all.
import process from "node:process";
import { inspect } from "node:util";
import { describe, expect, it, onTestFinished } from "vitest";
import type { CliMessage } from "../../src/protocol/index.ts";
import { TurnFailedError, Worker } from "../../src/worker/index.ts";
import { tempHome } from "../support/rehearsal.ts";
import { isAlive } from "../support/worker.ts";

/** The real CLI with a HOME of its own, no login there, and no ANTHROPIC_API_KEY: it answers without the network. */
async function startLoggedOut(): Promise<Worker> {
  const home = await tempHome();
  const worker = await Worker.start({ cwd: home, inheritEnv: false, env: { PATH: process.env.PATH ?? "", HOME: home } });
  onTestFinished(async () => {
    await worker.close();
    expect(isAlive(worker.pid)).toBe(false);
  });
  return worker;
}

describe("Worker.run() on a turn that ends in error", () => {
  it("rejects with NOT_LOGGED_IN and the result when the CLI has no login; reject: false and send() give the result", {
    timeout: 120_000,
  }, async () => {
    const worker = await startLoggedOut();
    const error = await worker.run("hi").then(
      () => undefined,
      (why: unknown) => why,
    );
    expect(error).toBeInstanceOf(TurnFailedError);
    const failed = error as TurnFailedError;
    expect(failed.code).toBe("NOT_LOGGED_IN");
    expect(failed.message).toMatch(/claude auth login.*ANTHROPIC_API_KEY/);
    expect(failed.result.isError).toBe(true);
    expect(failed.result.text).toMatch(/Not logged in/);
    expect(failed.result.messages.at(-1)?.type).toBe("result");
    // As Node prints it uncaught: the message, the stack and the code, not every message of the turn.
    const printed = inspect(failed);
    expect(printed).not.toContain("messages");
    expect(printed.split("\n").length).toBeLessThan(30);

    const result = await worker.run("hi again", { reject: false });
    expect([result.isError, result.text]).toEqual([true, expect.stringMatching(/Not logged in/)]);

    const streamed: CliMessage[] = [];
    for await (const message of worker.send("and once more")) streamed.push(message);
    expect(streamed.at(-1)).toMatchObject({ type: "result", is_error: true });
  });
});
