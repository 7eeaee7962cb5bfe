// Pure tiler run inside workers: features in global pixels → JSON and PBF tile bytes for a zoom range and a cell.
import type { Feature } from '../model/feature.js';
import type { Geometry, Position } from '../model/geometry.js';
import { bbox as geometryBBox } from '../model/measure.js';
import { headOf, headTextOf, tagsOf, type FlatFeature, type TileGeometry } from './record.js';
import { BUFFER, DISPLAY_TILE, EXTENT, tileRange, tileSize } from '../tiling/space.js';
import { boxInside, boxMeets, clipLine, clipPoints, clipRing, type Flat, type Rect, coordsBBox } from '../tiling/clip.js';
import { quantisePoints, reverseRing, ringArea2, ringUsable, simplify, simplifyQuantise } from '../tiling/simplify.js';
import { JsonWriter, TILE_SUFFIX, tilePrefix } from './encode-json.js';
import { ByteArena } from '../bytes.js';
import { encodePbf, estimatePbfFeature, mvtFeatureCount, pbfAttributes, PbfDictionary, valueBytes, type PbfAttributes, type PbfLayerInput } from './encode-pbf.js';

export type { FlatFeature, TileGeometry } from './record.js';

/** A GeoJSON feature to tile (tests and library callers); the pipeline hands the tiler `FlatFeature`s from unit records. */
export interface TileFeature { seq: number; layer: number; feature: Feature }
export interface LayerInfo { id: string }
export interface TileSpec {
  /** World side in pixels (a power of two). */
  side: number;
  /** Zooms this call produces. */
  minZoom: number;
  maxZoom: number;
  /** The build's finest zoom: full detail there (no simplification, no LOD, no thinning). */
  finestZoom: number;
  /** Produce only tiles inside this cell (zooms >= cell.z); absent = the whole world. */
  cell?: { z: number; x: number; y: number };
  layers: LayerInfo[];
  formats: { json: boolean; pbf: boolean };
  lod: 'auto' | 'none';
  /** Bytes; below finestZoom, with lod 'auto', a tile over budget in either format is thinned. */
  tileBudget: number;
  /** Copied into every JSON tile. */
  collection?: { multiscale?: unknown; properties?: unknown };
}
/**
 * One tile. `json` / `pbf` are absent when that format is off or has nothing to hold (a PBF tile of meshes only,
 * a tile thinned to nothing): the tile is then not written, but its stats still count.
 */
export interface TileResult { z: number; x: number; y: number; json?: Uint8Array; pbf?: Uint8Array; stats: TileStats }
export interface TileStats {
  /** Input features in the tile (after thinning). */
  features: number;
  /** Per layer: features in the tile drawn as their centroid Point (sub-pixel, or collapsed at this zoom). */
  pointified: number[];
  /** Per layer: features dropped from the tile to keep it within the byte budget. */
  thinned: number[];
  /** Mesh features (or mesh members of collections) kept whole in the JSON tile. */
  meshesJsonOnly: number;
  /** Features in the tile that yield no PBF feature (meshes): only counted when PBF is produced. */
  notInPbf: number;
}

// ───────────────────────────── input preparation ─────────────────────────────

function flatPositions(ps: readonly Position[]): Flat {
  const out = new Array<number>(ps.length * 2);
  for (let i = 0; i < ps.length; i++) { out[i * 2] = ps[i][0]; out[i * 2 + 1] = ps[i][1]; }
  return out;
}

/** Flat pixel geometry; null for a mesh without inline coordinates (held by `tiles`). */
export function flatten(g: Geometry): TileGeometry | null {
  switch (g.type) {
    case 'Point': return { k: 'points', type: 'Point', xy: [g.coordinates[0], g.coordinates[1]] };
    case 'MultiPoint': return { k: 'points', type: 'MultiPoint', xy: flatPositions(g.coordinates) };
    case 'LineString': return { k: 'lines', type: 'LineString', parts: g.coordinates.length > 0 ? [flatPositions(g.coordinates)] : [] };
    case 'MultiLineString': return { k: 'lines', type: 'MultiLineString', parts: g.coordinates.map(flatPositions) };
    case 'Polygon': return { k: 'polygons', type: 'Polygon', polys: g.coordinates.length > 0 ? [g.coordinates.map(flatPositions)] : [] };
    case 'MultiPolygon': return { k: 'polygons', type: 'MultiPolygon', polys: g.coordinates.filter((p) => p.length > 0).map((p) => p.map(flatPositions)) };
    case 'PolyhedralSurface': case 'TIN': {
      const b = geometryBBox(g);
      return b === null ? null : { k: 'mesh', geometry: g, box: [b[0], b[1], b[3], b[4]] };
    }
    case 'GeometryCollection': {
      const members: TileGeometry[] = [];
      for (const m of g.geometries) { const f = flatten(m); if (f !== null) members.push(f); }
      return { k: 'collection', members };
    }
  }
}

