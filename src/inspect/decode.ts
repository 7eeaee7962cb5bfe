// Tiles back to the data model: PBF (MVT, tile-local) decoded to global pixels with @mapbox/vector-tile, JSON as written.
import { VectorTileLayer } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import type { Feature, FeatureCollection, Id, Properties } from '../model/feature.js';
import type { Geometry, Position } from '../model/geometry.js';
import { InputError, UsageError } from '../report/errors.js';
import { tilePath, tileSize, type Plane } from '../tiling/space.js';
import { listZoomTiles, openPyramid, readJson, type Pyramid, type TileFormat } from './layout.js';
import type { PyramidReader } from './reader.js';

export type PbfValue = string | number | boolean;

/** One MVT feature as stored: id, tags, type and geometry (parts or rings) already in global pixels. */
export interface PbfFeature {
  layer: string;
  id: number | undefined;
  tags: Record<string, PbfValue>;
  type: 0 | 1 | 2 | 3;
  /** Points, line parts or rings (rings closed, as @mapbox/vector-tile closes them) in global pixels. */
  parts: Position[][];
  /** Tile-local coordinates, before the pixel mapping (bounds checks use them). */
  local: Position[][];
}

export interface PbfLayer {
  name: string;
  version: number;
  extent: number;
  features: PbfFeature[];
}

/**
 * The layers of a PBF tile in the order they are stored. `VectorTile` keys layers by name in an object, which
 * reorders integer-like names and hides repeated ones; reading layer messages one by one does neither.
 */
export function readPbfLayers(bytes: Uint8Array): VectorTileLayer[] {
  const pbf = new PbfReader(bytes);
  const layers: VectorTileLayer[] = [];
  while (pbf.pos < pbf.length) {
    const tag = pbf.readVarint();
    if (tag === 26) {
      const end = pbf.readVarint() + pbf.pos;
      layers.push(new VectorTileLayer(pbf, end));
      pbf.pos = end;
    } else {
      pbf.skip(tag);
    }
  }
  return layers;
}

/** Number of MVT features in a tile, without decoding geometry. */
export function countPbfFeatures(bytes: Uint8Array): number {
  let n = 0;
  for (const l of readPbfLayers(bytes)) n += l.length;
  return n;
}

/** Decodes every feature of a PBF tile at z/x/y of a world of side `side`; throws on a malformed tile. */
export function decodePbf(bytes: Uint8Array, side: number, z: number, x: number, y: number): PbfLayer[] {
  const ts = tileSize(side, z);
  return readPbfLayers(bytes).map((l) => {
    const extent = l.extent;
    // With the standard extent the mapping is exact in binary floating point (powers of two), like the JSON tiles.
    const unit = ts / extent;
    const features: PbfFeature[] = [];
    for (let i = 0; i < l.length; i++) {
      const f = l.feature(i);
      const lines = f.loadGeometry();
      const local = lines.map((line) => line.map((pt): Position => [pt.x, pt.y]));
      const parts = local.map((line) => line.map(([lx, ly]): Position => [x * ts + lx * unit, y * ts + ly * unit]));
      features.push({ layer: l.name, id: f.id, tags: { ...f.properties }, type: f.type, parts, local });
    }
    return { name: l.name, version: l.version, extent, features };
  });
}

/** Twice the signed area of a ring (shoelace on the raw numbers): MVT exteriors are positive in y-down tile axes. */
export function ringArea2(ring: readonly Position[]): number {
  let s = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) s += ring[j][0] * ring[i][1] - ring[i][0] * ring[j][1];
  return s;
}

/**
 * Groups MVT rings into polygons: a ring of positive area opens a polygon, a negative one is a hole of the polygon
 * before it, a zero-area ring is dropped. A hole with no exterior before it opens a polygon of its own so that
 * nothing read is silently lost (verify reports the difference).
 */
export function classifyRings(rings: readonly Position[][]): Position[][][] {
  const polys: Position[][][] = [];
  for (const r of rings) {
    const a = ringArea2(r);
    if (a === 0) continue;
    if (a > 0 || polys.length === 0) polys.push([r]);
    else polys[polys.length - 1].push(r);
  }
  return polys;
}

/** GeoJSON geometry of a decoded MVT feature; null for an unknown geometry type. */
export function pbfGeometry(f: Pick<PbfFeature, 'type' | 'parts'>): Geometry | null {
  switch (f.type) {
    case 1: {
      const pts = f.parts.flat();
      return pts.length === 1 ? { type: 'Point', coordinates: pts[0] } : { type: 'MultiPoint', coordinates: pts };
    }
    case 2:
      return f.parts.length === 1 ? { type: 'LineString', coordinates: f.parts[0] } : { type: 'MultiLineString', coordinates: f.parts };
    case 3: {
      const polys = classifyRings(f.parts);
      return polys.length === 1 ? { type: 'Polygon', coordinates: polys[0] } : { type: 'MultiPolygon', coordinates: polys };
    }
    default:
      return null;
  }
}

function isId(v: unknown): v is Id {
  return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
}

/**
 * A decoded MVT feature as a data-model feature. The members that travel as tags (spec decisions: an `id` that is
 * not the PBF id, `featureClass`, `parentId`, `ref`) become members again; the rest are properties. Key order follows
 * the JSON tiles.
 */
