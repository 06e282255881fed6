/**
 * A string that is equal for two values exactly when they are the same
 * configuration: plain objects and arrays compared by content (key order and
 * undefined fields do not matter), functions and class instances (an
 * McpServer, an AbortSignal) by identity, since only the very same one
 * behaves the same.
 */
export function stableKey(value: unknown): string {
  return JSON.stringify(normalize(value, new Set()));
}

const identities = new WeakMap<object, number>();
let nextIdentity = 0;

function identity(value: object): string {
  let id = identities.get(value);
  if (id === undefined) {
    id = ++nextIdentity;
    identities.set(value, id);
  }
  return `#${id}`;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function normalize(value: unknown, path: Set<object>): unknown {
  if (typeof value === "function") return { "#fn": identity(value) };
  if (value === null || typeof value !== "object") return typeof value === "bigint" ? String(value) : value;
  if (!Array.isArray(value) && !isPlain(value)) return { "#obj": identity(value) };
  // A cycle cannot be written out; the object itself stands for it.
  if (path.has(value)) return { "#obj": identity(value) };
  path.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => normalize(item, path) ?? null);
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([key, item]) => [key, normalize(item, path)]));
  } finally {
    path.delete(value);
  }
}