function hasMesh(g: TileGeometry): boolean {
  return g.k === 'mesh' || (g.k === 'collection' && g.members.some(hasMesh));
}

/** Whether the geometry has anything that can collapse (a line or a polygon). */
function hasExtent(g: TileGeometry): boolean {
  return g.k === 'lines' || g.k === 'polygons' || (g.k === 'collection' && g.members.some(hasExtent));
}

/** `[minX, minY, maxX, maxY]` of flat geometry (a mesh by its box), or null when it has no position. */
function flatBBox(g: TileGeometry): number[] | null {
  const b = [Infinity, Infinity, -Infinity, -Infinity];
  const grow = (c: ArrayLike<number>) => {
    for (let i = 0; i + 1 < c.length; i += 2) {
      const x = c[i], y = c[i + 1];
      if (x < b[0]) b[0] = x;
      if (y < b[1]) b[1] = y;
      if (x > b[2]) b[2] = x;
      if (y > b[3]) b[3] = y;
    }
  };
  const visit = (m: TileGeometry): void => {
    switch (m.k) {
      case 'points': grow(m.xy); return;
      case 'lines': for (const p of m.parts) grow(p); return;
      case 'polygons': for (const poly of m.polys) for (const r of poly) grow(r); return;
      case 'mesh': grow(m.box); return;
      case 'collection': for (const x of m.members) visit(x); return;
    }
  };
  visit(g);
  return b[0] <= b[2] ? b : null;
}

/**
 * Bounding box and centroid as `[minX, minY, maxX, maxY, cx, cy]`; the centroid is the mean of the distinct
 * vertices (closing positions of rings counted once). Meshes are left out: a feature holding one is never pointified.
 */
function lodOf(g: TileGeometry): number[] | null {
  const b = flatBBox(g);
  if (b === null) return null;
  let n = 0, sx = 0, sy = 0;
  const add = (c: ArrayLike<number>, ring: boolean) => {
    const closed = ring && c.length > 2 && c[0] === c[c.length - 2] && c[1] === c[c.length - 1];
    const end = c.length - (closed ? 2 : 0);
    for (let i = 0; i + 1 < end; i += 2) { n++; sx += c[i]; sy += c[i + 1]; }
  };
  const visit = (m: TileGeometry): void => {
    switch (m.k) {
      case 'points': add(m.xy, false); return;
      case 'lines': for (const p of m.parts) add(p, false); return;
      case 'polygons': for (const poly of m.polys) for (const r of poly) add(r, true); return;
      case 'mesh': return;
      case 'collection': for (const x of m.members) visit(x); return;
    }
  };
  visit(g);
  return n === 0 ? null : [b[0], b[1], b[2], b[3], sx / n, sy / n];
}

/** The tiler's form of a GeoJSON feature; null when it has nothing to place. */
export function flatFeature(tf: TileFeature): FlatFeature | null {
  const geom = tf.feature.geometry === null ? null : flatten(tf.feature.geometry);
  return geom === null ? null : { seq: tf.seq, layer: tf.layer, head: headOf(tf.feature), geom };
}

/** A feature ready for tiling: flat geometry and the strings and tags every tile reuses. */
interface Prepared {
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
}

function prepare(tf: FlatFeature): Prepared {
  const g = tf.geom;
  const point = g.k === 'points' && g.type === 'Point';
  return {
    tf, flat: g, lod: tf.lod, reducedToPoint: point && tf.lod !== undefined,
    pointable: !(point && tf.lod === undefined) && !hasMesh(g), collapsible: hasExtent(g), headStart: 0, headEnd: 0, attrs: undefined,
  };
}

/** Features with a geometry the tiler cannot place: the caller counts them (the tiler skips them silently). */
export function untileable(f: Feature): 'null-geometry' | 'mesh-without-coordinates' | 'no-positions' | undefined {
  if (f.geometry === null) return 'null-geometry';
  if ((f.geometry.type === 'PolyhedralSurface' || f.geometry.type === 'TIN') && geometryBBox(f.geometry) === null) return 'mesh-without-coordinates';
  return geometryBBox(f.geometry) === null ? 'no-positions' : undefined;
}

