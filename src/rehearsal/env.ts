/**
 * The environment for a claude child that talks to a rehearsal server
 * instead of Anthropic, hermetically.
 *
 * It is a complete environment, meant for `execa(..., { env, extendEnv: false })`:
 * merging it over the parent's would let variables through that defeat the
 * rehearsal, e.g. CLAUDE_CONFIG_DIR (the user's real settings, hooks and MCP
 * servers instead of the temp HOME), CLAUDE_CODE_USE_BEDROCK/VERTEX (another
 * endpoint), ANTHROPIC_AUTH_TOKEN (a real credential sent along) or
 * ANTHROPIC_MODEL. Only the path, locale, time zone and temp directory are
 * taken from the parent.
 */

/** Any value works: the rehearsal server never checks or records it. */
export const REHEARSAL_API_KEY = "rehearsal-dummy-key";

/** Any value works: the CLI sends it to the rehearsal server only. */
export const REHEARSAL_OAUTH_TOKEN = "sk-ant-oat01-rehearsal-dummy";

const PASSED_THROUGH = /^(PATH|PATHEXT|SYSTEMROOT|SYSTEMDRIVE|COMSPEC|WINDIR|LANG|LANGUAGE|LC_[A-Z_]+|TZ|TMPDIR|TMP|TEMP)$/i;

export interface OfflineClaudeEnvOptions {
  /** The rehearsal server URL, usually `server.baseUrlFor(script)`. */
  baseUrl: string;
  /** A private, writable HOME: the CLI writes its config and transcripts there. */
  home: string;
  /** The API key the CLI sends; the rehearsal server ignores it. Default: a dummy key. */
  apiKey?: string;
  /**
   * Run as a subscription (a claude.ai login) instead of an API key: a dummy
   * OAuth token, so that the CLI reads the plan-window headers and reports
   * them as rate_limit_event messages (measured on CLI 2.1.332).
   */
  subscription?: boolean;
  /** Where PATH and locale come from. Default: process.env. */
  parentEnv?: NodeJS.ProcessEnv;
}

export function offlineClaudeEnv(options: OfflineClaudeEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.parentEnv ?? process.env)) {
    if (value !== undefined && PASSED_THROUGH.test(name)) env[name] = value;
  }
  return {
    ...env,
    HOME: options.home,
    // Windows looks here for the home directory.
    USERPROFILE: options.home,
    ANTHROPIC_BASE_URL: options.baseUrl,
    ...(options.subscription ? { CLAUDE_CODE_OAUTH_TOKEN: REHEARSAL_OAUTH_TOKEN } : { ANTHROPIC_API_KEY: options.apiKey ?? REHEARSAL_API_KEY }),
    // Without it the CLI also sends HEAD /api/hello and other non-model traffic.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    // Otherwise MCP tools hide behind the ToolSearch tool and never reach a scripted tool_use.
    ENABLE_TOOL_SEARCH: "false",
  };
}
