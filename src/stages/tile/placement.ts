// Placement: each feature of a zoom on the zoom's grid (or as its centroid when sub-pixel), in every tile it reaches.
import { BUFFER, EXTENT, tilePad, tileRange } from '../../tiling/space.js';
import { boxInside, type Rect } from '../../tiling/clip.js';
import { pointsReaching, reachOf } from '../../tiling/reach.js';
import { hasExtent, hasMesh, lodOf, tagsOf, type FlatFeature, type TileGeometry } from '../../tiling/flat.js';
import { centroidPoint, type Quantiser } from '../../tiling/quantise.js';
import { pbfAttributes, type PbfAttributes, type PbfDictionary } from '../encode-pbf.js';
import type { TileSpec, ZoomContext } from './spec.js';
import { wideEnough } from '../thinning.js';
import { PolygonBoxes } from './near.js';
import type { FieldFilter } from '../field-filter.js';

/** A feature ready for tiling: flat geometry and what every tile reuses, worked out once per tiling call. */
export interface Prepared {
  tf: FlatFeature;
  flat: TileGeometry;
  /** `[minX, minY, maxX, maxY, cx, cy]` for LOD decisions; computed when first needed. */
  lod: number[] | null | undefined;
  /** A Point that stands for a pointified feature (set by reduceForZoom). */
  reducedToPoint: boolean;
  /** Candidate for pointification: not a plain Point, not holding a mesh. */
  pointable: boolean;
  collapsible: boolean;
  /** The feature's JSON head in the call's head arena: [headStart, headEnd), headEnd 0 until written. */
  headStart: number;
  headEnd: number;
  attrs?: PbfAttributes;
  /** The same with only the `--coarse-fields`, for the zooms that carry only those (TileSpec `fewFields`). */
  fewHeadStart: number;
  fewHeadEnd: number;
  fewAttrs?: PbfAttributes;
  /** Its index among the tiling call's input features. */
  index: number;
  /**
   * Bit z set where the zoom placed it: something was left of it on the zoom's grid (or its centroid stood for it),
   * within the world and its edge tiles' buffer.
   */
  placed: number;
  /** Bit z set where nothing of it was left on the zoom's grid (--lod none), as distinct from lying past the world's edge. */
  collapsed: number;
  /** Its `radius` in pixels (`reachOf`), 0 without: placed as points, it is in every tile that circle reaches. */
  reach: number;
  /** Of a feature of many pieces, its polygons' boxes, for those near the cell (`PolygonBoxes`); made when first needed. */
  polygonBoxes?: PolygonBoxes;
}

/** A feature placed in a tile; `attrs` is the feature's PBF id and tags (shared, empty when PBF is off). */
export interface Entry { p: Prepared; g: TileGeometry; pointified: boolean; attrs: PbfAttributes }

/** A tile's entries, in placement order (layer, then seq). */
export interface Bucket { x: number; y: number; entries: Entry[] }

const NO_ATTRS: PbfAttributes = { id: 0, keys: [], values: [] };

export function prepare(tf: FlatFeature, index: number): Prepared {
  const g = tf.geom;
  const point = g.k === 'points' && g.type === 'Point';
  return {
    tf, flat: g, lod: tf.lod, reducedToPoint: point && tf.lod !== undefined,
    // A feature of many pieces reduced to its centroid stands for polygons, spared as they were (tile/pieces.ts).
    pointable: !(point && tf.lod === undefined) && !hasMesh(g), collapsible: hasExtent(g) || (point && tf.many === true), headStart: 0, headEnd: 0, attrs: undefined,
    fewHeadStart: 0, fewHeadEnd: 0, fewAttrs: undefined, index, placed: 0, collapsed: 0, reach: reachOf(tf),
  };
}

export function lodFor(p: Prepared): number[] | null {
  if (p.lod === undefined) p.lod = lodOf(p.tf.geom);
  return p.lod;
}

