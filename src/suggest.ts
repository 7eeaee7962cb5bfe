// "Did you mean": the known name a mistyped one most likely meant, for every refusal of an unknown name (the CLI's
// flags and commands, a library caller's options, a manifest's keys), so that each suggests alike.

/** Case, dashes and underscores say nothing of which name was meant: `max_zoom`, `--max-zoom` and `maxZoom` are one. */
const normal = (name: string): string => name.toLowerCase().replace(/[-_]/g, '');

/**
 * The candidate `word` most likely means: one spelt alike but for case, dashes and underscores, else the nearest
 * within a small edit distance. `aliases` map words people use for a candidate to it (`channel` → `c`), which no
 * edit distance finds. A suggestion keeps a letter of the word at least: `x` is no typo of `c`.
 */
export function closest(word: string, candidates: readonly string[], aliases: Readonly<Record<string, string>> = {}): string | undefined {
  const w = normal(word);
  const named: [string, string][] = [...candidates.map((c): [string, string] => [normal(c), c]), ...Object.entries(aliases).map(([a, c]): [string, string] => [normal(a), c])];
  const same = named.find(([n]) => n === w);
  if (same) return same[1];
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(w.length / 4)) + 1;
  for (const [n, c] of named) {
    const d = editDistance(w, n);
    if (d < bestDistance && d < Math.min(w.length, n.length)) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
