/**
 * Content blocks of Anthropic Messages API messages as the claude CLI carries them
 * inside `assistant`, `user` and `stream_event` messages.
 *
 * Every block is a loose object: fields we do not name pass through untouched.
 * The set of block `type`s is closed so that `switch (block.type)` narrows; a block
 * of a type not listed here makes the enclosing message fail validation, and
 * parseCliMessage then hands it on as an UnknownMessage with its raw object intact
 * (the CLI sends one assistant message per block, so little is lost).
 */
import { z } from "zod";

const JsonObjectSchema = z.record(z.string(), z.unknown());

export const Base64ImageSourceSchema = z.looseObject({
  type: z.literal("base64"),
  media_type: z.string(),
  data: z.string(),
});
export type Base64ImageSource = z.infer<typeof Base64ImageSourceSchema>;

export const UrlImageSourceSchema = z.looseObject({
  type: z.literal("url"),
  url: z.string(),
});
export type UrlImageSource = z.infer<typeof UrlImageSourceSchema>;

export const FileSourceSchema = z.looseObject({
  type: z.literal("file"),
  file_id: z.string(),
});

export const ImageSourceSchema = z.discriminatedUnion("type", [Base64ImageSourceSchema, UrlImageSourceSchema, FileSourceSchema]);
export type ImageSource = z.infer<typeof ImageSourceSchema>;

export const TextBlockSchema = z.looseObject({
  type: z.literal("text"),
  text: z.string(),
  citations: z
    .array(z.looseObject({ type: z.string() }))
    .nullable()
    .optional(),
});
export type TextBlock = z.infer<typeof TextBlockSchema>;

export const ImageBlockSchema = z.looseObject({
  type: z.literal("image"),
  source: ImageSourceSchema,
});
export type ImageBlock = z.infer<typeof ImageBlockSchema>;

/** PDFs and plain-text documents; the source kinds vary (base64, text, url, content, file). */
export const DocumentBlockSchema = z.looseObject({
  type: z.literal("document"),
  source: z.looseObject({ type: z.string() }),
});
export type DocumentBlock = z.infer<typeof DocumentBlockSchema>;

export const SearchResultBlockSchema = z.looseObject({
  type: z.literal("search_result"),
  source: z.string(),
  title: z.string(),
  content: z.array(z.looseObject({ type: z.string() })),
});

export const ToolUseBlockSchema = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: JsonObjectSchema,
});
export type ToolUseBlock = z.infer<typeof ToolUseBlockSchema>;

/** content is a string or a list of blocks (text, image, document, search_result, …): kept loose. */
export const ToolResultBlockSchema = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
});
export type ToolResultBlock = z.infer<typeof ToolResultBlockSchema>;

export const ThinkingBlockSchema = z.looseObject({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string().optional(),
});
export type ThinkingBlock = z.infer<typeof ThinkingBlockSchema>;

export const RedactedThinkingBlockSchema = z.looseObject({
  type: z.literal("redacted_thinking"),
  data: z.string(),
});
export type RedactedThinkingBlock = z.infer<typeof RedactedThinkingBlockSchema>;

/** A tool the API runs itself (web_search, web_fetch, code_execution, …). */
export const ServerToolUseBlockSchema = z.looseObject({
  type: z.literal("server_tool_use"),
  id: z.string(),
  name: z.string(),
  input: JsonObjectSchema,
});
export type ServerToolUseBlock = z.infer<typeof ServerToolUseBlockSchema>;

export const McpToolUseBlockSchema = z.looseObject({
  type: z.literal("mcp_tool_use"),
  id: z.string(),
  name: z.string(),
  server_name: z.string(),
  input: JsonObjectSchema,
});

export const McpToolResultBlockSchema = z.looseObject({
  type: z.literal("mcp_tool_result"),
  tool_use_id: z.string(),
  is_error: z.boolean().optional(),
  content: z.unknown(),
});

export const ContainerUploadBlockSchema = z.looseObject({
  type: z.literal("container_upload"),
  file_id: z.string(),
});

/** Results of server tools all share this shape; their `content` differs per tool and stays opaque. */
function serverToolResult<T extends string>(type: T) {
  return z.looseObject({ type: z.literal(type), tool_use_id: z.string(), content: z.unknown() });
}
export const WebSearchToolResultBlockSchema = serverToolResult("web_search_tool_result");
export const WebFetchToolResultBlockSchema = serverToolResult("web_fetch_tool_result");
export const CodeExecutionToolResultBlockSchema = serverToolResult("code_execution_tool_result");
export const BashCodeExecutionToolResultBlockSchema = serverToolResult("bash_code_execution_tool_result");
export const TextEditorCodeExecutionToolResultBlockSchema = serverToolResult("text_editor_code_execution_tool_result");
export const ToolSearchToolResultBlockSchema = serverToolResult("tool_search_tool_result");
export type ServerToolResultBlock =
  | z.infer<typeof WebSearchToolResultBlockSchema>
  | z.infer<typeof WebFetchToolResultBlockSchema>
  | z.infer<typeof CodeExecutionToolResultBlockSchema>
  | z.infer<typeof BashCodeExecutionToolResultBlockSchema>
  | z.infer<typeof TextEditorCodeExecutionToolResultBlockSchema>
  | z.infer<typeof ToolSearchToolResultBlockSchema>;

/** Any block that can appear in an assistant or user message. */
export const ContentBlockSchema = z.discriminatedUnion("type", [
  TextBlockSchema,
  ImageBlockSchema,
  DocumentBlockSchema,
  SearchResultBlockSchema,
  ToolUseBlockSchema,
  ToolResultBlockSchema,
  ThinkingBlockSchema,
  RedactedThinkingBlockSchema,
  ServerToolUseBlockSchema,
  McpToolUseBlockSchema,
  McpToolResultBlockSchema,
  ContainerUploadBlockSchema,
  WebSearchToolResultBlockSchema,
  WebFetchToolResultBlockSchema,
  CodeExecutionToolResultBlockSchema,
  BashCodeExecutionToolResultBlockSchema,
  TextEditorCodeExecutionToolResultBlockSchema,
  ToolSearchToolResultBlockSchema,
]);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

/** What a host may put in a user message it writes to the CLI. */
export const ContentBlockParamSchema = z.discriminatedUnion("type", [TextBlockSchema, ImageBlockSchema]);
export type ContentBlockParam = z.infer<typeof ContentBlockParamSchema>;

/**
 * Token usage as the API reports it. The CLI passes extra keys (iterations, speed,
 * inference_geo, …) and, on synthetic error messages, nulls: only the counters are named.
 */
export const ApiUsageSchema = z.looseObject({
  input_tokens: z.number().nullable().optional(),
  output_tokens: z.number().nullable().optional(),
  cache_creation_input_tokens: z.number().nullable().optional(),
  cache_read_input_tokens: z.number().nullable().optional(),
  service_tier: z.string().nullable().optional(),
});
export type ApiUsage = z.infer<typeof ApiUsageSchema>;

/** The `message` of an assistant message: an API Message object. */
export const ApiMessageSchema = z.looseObject({
  id: z.string().optional(),
  type: z.literal("message").optional(),
  role: z.literal("assistant"),
  model: z.string().optional(),
  content: z.array(ContentBlockSchema),
  stop_reason: z.string().nullable().optional(),
  stop_sequence: z.string().nullable().optional(),
  usage: ApiUsageSchema.optional(),
});
export type ApiMessage = z.infer<typeof ApiMessageSchema>;
