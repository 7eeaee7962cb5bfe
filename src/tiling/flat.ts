// The tiler's form of a feature: geometry on flat x, y arrays, the members tiles carry, its PBF tags; one flattener, one box.
import type { Feature } from '../model/feature.js';
import type { Geometry, Mesh, Position } from '../model/geometry.js';
import { forEachField } from '../model/fields.js';
import { bbox as geometryBBox } from '../model/measure.js';

/** Flat `x0, y0, x1, y1, …` coordinates, read-only: a number[] or a typed array. */
export type Coords = ArrayLike<number>;

/**
 * Flat coordinates as the tiling functions return them: a plain number[] (V8 keeps it as unboxed doubles or small
 * integers on the heap). Small standalone Float64Arrays are avoided: each gets its own off-heap backing store that
 * the garbage collector tracks one by one, and with one array per ring per zoom that cost more than the clipping.
 * (Views into a shared arena were tried too: no faster, as each view is a heap object of its own.) Typed arrays
 * stay for scratch space.
 */
export type Flat = number[];

/** The first `n` numbers of a scratch buffer as a new array. */
export function take(buf: Float64Array, n: number): Flat {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = buf[i];
  return out;
}

/** The members of a feature that tiles carry besides geometry. */
export type FeatureHead = Pick<Feature, 'id' | 'featureClass' | 'parentId' | 'ref' | 'properties' | 'vocabularies'>;

/**
 * Geometry on flat arrays of x, y pairs, 2D. The tiler holds input geometry in global pixels this way, and
 * tiled geometry in zoom-global tile units: integers, where tile-local = value − tile index × EXTENT. Rings are
 * closed; tiled polygon rings are oriented exterior positive, holes negative. A mesh stays whole, placed by its box.
 */
export type TileGeometry =
  | { k: 'points'; type: 'Point' | 'MultiPoint'; xy: Flat }
  | { k: 'lines'; type: 'LineString' | 'MultiLineString'; parts: Flat[] }
  | { k: 'polygons'; type: 'Polygon' | 'MultiPolygon'; polys: Flat[][] }
  | { k: 'mesh'; geometry: Mesh; box: number[]; json?: Uint8Array }
  | { k: 'collection'; members: TileGeometry[] };

/**
 * A feature as the tiler takes it. `lod`, when set, is `[minX, minY, maxX, maxY, cx, cy]` of the feature as
 * input, before a reduction for coarser zooms simplified it or replaced it by its centroid.
 */
export interface FlatFeature {
  seq: number;
  layer: number;
  geom: TileGeometry;
  lod?: number[];
  /** The members tiles carry, for a feature made from GeoJSON; one read from a unit record has the three below instead. */
  head?: FeatureHead;
  /** The feature's JSON tile head (`featureHeadText` with its layer), as UTF-8. */
  headJson?: Uint8Array;
  /** Its PBF id and tags, and the record bytes they were read from (which carry the layer id too). */
  tags?: FeatureTags;
  tagsBytes?: Uint8Array;
  /**
   * A multi-geometry of many pieces as read (record.ts: NEAR_PIECES or more in the input), which zooms that thin
   * draw piece by piece (tile/pieces.ts); kept through reduction, which may drop collapsed polygons.
   */
  many?: boolean;
  /**
   * Of such a feature reduced for coarser zooms, its pieces as read (`pieceCount` of the original): reduction may drop
   * polygons or make it its centroid, and the share a zoom draws is counted in the pieces as read (tile/pieces.ts).
   */
  pieces?: number;
}

/** What a feature's tags and JSON head are made from. */
export type FeatureMembers = Pick<FlatFeature, 'seq' | 'head' | 'tags'>;

/** A GeoJSON feature to tile (tests and library callers); the pipeline hands the tiler `FlatFeature`s from unit records. */
export interface TileFeature { seq: number; layer: number; feature: Feature }

// ───────────────────────────── flattening ─────────────────────────────

function flatPositions(ps: readonly Position[]): Flat {
  const out = new Array<number>(ps.length * 2);
  for (let i = 0; i < ps.length; i++) { out[i * 2] = ps[i][0]; out[i * 2 + 1] = ps[i][1]; }
  return out;
}

/**
 * The one walk from GeoJSON to flat geometry (the tiler's input and the unit records both start here): 2D, empty
 * parts dropped, a mesh kept whole with its box. Null for a mesh without inline coordinates (held by `tiles`),
 * which a collection leaves out.
 */
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

