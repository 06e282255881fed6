/**
 * Renders a wait chain continued by `next` for error texts. When `next` is
 * already in the chain, only the loop is shown (from its first occurrence), so
 * `formatChain(["A", "B", "C"], "B")` is "B → C → B".
 */
export function formatChain(chain: readonly string[], next: string): string {
  const start = chain.indexOf(next);
  return [...chain.slice(Math.max(start, 0)), next].join(" → ");
}
