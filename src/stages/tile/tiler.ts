// The tiler, pure, run inside workers: features in global pixels → JSON and PBF tile bytes for a zoom range and a cell.
import { flatFeature, meshCount, type FlatFeature, type TileFeature } from '../../tiling/flat.js';
import { Quantiser } from '../../tiling/quantise.js';
import { mvtFeatureCount } from '../encode-pbf.js';
import { encodeWithinBudget } from './budget.js';
import { encodeContext, jsonTileOf, pbfTile, type EncodeContext } from './encode.js';
import { placeZoom, prepare, type Bucket, type Prepared } from './placement.js';
import { zoomContext, type TileResult, type TileSpec, type TileStats, type ZoomContext } from './spec.js';

/** A tile's bytes and stats from its placed entries: thinned to the budget below the finest zoom with lod 'auto'. */
function encodeTile(b: Bucket, zc: ZoomContext, ec: EncodeContext, kept: Set<Prepared>): TileResult {
  const { spec } = ec;
  const nl = spec.layers.length;
  const stats: TileStats = { features: 0, pointified: new Array<number>(nl).fill(0), thinned: new Array<number>(nl).fill(0), meshesJsonOnly: 0, notInPbf: 0 };
  const entries = b.entries;
  const n = entries.length;
  let json: Uint8Array | undefined;
  let pbf: Uint8Array | undefined;
  let mask: Uint8Array | null = null;
  if (zc.coarse && ec.lodAuto) {
    ({ json, pbf, mask } = encodeWithinBudget(b, ec));
  } else {
    if (spec.formats.json) json = jsonTileOf(entries, ec);
    if (spec.formats.pbf) pbf = pbfTile(entries, null, ec, b);
  }
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    if (mask !== null && !mask[i]) { stats.thinned[e.p.tf.layer]++; continue; }
    kept.add(e.p);
    stats.features++;
    if (e.pointified) stats.pointified[e.p.tf.layer]++;
    if (spec.formats.json) stats.meshesJsonOnly += meshCount(e.g);
    if (spec.formats.pbf && mvtFeatureCount(e.g) === 0) stats.notInPbf++;
  }
  const result: TileResult = { z: zc.z, x: b.x, y: b.y, stats };
  if (json !== undefined) result.json = json;
  if (pbf !== undefined) result.pbf = pbf;
  return result;
}

/**
 * All tiles of the zoom range (inside the cell), sorted by z, x, y; tiles without features are omitted.
 * Output bytes depend only on the set of input features: they are ordered by (layer, seq) first.
 * `keptAtTop`, when given, receives the seq of every feature kept (not thinned away) at the coarsest zoom
 * produced: the caller forwards only those to the level above.
 */
export function tileFeatures(features: ReadonlyArray<FlatFeature | TileFeature>, spec: TileSpec, keptAtTop?: Set<number>): TileResult[] {
  const flat: FlatFeature[] = [];
  for (const f of features) { const x = 'feature' in f ? flatFeature(f) : f; if (x !== null) flat.push(x); }
  flat.sort((a, b) => a.layer - b.layer || a.seq - b.seq);
  const prepared = flat.map(prepare);
  const ec = encodeContext(spec, flat.reduce((n, f) => n + (f.headJson ? 0 : 1), 0));
  const quantiser = new Quantiser();
  const results: TileResult[] = [];
  const from = spec.cell ? Math.max(spec.minZoom, spec.cell.z) : spec.minZoom;
  // Finest zoom first: a feature thinned at a zoom is not offered to the coarser ones (their tiles cover its tile,
  // so it would lose there too), which keeps coarse zooms cheap where thinning is heavy. Only features that were
  // placed and thinned everywhere go: one placed nowhere at this zoom (in a cell unit, a neighbour's feature
  // that reaches only the wider buffer of a coarser tile) must still be offered, or cells would differ from
  // the whole world.
  let candidates = prepared;
  for (let z = spec.maxZoom; z >= from; z--) {
    const zc = zoomContext(spec, z);
    ec.json.setUnit(zc.unit);
    const kept = new Set<Prepared>();
    const placed = new Set<Prepared>();
    let thinned = 0;
    for (const b of placeZoom(candidates, spec, zc, ec.dict, quantiser)) {
      const r = encodeTile(b, zc, ec, kept);
      for (const t of r.stats.thinned) thinned += t;
      if (r.stats.features < b.entries.length) for (const e of b.entries) placed.add(e.p);
      results.push(r);
    }
    if (thinned > 0) candidates = candidates.filter((p) => kept.has(p) || !placed.has(p));
    if (z === from && keptAtTop) for (const p of kept) keptAtTop.add(p.tf.seq);
  }
  return results.sort((a, b) => a.z - b.z || a.x - b.x || a.y - b.y);
}
