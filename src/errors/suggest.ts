// "Did you mean …?" for a mistyped name. Invariant: a suggestion is offered only for a candidate at
// most two edits away (and closer than the name's own length), so it is never a wild guess.

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      const swap = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(up + 1, row[j - 1]! + 1, diag + swap);
      diag = up;
    }
  }
  return row[b.length]!;
}

/** The closest candidate within two edits, or undefined. */
export function closestName(input: string, candidates: Iterable<string>): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = distance(input.toLowerCase(), name.toLowerCase());
    if (d <= 2 && d < Math.max(input.length, 2) && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** `; did you mean "x"?` when a close candidate exists, else "". */
export function didYouMean(input: string, candidates: Iterable<string>): string {
  const name = closestName(input, candidates);
  return name === undefined ? "" : `; did you mean ${name}?`;
}