/**
 * Whether `flat`, made by `flatten(g)`, is polygons only none of whose outer rings encloses any area (collinear or
 * repeated positions): such a feature draws nothing at any zoom. `g` tells what flattening left out, an empty polygon
 * of a MultiPolygon or a collection member without inline positions, which is not a polygon without area. (On the
 * flat arrays rather than on `g`'s position arrays: a quarter of the time, on every polygon read.)
 */
export function enclosesNoArea(flat: TileGeometry, g: Geometry): boolean {
  switch (flat.k) {
    case 'polygons': {
      // Runs on every polygon read: a loop, not a closure per feature.
      const { polys } = flat;
      if (polys.length === 0 || polys.length !== (g.type === 'MultiPolygon' ? g.coordinates.length : 1)) return false;
      for (const p of polys) if (ringHasArea(p[0])) return false;
      return true;
    }
    case 'collection':
      return g.type === 'GeometryCollection' && flat.members.length > 0 && flat.members.length === g.geometries.length
        && flat.members.every((m, i) => enclosesNoArea(m, g.geometries[i]));
    default: return false;
  }
}

/** Twice the signed area of a ring (shoelace) against a tolerance for the rounding of collinear points. */
function ringHasArea(c: Flat): boolean {
  let a = 0, minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (let i = 0; i + 3 < c.length; i += 2) {
    const px = c[i], py = c[i + 1];
    a += px * c[i + 3] - c[i + 2] * py;
    if (px < minX) minX = px;
    if (px > maxX) maxX = px;
    if (py < minY) minY = py;
    if (py > maxY) maxY = py;
  }
  const size = maxX - minX + (maxY - minY);
  const tolerance = 1e-12 * size * size;
  // Huge coordinates overflow the products: such a ring is not known to be flat, so it counts as having area.
  if (!Number.isFinite(a) || !Number.isFinite(tolerance)) return true;
  return Math.abs(a) > tolerance;
}

export function headOf(f: Feature): FeatureHead {
  const h: FeatureHead = { properties: f.properties ?? null };
  if (f.id !== undefined) h.id = f.id;
  if (f.featureClass !== undefined) h.featureClass = f.featureClass;
  if (f.parentId !== undefined) h.parentId = f.parentId;
  if (f.ref !== undefined) h.ref = f.ref;
  // A feature's own vocabularies override the collection's for it (spec 2.4): JSON tiles keep them with it.
  if (f.vocabularies !== undefined) h.vocabularies = f.vocabularies;
  return h;
}

/** The tiler's form of a GeoJSON feature; null when it has nothing to place. */
export function flatFeature(tf: TileFeature): FlatFeature | null {
  const geom = tf.feature.geometry === null ? null : flatten(tf.feature.geometry);
  return geom === null ? null : flatFeatureOf(tf.seq, tf.layer, geom, undefined, headOf(tf.feature), undefined, undefined, undefined, false, undefined);
}

/**
 * Every FlatFeature is made here, all members in one order (absent ones undefined): the tiler's hot functions then
 * see one object shape. Literals with members left out, added later, or spread from another feature each had their
 * own, and every new one met in a hot function threw away its optimised code (about 150 deoptimisations a build).
 */
export function flatFeatureOf(
  seq: number, layer: number, geom: TileGeometry, lod: number[] | undefined, head: FeatureHead | undefined,
  headJson: Uint8Array | undefined, tags: FeatureTags | undefined, tagsBytes: Uint8Array | undefined, many: boolean, pieces: number | undefined,
): FlatFeature {
  return { seq, layer, geom, lod, head, headJson, tags, tagsBytes, many, pieces };
}

/** `f` with other geometry (and its original box and centroid in `lod`, and its pieces as read in `pieces`). */
export function withGeometry(f: FlatFeature, geom: TileGeometry, lod: number[] | undefined, pieces: number | undefined): FlatFeature {
  return flatFeatureOf(f.seq, f.layer, geom, lod, f.head, f.headJson, f.tags, f.tagsBytes, f.many === true, pieces);
}

/** The members of a feature made from GeoJSON (one read from a record carries their bytes instead). */
export function membersOf(f: FeatureMembers): FeatureHead {
  if (f.head === undefined) throw new Error(`feature ${f.seq} has neither its members nor their record bytes`);
  return f.head;
}

// ───────────────────────────── tags ─────────────────────────────

export type PbfValue = string | number | boolean;

/** A feature's MVT id (null: it has none of its own, the tiler gives it seq) and tags, before numbering. */
export interface FeatureTags { id: number | null; keys: string[]; values: PbfValue[] }

