// The tiler, pure, run inside workers: features in global pixels → JSON and PBF tile bytes for a zoom range and a cell.
import { flatFeature, meshCount, type FlatFeature, type TileFeature } from '../../tiling/flat.js';
import { Quantiser } from '../../tiling/quantise.js';
import { mvtFeatureCount } from '../encode-pbf.js';
import { drawn, PRIORITY_RANGE } from '../thinning.js';
import { budgetedBytes, piecesThreshold, thresholdToFit } from './budget.js';
import { drawnMany, PieceKeys } from './pieces.js';
import { encodeContext, EncodeScratch, jsonTileOf, pbfTile, type EncodeContext } from './encode.js';
import { isSpared, lodFor, placeZoom, prepare, type Bucket, type Prepared } from './placement.js';
import { thins, zoomContext, type TileResult, type TileSpec, type TileStats, type ZoomContext } from './spec.js';

/** A tile's bytes and stats from its placed entries; below the finest zoom, a tile over the budget says what it needs. */
function encodeTile(b: Bucket, zc: ZoomContext, ec: EncodeContext): TileResult {
  const { spec } = ec;
  const nl = spec.layers.length;
  const stats: TileStats = { features: 0, pointified: new Array<number>(nl).fill(0), meshesJsonOnly: 0, notInPbf: 0 };
  const entries = b.entries;
  const result: TileResult = { z: zc.z, x: b.x, y: b.y, stats };
  const json = spec.formats.json ? jsonTileOf(entries, ec) : undefined;
  const pbf = spec.formats.pbf ? pbfTile(entries, null, ec, b) : undefined;
  if (json !== undefined) result.json = json;
  if (pbf !== undefined) result.pbf = pbf;
  for (const e of entries) {
    stats.features++;
    if (e.pointified) stats.pointified[e.p.tf.layer]++;
    if (spec.formats.json) stats.meshesJsonOnly += meshCount(e.g);
    if (spec.formats.pbf && mvtFeatureCount(e.g) === 0) stats.notInPbf++;
  }
  const bytes = zc.coarse && ec.lodAuto ? budgetedBytes(result, ec) : 0;
  if (bytes > spec.tileBudget) {
    const fit = thresholdToFit(b, ec, (p) => isSpared(p, zc));
    if (fit !== undefined) result.need = fit.need;
    if (fit?.unspare) result.unspare = true;
    // The highest threshold a feature of many pieces here has (a loop: a spread of a crowded tile's would overflow).
    let current = -1;
    for (const e of entries) if (e.p.tf.many) current = Math.max(current, spec.thresholds?.[zc.z]?.[e.p.tf.layer] ?? 0);
    if (current >= 0) result.need = Math.max(result.need ?? 0, piecesThreshold(current, bytes, spec.tileBudget));
    // Its pieces are spared by size (pieces.ts `drawnMany`), which no threshold thins: past the budget with all the
    // others thinned, they alone are too many, and the zoom must stop sparing.
    if (zc.spares && current >= PRIORITY_RANGE) result.unspare = true;
  }
  return result;
}

/** What a thread's tiling calls reuse from one call to the next: the encoders' buffers and the quantiser's scratch. */
export class TilerScratch {
  readonly encode = new EncodeScratch();
  readonly pieces = new PieceKeys();
  constructor(readonly quantiser = new Quantiser()) {}
}

/**
 * All tiles of the zoom range (inside the cell), sorted by z, x, y; tiles without features are omitted.
 * Output bytes depend only on the set of input features: they are ordered by (layer, seq) first. Below the finest
 * zoom (lod auto) a zoom draws only the features its threshold keeps (`spec.thresholds`), the same rule in every
 * tile, so a feature's fate at a zoom never depends on the tile or the cell. `placed`, when given, receives per input
 * feature the zooms (bit z) where some tile holds something of it (`Prepared.placed`; a feature beyond the unit's
 * cell and buffer is not looked at), and `collapsed` those where nothing of it was left on the zoom's grid.
 */
export function tileFeatures(
  features: ReadonlyArray<FlatFeature | TileFeature>, spec: TileSpec, scratch = new TilerScratch(), placed?: Uint32Array, collapsed?: Uint32Array,
): TileResult[] {
  let candidates: Prepared[] = [];
  features.forEach((f, i) => {
    const x = 'feature' in f ? flatFeature(f) : f;
    if (x !== null) candidates.push(prepare(x, i));
  });
  const all = candidates;
  candidates.sort((a, b) => a.tf.layer - b.tf.layer || a.tf.seq - b.tf.seq);
  const ec = encodeContext(spec, scratch.encode);
  const quantiser = scratch.quantiser;
  quantiser.begin();
  const results: TileResult[] = [];
  const from = spec.cell ? Math.max(spec.minZoom, spec.cell.z) : spec.minZoom;
  // Finest zoom first: thresholds only rise towards coarser zooms, so each zoom's candidates are the finer one's kept.
  for (let z = spec.maxZoom; z >= from; z--) {
    const zc = zoomContext(spec, z);
    const thresholds = spec.thresholds?.[z];
    if (zc.coarse && ec.lodAuto && thins(thresholds)) {
      candidates = candidates.filter((p) => {
        const t = thresholds[p.tf.layer] ?? 0;
        if (!p.tf.many) return drawn(t, p.tf.seq, zc.spares, p.flat, () => lodFor(p), zc.spareWidth);
        // Piece by piece; what this zoom keeps is all a coarser one may keep, as thresholds only rise.
        const g = drawnMany(t, p.tf.seq, zc.spares, p.flat, () => lodFor(p), zc.subPixel, zc.spareWidth, zc.sqTol, scratch.pieces);
        if (g !== null) p.flat = g;
        return g !== null;
      });
    }
    ec.json.setUnit(zc.unit);
    ec.few = zc.few;
    for (const b of placeZoom(candidates, spec, zc, ec.dict, quantiser, zc.few ? ec.fields : undefined)) results.push(encodeTile(b, zc, ec));
  }
  if (placed) for (const p of all) placed[p.index] = p.placed;
  if (collapsed) for (const p of all) collapsed[p.index] = p.collapsed;
  return results.sort((a, b) => a.z - b.z || a.x - b.x || a.y - b.y);
}
