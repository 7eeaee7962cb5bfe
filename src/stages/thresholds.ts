// The thinning a plan decides from the tile sketch: per zoom the share of features that fits the densest tile's budget,
// the sizes of outlines spared whatever the share, and the thresholds raised when a tile measured over the budget.
import type { LayerStats } from './assign.js';
import type { FieldFilter } from './field-filter.js';
import { pbfValueBytes, varintBytes } from './geometry-sizer.js';
import { PRIORITY_RANGE, SPARE_SIZES, SPARED, SPARED_PIXELS, SPARED_SHARE, type TileSketch } from './thinning.js';

/** Share of the budget the estimate aims at: the rest is for what the estimate cannot see (clipping, rounding). */
const AIM = 0.95;
/** Standard deviations of the kept bytes of a tile allowed for: priorities pick a random share of its features. */
const SIGMAS = 3;

/** The bytes, bytes² and value references of a tile's features a zoom sparing class `k` (`spareClass`) draws whatever the share; none for -1. */
function sparedSums(sums: readonly number[] | Float64Array, k: number): [number, number, number] {
  const out: [number, number, number] = [0, 0, 0];
  if (k < 0) return out;
  for (let c = k; c < SPARE_SIZES; c++) for (let i = 0; i < 3; i++) out[i] += sums[SPARED + 3 * c + i] ?? 0;
  return out;
}

/**
 * Largest share f of a tile's features that the budget holds: layer headers, keys and shared values once, the spared
 * features whole where the zoom spares those of class `spares` and larger (-1: it spares none), f of the other bytes,
 * value indexes as wide as f of the values needs, and SIGMAS deviations of a random choice of that share.
 */
export function fittingShare(sums: readonly number[] | Float64Array, overhead: number, budget: number, spares = 0): number {
  const [, all, allSquares, allRefs, values] = sums;
  const [whole, spareSquares, spareRefs] = sparedSums(sums, spares);
  const bytes = all - whole;
  const squares = allSquares - spareSquares;
  const refs = allRefs - spareRefs;
  const aim = budget * AIM;
  const size = (f: number) => overhead + whole + f * bytes + f * refs * (varintBytes(Math.ceil(f * values)) - 2) + SIGMAS * Math.sqrt(Math.max(0, f * (1 - f) * squares));
  if (size(1) <= aim) return 1;
  let lo = 0, hi = 1;
  for (let i = 0; i < 48; i++) {
    const mid = (lo + hi) / 2;
    if (size(mid) <= aim) lo = mid; else hi = mid;
  }
  return lo;
}

/** Whether a tile (its sums) can spare class `k` and larger: it holds everything, or those features leave SPARED_SHARE of the budget to the rest. */
function sparesFit(sums: readonly number[] | Float64Array, overhead: number, budget: number, k: number): boolean {
  return overhead + sparedSums(sums, k)[0] <= budget * AIM * SPARED_SHARE || fittingShare(sums, overhead, budget, k) === 1;
}

/**
 * Bytes every tile may carry whatever it holds: per layer its header, its keys, and its enumerable string values; of
 * the fields `kept` keeps, when given (`--coarse-fields`).
 */
export function tileOverhead(stats: LayerStats, format: 'pbf' | 'json', collectionBytes: number, kept?: FieldFilter): number {
  if (format === 'json') return collectionBytes + 64;
  let total = 0;
  for (const [layer, fields] of Object.entries(stats)) {
    total += 12 + Buffer.byteLength(layer);
    for (const [name, f] of Object.entries(fields)) {
      if (kept && !kept.keeps(name)) continue;
      total += 3 + Buffer.byteLength(name);
      if (f.strings.length <= 64) for (const s of f.strings) total += pbfValueBytes(s);
    }
  }
  return total;
}

export interface ThresholdInput {
  sketch: TileSketch;
  /** The estimates and overhead of tiles that carry fewer fields (`--coarse-fields`), for the zooms below `below`. */
  few?: { sketch: TileSketch; below: number; overhead: number };
  side: number;
  minZoom: number;
  maxZoom: number;
  budget: number;
  overhead: number;
}

/**
 * One threshold per zoom (index = zoom; the finest zoom 0): at each coarser zoom the share of features that fits
 * the densest tile's budget, the same share everywhere; never lower than the threshold of the zoom below, so kept
 * sets nest. Zooms whose tiles are smaller than the sketch's sizes get 0 (a miss there is corrected after tiling).
 * `spareSizes`, per zoom: the sparing size in display pixels, the smallest SPARED_PIXELS · 2^k whose lines and
 * polygons leave SPARED_SHARE of every tile's budget to the rest, and never so small that a coarser zoom spares a
 * feature narrower in image pixels than a finer one does (a size at most doubles from a zoom to the next coarser one),
 * so kept sets nest. `spareFrom`: the coarsest zoom that spares; below it, from the first zoom where no size fits,
 * lines and polygons are thinned like the rest.
 */
export function planThresholds(p: ThresholdInput): { thresholds: number[]; spareFrom: number; spareSizes: number[] } {
  const out = new Array<number>(p.maxZoom + 1).fill(0);
  const sizes = new Array<number>(p.maxZoom + 1).fill(SPARED_PIXELS);
  const log2Side = Math.round(Math.log2(p.side));
  let spareFrom = p.minZoom;
  // The sparing class of the zoom below (the finest zoom draws everything: class 0).
  let k = 0;
  for (let z = p.maxZoom - 1; z >= p.minZoom; z--) {
    const j = log2Side - z;
    const few = p.few && z < p.few.below ? p.few : undefined;
    const sketch = few?.sketch ?? p.sketch, overhead = few?.overhead ?? p.overhead;
    let share = 1;
    if (j >= sketch.minLog2) {
      const tiles = [...sketch.tiles(j)];
      if (spareFrom <= z) {
        const fitsAll = (c: number) => tiles.every((sums) => sparesFit(sums, overhead, p.budget, c));
        let c = Math.max(0, k - 1);
        while (c < SPARE_SIZES && !fitsAll(c)) c++;
        if (c < SPARE_SIZES) k = c; else spareFrom = z + 1;
      }
      for (const sums of tiles) share = Math.min(share, fittingShare(sums, overhead, p.budget, spareFrom <= z ? k : -1));
    }
    if (spareFrom <= z) sizes[z] = SPARED_PIXELS * 2 ** k;
    const t = share >= 1 ? 0 : Math.min(PRIORITY_RANGE, Math.ceil((1 - share) * PRIORITY_RANGE));
    out[z] = Math.max(t, out[z + 1]);
  }
  return { thresholds: out, spareFrom, spareSizes: sizes };
}

/**
 * Raises, in place, the thresholds of the zooms where some unit needs more (a tile over the budget: `needs[unit][z]`),
 * and those of every coarser zoom to at least the zoom below, so kept sets stay nested. Returns the zooms raised.
 */
export function raiseThresholds(thresholds: number[][], needs: ReadonlyArray<ReadonlyArray<number | null>>, minZoom: number, maxZoom: number): number[] {
  const raised: number[] = [];
  for (let z = maxZoom - 1; z >= minZoom; z--) {
    let need = 0;
    for (const n of needs) need = Math.max(need, n[z] ?? 0);
    const before = thresholds[z];
    thresholds[z] = before.map((t, l) => Math.max(t, need, thresholds[z + 1]?.[l] ?? 0));
    if (thresholds[z].some((t, l) => t > before[l])) raised.push(z);
  }
  return raised.reverse();
}