function pbfValue(v: unknown): PbfValue | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  // Arrays as JSON text, the way vt-pbf does it (objects never get here: they are flattened); declared as String.
  return JSON.stringify(v);
}

/** Whether an id can be a PBF feature id (a non-negative safe integer); any other id travels as property `id`. */
export function isPbfId(id: unknown): id is number {
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0;
}

/**
 * Id and tags of a feature. Id: the input id when it is a non-negative safe integer. Any other id (a string, a
 * negative or unsafe integer such as 1.2e29) travels as the tag `id`; `featureClass`, `parentId` and `ref` as tags
 * of those names. These members come first and win over a property of the same name, so a tag name never appears
 * twice in one MVT feature. Properties are fields as `forEachField` names them: `{"classification": {"name":
 * "Tumor"}}` is the tag `classification.name`.
 */
export function featureTags(f: FeatureHead): FeatureTags {
  const id = isPbfId(f.id) ? f.id : null;
  const keys: string[] = [];
  const values: PbfValue[] = [];
  const member = (name: string, m: unknown) => {
    const v = pbfValue(m);
    if (v !== undefined) { keys.push(name); values.push(v); }
  };
  if (f.id !== undefined && id === null) member('id', f.id);
  if (f.featureClass !== undefined) member('featureClass', f.featureClass);
  if (f.parentId !== undefined) member('parentId', f.parentId);
  if (f.ref !== undefined) member('ref', f.ref);
  const props = f.properties ?? null;
  if (props) {
    // Nested objects become dotted fields; the first of two fields of one name (`a.b` and a: {b}) wins, as members do.
    const taken = new Set(keys);
    forEachField(props, (name, value) => {
      const v = pbfValue(value);
      if (v === undefined || taken.has(name)) return;
      taken.add(name);
      keys.push(name); values.push(v);
    });
  }
  return { id, keys, values };
}

/** The feature's PBF id and tags (from its members the first time, for a feature made from GeoJSON). */
export function tagsOf(f: FeatureMembers): FeatureTags {
  return (f.tags ??= featureTags(membersOf(f)));
}

// ───────────────────────────── measures ─────────────────────────────

/** `b` made the empty box `[Infinity, Infinity, -Infinity, -Infinity]`, which any position grows. */
export function emptyBox(b: Float64Array): Float64Array {
  b[0] = Infinity; b[1] = Infinity; b[2] = -Infinity; b[3] = -Infinity;
  return b;
}

/**
 * Grows the box `[minX, minY, maxX, maxY]` by flat coordinates. Every bounding box of flat geometry is made by
 * this; a box is itself two positions, so growing one box by another is their union.
 */
export function growBox(b: Float64Array, c: Coords): void {
  for (let i = 0; i + 1 < c.length; i += 2) {
    const x = c[i], y = c[i + 1];
    if (x < b[0]) b[0] = x;
    if (y < b[1]) b[1] = y;
    if (x > b[2]) b[2] = x;
    if (y > b[3]) b[3] = y;
  }
}

/** The boxes of polygons' exterior rings, `[minX, minY, maxX, maxY]` each, in one array. */
export function exteriorBoxes(polys: readonly Flat[][]): Float64Array {
  const b = new Float64Array(4 * polys.length);
  for (let k = 0; k < polys.length; k++) growBox(emptyBox(b.subarray(4 * k, 4 * k + 4)), polys[k][0]);
  return b;
}

/** The pieces of a multi-geometry: a MultiPoint's points, a MultiLineString's lines, a MultiPolygon's polygons; 0 for any other geometry. */
export function pieceCount(g: TileGeometry): number {
  return g.k === 'points' && g.type === 'MultiPoint' ? g.xy.length >> 1 : g.k === 'lines' && g.type === 'MultiLineString' ? g.parts.length
    : g.k === 'polygons' && g.type === 'MultiPolygon' ? g.polys.length : 0;
}

/** The boxes of the pieces of a multi-geometry (`pieceCount`; a polygon's exterior's), `[minX, minY, maxX, maxY]` each, in one array. */
export function pieceBoxes(g: TileGeometry): Float64Array {
  if (g.k === 'polygons') return exteriorBoxes(g.polys);
  if (g.k === 'lines') {
    const b = new Float64Array(4 * g.parts.length);
    for (let k = 0; k < g.parts.length; k++) growBox(emptyBox(b.subarray(4 * k, 4 * k + 4)), g.parts[k]);
    return b;
  }
  if (g.k !== 'points') return new Float64Array(0);
  const b = new Float64Array(2 * g.xy.length);
  for (let k = 0; k + 1 < g.xy.length; k += 2) { b[2 * k] = b[2 * k + 2] = g.xy[k]; b[2 * k + 1] = b[2 * k + 3] = g.xy[k + 1]; }
  return b;
}

