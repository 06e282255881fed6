import { describe, expect, it } from "vitest";
import { NdjsonDecoder } from "../../src/protocol/ndjson.ts";
import { parseCliMessage } from "../../src/protocol/parse.ts";
import { type CliLine, startClaude } from "../support/claude.ts";
import { createRehearsal } from "../support/rehearsal.ts";

/**
 * The foundation's acceptance test: the real claude CLI, offline against the
 * rehearsal server, runs a real tool loop. The Bash command's output
 * (cadre-42, computed by the shell) can only reach the second model request
 * and the final text if the CLI really ran it.
 */

const COMMAND = "echo cadre-$((6*7))";

type Block = { type: string; [key: string]: unknown };

function contentOf(line: CliLine): Block[] {
  const content = (line.message as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) ? (content as Block[]) : [];
}

function toolResultText(block: Block): string {
  const content = block.content;
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((part: { text?: string }) => part.text ?? "").join("") : "";
}

/** Decodes the raw stdout with src/protocol, checking it agrees with the rig and with the schemas. */
function decodeWithProtocol(stdout: string, rigLines: CliLine[]) {
  const decoder = new NdjsonDecoder();
  const events = [...decoder.push(stdout), ...decoder.end()];
  expect(events.filter((event) => event.kind === "malformed")).toEqual([]);
  const values = events.map((event) => (event.kind === "value" ? event.value : undefined));
  expect(values).toEqual(rigLines);
  const parsed = values.map((value) => parseCliMessage(value));
  const invalid = parsed.filter((message) => message.type === "unknown" && message.reason === "invalid");
  expect(invalid).toEqual([]);
  return parsed;
}

describe("real claude CLI against the rehearsal server", () => {
  it("runs a two-step Bash tool loop end to end", async () => {
    const server = await createRehearsal({
      loop: [
        { text: "Let me run it.", tool_use: { name: "Bash", input: { command: COMMAND, description: "Print a marker" } } },
        { text: "The command printed: {{tool_result}}" },
      ],
    });
    const claude = await startClaude({ baseUrl: server.baseUrlFor("loop") });
    const init = await claude.initialize();
    expect((init.response as { subtype?: string }).subtype).toBe("success");

    claude.sendUser("Please run the marker command.");
    const permissionAsks: CliLine[] = [];
    const { messages, result } = await claude.untilResult({
      onMessage: (line) => {
        const request = line.request as { subtype?: string; input?: unknown } | undefined;
        if (line.type === "control_request" && request?.subtype === "can_use_tool") {
          permissionAsks.push(line);
          claude.send({
            type: "control_response",
            response: {
              subtype: "success",
              request_id: line.request_id,
              response: { behavior: "allow", updatedInput: request.input },
            },
          });
        }
      },
    });

    const system = messages.find((m) => m.type === "system" && m.subtype === "init");
    expect(system).toBeDefined();
    const sessionId = system!.session_id as string;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(system!.tools).toContain("Bash");

    const toolUse = messages
      .filter((m) => m.type === "assistant")
      .flatMap(contentOf)
      .find((block) => block.type === "tool_use");
    expect(toolUse).toMatchObject({ name: "Bash", input: { command: COMMAND } });

    const toolResult = messages
      .filter((m) => m.type === "user")
      .flatMap(contentOf)
      .find((block) => block.type === "tool_result");
    expect(toolResult).toMatchObject({ tool_use_id: toolUse!.id, is_error: false });
    expect(toolResultText(toolResult!)).toContain("cadre-42");

    const finalText = messages
      .filter((m) => m.type === "assistant")
      .flatMap(contentOf)
      .filter((block) => block.type === "text")
      .map((block) => block.text as string);
    expect(finalText.at(-1)).toBe("The command printed: cadre-42");

    expect(result).toMatchObject({ subtype: "success", is_error: false, session_id: sessionId, num_turns: 2 });
    expect(result.result).toBe("The command printed: cadre-42");
    expect((result.usage as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    expect((result.usage as { output_tokens: number }).output_tokens).toBeGreaterThan(0);
    expect(result.total_cost_usd as number).toBeGreaterThan(0);

    // A read-only echo is auto-allowed in 2.1.330 (measured); if a later CLI asks, it was answered above.
    expect(permissionAsks).toEqual([]);

    // The server saw exactly the two model calls of the loop, in this session, and the real output.
    expect(server.requests.map((r) => [r.script, r.step, r.outcome])).toEqual([
      ["loop", 0, "played"],
      ["loop", 1, "played"],
    ]);
    expect(server.requests.every((r) => r.sessionId === sessionId && r.stream && r.tools.includes("Bash"))).toBe(true);
    const secondUser = server.requests[1]!.messages.filter((m) => m.role === "user").at(-1)!;
    const recordedResult = (secondUser.content as Block[]).find((block) => block.type === "tool_result");
    expect(recordedResult).toMatchObject({ tool_use_id: toolUse!.id });
    expect(toolResultText(recordedResult!)).toContain("cadre-42");
    expect(server.warnings).toEqual([]);

    // The protocol layer decodes the same stream, and its schemas accept every known line.
    const parsed = decodeWithProtocol(claude.stdout, claude.received);
    expect(parsed.map((m) => m.type)).toEqual(expect.arrayContaining(["control_response", "system", "assistant", "user", "result"]));
    expect(parsed.find((m) => m.type === "result")).toMatchObject({ subtype: "success", total_cost_usd: result.total_cost_usd });

    await claude.close();
    expect(claude.subprocess.exitCode).toBe(0);
  });

  it("puts initialize's appendSystemPrompt into the system prompt the model receives", async () => {
    const server = await createRehearsal({ echo: [{ text: "You said: {{prompt}}" }] });
    const claude = await startClaude({ baseUrl: server.baseUrlFor("echo") });
    await claude.initialize({ appendSystemPrompt: "Always answer as the cadre-rehearsal-marker agent." });
    claude.sendUser("hello rehearsal");
    const { result } = await claude.untilResult();
    expect(result.result).toBe("You said: hello rehearsal");
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.system).toContain("Always answer as the cadre-rehearsal-marker agent.");
    expect(server.requests[0]!.system).toContain("Claude");
  });
});
