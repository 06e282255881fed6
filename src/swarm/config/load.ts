// Loading a swarm file: parse, interpolate the environment, check the schema and the semantics, resolve.
import { readFile } from "node:fs/promises";
import { basename, dirname, extname, resolve } from "node:path";
import { dataProblem, readYaml } from "../../util/yaml.ts";
import { coerceWholeReferences, type Env, interpolateEnv } from "./interpolate.ts";
import { ConfigError, type ConfigIssue, issue, type PathSegment, sortByDocumentOrder } from "./issues.ts";
import { type ConfigResult, type ResolvedSwarmConfig, resolveSwarmConfig } from "./resolve.ts";
import { salvageConfig } from "./salvage.ts";
import { SwarmConfigSchema } from "./schema.ts";
import { fromZodIssues } from "./zod-issues.ts";

export type ConfigFormat = "yaml" | "json";

export interface ParseOptions {
  /** Relative paths (agent files, cwd) are resolved against this directory. */
  baseDir: string;
  /** Default "yaml" (which also reads JSON). */
  format?: ConfigFormat;
  /** For ${VAR} interpolation; default process.env. */
  env?: Env;
  /** The file the text came from, for the resolved config and its default name. */
  file?: string;
}

function parseText(text: string, format: ConfigFormat): { data?: unknown; issues: ConfigIssue[] } {
  if (format === "json") {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      return { issues: [{ path: "", message: `not valid JSON: ${(error as Error).message}` }] };
    }
    const problem = dataProblem(data);
    return problem ? { issues: [issue(problem.path, problem.message)] } : { data, issues: [] };
  }
  const read = readYaml(text);
  if (read.ok) return { data: read.value, issues: [] };
  const lines = text.split(/\r?\n/);
  return {
    issues: read.problems.map((problem) => {
      if (problem.path !== undefined) return issue(problem.path, problem.message);
      if (problem.line === undefined) return { path: "", message: `not valid YAML: ${problem.message}` };
      // `x: [a-{{item}}]` is a YAML flow mapping inside a list; quoting the value fixes it.
      const hint = lines[problem.line - 1]?.includes("{{") ? 'quote values that contain {{ }}: "review-{{item}}"' : undefined;
      return { path: "", message: `not valid YAML at line ${problem.line}, column ${problem.column}: ${problem.message}`, ...(hint && { hint }) };
    }),
  };
}

/**
 * Parses and validates a swarm config from text: syntax, ${VAR} interpolation,
 * the schema, then the semantic checks (agent files, references, dependency
 * graph). Every problem found is reported, each with its path.
 */
export async function parseSwarmConfig(text: string, options: ParseOptions): Promise<ConfigResult> {
  const parsed = parseText(text, options.format ?? "yaml");
  if (parsed.issues.length > 0) return { ok: false, errors: parsed.issues };
  if (parsed.data === undefined || parsed.data === null) {
    return { ok: false, errors: [{ path: "", message: "the config is empty", hint: "it needs at least tasks: [...]" }] };
  }

  const interpolated = interpolateEnv(parsed.data, options.env ?? process.env);
  let result = SwarmConfigSchema.safeParse(interpolated.value, { reportInput: true });
  if (!result.success) {
    const wanted = result.error.issues.flatMap((zodIssue) =>
      zodIssue.code === "invalid_type" ? [{ path: zodIssue.path as PathSegment[], expected: zodIssue.expected }] : [],
    );
    if (coerceWholeReferences(interpolated.value, interpolated.whole, wanted)) {
      result = SwarmConfigSchema.safeParse(interpolated.value, { reportInput: true });
    }
  }
  const errors = [...interpolated.issues];
  if (!result.success) {
    // A value whose variable is unset is already reported; its type error would only repeat that.
    const unset = new Set(interpolated.issues.map((item) => item.path));
    errors.push(...fromZodIssues(result.error.issues, SwarmConfigSchema).filter((item) => !unset.has(item.path)));
  }

  // The semantic checks run on what passes the schema even when not all of it does: every problem in one pass.
  const checkable = result.success ? { config: result.data, gaps: undefined } : salvageConfig(interpolated.value);
  const resolved =
    checkable &&
    (await resolveSwarmConfig(checkable.config, {
      baseDir: resolve(options.baseDir),
      ...(options.file !== undefined && { file: resolve(options.file) }),
      defaultName: options.file === undefined ? "swarm" : basename(options.file, extname(options.file)),
      ...(checkable.gaps && { gaps: checkable.gaps }),
    }));
  if (errors.length === 0 && resolved?.ok) return resolved;
  // One problem per place: a value the schema (or an unset variable) already faulted is not faulted again.
  const reported = new Set(errors.map((item) => item.path));
  if (resolved && !resolved.ok) errors.push(...resolved.errors.filter((item) => !reported.has(item.path)));
  return { ok: false, errors: sortByDocumentOrder(errors, interpolated.value) };
}

/** Reads, parses and validates the swarm config at `path` (YAML, or JSON when it ends in .json). */
export async function loadSwarmConfig(path: string, options: { env?: Env } = {}): Promise<ConfigResult> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (error as Error).message;
    return { ok: false, errors: [{ path: "", message: `cannot read ${file}: ${reason}` }] };
  }
  return parseSwarmConfig(text, {
    baseDir: dirname(file),
    format: extname(file).toLowerCase() === ".json" ? "json" : "yaml",
    file,
    ...(options.env !== undefined && { env: options.env }),
  });
}

/** loadSwarmConfig for callers that prefer an exception: throws ConfigError (code CONFIG_INVALID). */
export async function loadSwarmConfigOrThrow(path: string, options: { env?: Env } = {}): Promise<ResolvedSwarmConfig> {
  const result = await loadSwarmConfig(path, options);
  if (!result.ok) throw new ConfigError(result.errors, path);
  return result.config;
}
