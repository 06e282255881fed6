/**
 * parseCliMessage: one decoded stdout line → a typed CliMessage, never an exception.
 * Dispatch is a map lookup on `type` (and `subtype` for system and control_request),
 * so each line is checked against one schema only.
 */
import { z } from "zod";
import { InboundControlRequestSchema } from "./control.ts";
import { CLI_MESSAGE_SCHEMAS, type CliMessage, type UnknownMessage } from "./messages.ts";
import { SYSTEM_MESSAGE_SCHEMAS } from "./system.ts";

// Maps, not object lookups, so that keys such as "constructor" or "__proto__" find nothing.
const byType = new Map<string, z.ZodType>(Object.entries(CLI_MESSAGE_SCHEMAS));
const bySystemSubtype = new Map<string, z.ZodType>(Object.entries(SYSTEM_MESSAGE_SCHEMAS));
const inboundControlSubtypes = new Set<string>(InboundControlRequestSchema.options.map((s) => s.shape.subtype.value));

function unknown(raw: unknown, reason: UnknownMessage["reason"], issues?: string): UnknownMessage {
  return issues === undefined ? { type: "unknown", raw, reason } : { type: "unknown", raw, reason, issues };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function schemaFor(value: Record<string, unknown>): z.ZodType | undefined {
  const { type } = value;
  if (typeof type !== "string") return undefined;
  if (type === "system") {
    return typeof value.subtype === "string" ? bySystemSubtype.get(value.subtype) : undefined;
  }
  if (type === "control_request") {
    // An unknown request subtype is a new kind of request, not a malformed one.
    const request = value.request;
    if (!isRecord(request) || typeof request.subtype !== "string" || !inboundControlSubtypes.has(request.subtype)) {
      return undefined;
    }
  }
  return byType.get(type);
}

/**
 * Turns a decoded JSON value from the CLI's stdout into a CliMessage. Known messages
 * come back with all their fields, including ones no schema names; anything else comes
 * back as `{type: "unknown", raw, reason}` with `raw` being `value` itself.
 */
export function parseCliMessage(value: unknown): CliMessage {
  if (!isRecord(value)) return unknown(value, "unknown_type");
  try {
    const schema = schemaFor(value);
    if (schema === undefined) return unknown(value, "unknown_type");
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data as CliMessage;
    return unknown(value, "invalid", z.prettifyError(parsed.error));
  } catch (error) {
    // Only reachable with exotic inputs (throwing getters, proxies); the contract is to never throw.
    return unknown(value, "invalid", error instanceof Error ? error.message : String(error));
  }
}
