/**
 * How long the Messages API keeps a cached prompt prefix: 5 minutes, or an
 * hour when a `cache_control` block asks for `ttl: "1h"`. Both the cache
 * stagger (which waits for a prefix to be written) and the scripted model
 * (which simulates the cache) count with these.
 */
export const PROMPT_CACHE_TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;
