// The tile budget under uniform thinning: a tile's size in the format the budget applies to, and, for a tile over
// it, the lowest threshold that would bring it within (the build then raises the whole zoom's threshold).
import { PRIORITY_RANGE, SPARED_SHARE, thinningPriority } from '../thinning.js';
import { jsonTileOf, pbfTile, type EncodeContext } from './encode.js';
import type { Bucket, Entry, Prepared } from './placement.js';

/** Entry indexes by thinning priority, highest first; equal priorities by seq. */
function byPriority(entries: readonly Entry[]): number[] {
  const prio = entries.map((e) => thinningPriority(e.p.tf.seq));
  return entries.map((_, i) => i).sort((i, j) => prio[j] - prio[i] || entries[i].p.tf.seq - entries[j].p.tf.seq);
}

/** The budget holds PBF tiles (what viewers stream); JSON tiles only in a build without PBF. */
export function budgetedBytes(tile: { json?: Uint8Array; pbf?: Uint8Array }, ec: EncodeContext): number {
  return (ec.spec.formats.pbf ? tile.pbf : tile.json)?.byteLength ?? 0;
}

/**
 * The lowest threshold (thinning.ts: a feature is drawn when its priority is at least the threshold) at which the
 * tile is within the budget: one above the priority of the first entry, in priority order, whose addition no longer
 * fits. Exact: a binary search over prefixes of that order, each encoded, since adding a feature never makes a tile
 * smaller. Only called for a tile found over the budget, which a good estimate makes rare. Spared entries are in
 * every prefix (no threshold thins them), unless they alone take more than SPARED_SHARE of the budget: then they are
 * ranked with the rest and `unspare` says the zoom must stop sparing. Undefined when there is nothing to thin.
 */
export function thresholdToFit(b: Bucket, ec: EncodeContext, isSpared: (p: Prepared) => boolean): { need: number; unspare: boolean } | undefined {
  const { entries } = b;
  let spare = entries.map((e) => isSpared(e.p));
  const mask = new Uint8Array(entries.length);
  let order: number[] = [];
  const fits = (k: number, limit = ec.spec.tileBudget): boolean => {
    for (let i = 0; i < entries.length; i++) mask[i] = spare[i] ? 1 : 0;
    for (let r = 0; r < k; r++) mask[order[r]] = 1;
    const tile = ec.spec.formats.pbf
      ? { pbf: pbfTile(entries, mask, ec, b) }
      : { json: jsonTileOf(entries.filter((_, i) => mask[i] === 1), ec) };
    return budgetedBytes(tile, ec) <= limit;
  };
  // The plan's rule (thinning.ts SPARED_SHARE): spared features are few where they leave the rest of the budget.
  const unspare = spare.includes(true) && !fits(0, ec.spec.tileBudget * SPARED_SHARE);
  if (unspare) spare = spare.map(() => false);
  order = byPriority(entries).filter((i) => !spare[i]);
  if (order.length === 0) return undefined;
  // The largest k whose first k entries fit: fits(lo) holds, fits(hi) does not.
  let lo = 0, hi = order.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (fits(mid)) lo = mid; else hi = mid;
  }
  return { need: thinningPriority(entries[order[lo]].p.tf.seq) + 1, unspare };
}

/** Share of the budget a tile thinned piece by piece is aimed at: what is left is for the pieces' chance. */
const PIECES_AIM = 0.9;

/**
 * For a tile over the budget that holds a feature thinned piece by piece (tile/pieces.ts), whose pieces' priorities
 * the tile's clipped and quantised geometry no longer tells: the threshold that keeps the share of what the tile holds
 * now that the budget takes, as priorities are uniform. Above `current` whenever `bytes` passes the budget, so a zoom
 * corrected again and again ends within it.
 */
export function piecesThreshold(current: number, bytes: number, budget: number): number {
  const keep = Math.min(1, (budget * PIECES_AIM) / bytes);
  return Math.min(PRIORITY_RANGE, Math.max(current + 1, Math.ceil(PRIORITY_RANGE - (PRIORITY_RANGE - current) * keep)));
}
