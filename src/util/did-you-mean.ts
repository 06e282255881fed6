/** Edit distance counting insertions, deletions, substitutions and swaps of neighbours ("modle" → "model") as 1 each. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number) => rows[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate closest to `input`, if it is close enough to be a likely typo:
 * same letters in another case, a prefix, or within about a third of the length in edits.
 */
export function closest(input: string, candidates: Iterable<string>): string | undefined {
  const lower = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === input) continue;
    const other = candidate.toLowerCase();
    // Same letters in another case, or one cut short of the other ("PreTool" for "PreToolUse"), beat any edit.
    const truncated = Math.min(lower.length, other.length) >= 3 && (other.startsWith(lower) || lower.startsWith(other));
    const distance = other === lower ? 0.5 : truncated ? 1 : editDistance(lower, other);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const allowed = Math.max(1, Math.floor(input.length / 3));
  return bestDistance <= allowed ? best : undefined;
}

/** `did you mean "prompt"?` when there is a close candidate. */
export function didYouMean(input: string, candidates: Iterable<string>): string | undefined {
  const match = closest(input, candidates);
  return match === undefined ? undefined : `did you mean "${match}"?`;
}