/** Grows `b` by every position of flat geometry (a mesh by its box); `b` stays empty (min > max) when there is none. */
export function growBoxBy(b: Float64Array, g: TileGeometry): void {
  switch (g.k) {
    case 'points': growBox(b, g.xy); return;
    case 'lines': for (const p of g.parts) growBox(b, p); return;
    case 'polygons': for (const poly of g.polys) for (const r of poly) growBox(b, r); return;
    case 'mesh': growBox(b, g.box); return;
    case 'collection': for (const m of g.members) growBoxBy(b, m); return;
  }
}

/**
 * Bounding box and centroid as `[minX, minY, maxX, maxY, cx, cy]`; the centroid is the mean of the distinct
 * vertices (closing positions of rings counted once). Meshes are left out: a feature holding one is never pointified.
 */
export function lodOf(g: TileGeometry): number[] | null {
  const s = new LodSums();
  s.visit(g);
  return s.lod();
}

/**
 * The box and the vertex sums of `lodOf`, in one walk over the geometry (it runs for every feature a unit tiles), or
 * over rings added one by one where they lie in a larger array (a unit record's numbers).
 */
export class LodSums {
  minX = Infinity; minY = Infinity; maxX = -Infinity; maxY = -Infinity;
  n = 0; sx = 0; sy = 0;

  visit(m: TileGeometry): void {
    switch (m.k) {
      case 'points': this.add(m.xy, false); return;
      case 'lines': for (const p of m.parts) this.add(p, false); return;
      case 'polygons': for (const poly of m.polys) for (const r of poly) this.add(r, true); return;
      case 'mesh': this.grow(m.box[0], m.box[1]); this.grow(m.box[2], m.box[3]); return;
      case 'collection': for (const x of m.members) this.visit(x); return;
    }
  }

  lod(): number[] | null {
    return this.n === 0 || !(this.minX <= this.maxX) ? null : [this.minX, this.minY, this.maxX, this.maxY, this.sx / this.n, this.sy / this.n];
  }

  add(c: Coords, ring: boolean): void {
    this.addRange(c, ring, 0, c.length);
  }

  /** The positions of `c` from `from` to `to` (a line, or a ring: its closing position counted once). */
  addRange(c: Coords, ring: boolean, from: number, to: number): void {
    const closed = ring && to - from > 2 && c[from] === c[to - 2] && c[from + 1] === c[to - 1];
    const end = to - (closed ? 2 : 0);
    for (let i = from; i + 1 < end; i += 2) {
      const x = c[i], y = c[i + 1];
      this.n++; this.sx += x; this.sy += y;
      this.grow(x, y);
    }
    // The closing position is the first one again: it grows the box by nothing.
  }

  private grow(x: number, y: number): void {
    if (x < this.minX) this.minX = x;
    if (y < this.minY) this.minY = y;
    if (x > this.maxX) this.maxX = x;
    if (y > this.maxY) this.maxY = y;
  }
}

export function hasMesh(g: TileGeometry): boolean {
  return g.k === 'mesh' || (g.k === 'collection' && g.members.some(hasMesh));
}

/**
 * Whether the geometry is meshes alone (nothing of it can be an MVT feature). At least one mesh: a collection of
 * nothing (`[]`, or of empty collections) has no mesh to keep in JSON tiles, and is `empty-geometry`.
 */
export function onlyMeshes(g: TileGeometry): boolean {
  return hasMesh(g) && meshesOrNothing(g);
}

function meshesOrNothing(g: TileGeometry): boolean {
  return g.k === 'mesh' || (g.k === 'collection' && g.members.every(meshesOrNothing));
}

/** Whether the geometry has anything that can collapse (a line or a polygon). */
export function hasExtent(g: TileGeometry): boolean {
  return g.k === 'lines' || g.k === 'polygons' || (g.k === 'collection' && g.members.some(hasExtent));
}

/** Meshes in the geometry (a mesh, or mesh members of a collection). */
export function meshCount(g: TileGeometry): number {
  if (g.k === 'mesh') return 1;
  if (g.k === 'collection') { let n = 0; for (const m of g.members) n += meshCount(m); return n; }
  return 0;
}
