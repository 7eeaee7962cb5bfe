// JSON tile encoder: data-model FeatureCollections in global pixels, built as strings in a fixed key order.
import type { Feature } from '../model/feature.js';
import type { TileGeometry } from './tile.js';

const utf8 = new TextEncoder();

/**
 * Everything of a feature's JSON before its geometry, in the fixed key order type, id, featureClass, parentId,
 * ref, layer, properties, geometry. It does not depend on the tile, so the tiler builds it once per feature.
 */
export function featureHead(f: Feature, layerId: string): string {
  let s = '{"type":"Feature"';
  if (f.id !== undefined) s += ',"id":' + JSON.stringify(f.id);
  if (f.featureClass !== undefined) s += ',"featureClass":' + JSON.stringify(f.featureClass);
  if (f.parentId !== undefined) s += ',"parentId":' + JSON.stringify(f.parentId);
  if (f.ref !== undefined) s += ',"ref":' + JSON.stringify(f.ref);
  return s + ',"layer":' + JSON.stringify(layerId) + ',"properties":' + JSON.stringify(f.properties ?? null) + ',"geometry":';
}

/** A whole feature: its head, its geometry, the closing brace. */
export function featureJson(head: string, g: TileGeometry, unit: number): string {
  return head + geometryJson(g, unit) + '}';
}

// Coordinates are integers (tile units of the zoom) times `unit`, a power of two, so every product is an exact
// binary fraction and JavaScript's shortest round-trip formatting prints it exactly, without float noise.
function positions(c: ArrayLike<number>, unit: number): string {
  let s = '[';
  for (let i = 0; i + 1 < c.length; i += 2) {
    if (i > 0) s += ',';
    s += '[' + (c[i] * unit) + ',' + (c[i + 1] * unit) + ']';
  }
  return s + ']';
}

function rings(rs: readonly ArrayLike<number>[], unit: number): string {
  let s = '[';
  for (let i = 0; i < rs.length; i++) s += (i > 0 ? ',' : '') + positions(rs[i], unit);
  return s + ']';
}

/**
 * GeoJSON geometry of tiled geometry. A LineString cut into several parts by the tile edge becomes a
 * MultiLineString; every other type keeps its input type.
 */
export function geometryJson(g: TileGeometry, unit: number): string {
  switch (g.k) {
    case 'points':
      if (g.type === 'Point') return '{"type":"Point","coordinates":[' + (g.xy[0] * unit) + ',' + (g.xy[1] * unit) + ']}';
      return '{"type":"MultiPoint","coordinates":' + positions(g.xy, unit) + '}';
    case 'lines':
      if (g.type === 'LineString' && g.parts.length === 1) return '{"type":"LineString","coordinates":' + positions(g.parts[0], unit) + '}';
      return '{"type":"MultiLineString","coordinates":' + rings(g.parts, unit) + '}';
    case 'polygons': {
      if (g.type === 'Polygon') return '{"type":"Polygon","coordinates":' + rings(g.polys[0], unit) + '}';
      let s = '{"type":"MultiPolygon","coordinates":[';
      for (let i = 0; i < g.polys.length; i++) s += (i > 0 ? ',' : '') + rings(g.polys[i], unit);
      return s + ']}';
    }
    case 'mesh':
      // Meshes travel whole and in their own coordinates (3D included): JSON.stringify keeps their members.
      g.json ??= JSON.stringify(g.geometry);
      return g.json;
    case 'collection': {
      let s = '{"type":"GeometryCollection","geometries":[';
      for (let i = 0; i < g.members.length; i++) s += (i > 0 ? ',' : '') + geometryJson(g.members[i], unit);
      return s + ']}';
    }
  }
}

/** The collection-level start of every JSON tile of a build: type, then `multiscale` and `properties` when given. */
export function tilePrefix(collection?: { multiscale?: unknown; properties?: unknown }): string {
  let s = '{"type":"FeatureCollection"';
  if (collection?.multiscale !== undefined) s += ',"multiscale":' + JSON.stringify(collection.multiscale);
  if (collection?.properties !== undefined) s += ',"properties":' + JSON.stringify(collection.properties);
  return s + ',"features":[';
}

export const TILE_SUFFIX = ']}';

/** Bytes of a JSON tile from its prefix and feature strings. */
export function jsonTile(prefix: string, features: readonly string[]): Uint8Array {
  return utf8.encode(prefix + features.join(',') + TILE_SUFFIX);
}

/** UTF-8 byte length of a string without encoding it (budgets are in bytes, strings in UTF-16 units). */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { n += 2; i++; }
    else n += 2; // rest of the BMP, and lone surrogates, which TextEncoder writes as U+FFFD (3 bytes)
  }
  return n;
}