/** The feature's PBF id and tags, numbered once per tiling call; with `few`, only the fields it keeps. */
function attrsOf(p: Prepared, dict: PbfDictionary, few: FieldFilter | undefined): PbfAttributes {
  if (few) return (p.fewAttrs ??= pbfAttributes(few.tags(tagsOf(p.tf)), p.tf.seq, dict));
  p.attrs ??= pbfAttributes(tagsOf(p.tf), p.tf.seq, dict);
  return p.attrs;
}

/** Whether the feature is drawn at the zoom whatever its threshold (thinning.ts: `drawn`). */
export function isSpared(p: Prepared, zc: ZoomContext): boolean {
  // `collapsible` is a line or polygon, what may be spared: a point needs no box worked out. A feature of many pieces
  // is spared piece by piece (pieces.ts `drawnMany`): a tile of it over the budget is corrected by `piecesThreshold`.
  return zc.spares && p.collapsible && p.tf.many !== true && wideEnough(lodFor(p), zc.spareWidth);
}

/** The feature's centroid Point at the zoom, `box` set to it; null when it has no position to average. */
function centroidAt(p: Prepared, zc: ZoomContext, box: Float64Array): TileGeometry | null {
  const l = lodFor(p);
  return l === null ? null : centroidPoint(l, zc.scale, box);
}

/** Whether a pointable feature is drawn as its centroid before any quantising: reduced to one, or smaller than a display pixel. */
function subPixel(p: Prepared, zc: ZoomContext): boolean {
  const l = lodFor(p);
  return l !== null && (p.reducedToPoint || (l[2] - l[0] < zc.subPixel && l[3] - l[1] < zc.subPixel));
}

/** What of points drawn as circles of radius `round` (tile units) a tile or world of rectangle `t` holds (`pointsReaching`). */
function reaching(at: TileGeometry, t: Rect, round: number): TileGeometry | null {
  if (at.k !== 'points') return null;
  const xy = pointsReaching(at.xy, t, BUFFER, round);
  return xy.length > 0 ? { k: 'points', type: at.type, xy } : null;
}

/**
 * Places every feature of one zoom into its tiles (inside the cell), clipping only what crosses a buffered edge.
 * Tiles come sorted by x, then y; each holds its entries in the order of `prepared`. `few`: the zoom's features carry
 * only the fields it keeps.
 */
