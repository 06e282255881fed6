/**
 * Telling the CLI's own side requests apart from conversation turns, so they
 * neither play a script step nor use up a step's `fail` attempts.
 *
 * Measured on claude 2.1.330 in stream-json mode (`-p`) with
 * CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1: a turn sends only
 * POST <prefix>/v1/messages?beta=true (stream: true, the full system prompt
 * and tools, max_tokens 128000, or 32000 for an unknown model); a tool loop
 * sends one request per model call and nothing else: no title generation, no
 * count_tokens, no haiku calls. Without that variable it also sends
 * HEAD /api/hello first (a reachability probe; a 404 is fine). With
 * `--tools ""` the conversation requests carry no `tools` at all, so a
 * missing tool list does not mark a side request.
 *
 * The binary knows other model calls it may make in other modes: a quota
 * probe (max_tokens 1, user message "quota"), model validation and key
 * verification ("Hi" with no system prompt), and, with their own system
 * prompts, session titles, tool-use summaries, prompt suggestions, WebFetch
 * page digests and compaction. The first group is recognised here and
 * answered without touching the script; the others would play the step of
 * their own conversation position (the real conversation is unaffected: its
 * position counts only its own assistant messages).
 *
 * Subagents (Agent tool) send the header x-claude-code-agent-id and a system
 * prompt whose billing line says cc_is_subagent=true, with a fresh
 * conversation: played from the main script they would start at step 0 and
 * spawn agents recursively (measured: three levels deep), hence the separate
 * "<name>:subagent" script in server.ts.
 *
 * Other measured behaviour a script author meets: 429, 500 and 529 are
 * retried with backoff (about 0.6 s, 1.2 s, ...; retry-after: 0 is not
 * honoured) and reported as system/api_retry lines; a 400 is silently resent
 * twice with fewer beta flags, then becomes a result with is_error true and
 * exit code 1; stop_reason max_tokens makes the CLI send a "Output token
 * limit hit" user message and call again; an interrupted reply stays in the
 * history, so the next turn plays the next step.
 */

export interface SideRequestVerdict {
  side: boolean;
  reason?: string;
}

export function classifyRequest(body: { max_tokens?: unknown; system?: unknown }): SideRequestVerdict {
  if (body.max_tokens === 1) return { side: true, reason: "quota probe (max_tokens 1)" };
  const system = body.system;
  if (system === undefined || system === "" || (Array.isArray(system) && system.length === 0)) {
    return { side: true, reason: "probe without a system prompt" };
  }
  return { side: false };
}
