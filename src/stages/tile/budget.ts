// Thinning to the tile budget: which features a coarse tile keeps (a stable hash of seq decides), each encoded at most once.
import { EXTENT } from '../../tiling/space.js';
import type { TileGeometry } from '../../tiling/flat.js';
import { TILE_SUFFIX } from '../encode-json.js';
import { estimatePbfFeature, mvtFeatureCount, valueBytes } from '../encode-pbf.js';
import { pbfTile, writeJsonFeature, type EncodeContext } from './encode.js';
import type { Bucket, Entry } from './placement.js';

/**
 * Deterministic thinning priority from the sequence number (murmur3's 32-bit finaliser over both halves):
 * spreads kept features evenly over space and classes, and never depends on input order or timing.
 */
export function thinningPriority(seq: number): number {
  let h = (seq >>> 0) ^ Math.imul(Math.floor(seq / 4294967296) >>> 0, 0x9e3779b1);
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Entry indexes by thinning priority, highest first; equal priorities by seq. */
function byPriority(entries: readonly Entry[]): number[] {
  const n = entries.length;
  const bySeq = (i: number, j: number) => entries[i].p.tf.seq - entries[j].p.tf.seq;
  if (n >= 2 ** 21) {
    const prio = entries.map((e) => thinningPriority(e.p.tf.seq));
    return Array.from({ length: n }, (_, i) => i).sort((i, j) => prio[j] - prio[i] || bySeq(i, j));
  }
  // (2^32 − 1 − priority) · 2^21 + index is exact in a double: a numeric sort of a typed array, no comparator calls.
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = (4294967295 - thinningPriority(entries[i].p.tf.seq)) * 2097152 + i;
  keys.sort();
  const out = new Array<number>(n);
  for (let r = 0; r < n; r++) out[r] = keys[r] % 2097152;
  // Equal priorities (a 32-bit hash of distinct seqs rarely collides) come out by index: put each run in seq order.
  for (let r = 0; r < n;) {
    const p = Math.floor(keys[r] / 2097152);
    let e = r + 1;
    while (e < n && Math.floor(keys[e] / 2097152) === p) e++;
    if (e - r > 1) out.splice(r, e - r, ...out.slice(r, e).sort(bySeq));
    r = e;
  }
  return out;
}

/** JSON bytes a feature is expected to take: its head and about 7 bytes per number. Only picks a strategy. */
function jsonSizeGuess(e: Entry): number {
  const head = e.p.tf.headJson?.length ?? (e.p.headEnd > 0 ? e.p.headEnd - e.p.headStart : 160);
  return head + 40 + 7 * numberCount(e.g);
}

function numberCount(g: TileGeometry): number {
  switch (g.k) {
    case 'points': return g.xy.length;
    case 'lines': { let n = 0; for (const p of g.parts) n += p.length; return n; }
    case 'polygons': { let n = 0; for (const poly of g.polys) for (const r of poly) n += r.length; return n; }
    case 'mesh': return 64;
    case 'collection': { let n = 0; for (const m of g.members) n += numberCount(m); return n; }
  }
}

/**
 * How many entries, taken in `order` (null: entry order), make a JSON tile within `budget`. With `write`, each
 * entry's JSON feature is first written into `ec.json` back to back, at [starts[i], ends[i]), stopping at the first that
 * does not fit; without, the sizes written before are used.
 */
function jsonFeaturesThatFit(entries: readonly Entry[], order: readonly number[] | null, ec: EncodeContext, budget: number, starts: Int32Array, ends: Int32Array, write: boolean): number {
  const jw = ec.json;
  if (write) jw.pos = 0;
  let size = ec.prefix.length + TILE_SUFFIX.length - 1; // one comma fewer than features
  for (let r = 0; r < entries.length; r++) {
    const i = order === null ? r : order[r];
    if (write) {
      starts[i] = jw.pos;
      writeJsonFeature(entries[i], ec);
      ends[i] = jw.pos;
    }
    if (size + ends[i] - starts[i] + 1 > budget) return r;
    size += ends[i] - starts[i] + 1;
  }
  return entries.length;
}

/** Bytes of the JSON tile of the entries marked in `mask` (all when null); 0 when none is. */
function jsonTileSize(n: number, mask: Uint8Array | null, ec: EncodeContext, starts: Int32Array, ends: Int32Array): number {
  let size = ec.prefix.length + TILE_SUFFIX.length - 1, kept = 0;
  for (let i = 0; i < n; i++) if (mask === null || mask[i]) { size += ends[i] - starts[i] + 1; kept++; }
  return kept === 0 ? 0 : size;
}

/** The JSON tile of the entries marked in `mask` (all when null), in entry order, from what jsonFeaturesThatFit wrote. */
function jsonTileFrom(n: number, mask: Uint8Array | null, ec: EncodeContext, starts: Int32Array, ends: Int32Array): Uint8Array | undefined {
  const jw = ec.json;
  const size = jsonTileSize(n, mask, ec, starts, ends);
  if (size === 0) return undefined;
  const out = new Uint8Array(size);
  out.set(ec.prefix, 0);
  let p = ec.prefix.length;
  for (let i = 0; i < n; i++) {
    if (mask !== null && !mask[i]) continue;
    if (p > ec.prefix.length) out[p++] = 44;
    out.set(jw.buf.subarray(starts[i], ends[i]), p);
    p += ends[i] - starts[i];
  }
  out.set(TILE_SUFFIX, p);
  return out;
}

/**
 * Encodes a tile below the finest zoom within the byte budget, keeping the highest-priority features (a stable
 * hash of seq, so the choice never depends on input order). Each feature's JSON is written once, and the tile is
 * put together from those bytes. A tile that looks like it fits is written in entry order; one that looks over
 * budget is written in priority order, stopping at the first feature that does not fit, so what is thinned is
 * never encoded. JSON keeps features in priority order until the next would not fit; PBF by estimates (the
 * command stream plus each new key and value once), then the kept set is encoded and, while still over budget,
 * shrinks geometrically. The guess only picks the order of work: the bytes are the same either way. `mask` marks
 * kept entries (null: all kept).
 */
export function encodeWithinBudget(b: Bucket, ec: EncodeContext): { json: Uint8Array | undefined; pbf: Uint8Array | undefined; mask: Uint8Array | null } {
  const { spec } = ec;
  const entries = b.entries;
  const n = entries.length;
  const budget = spec.tileBudget;
  let order: number[] | undefined;
  const priorityOrder = (): number[] => (order ??= byPriority(entries));

  let k = n;
  const starts = new Int32Array(n), ends = new Int32Array(n);
  if (spec.formats.json) {
    let guess = ec.prefix.length;
    for (let i = 0; i < n && guess <= budget; i++) guess += jsonSizeGuess(entries[i]);
    if (guess > budget) {
      k = jsonFeaturesThatFit(entries, priorityOrder(), ec, budget, starts, ends, true);
    } else {
      jsonFeaturesThatFit(entries, null, ec, Infinity, starts, ends, true);
      // Over budget after all: keep in priority order what fits, by the sizes just written.
      if (jsonTileSize(n, null, ec, starts, ends) > budget) k = jsonFeaturesThatFit(entries, priorityOrder(), ec, budget, starts, ends, false);
    }
  }
  const json = (mask: Uint8Array | null) => (spec.formats.json ? jsonTileFrom(n, mask, ec, starts, ends) : undefined);

  let pbf: Uint8Array | undefined;
  if (k === n) {
    pbf = spec.formats.pbf ? pbfTile(entries, null, ec, b) : undefined;
    if ((pbf?.length ?? 0) <= budget) return { json: json(null), pbf, mask: null };
  }
  if (spec.formats.pbf) {
    const ord = priorityOrder();
    const x0 = b.x * EXTENT, y0 = b.y * EXTENT;
    let size = 0;
    const seen = new Map<number, { keys: Set<number>; values: Set<number> }>();
    for (let r = 0; r < k; r++) {
      const e = entries[ord[r]];
      if (mvtFeatureCount(e.g) === 0) continue;
      const a = e.attrs;
      let est = estimatePbfFeature(e, x0, y0);
      let s = seen.get(e.p.tf.layer);
      if (s === undefined) {
        s = { keys: new Set(), values: new Set() };
        seen.set(e.p.tf.layer, s);
        est += 16 + (spec.layers[e.p.tf.layer]?.id.length ?? 0) * 3;
      }
      for (let t = 0; t < a.keys.length; t++) {
        if (!s.keys.has(a.keys[t])) { est += 3 + ec.dict.keys[a.keys[t]].length * 3; s.keys.add(a.keys[t]); }
        if (!s.values.has(a.values[t])) { est += valueBytes(ec.dict.values[a.values[t]]); s.values.add(a.values[t]); }
      }
      if (size + est > budget) { k = r; break; }
      size += est;
    }
  }

  const ord = priorityOrder();
  const mask = new Uint8Array(n);
  for (;;) {
    mask.fill(0);
    for (let r = 0; r < k; r++) mask[ord[r]] = 1;
    pbf = spec.formats.pbf ? pbfTile(entries, k === n ? null : mask, ec, b) : undefined;
    const size = pbf?.length ?? 0;
    if (size <= budget || k === 0) return { json: json(k === n ? null : mask), pbf, mask };
    k = Math.min(k - 1, Math.floor(k * Math.min(0.95, budget / size)));
  }
}