export function placeZoom(prepared: readonly Prepared[], spec: TileSpec, zc: ZoomContext, dict: PbfDictionary, quantiser: Quantiser, few?: FieldFilter): Bucket[] {
  const { z } = zc;
  const n = 2 ** z;
  let cx0 = 0, cy0 = 0, cx1 = n - 1, cy1 = n - 1;
  if (spec.cell) {
    const d = 2 ** (z - spec.cell.z);
    cx0 = spec.cell.x * d; cy0 = spec.cell.y * d; cx1 = cx0 + d - 1; cy1 = cy0 + d - 1;
  }
  const buckets = new Map<number | string, Bucket>();
  const numericKeys = n <= 2 ** 26;
  const lod = spec.lod === 'auto' && zc.coarse;
  const u = zc.unit;
  const r: Rect = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  // The world and the buffer of its edge tiles, in zoom-global tile units: what any tile of the zoom may hold.
  const world: Rect = { minX: -BUFFER, minY: -BUFFER, maxX: n * EXTENT + BUFFER, maxY: n * EXTENT + BUFFER };
  // The world and a tile without their buffer: what a circle's distance is measured to.
  const core: Rect = { minX: 0, minY: 0, maxX: n * EXTENT, maxY: n * EXTENT };
  const t: Rect = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  // Box of the feature at this zoom, in zoom-global tile units.
  const box = new Float64Array(4);
  // The cell and its buffer, one tile unit wider for rounding, in pixels: a feature whose box lies beyond it (one of a
  // neighbour cell, stored here too as it reaches this cell at a coarser zoom's buffer) is not worked out here.
  const ts = u * EXTENT, margin = tilePad(ts);
  quantiser.setBlock(cx0, cy0, cx1, cy1);
  const px0 = cx0 * ts - margin, py0 = cy0 * ts - margin, px1 = (cx1 + 1) * ts + margin, py1 = (cy1 + 1) * ts + margin;
  for (const p of prepared) {
    if (spec.cell) {
      const l = lodFor(p), d = p.reach;
      if (l !== null && (l[2] + d < px0 || l[0] - d > px1 || l[3] + d < py0 || l[1] - d > py1)) continue;
    }
    let at: TileGeometry | null = null;
    let pointified = false;
    // Only some of its polygons, those near the cell: every tile clips them, none takes what it holds whole.
    let cut = false;
    if (lod && p.pointable && subPixel(p, zc)) {
      at = centroidAt(p, zc, box);
      pointified = true;
    } else {
      const near = spec.cell && p.tf.many === true ? (p.polygonBoxes ??= new PolygonBoxes(p.tf.geom)).near(p.flat, px0, py0, px1, py1) : p.flat;
      cut = near !== p.flat;
      at = quantiser.quantise(near, zc.scale, zc.sqTol, box);
      // Nothing of those near left on the grid: whether anything of the whole is decides where its centroid stands.
      if (at === null && cut) {
        cut = false;
        at = quantiser.quantise(p.flat, zc.scale, zc.sqTol, box);
      }
      // Collapsed at this zoom: keep it visible as its centroid rather than let it vanish from the overview.
      // So is a feature of many pieces the zoom draws with none of them (tile/pieces.ts `drawnMany`).
      if (at === null && lod && p.pointable && (p.collapsible || p.tf.many === true)) {
        at = centroidAt(p, zc, box);
        pointified = at !== null;
      }
    }
    if (at === null) {
      p.collapsed |= 1 << z;
      continue;
    }
    const attrs = spec.formats.pbf ? attrsOf(p, dict, few) : NO_ATTRS;
    // Points drawn as their circles (a `radius`) are in every tile the circle reaches into, which the viewer draws it
    // in: only those whose buffer held its centre, it was cut flat along a tile border. `round`: the radius in tile
    // units where it reaches farther than the buffer (none for a circle within it: a nucleus's, at 8 px, is). Its
    // position stays the centre, beyond the tile's buffer by up to the radius.
    const round = at.k === 'points' && p.reach / u > BUFFER ? p.reach / u : 0;
    const range = tileRange(spec.side, z, box[0] * u, box[1] * u, box[2] * u, box[3] * u, Math.max(BUFFER, round) * u);
    if (range === null) continue;
    // Placed where some tile of the zoom holds something of it, whichever unit's: a feature past the world's edge may
    // have a box that reaches a tile and nothing inside it (a circle: whose distance to the world is over its radius).
    if (boxInside(box, world) || (round > 0 ? reaching(at, core, round) : quantiser.clip(at, world, zc.scale)) !== null) p.placed |= 1 << z;
    const x0 = Math.max(range.x0, cx0), x1 = Math.min(range.x1, cx1), y0 = Math.max(range.y0, cy0), y1 = Math.min(range.y1, cy1);
    for (let x = x0; x <= x1; x++) {
      for (let y = y0; y <= y1; y++) {
        r.minX = x * EXTENT - BUFFER; r.minY = y * EXTENT - BUFFER; r.maxX = (x + 1) * EXTENT + BUFFER; r.maxY = (y + 1) * EXTENT + BUFFER;
        // A tile's share of a long MultiPoint (`nearTile`) is of the points in its buffer: a circle's reaches farther.
        let g: TileGeometry | null;
        if (!cut && boxInside(box, r)) g = at;
        else if (round > 0) {
          t.minX = x * EXTENT; t.minY = y * EXTENT; t.maxX = (x + 1) * EXTENT; t.maxY = (y + 1) * EXTENT;
          g = reaching(at, t, round);
        } else g = quantiser.clip(at, r, zc.scale, x, y);
        if (g === null) continue;
        const key = numericKeys ? x * n + y : `${x}/${y}`;
        let b = buckets.get(key);
        if (b === undefined) { b = { x, y, entries: [] }; buckets.set(key, b); }
        b.entries.push({ p, g, pointified, attrs });
      }
    }
  }
  return [...buckets.values()].sort((a, b) => a.x - b.x || a.y - b.y);
}