export function pbfToFeature(f: PbfFeature): Feature {
  const props: Properties = { ...f.tags };
  const out = { type: 'Feature' } as Feature;
  let id: Id | undefined = f.id;
  if (isId(props.id)) { id = props.id; delete props.id; }
  if (id !== undefined) out.id = id;
  if (typeof props.featureClass === 'string') { out.featureClass = props.featureClass; delete props.featureClass; }
  if (isId(props.parentId)) { out.parentId = props.parentId; delete props.parentId; }
  if (isId(props.ref)) { out.ref = props.ref; delete props.ref; }
  out.layer = f.layer;
  out.properties = props;
  out.geometry = pbfGeometry(f);
  return out;
}

export interface DecodedTile {
  /** Relative path of the file read (the one that would have been, when missing). */
  path: string;
  format: TileFormat;
  /** False when no file is there: a missing tile means no features. */
  exists: boolean;
  collection: FeatureCollection;
}

export interface DecodeOptions {
  /** Which file to read; default PBF when the tile has one, else JSON. */
  format?: TileFormat;
}

function has(p: Pyramid, rel: string): boolean {
  return p.reader.read(rel) !== undefined;
}

/**
 * A tile decoded to a data-model FeatureCollection in global pixel coordinates, from its PBF file (tile-local
 * coordinates mapped to pixels) or its JSON file. Plane dimensions the pyramid does not use are ignored.
 */
export function decodeTile(root: string | PyramidReader | Pyramid, z: number, x: number, y: number, plane: Partial<Plane> = {}, opts: DecodeOptions = {}): DecodedTile {
  const p = typeof root === 'object' && 'descriptor' in root ? root : openPyramid(root);
  for (const [name, v] of [['z', z], ['x', x], ['y', y]] as const) {
    if (!Number.isInteger(v) || v < 0) throw new UsageError(`tile ${name} must be a non-negative integer, found ${v}`);
  }
  if (x >= 2 ** z || y >= 2 ** z) throw new UsageError(`tile ${z}/${x}/${y} is outside the grid: zoom ${z} has ${2 ** z} × ${2 ** z} tiles`);
  const full: Plane = { t: plane.t ?? 0, c: plane.c ?? 0, z: plane.z ?? 0 };
  const pathOf = (ext: TileFormat) => tilePath(z, x, y, full, p.dims, ext);
  // The zoom-0 JSON file of a plane is the overview descriptor, not features.
  const jsonHoldsFeatures = z > 0;
  let format: TileFormat;
  if (opts.format) {
    format = opts.format;
    if (format === 'json' && !jsonHoldsFeatures) {
      // A plane's overview may be missing (nothing on it) while other planes have theirs: JSON tiles were built.
      const jsonBuilt = [...listZoomTiles(p, 0)].some((t) => t.ext === 'json');
      throw new UsageError(jsonBuilt
        ? `${pathOf('json')} is the overview descriptor of the JSON pyramid, not a tile of features; read zoom 0 from the PBF tile`
        : `${pathOf('json')}: this pyramid has no JSON tiles (zoom 0 of a JSON pyramid is its overview descriptor anyway); read zoom 0 from the PBF tile`);
    }
  } else {
    format = has(p, pathOf('pbf')) || !jsonHoldsFeatures ? 'pbf' : has(p, pathOf('json')) ? 'json' : p.format;
  }
  const path = pathOf(format);
  const bytes = p.reader.read(path);
  const collection: FeatureCollection = { type: 'FeatureCollection', features: [] };
  if (bytes === undefined) {
    // No tile there: an empty one, unless the pyramid has no tile of that format at the zoom while it has the other's
    // (zoom 0's JSON files are overviews, no tiles).
    const other: TileFormat = format === 'json' ? 'pbf' : 'json';
    const exts = new Set<string>();
    for (const t of listZoomTiles(p, z)) if ((z > 0 || t.ext === 'pbf') && exts.add(t.ext).size === 2) break;
    if (opts.format && !exts.has(format) && exts.has(other)) {
      throw new UsageError(`${path}: this pyramid has no ${format.toUpperCase()} tiles at zoom ${z}, only ${other.toUpperCase()} ones: ask for ${pathOf(other)}`);
    }
    return { path, format, exists: false, collection };
  }
  if (format === 'pbf') {
    let layers: PbfLayer[];
    try {
      layers = decodePbf(bytes, p.side, z, x, y);
    } catch (err) {
      throw new InputError(`${path} in ${p.reader.name} does not decode as a vector tile: ${(err as Error).message}`, path);
    }
    for (const l of layers) for (const f of l.features) collection.features.push(pbfToFeature(f));
    return { path, format, exists: true, collection };
  }
  const doc = readJson(p.reader, path);
  if (doc === null || typeof doc !== 'object' || (doc as { type?: unknown }).type !== 'FeatureCollection' || !Array.isArray((doc as { features?: unknown }).features)) {
    throw new InputError(`${path} in ${p.reader.name} is not a FeatureCollection`, path);
  }
  return { path, format, exists: true, collection: doc as FeatureCollection };
}
