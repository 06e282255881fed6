// The checks of `cadre doctor`, one function each: what was found, and what to fix.
import process from "node:process";
import { execa } from "execa";
import { z } from "zod";
import manifest from "../../../package.json" with { type: "json" };
import { isLoopback } from "../../util/http-guard.ts";
import { oneLine } from "../../util/one-line.ts";
import { loadWithPeers } from "../../util/peer.ts";
import { locateClaude } from "../../worker/index.ts";

/** One line of `cadre doctor`: ok, a note that does not stop a run, or something to fix first. */
export interface Check {
  name: string;
  status: "ok" | "note" | "fail";
  /** What was found, and for a note or a failure what to do about it. */
  detail: string;
}

/** No check may hold the screen: each external command or request gets this long. */
const COMMAND_TIMEOUT_MS = 10_000;
const API_TIMEOUT_MS = 5_000;

// Read as fields that may be absent: which of them package.json carries is a packaging decision.
const pkg = manifest as {
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

const versionOf = (text: string | undefined) => /\d+\.\d+\.\d+/.exec(text ?? "")?.[0];

/** What a command that failed said, in a few words. */
const said = (run: { stdout: string; stderr: string; shortMessage?: string }) =>
  oneLine((run.stderr || run.stdout || run.shortMessage || "no output").split("\n")[0] ?? "", 100);

/** Node against the `engines` range of package.json (a lower bound, `>=N` or `>=N.M`); Deno as it is. */
export function runtimeCheck(): Check {
  const deno = (globalThis as { Deno?: { version: { deno: string } } }).Deno;
  if (deno) return { name: "deno", status: "ok", detail: `Deno ${deno.version.deno}` };
  const wanted = pkg.engines?.node ?? "";
  const bound = /(\d+)(?:\.(\d+))?/.exec(wanted);
  const [major, minor] = [Number(bound?.[1] ?? 0), Number(bound?.[2] ?? 0)];
  const [haveMajor = 0, haveMinor = 0] = process.versions.node.split(".").map(Number);
  const enough = haveMajor > major || (haveMajor === major && haveMinor >= minor);
  const detail = `Node.js ${process.versions.node}${wanted ? ` (cadre needs ${wanted})` : ""}`;
  return enough ? { name: "node", status: "ok", detail } : { name: "node", status: "fail", detail: `${detail}; install a newer Node.js` };
}

/** The claude CLI cadre would run (CADRE_CLAUDE_BIN, the pinned package, PATH), and its version against the pinned one. */
export async function claudeCheck(): Promise<{ check: Check; path?: string }> {
  let path: string;
  try {
    path = locateClaude();
  } catch (error) {
    return { check: { name: "claude", status: "fail", detail: (error as Error).message } };
  }
  const run = await execa(path, ["--version"], { timeout: COMMAND_TIMEOUT_MS, reject: false, stdin: "ignore" });
  const version = versionOf(run.stdout);
  if (run.exitCode !== 0 || version === undefined) {
    return { check: { name: "claude", status: "fail", detail: `${path} --version failed: ${said(run)}; reinstall it, or set CADRE_CLAUDE_BIN` } };
  }
  const spec = ["dependencies", "optionalDependencies", "peerDependencies"] as const;
  const tested = versionOf(spec.map((field) => pkg[field]?.["@anthropic-ai/claude-code"]).find((value) => value !== undefined));
  const found = `${version} at ${path}`;
  if (tested === undefined || tested === version) {
    return { path, check: { name: "claude", status: "ok", detail: `${found}${tested ? " (the version cadre is tested with)" : ""}` } };
  }
  return {
    path,
    check: { name: "claude", status: "note", detail: `${found}; cadre is tested with ${tested}, which is what npm install in cadre brings` },
  };
}

/** What `claude auth status` prints (JSON by default on the pinned CLI); other fields pass through. */
const AuthStatusSchema = z.looseObject({
  loggedIn: z.boolean(),
  authMethod: z.string().optional(),
  apiProvider: z.string().optional(),
  apiKeySource: z.string().optional(),
});
export type AuthStatus = z.infer<typeof AuthStatusSchema>;

/**
 * A login or an API key, as the CLI itself sees it: `claude auth status` knows
 * every way it can be signed in (its credentials under HOME or in the keychain,
 * ANTHROPIC_API_KEY, a token helper, Bedrock or Vertex), so cadre does not guess.
 */
export async function loginCheck(claude: string | undefined): Promise<{ check: Check; status?: AuthStatus }> {
  if (claude === undefined) return { check: { name: "login", status: "note", detail: "not checked: it needs the claude CLI" } };
  const run = await execa(claude, ["auth", "status", "--json"], { timeout: COMMAND_TIMEOUT_MS, reject: false, stdin: "ignore" });
  let status: AuthStatus;
  try {
    status = AuthStatusSchema.parse(JSON.parse(run.stdout));
  } catch {
    return { check: { name: "login", status: "note", detail: `could not tell: claude auth status said "${said(run)}"` } };
  }
  if (!status.loggedIn) {
    const detail = "not logged in, and no ANTHROPIC_API_KEY; run claude auth login, or set ANTHROPIC_API_KEY (--rehearse needs neither)";
    return { status, check: { name: "login", status: "fail", detail } };
  }
  const how = status.apiKeySource ?? status.authMethod ?? "logged in";
  const provider = status.apiProvider && status.apiProvider !== "firstParty" ? `, through ${status.apiProvider}` : "";
  return { status, check: { name: "login", status: "ok", detail: `${how}${provider}` } };
}

/**
 * The API answers: any HTTP answer will do, but a refused API key is reported.
 * Only for Anthropic's API (or ANTHROPIC_BASE_URL): Bedrock and Vertex have their own.
 */
export async function apiCheck(auth: AuthStatus | undefined): Promise<Check> {
  const env = process.env;
  if (auth?.apiProvider !== undefined && auth.apiProvider !== "firstParty") {
    return { name: "API", status: "note", detail: `not checked: claude uses ${auth.apiProvider}` };
  }
  const base = env.ANTHROPIC_BASE_URL || "https://api.anthropic.com";
  let url: URL;
  try {
    url = new URL("v1/models", base.endsWith("/") ? base : `${base}/`);
  } catch {
    return { name: "API", status: "fail", detail: `ANTHROPIC_BASE_URL is not a URL: "${base}"` };
  }
  // Node's fetch goes direct; the CLI uses the proxy. (The proxy's address is not shown: it may hold a password.)
  if ((env.HTTPS_PROXY || env.https_proxy) && !isLoopback(url.hostname)) {
    return { name: "API", status: "note", detail: `not checked: claude reaches ${url.origin} through HTTPS_PROXY, which this check does not use` };
  }
  const key = env.ANTHROPIC_API_KEY;
  const started = Date.now();
  try {
    const response = await fetch(url, {
      headers: { "anthropic-version": "2023-06-01", ...(key && { "x-api-key": key }) },
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (key && (response.status === 401 || response.status === 403)) {
      return { name: "API", status: "fail", detail: `${url.origin} refused ANTHROPIC_API_KEY (HTTP ${response.status}); check the key` };
    }
    return { name: "API", status: "ok", detail: `${url.origin} answers (${Date.now() - started} ms)` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (error as Error).name === "TimeoutError"
        ? `no answer in ${API_TIMEOUT_MS / 1000} s`
        : oneLine(cause?.code ?? cause?.message ?? String(error), 100);
    const setting = env.ANTHROPIC_BASE_URL ? "check ANTHROPIC_BASE_URL" : "check the network (or a proxy: HTTPS_PROXY)";
    return { name: "API", status: "fail", detail: `cannot reach ${url.origin} (${why}); ${setting}` };
  }
}

/** git, which tasks with `worktree: true` need; nothing else does, so its absence is a note. */
export async function gitCheck(): Promise<Check> {
  const run = await execa("git", ["--version"], { timeout: COMMAND_TIMEOUT_MS, reject: false, stdin: "ignore" });
  const version = versionOf(run.stdout);
  if (run.exitCode === 0 && version !== undefined) return { name: "git", status: "ok", detail: version };
  return { name: "git", status: "note", detail: "not found; tasks with worktree: true need git: install it" };
}

/** The Redis of `--redis` answers a PING (with the same connection settings a run uses). */
export async function redisCheck(url: string): Promise<Check> {
  const { redactUrl } = await import("../../distributed/url.ts");
  try {
    const { connectRedis } = await loadWithPeers(["ioredis"], "--redis", () => import("../../distributed/redis.ts"));
    const redis = await connectRedis(url, "cadre-doctor");
    const info = await redis.info("server");
    await redis.quit();
    const version = /redis_version:(\S+)/.exec(info)?.[1];
    return { name: "redis", status: "ok", detail: `${redactUrl(url)} answers${version ? ` (Redis ${version})` : ""}` };
  } catch (error) {
    return { name: "redis", status: "fail", detail: (error as Error).message };
  }
}
