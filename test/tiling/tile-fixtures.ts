// Shared fixtures for tiler and encoder tests: seeded randomness, feature builders, tile decoding in tile units.
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import type { Feature } from '../../src/model/feature.js';
import type { Geometry } from '../../src/model/geometry.js';
import { mulberry32 } from '../../src/random.js';
import type { TileResult, TileSpec } from '../../src/stages/tile/spec.js';
import type { TileFeature } from '../../src/tiling/flat.js';

/** Deterministic PRNG (mulberry32) in [0, 1). */
export const rng = mulberry32;

export function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const r = rng(seed);
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) { const j = Math.floor(r() * (i + 1)); [out[i], out[j]] = [out[j], out[i]]; }
  return out;
}

export function tf(seq: number, geometry: Geometry | null, extra: Partial<Feature> = {}, layer = 0): TileFeature {
  return { seq, layer, feature: { type: 'Feature', geometry, properties: extra.properties ?? {}, ...extra } };
}

/** A closed star-shaped ring around (cx, cy): simple, with `n` vertices, radii in [r/2, r]. */
export function starRing(r: () => number, cx: number, cy: number, radius: number, n: number): [number, number][] {
  const ring: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const a = (2 * Math.PI * i) / n, rr = radius * (0.5 + 0.5 * r());
    ring.push([Math.round((cx + rr * Math.cos(a)) * 100) / 100, Math.round((cy + rr * Math.sin(a)) * 100) / 100]);
  }
  ring.push(ring[0]);
  return ring;
}

export function shoelace(ring: number[][]): number {
  let s = 0;
  for (let i = 0; i + 1 < ring.length; i++) s += ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1];
  return s / 2;
}

export function perimeter(ring: number[][]): number {
  let s = 0;
  for (let i = 0; i + 1 < ring.length; i++) s += Math.hypot(ring[i + 1][0] - ring[i][0], ring[i + 1][1] - ring[i][1]);
  return s;
}

export const baseSpec = (over: Partial<TileSpec> = {}): TileSpec => ({
  side: 1024, minZoom: 0, maxZoom: 2, finestZoom: 2, layers: [{ id: 'cells' }, { id: 'nuclei' }],
  formats: { json: true, pbf: true }, lod: 'auto', tileBudget: 500 * 1024, ...over,
});

export interface PbfFeature { layer: string; id: number | undefined; type: number; properties: Record<string, unknown>; geometry: number[][][] }

/** Decoded PBF features, geometry in tile units ([x, y] per position, one array per MVT ring / part / point). */
export function pbfFeatures(bytes: Uint8Array): PbfFeature[] {
  const tile = new VectorTile(new PbfReader(bytes));
  const out: PbfFeature[] = [];
  for (const name of Object.keys(tile.layers)) {
    const layer = tile.layers[name];
    for (let i = 0; i < layer.length; i++) {
      const f = layer.feature(i);
      out.push({ layer: name, id: f.id, type: f.type, properties: { ...f.properties }, geometry: f.loadGeometry().map((r) => r.map((p) => [p.x, p.y])) });
    }
  }
  return out;
}

/** Layer tables as written (private members of vector-tile's layer, read for order checks). */
export function pbfLayers(bytes: Uint8Array): { name: string; version: number; extent: number; keys: string[]; values: unknown[]; length: number }[] {
  const tile = new VectorTile(new PbfReader(bytes));
  return Object.keys(tile.layers).map((name) => {
    const l = tile.layers[name] as unknown as { version: number; extent: number; length: number; _keys: string[]; _values: unknown[] };
    return { name, version: l.version, extent: l.extent, keys: l._keys, values: l._values, length: l.length };
  });
}

export interface JsonTileFeature extends Feature { layer: string }
export interface JsonTile { type: string; multiscale?: unknown; properties?: unknown; features: JsonTileFeature[] }

export function jsonOf(t: TileResult): JsonTile {
  return JSON.parse(new TextDecoder().decode(t.json)) as JsonTile;
}

export const key = (t: { z: number; x: number; y: number }) => `${t.z}/${t.x}/${t.y}`;

export function byKey(ts: readonly TileResult[]): Map<string, TileResult> {
  return new Map(ts.map((t) => [key(t), t]));
}