// ───────────────────────────── per zoom geometry ─────────────────────────────

// Box of the geometry being quantised, in zoom-global tile units.
const qbox = new Float64Array(4);

function growBox(c: ArrayLike<number>): void {
  for (let i = 0; i + 1 < c.length; i += 2) {
    const x = c[i], y = c[i + 1];
    if (x < qbox[0]) qbox[0] = x;
    if (x > qbox[2]) qbox[2] = x;
    if (y < qbox[1]) qbox[1] = y;
    if (y > qbox[3]) qbox[3] = y;
  }
}

/**
 * Orientation shared by JSON and PBF: exterior rings have positive signed area on the raw numbers
 * (Σ x_i·y_{i+1} − x_{i+1}·y_i > 0), holes negative. Read in y-up axes that is RFC 7946's counter-clockwise
 * exterior; drawn on the y-down image it is clockwise, which is exactly MVT's rule for tile coordinates.
 * Returns false for a ring with zero area (dropped).
 */
function orient(r: Flat, exterior: boolean): boolean {
  const a = ringArea2(r);
  if (a === 0) return false;
  if ((a > 0) !== exterior) reverseRing(r);
  return true;
}

/**
 * Simplifies (when sqTol >= 0) in pixels, quantises to zoom-global tile units with `scale`, drops what
 * degenerates, orients rings and grows `qbox`. Null when nothing is left.
 */
function quantiseGeometry(g: TileGeometry, scale: number, sqTol: number): TileGeometry | null {
  switch (g.k) {
    case 'points': {
      if (g.xy.length === 0) return null;
      const xy = quantisePoints(g.xy, scale);
      growBox(xy);
      return { k: 'points', type: g.type, xy };
    }
    // Arrays are sized up front and trimmed: an empty literal grown by push reserves 17 slots, and these are
    // made for every feature at every zoom.
    case 'lines': {
      const parts = new Array<Flat>(g.parts.length);
      let n = 0;
      for (const p of g.parts) {
        const q = simplifyQuantise(p, sqTol, false, scale);
        if (q !== null && q.length >= 4) { parts[n++] = q; growBox(q); }
      }
      parts.length = n;
      return n > 0 ? { k: 'lines', type: g.type, parts } : null;
    }
    case 'polygons': {
      const polys = new Array<Flat[]>(g.polys.length);
      let np = 0;
      for (const poly of g.polys) {
        const rings = new Array<Flat>(poly.length);
        let nr = 0;
        for (let i = 0; i < poly.length; i++) {
          const q = simplifyQuantise(poly[i], sqTol, true, scale);
          if (q === null || !ringUsable(q) || !orient(q, i === 0)) {
            if (i === 0) break; // no exterior, no polygon: its holes go with it
            continue;
          }
          rings[nr++] = q;
        }
        rings.length = nr;
        if (nr > 0) { polys[np++] = rings; growBox(rings[0]); }
      }
      polys.length = np;
      return np > 0 ? { k: 'polygons', type: g.type, polys } : null;
    }
    case 'mesh':
      growBox([g.box[0] * scale, g.box[1] * scale, g.box[2] * scale, g.box[3] * scale]);
      return g;
    case 'collection': {
      const members: TileGeometry[] = [];
      for (const m of g.members) { const q = quantiseGeometry(m, scale, sqTol); if (q !== null) members.push(q); }
      return members.length > 0 ? { k: 'collection', members } : null;
    }
  }
}

const rbox = new Float64Array(4);
const ringBox = (c: Flat): Float64Array => coordsBBox(c, rbox);

