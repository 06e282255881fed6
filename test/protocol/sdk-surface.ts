// What the Agent SDK's declarations (sdk.d.ts of the version matching the pinned CLI) say the CLI speaks: control
// subtypes, message types, hook events and session options, read from the text of the file.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface SdkSurface {
  /** Control request subtypes, either direction. */
  controlSubtypes: string[];
  /** Message types on stdout: "assistant", or "system/<subtype>" for system messages. */
  messageTypes: string[];
  hookEvents: string[];
  /** Keys of the SDK's Options. */
  options: string[];
}

function declaration(text: string, name: string): string {
  const start = text.search(new RegExp(`^(?:export )?declare type ${name} = `, "m"));
  if (start < 0) throw new Error(`sdk.d.ts declares no type ${name}`);
  const end = text.indexOf("\n};", start);
  return text.slice(start, end < 0 ? undefined : end);
}

function union(text: string, name: string): string[] {
  const line = text.match(new RegExp(`^(?:export )?declare type ${name} = ([^;]+);`, "m"));
  if (!line?.[1]) throw new Error(`sdk.d.ts declares no union ${name}`);
  return line[1].split("|").map((member) => member.trim());
}

/** A type's literal `type:` and `subtype:` (its own, at the first level of its body). */
function literal(body: string, field: string): string | undefined {
  return body.match(new RegExp(`^    ${field}: '([^']+)';`, "m"))?.[1];
}

export function readSdkSurface(path = sdkDeclarations()): SdkSurface {
  const text = readFileSync(path, "utf8");
  const controlSubtypes = union(text, "SDKControlRequestInner").map((name) => literal(declaration(text, name), "subtype") ?? name);
  const messageTypes = union(text, "SDKMessage").map((name) => {
    const body = declaration(text, name);
    const type = literal(body, "type") ?? name;
    const subtype = literal(body, "subtype");
    return type === "system" && subtype !== undefined ? `system/${subtype}` : type;
  });
  const hooks = text.match(/^export declare const HOOK_EVENTS: readonly \[([^\]]+)\];/m)?.[1] ?? "";
  const hookEvents = [...hooks.matchAll(/'([^']+)'/g)].map((match) => match[1]!);
  const options = [...declaration(text, "Options").matchAll(/^ {4}([A-Za-z]+)\??:/gm)].map((match) => match[1]!);
  return { controlSubtypes, messageTypes: [...new Set(messageTypes)], hookEvents, options };
}

/** The installed devDependency's sdk.d.ts. */
export function sdkDeclarations(): string {
  return join(import.meta.dirname, "..", "..", "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.d.ts");
}
