// Where the claude executable is: CADRE_CLAUDE_BIN, the pinned CLI's package beside cadre, then PATH.
import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import process from "node:process";
import { ClaudeNotFoundError } from "./errors.ts";

/** The placeholder that @anthropic-ai/claude-code ships before its postinstall links the real binary is tiny. */
const MIN_NATIVE_BINARY_BYTES = 1_000_000;

function isExecutableFile(path: string, minBytes = 0): boolean {
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size < minBytes) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function packageDir(name: string): string | undefined {
  try {
    // createRequire throws for a module loaded from a URL (cadre from JSR, on Deno): no package
    // is installed beside it, so claude comes from CADRE_CLAUDE_BIN or PATH.
    return dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

/**
 * The native binaries of the pinned CLI: the @anthropic-ai/claude-code wrapper's
 * bin (linked by its postinstall); in case install scripts were skipped, its
 * platform package that carries the binary itself; then the platform package of
 * @anthropic-ai/claude-agent-sdk, which carries the CLI of the SDK's version
 * (0.3.332's is claude 2.1.332, byte for byte). A clone gets the CLI that way:
 * claude-code declares Node 22+, and npm warns EBADENGINE for it on Node 20.
 */
function pinnedCandidates(): string[] {
  const candidates: string[] = [];
  const wrapper = packageDir("@anthropic-ai/claude-code");
  if (wrapper) candidates.push(join(wrapper, "bin", "claude.exe"));
  const platform = `${process.platform}-${process.arch}`;
  const binary = process.platform === "win32" ? "claude.exe" : "claude";
  for (const carrier of ["@anthropic-ai/claude-code", "@anthropic-ai/claude-agent-sdk"]) {
    for (const suffix of ["", "-musl"]) {
      const dir = packageDir(`${carrier}-${platform}${suffix}`);
      if (dir) candidates.push(join(dir, binary));
    }
  }
  return candidates;
}

function pathCandidates(): string[] {
  const names = process.platform === "win32" ? ["claude.exe", "claude.cmd"] : ["claude"];
  return (process.env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .flatMap((dir) => names.map((n) => join(dir, n)));
}

/** Found once per process: every worker start would otherwise stat the same candidates again. */
let defaultClaude: string | undefined;

/**
 * Finds the claude executable: an explicit path, then CADRE_CLAUDE_BIN, then
 * the pinned @anthropic-ai/claude-code when it is installed (an optional peer
 * dependency: whoever installed it asked for the version cadre is tested
 * with) or the CLI of an installed Agent SDK (a clone's devDependency), then
 * `claude` on PATH.
 */
export function locateClaude(explicitPath?: string): string {
  const fromEnv = process.env.CADRE_CLAUDE_BIN;
  const requested = explicitPath ?? (fromEnv ? fromEnv : undefined);
  if (requested !== undefined) {
    if (isExecutableFile(requested)) return requested;
    throw new ClaudeNotFoundError([`${requested} (${explicitPath ? "claudePath option" : "CADRE_CLAUDE_BIN"}; not an executable file)`]);
  }
  defaultClaude ??= findDefaultClaude();
  return defaultClaude;
}

function findDefaultClaude(): string {
  const searched: string[] = [];
  for (const candidate of pinnedCandidates()) {
    searched.push(candidate);
    if (isExecutableFile(candidate, MIN_NATIVE_BINARY_BYTES)) return candidate;
  }
  if (searched.length === 0) searched.push("@anthropic-ai/claude-code (not installed)");
  for (const candidate of pathCandidates()) {
    if (isExecutableFile(candidate)) return candidate;
  }
  searched.push("claude on PATH");
  throw new ClaudeNotFoundError(searched);
}