/** Clips quantised geometry to a buffered tile rectangle (zoom-global units); null when nothing is inside. */
function clipGeometry(g: TileGeometry, r: Rect, scale: number): TileGeometry | null {
  switch (g.k) {
    case 'points': {
      const xy = clipPoints(g.xy, r);
      return xy.length > 0 ? { k: 'points', type: g.type, xy } : null;
    }
    case 'lines': {
      const parts: Flat[] = [];
      for (const p of g.parts) {
        if (boxInside(ringBox(p), r)) parts.push(p);
        else if (boxMeets(rbox, r)) for (const c of clipLine(p, r, true)) parts.push(c);
      }
      return parts.length > 0 ? { k: 'lines', type: g.type, parts } : null;
    }
    case 'polygons': {
      const polys: Flat[][] = [];
      for (const poly of g.polys) {
        const rings: Flat[] = [];
        for (let i = 0; i < poly.length; i++) {
          const ring = poly[i];
          let c: Flat | null;
          if (boxInside(ringBox(ring), r)) c = ring;
          else if (!boxMeets(rbox, r)) c = null;
          else {
            c = clipRing(ring, r, true);
            // Clipping keeps orientation, but rounding can flip or flatten a sliver: check again.
            if (!ringUsable(c) || !orient(c, i === 0)) c = null;
          }
          if (c === null) { if (i === 0) break; continue; }
          rings.push(c);
        }
        if (rings.length > 0) polys.push(rings);
      }
      return polys.length > 0 ? { k: 'polygons', type: g.type, polys } : null;
    }
    case 'mesh':
      return boxMeets([g.box[0] * scale, g.box[1] * scale, g.box[2] * scale, g.box[3] * scale], r) ? g : null;
    case 'collection': {
      const members: TileGeometry[] = [];
      for (const m of g.members) { const c = clipGeometry(m, r, scale); if (c !== null) members.push(c); }
      return members.length > 0 ? { k: 'collection', members } : null;
    }
  }
}

function meshCount(g: TileGeometry): number {
  if (g.k === 'mesh') return 1;
  if (g.k === 'collection') { let n = 0; for (const m of g.members) n += meshCount(m); return n; }
  return 0;
}

// ───────────────────────────── tiles ─────────────────────────────

/** A feature placed in a tile; `attrs` is the feature's PBF id and tags (shared, empty when PBF is off). */
interface Entry { p: Prepared; g: TileGeometry; pointified: boolean; attrs: PbfAttributes }

const NO_ATTRS: PbfAttributes = { id: 0, keys: [], values: [] };
interface Bucket { x: number; y: number; entries: Entry[] }

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

/** Everything a zoom's tiles need that does not change from tile to tile. */
interface ZoomContext {
  z: number;
  scale: number; // zoom-global tile units per pixel
  unit: number; // pixels per tile unit
  coarse: boolean; // below the finest zoom: simplification, LOD, thinning
  sqTol: number; // squared simplification tolerance in pixels, -1 at the finest zoom
  subPixel: number; // a display pixel, in pixels
}

function zoomContext(spec: Pick<TileSpec, 'side' | 'finestZoom'>, z: number): ZoomContext {
  const ts = tileSize(spec.side, z);
  const coarse = z < spec.finestZoom;
  const tol = (3 * ts) / EXTENT;
  return { z, scale: EXTENT / ts, unit: ts / EXTENT, coarse, sqTol: coarse ? tol * tol : -1, subPixel: ts / DISPLAY_TILE };
}

function lodFor(p: Prepared): number[] | null {
  if (p.lod === undefined) p.lod = lodOf(p.tf.geom);
  return p.lod;
}

/** The feature's geometry at a zoom in zoom-global tile units, or null; `pointified` tells a centroid stand-in. */
// Set by featureAtZoom: whether the geometry it returned stands for the feature as its centroid.
let atPointified = false;

function featureAtZoom(p: Prepared, zc: ZoomContext, lodAuto: boolean): TileGeometry | null {
  atPointified = false;
  const lod = lodAuto && zc.coarse;
  if (lod && p.pointable) {
    const l = lodFor(p);
    if (l !== null && (p.reducedToPoint || (l[2] - l[0] < zc.subPixel && l[3] - l[1] < zc.subPixel))) return centroidPoint(l, zc.scale);
  }
  qbox[0] = Infinity; qbox[1] = Infinity; qbox[2] = -Infinity; qbox[3] = -Infinity;
  const g = quantiseGeometry(p.flat, zc.scale, zc.sqTol);
  if (g !== null) return g;
  // Collapsed at this zoom: keep it visible as its centroid rather than let it vanish from the overview.
  if (lod && p.pointable && p.collapsible) {
    const l = lodFor(p);
    if (l !== null) return centroidPoint(l, zc.scale);
  }
  return null;
}

function centroidPoint(l: number[], scale: number): TileGeometry {
  const xy = [Math.round(l[4] * scale), Math.round(l[5] * scale)];
  qbox[0] = xy[0]; qbox[1] = xy[1]; qbox[2] = xy[0]; qbox[3] = xy[1];
  atPointified = true;
  return { k: 'points', type: 'Point', xy };
}

