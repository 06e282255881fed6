// The worker's protocol logic over an in-memory Transport, in milliseconds and without a process: initialize, a turn,
// control requests both ways, and the pending requests rejected when the other end dies. The same on the real CLI is in
// control.test.ts, turn.test.ts and permissions.test.ts.
import { describe, expect, it } from "vitest";
import { ControlRequestError, type ExitDetails, WorkerExitedError } from "../../src/worker/errors.ts";
import type { Transport, TransportHandlers } from "../../src/worker/transport.ts";
import { Worker } from "../../src/worker/worker.ts";

type Line = { type: string; request_id?: string; request?: { subtype: string; [key: string]: unknown }; [key: string]: unknown };

/** The other end in memory: what the worker writes goes to `answer` (a scripted claude); what it sends reaches the worker as stdout lines would. */
class MemoryTransport implements Transport {
  readonly written: Line[] = [];
  readonly pid = undefined;
  readonly exited: Promise<ExitDetails>;
  #exit!: (details: ExitDetails) => void;
  #details: ExitDetails | undefined;
  #inputEnded = false;

  constructor(
    readonly handlers: TransportHandlers,
    readonly answer: (line: Line, cli: MemoryTransport) => void,
  ) {
    this.exited = new Promise((resolve) => {
      this.#exit = resolve;
    });
  }

  get hasExited(): boolean {
    return this.#details !== undefined;
  }