/**
 * The PBF tags a feature should carry by the spec's rules (members first, then properties; null dropped; nested
 * objects as dotted names, arrays as JSON text).
 */
export function expectedTags(f: Feature): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const add = (k: string, v: unknown) => {
    if (v === null || v === undefined || k in out) return;
    if (typeof v === 'object' && !Array.isArray(v)) {
      for (const [ik, iv] of Object.entries(v)) add(`${k}.${ik}`, iv);
      return;
    }
    out[k] = Array.isArray(v) ? JSON.stringify(v) : v;
  };
  if (typeof f.id === 'string') add('id', f.id);
  add('featureClass', f.featureClass);
  add('parentId', f.parentId);
  add('ref', f.ref);
  for (const [k, v] of Object.entries(f.properties ?? {})) add(k, v);
  return out;
}

export function expectedId(f: Feature, seq: number): number {
  return typeof f.id === 'number' && Number.isSafeInteger(f.id) && f.id >= 0 ? f.id : seq;
}

/** Geometry of a JSON tile feature in tile units, as MVT would hold it (one array per point / part / ring). */
export function jsonToTileUnits(g: Geometry, side: number, z: number, x: number, y: number): { type: number; geometry: number[][][] }[] {
  const ts = side / 2 ** z;
  const u = (p: number[]) => [((p[0] - x * ts) * 4096) / ts, ((p[1] - y * ts) * 4096) / ts];
  switch (g.type) {
    case 'Point': return [{ type: 1, geometry: [[u(g.coordinates)]] }];
    case 'MultiPoint': return [{ type: 1, geometry: g.coordinates.map((p) => [u(p)]) }];
    case 'LineString': return [{ type: 2, geometry: [g.coordinates.map(u)] }];
    case 'MultiLineString': return [{ type: 2, geometry: g.coordinates.map((l) => l.map(u)) }];
    case 'Polygon': return [{ type: 3, geometry: g.coordinates.map((r) => r.map(u)) }];
    case 'MultiPolygon': return [{ type: 3, geometry: g.coordinates.flatMap((p) => p.map((r) => r.map(u))) }];
    case 'GeometryCollection': return g.geometries.flatMap((m) => jsonToTileUnits(m, side, z, x, y));
    default: return [];
  }
}

/** Random polygons (some with a hole), lines and points over a 2048 px world, crossing tiles and touching edges. */
export function randomFeatures(seed: number, n: number, side = 2048): TileFeature[] {
  const r = rng(seed);
  const out: TileFeature[] = [];
  for (let i = 0; i < n; i++) {
    const kind = r();
    const cx = r() < 0.1 ? (r() < 0.5 ? 0 : side) : r() * side, cy = r() < 0.1 ? (r() < 0.5 ? 0 : side) : r() * side;
    const id = r() < 0.2 ? `s${i}` : r() < 0.1 ? -i - 1 : 100_000 + i * 3; // numeric ids never equal another feature's seq
    const props = { label: i, class: ['tumor', 'stroma', 'immune'][i % 3], score: Math.round(r() * 1000) / 1000, big: r() < 0.1 ? 2 ** 40 : i };
    if (kind < 0.6) {
      const radius = 3 + r() * (r() < 0.2 ? 400 : 40);
      const outer = starRing(r, cx, cy, radius, 5 + Math.floor(r() * 30));
      const rings: number[][][] = [outer];
      if (r() < 0.3) rings.push(starRing(r, cx, cy, radius / 5, 6).reverse());
      out.push(tf(i, { type: 'Polygon', coordinates: rings as [number, number][][] }, { id, featureClass: 'cell', properties: props }, 0));
    } else if (kind < 0.8) {
      const pts: [number, number][] = [];
      for (let k = 0; k < 2 + Math.floor(r() * 6); k++) pts.push([Math.round((cx + (r() - 0.5) * 600) * 10) / 10, Math.round((cy + (r() - 0.5) * 600) * 10) / 10]);
      out.push(tf(i, { type: 'LineString', coordinates: pts }, { id, properties: props }, 1));
    } else {
      out.push(tf(i, { type: 'Point', coordinates: [Math.round(Math.min(side, cx) * 8) / 8, Math.round(Math.min(side, cy) * 8) / 8] }, { id, properties: props }, 1));
    }
  }
  return out;
}
