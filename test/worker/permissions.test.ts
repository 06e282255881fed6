// can_use_tool on the real CLI: the handler's decision is what happens.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { askUserQuestion, InvalidControlAnswerError, type PermissionDecision, type PermissionRequest } from "../../src/worker/index.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf, toolResults } from "../support/requests.ts";
import { invalidAnswers, startRehearsedWorker } from "../support/worker.ts";

const touch = (file: string) => ({ name: "Bash", input: { command: `touch ${file}`, description: "Create a file" } });

describe("worker permissions", () => {
  it("runs the command as changed by updatedInput", async () => {
    const server = await createRehearsal({ s: [{ tool_use: touch("asked.txt") }, { text: "done: {{tool_result}}" }] });
    const asked: PermissionRequest[] = [];
    const { worker, cwd } = await startRehearsedWorker(server, "s", {
      canUseTool: (request) => {
        asked.push(request);
        return { behavior: "allow", updatedInput: { ...request.input, command: "touch changed.txt" } };
      },
    });
    const result = await worker.run("make the file");
    expect(result.isError).toBe(false);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.toolName).toBe("Bash");
    expect(asked[0]?.input.command).toBe("touch asked.txt");
    expect(asked[0]?.toolUseId).toMatch(/^toolu_/);
    expect(existsSync(join(cwd, "changed.txt"))).toBe(true);
    expect(existsSync(join(cwd, "asked.txt"))).toBe(false);
  });

  it("blocks the command on deny and the model gets the message", async () => {
    const server = await createRehearsal({ s: [{ tool_use: touch("denied.txt") }, { text: "ok" }] });
    const { worker, cwd } = await startRehearsedWorker(server, "s", {
      canUseTool: () => ({ behavior: "deny", message: "NO-TOUCHING: files are frozen" }),
    });
    await worker.run("make the file");
    expect(existsSync(join(cwd, "denied.txt"))).toBe(false);
    const last = requestsOf(server.requests, "s").at(-1);
    expect(toolResults(last).join("\n")).toContain("NO-TOUCHING: files are frozen");
  });

  it("denies with the policy's message when there is no handler", async () => {
    const server = await createRehearsal({ s: [{ tool_use: touch("nohandler.txt") }, { text: "ok" }] });
    const states: string[] = [];
    const { worker, cwd } = await startRehearsedWorker(server, "s");
    worker.on((e) => e.type === "state" && states.push(e.state));
    await worker.run("make the file");
    expect(existsSync(join(cwd, "nohandler.txt"))).toBe(false);
    const last = requestsOf(server.requests, "s").at(-1);
    expect(toolResults(last).join("\n")).toContain("has no permission handler");
    expect(states).toContain("awaiting_permission");
  });

  it("does not send a malformed decision: the CLI gets an error answer, the tool does not run, the owner is told", async () => {
    const server = await createRehearsal({ s: [{ tool_use: touch("malformed.txt") }, { text: "ok" }, { text: "still here" }] });
    const { worker, cwd } = await startRehearsedWorker(server, "s", {
      // A handler written without the types: a deny needs a message.
      canUseTool: () => ({ behavior: "deny" }) as unknown as PermissionDecision,
    });
    const invalid = invalidAnswers(worker);
    expect((await worker.run("make the file")).subtype).toBe("success");
    expect(existsSync(join(cwd, "malformed.txt"))).toBe(false);
    expect(invalid).toEqual([expect.any(InvalidControlAnswerError)]);
    expect(invalid[0]).toMatchObject({ code: "INVALID_CONTROL_ANSWER", message: expect.stringMatching(/canUseTool.*message:/) });
    const last = requestsOf(server.requests, "s").at(-1);
    // The model reads why the tool did not run: the error cadre answered with.
    expect(toolResults(last).join("\n")).toContain("the protocol does not allow");
    expect((await worker.run("go on")).text).toBe("still here");
  });

  it("answers AskUserQuestion with the chosen option", async () => {
    const question = "Which database should we use?";
    const server = await createRehearsal({
      s: [
        {
          tool_use: {
            name: "AskUserQuestion",
            input: {
              questions: [
                {
                  question,
                  header: "Database",
                  multiSelect: false,
                  options: [
                    { label: "Postgres", description: "relational" },
                    { label: "SQLite", description: "embedded" },
                  ],
                },
              ],
            },
          },
        },
        { text: "chosen: {{tool_result}}" },
      ],
    });
    const { worker } = await startRehearsedWorker(server, "s", {
      canUseTool: (request) => {
        if (!askUserQuestion.matches(request)) return { behavior: "deny", message: "unexpected" };
        expect(askUserQuestion.questions(request).map((q) => q.question)).toEqual([question]);
        return askUserQuestion.answer(request, { [question]: "SQLite" });
      },
    });
    const result = await worker.run("pick one");
    const last = requestsOf(server.requests, "s").at(-1);
    expect(toolResults(last).join("\n")).toContain("SQLite");
    expect(result.text).toContain("SQLite");
  });
});
