/**
 * Raw Messages API streaming events, as the CLI forwards them inside `stream_event`
 * messages (only with --include-partial-messages).
 */
import { z } from "zod";
import { ApiMessageSchema, ApiUsageSchema, ContentBlockSchema } from "./content.ts";

export const TextDeltaSchema = z.looseObject({ type: z.literal("text_delta"), text: z.string() });
export const InputJsonDeltaSchema = z.looseObject({
  type: z.literal("input_json_delta"),
  partial_json: z.string(),
});
export const ThinkingDeltaSchema = z.looseObject({ type: z.literal("thinking_delta"), thinking: z.string() });
export const SignatureDeltaSchema = z.looseObject({ type: z.literal("signature_delta"), signature: z.string() });
export const CitationsDeltaSchema = z.looseObject({ type: z.literal("citations_delta"), citation: z.unknown() });

export const ContentDeltaSchema = z.discriminatedUnion("type", [
  TextDeltaSchema,
  InputJsonDeltaSchema,
  ThinkingDeltaSchema,
  SignatureDeltaSchema,
  CitationsDeltaSchema,
]);
export type ContentDelta = z.infer<typeof ContentDeltaSchema>;

export const MessageStartEventSchema = z.looseObject({
  type: z.literal("message_start"),
  message: ApiMessageSchema,
});
export const ContentBlockStartEventSchema = z.looseObject({
  type: z.literal("content_block_start"),
  index: z.number(),
  content_block: ContentBlockSchema,
});
export const ContentBlockDeltaEventSchema = z.looseObject({
  type: z.literal("content_block_delta"),
  index: z.number(),
  delta: ContentDeltaSchema,
});
export const ContentBlockStopEventSchema = z.looseObject({
  type: z.literal("content_block_stop"),
  index: z.number(),
});
export const MessageDeltaEventSchema = z.looseObject({
  type: z.literal("message_delta"),
  delta: z.looseObject({
    stop_reason: z.string().nullable().optional(),
    stop_sequence: z.string().nullable().optional(),
  }),
  usage: ApiUsageSchema.optional(),
});
export const MessageStopEventSchema = z.looseObject({ type: z.literal("message_stop") });
export const PingEventSchema = z.looseObject({ type: z.literal("ping") });
export const StreamErrorEventSchema = z.looseObject({
  type: z.literal("error"),
  error: z.looseObject({ type: z.string(), message: z.string() }),
});

export const StreamEventSchema = z.discriminatedUnion("type", [
  MessageStartEventSchema,
  ContentBlockStartEventSchema,
  ContentBlockDeltaEventSchema,
  ContentBlockStopEventSchema,
  MessageDeltaEventSchema,
  MessageStopEventSchema,
  PingEventSchema,
  StreamErrorEventSchema,
]);
export type StreamEvent = z.infer<typeof StreamEventSchema>;