/** Places every feature of one zoom into its tiles (inside the cell), clipping only what crosses a buffered edge. */
function placeZoom(prepared: readonly Prepared[], spec: TileSpec, zc: ZoomContext, dict: PbfDictionary): Bucket[] {
  const { z } = zc;
  const n = 2 ** z;
  let cx0 = 0, cy0 = 0, cx1 = n - 1, cy1 = n - 1;
  if (spec.cell) {
    const d = 2 ** (z - spec.cell.z);
    cx0 = spec.cell.x * d; cy0 = spec.cell.y * d; cx1 = cx0 + d - 1; cy1 = cy0 + d - 1;
  }
  const buckets = new Map<number | string, Bucket>();
  const numericKeys = n <= 2 ** 26;
  const lodAuto = spec.lod === 'auto';
  const u = zc.unit;
  const r: Rect = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  for (const p of prepared) {
    const at = featureAtZoom(p, zc, lodAuto);
    if (at === null) continue;
    const pointified = atPointified;
    const attrs = spec.formats.pbf ? attrsOf(p, dict) : NO_ATTRS;
    const range = tileRange(spec.side, z, qbox[0] * u, qbox[1] * u, qbox[2] * u, qbox[3] * u, BUFFER * u);
    if (range === null) continue;
    const x0 = Math.max(range.x0, cx0), x1 = Math.min(range.x1, cx1), y0 = Math.max(range.y0, cy0), y1 = Math.min(range.y1, cy1);
    for (let x = x0; x <= x1; x++) {
      for (let y = y0; y <= y1; y++) {
        r.minX = x * EXTENT - BUFFER; r.minY = y * EXTENT - BUFFER; r.maxX = (x + 1) * EXTENT + BUFFER; r.maxY = (y + 1) * EXTENT + BUFFER;
        const g = boxInside(qbox, r) ? at : clipGeometry(at, r, zc.scale);
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

/** Per-build constants of encoding. */
interface EncodeContext { spec: TileSpec; prefix: Uint8Array; lodAuto: boolean; heads: ByteArena; dict: PbfDictionary }

/** Writes a feature's JSON (head as the record stored it, or from the arena, built on first use) into the tile buffer. */
function writeJsonFeature(e: Entry, ec: EncodeContext): void {
  const p = e.p;
  const own = p.tf.headJson;
  if (own !== undefined) { jw.featureFrom(own, 0, own.length, e.g); return; }
  if (p.headEnd === 0) {
    p.headStart = ec.heads.add(headTextOf(p.tf, ec.spec.layers[p.tf.layer]?.id ?? String(p.tf.layer)));
    p.headEnd = ec.heads.pos;
  }
  jw.featureFrom(ec.heads.buf, p.headStart, p.headEnd, e.g);
}

function attrsOf(p: Prepared, dict: PbfDictionary): PbfAttributes {
  p.attrs ??= pbfAttributes(tagsOf(p.tf), p.tf.seq, dict);
  return p.attrs;
}

/** Entries grouped into PBF layers (entries are in layer order already); entries without MVT features skipped. */
function pbfLayers(entries: readonly Entry[], mask: Uint8Array | null, spec: TileSpec): PbfLayerInput[] {
  const layers: PbfLayerInput[] = [];
  let current: { name: string; features: Entry[] } | null = null;
  let currentLayer = -1;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if ((mask !== null && mask[i] === 0) || mvtFeatureCount(e.g) === 0) continue;
    if (e.p.tf.layer !== currentLayer || current === null) {
      currentLayer = e.p.tf.layer;
      current = { name: spec.layers[currentLayer]?.id ?? String(currentLayer), features: [] };
      layers.push(current);
    }
    current.features.push(e);
  }
  return layers;
}

function pbfTile(entries: readonly Entry[], mask: Uint8Array | null, ec: EncodeContext, b: Bucket): Uint8Array | undefined {
  const layers = pbfLayers(entries, mask, ec.spec);
  return layers.length > 0 ? encodePbf(layers, b.x * EXTENT, b.y * EXTENT, ec.dict) : undefined;
}

// JSON tiles are written into this reused buffer and copied out once.
const jw = new JsonWriter();

/** The JSON tile of all the entries, in entry order. */
function jsonTileOf(entries: readonly Entry[], ec: EncodeContext): Uint8Array | undefined {
  if (entries.length === 0) return undefined;
  jw.pos = 0;
  jw.bytes(ec.prefix);
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) jw.byte(44);
    writeJsonFeature(entries[i], ec);
  }
  jw.bytes(TILE_SUFFIX);
  return jw.buf.slice(0, jw.pos);
}

function encodeTile(b: Bucket, zc: ZoomContext, ec: EncodeContext, kept?: Set<Prepared>): TileResult {
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
    kept?.add(e.p);
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
 * entry's JSON feature is first written into `jw` back to back, at [starts[i], ends[i]), stopping at the first that
 * does not fit; without, the sizes written before are used.
 */
function jsonFeaturesThatFit(entries: readonly Entry[], order: readonly number[] | null, ec: EncodeContext, budget: number, starts: Int32Array, ends: Int32Array, write: boolean): number {
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
function encodeWithinBudget(b: Bucket, ec: EncodeContext): { json: Uint8Array | undefined; pbf: Uint8Array | undefined; mask: Uint8Array | null } {
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
  const ec: EncodeContext = { spec, prefix: tilePrefix(spec.collection), lodAuto: spec.lod === 'auto', heads: new ByteArena((1 << 12) + 160 * flat.reduce((n, f) => n + (f.headJson ? 0 : 1), 0)), dict: new PbfDictionary() };
  jw.pos = 0;
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
    jw.setUnit(zc.unit);
    const kept = new Set<Prepared>();
    const placed = new Set<Prepared>();
    let thinned = 0;
    for (const b of placeZoom(candidates, spec, zc, ec.dict)) {
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

// ───────────────────────────── reduction for coarse zooms ─────────────────────────────

/**
 * The geometry simplified in pixels with `sqTol`, parts that collapse dropped; the same object when nothing
 * changes (so an unchanged feature is passed on as it is), null when everything collapses.
 */
function reduceGeometry(g: TileGeometry, sqTol: number): TileGeometry | null {
  switch (g.k) {
    case 'points': case 'mesh': return g;
    case 'lines': {
      // A line never collapses in simplification: its end points stay.
      const parts = g.parts.map((p) => simplify(p, sqTol, false) as Flat);
      return parts.every((p, i) => p === g.parts[i]) ? g : { k: 'lines', type: g.type, parts };
    }
    case 'polygons': {
      const polys: Flat[][] = [];
      let changed = false;
      for (const poly of g.polys) {
        const rings: Flat[] = [];
        for (let i = 0; i < poly.length; i++) {
          const s = simplify(poly[i], sqTol, true) as Flat | null;
          if (s !== poly[i]) changed = true;
          if (s === null) { if (i === 0) break; continue; }
          rings.push(s);
        }
        if (rings.length > 0) polys.push(rings);
      }
      if (polys.length === 0) return null;
      return changed ? { k: 'polygons', type: g.type, polys } : g;
    }
    case 'collection': {
      const members: TileGeometry[] = [];
      for (const m of g.members) { const r = reduceGeometry(m, sqTol); if (r !== null) members.push(r); }
      if (members.length === 0) return null;
      return members.length === g.members.length && members.every((m, i) => m === g.members[i]) ? g : { k: 'collection', members };
    }
  }
}

/**
 * The feature for zooms <= `zoom` (all below the finest zoom): geometry simplified with that zoom's tolerance,
 * or its centroid Point when sub-pixel there (lod 'auto'); null when nothing is left. Tiling the result at any
 * zoom <= `zoom` gives the same tiles as tiling the original: simplification nests (see `simplify`), and the
 * original bbox and centroid ride along in `lod` for the sub-pixel test and the centroid.
 */
export function reduceForZoom(f: FlatFeature, spec: Pick<TileSpec, 'side' | 'lod'>, zoom: number): FlatFeature | null {
  const g = f.geom;
  if (hasMesh(g) || (g.k === 'points' && g.type === 'Point')) return f;
  const lod = f.lod ?? lodOf(g);
  if (lod === null) return f;
  const zc = zoomContext({ side: spec.side, finestZoom: Infinity }, zoom);
  // The reduced feature keeps everything but its geometry (members, or their record bytes) and notes the original.
  const point = (): FlatFeature => ({ ...f, geom: { k: 'points', type: 'Point', xy: [lod[4], lod[5]] }, lod });
  if (spec.lod === 'auto' && lod[2] - lod[0] < zc.subPixel && lod[3] - lod[1] < zc.subPixel) return point();
  const reduced = reduceGeometry(g, zc.sqTol);
  if (reduced === null) return spec.lod === 'auto' && hasExtent(g) ? point() : null;
  return reduced === g ? f : { ...f, geom: reduced, lod };
}