  write(message: unknown): boolean {
    if (this.#inputEnded || this.hasExited) return false;
    // Through JSON, as a line would go.
    const line = JSON.parse(JSON.stringify(message)) as Line;
    this.written.push(line);
    queueMicrotask(() => this.answer(line, this));
    return true;
  }

  /** A line from claude. */
  send(value: unknown): void {
    if (!this.hasExited) this.handlers.onValue(value);
  }

  /** claude ends (of itself, or killed). */
  end(details: ExitDetails): void {
    if (this.hasExited) return;
    this.#details = details;
    this.#exit(details);
  }

  endInput(): void {
    this.#inputEnded = true;
    // claude ends cleanly once its input is closed.
    queueMicrotask(() => this.end({ exitCode: 0, signal: null, stderrTail: "" }));
  }

  async terminate(): Promise<ExitDetails> {
    this.endInput();
    return this.exited;
  }

  async kill(): Promise<ExitDetails> {
    this.end({ exitCode: null, signal: "SIGKILL", stderrTail: "" });
    return this.exited;
  }
}

const success = (requestId: string, response: object = {}) => ({
  type: "control_response",
  response: { subtype: "success", request_id: requestId, response },
});

/** A claude that answers its control requests (set_model "nope" with an error) and each prompt with its words in capitals; `quiet` it never answers. */
function scriptedClaude(quiet: readonly string[] = []) {
  return (line: Line, cli: MemoryTransport) => {
    if (line.type === "control_request" && line.request && !quiet.includes(line.request.subtype)) {
      if (line.request.subtype === "set_model" && line.request.model === "nope")
        cli.send({ type: "control_response", response: { subtype: "error", request_id: line.request_id, error: "no such model" } });
      else cli.send(success(line.request_id!, line.request.subtype === "initialize" ? { commands: [], models: [] } : {}));
    }
    if (line.type === "user" && !quiet.includes("prompts")) {
      const text = ((line.message as { content: { text: string }[] }).content[0]?.text ?? "").toUpperCase();
      cli.send({ type: "system", subtype: "init", session_id: "s-1", cwd: "/", model: "m", tools: [], mcp_servers: [], permissionMode: "default" });
      cli.send({ type: "assistant", session_id: "s-1", message: { id: "a", role: "assistant", content: [{ type: "text", text }] } });
      cli.send({ type: "result", subtype: "success", is_error: false, result: text, session_id: "s-1", num_turns: 1, total_cost_usd: 0 });
    }
  };
}

async function start(options: Parameters<typeof Worker.start>[0], answer = scriptedClaude()) {
  let cli: MemoryTransport | undefined;
  const worker = await Worker.start(options, undefined, (_spec, handlers) => {
    cli = new MemoryTransport(handlers, answer);
    return cli;
  });
  return { worker, cli: cli! };
}

describe("Worker over an in-memory transport", () => {
  it("initializes with what its options say, and keeps the answer", async () => {
    const { worker, cli } = await start({ appendSystemPrompt: "Be brief.", jsonSchema: { type: "object" } });
    expect(cli.written[0]).toMatchObject({
      type: "control_request",
      request: { subtype: "initialize", appendSystemPrompt: "Be brief.", jsonSchema: { type: "object" } },
    });
    expect(worker.initializeResponse).toEqual({ commands: [], models: [] });
    expect(worker.state).toBe("ready");
    await worker.close();
    expect(worker.state).toBe("exited");
  });

  it("runs a turn: the prompt goes out as a user message, the turn ends with its result, the session is known", async () => {
    const { worker, cli } = await start({});
    const result = await worker.run("hello");
    expect(cli.written[1]).toMatchObject({ type: "user", message: { role: "user", content: [{ type: "text", text: "hello" }] } });
    expect(result).toMatchObject({ text: "HELLO", sessionId: "s-1", isError: false, subtype: "success" });
    expect(worker.sessionId).toBe("s-1");
    expect(worker.state).toBe("idle");
    await worker.close();
  });

  it("answers claude's permission request with its handler's decision, under the request's id", async () => {
    const asked: string[] = [];
    const { worker, cli } = await start({
      canUseTool: async (request) => {
        asked.push(`${request.toolName} ${JSON.stringify(request.input)}`);
        return request.toolName === "Bash" ? { behavior: "deny", message: "not here" } : { behavior: "allow" };
      },
    });
    const answered = (id: string) =>
      cli.written.find((line) => line.type === "control_response" && (line.response as { request_id: string }).request_id === id);
    cli.send({
      type: "control_request",
      request_id: "p-1",
      request: { subtype: "can_use_tool", tool_name: "Bash", input: { command: "ls" }, tool_use_id: "t-1" },
    });
    cli.send({
      type: "control_request",
      request_id: "p-2",
      request: { subtype: "can_use_tool", tool_name: "Read", input: { file_path: "/x" }, tool_use_id: "t-2" },
    });
    await expect.poll(() => answered("p-2") && answered("p-1")).toBeTruthy();
    expect(asked).toEqual(['Bash {"command":"ls"}', 'Read {"file_path":"/x"}']);
    expect(answered("p-1")).toMatchObject({ response: { subtype: "success", response: { behavior: "deny", message: "not here" } } });
    expect(answered("p-2")).toMatchObject({ response: { subtype: "success", response: { behavior: "allow", updatedInput: { file_path: "/x" } } } });
    await worker.close();
  });

  it("sends its own control requests and settles each by its answer: a success, or claude's error", async () => {
    const { worker, cli } = await start({});
    await worker.setModel("opus");
    expect(cli.written.at(-1)).toMatchObject({ type: "control_request", request: { subtype: "set_model", model: "opus" } });
    const refused = worker.setModel("nope");
    await expect(refused).rejects.toBeInstanceOf(ControlRequestError);
    await expect(refused).rejects.toThrow(/no such model/);
    await worker.close();
  });

  it("rejects every pending request and turn when the other end dies, and says how it died", async () => {
    // A claude that takes a prompt and a control request and answers neither before it dies.
    const { worker, cli } = await start({}, scriptedClaude(["set_permission_mode", "prompts"]));
    const mode = worker.setPermissionMode("plan");
    const turn = worker.run("never answered");
    await expect.poll(() => cli.written.filter((line) => line.type === "user" || line.request?.subtype === "set_permission_mode").length).toBe(2);
    cli.end({ exitCode: 1, signal: null, stderrTail: "boom" });
    await expect(mode).rejects.toBeInstanceOf(WorkerExitedError);
    await expect(turn).rejects.toBeInstanceOf(WorkerExitedError);
    await expect(turn).rejects.toThrow(/boom/);
    expect(worker.state).toBe("failed");
  });
});
