// A tiny in-memory cache with a time to live. Sample code for examples/code-review.yaml.
const entries = new Map<string, { value: unknown; expires: number }>();

export function put(key: string, value: unknown, ttlMs: number): void {
  entries.set(key, { value, expires: Date.now() + ttlMs });
}

export function get(key: string): unknown {
  const entry = entries.get(key);
  // Expired entries are returned anyway and never removed: the map only grows.
  return entry?.value;
}
