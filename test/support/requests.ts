import type { RecordedRequest } from "../../src/rehearsal/server.ts";

type Block = { type?: string; text?: string; content?: unknown; is_error?: boolean };

function blocks(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

function text(content: unknown): string {
  return blocks(content)
    .map((b) => b.text ?? "")
    .join("");
}

/** The text of every tool_result the model received in this request. */
export function toolResults(request: RecordedRequest | undefined): string[] {
  if (!request) return [];
  return request.messages.flatMap((m) =>
    blocks(m.content)
      .filter((b) => b.type === "tool_result")
      .map((b) => text(b.content)),
  );
}

/** Every user-visible text of the conversation in this request. */
export function conversationText(request: RecordedRequest | undefined): string {
  if (!request) return "";
  return request.messages.map((m) => text(m.content) + toolResults({ ...request, messages: [m] }).join("")).join("\n");
}

export function requestsOf(requests: readonly RecordedRequest[], script: string): RecordedRequest[] {
  return requests.filter((r) => r.script === script && r.outcome === "played");
}
