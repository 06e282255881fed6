// Deno only (deno.json maps the .js subpath here): the SDK's exports give Deno no types for
// it, so they come from the extensionless subpath. See README, "On Deno".
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
export * from "@modelcontextprotocol/sdk/shared/protocol.js";
