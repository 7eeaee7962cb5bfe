// JSON tile encoder: data-model FeatureCollections in global pixels, written as bytes in a fixed key order.
import type { Feature } from '../model/feature.js';
import type { TileGeometry } from './tile.js';

const utf8 = new TextEncoder();

/**
 * Everything of a feature's JSON before its geometry, in the fixed key order type, id, featureClass, parentId,
 * ref, layer, properties, geometry. It does not depend on the tile, so the tiler encodes it once per feature.
 */
export function featureHead(f: Feature, layerId: string): Uint8Array {
  let s = '{"type":"Feature"';
  if (f.id !== undefined) s += ',"id":' + JSON.stringify(f.id);
  if (f.featureClass !== undefined) s += ',"featureClass":' + JSON.stringify(f.featureClass);
  if (f.parentId !== undefined) s += ',"parentId":' + JSON.stringify(f.parentId);
  if (f.ref !== undefined) s += ',"ref":' + JSON.stringify(f.ref);
  s += ',"layer":' + JSON.stringify(layerId) + ',"properties":' + JSON.stringify(f.properties ?? null) + ',"geometry":';
  return utf8.encode(s);
}

/** The collection-level start of every JSON tile of a build: type, then `multiscale` and `properties` when given. */
export function tilePrefix(collection?: { multiscale?: unknown; properties?: unknown }): Uint8Array {
  let s = '{"type":"FeatureCollection"';
  if (collection?.multiscale !== undefined) s += ',"multiscale":' + JSON.stringify(collection.multiscale);
  if (collection?.properties !== undefined) s += ',"properties":' + JSON.stringify(collection.properties);
  return utf8.encode(s + ',"features":[');
}

const ascii = (s: string) => utf8.encode(s);
const T = {
  point: ascii('{"type":"Point","coordinates":'),
  multiPoint: ascii('{"type":"MultiPoint","coordinates":'),
  line: ascii('{"type":"LineString","coordinates":'),
  multiLine: ascii('{"type":"MultiLineString","coordinates":'),
  polygon: ascii('{"type":"Polygon","coordinates":'),
  multiPolygon: ascii('{"type":"MultiPolygon","coordinates":'),
  collection: ascii('{"type":"GeometryCollection","geometries":['),
};
const C_COMMA = 44, C_OPEN = 91, C_CLOSE = 93, C_BRACE = 125, C_MINUS = 45, C_DOT = 46, C_ZERO = 48;

/**
 * Growable byte buffer that JSON tiles are written into. Coordinates are integers q (tile units of the zoom)
 * times `unit` = 2^-shift pixels; they are printed exactly in decimal (a binary fraction with `shift` bits has
 * at most `shift` decimal digits), so there is no float noise and no String() allocation per number.
 */
export class JsonWriter {
  buf = new Uint8Array(1 << 16);
  pos = 0;
  private shift = 0;
  private unit = 1;
  private pow5 = 1;
  private digits = new Uint8Array(32);

  /** Sets the coordinate unit: pixels per tile unit, a power of two. */
  setUnit(unit: number): void {
    this.unit = unit;
    this.shift = Math.round(-Math.log2(unit));
    this.pow5 = 5 ** Math.max(0, this.shift);
  }

  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let len = this.buf.length * 2;
    while (len < this.pos + n) len *= 2;
    const b = new Uint8Array(len);
    b.set(this.buf.subarray(0, this.pos));
    this.buf = b;
  }

  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  byte(c: number): void {
    if (this.pos >= this.buf.length) this.reserve(1);
    this.buf[this.pos++] = c;
  }

  /** A non-negative integer below 2^53. */
  private uint(v: number): void {
    const d = this.digits;
    let n = 0;
    do { const q = Math.floor(v / 10); d[n++] = v - q * 10; v = q; } while (v > 0);
    this.reserve(n);
    while (n > 0) this.buf[this.pos++] = C_ZERO + d[--n];
  }

  coord(q: number): void {
    if (this.shift <= 0) {
      const v = q * this.unit;
      if (v < 0) { this.byte(C_MINUS); this.uint(-v); } else this.uint(v);
      return;
    }
    if (this.shift > 15 || Math.abs(q) >= 2 ** 53) { this.bytes(ascii(String(q * this.unit))); return; }
    let a = q;
    if (a < 0) { this.byte(C_MINUS); a = -a; }
    const scale = 2 ** this.shift;
    const ip = Math.floor(a / scale);
    const frac = a - ip * scale;
    this.uint(ip);
    if (frac === 0) return;
    // frac / 2^shift = frac·5^shift / 10^shift: `shift` digits, trailing zeros dropped.
    let f = frac * this.pow5;
    let n = this.shift;
    while (f % 10 === 0) { f /= 10; n--; }
    const d = this.digits;
    for (let i = n - 1; i >= 0; i--) { const q10 = Math.floor(f / 10); d[i] = f - q10 * 10; f = q10; }
    this.reserve(n + 1);
    this.buf[this.pos++] = C_DOT;
    for (let i = 0; i < n; i++) this.buf[this.pos++] = C_ZERO + d[i];
  }

  private positions(c: Float64Array): void {
    this.byte(C_OPEN);
    for (let i = 0; i + 1 < c.length; i += 2) {
      if (i > 0) this.byte(C_COMMA);
      this.byte(C_OPEN); this.coord(c[i]); this.byte(C_COMMA); this.coord(c[i + 1]); this.byte(C_CLOSE);
    }
    this.byte(C_CLOSE);
  }

  private rings(rs: readonly Float64Array[]): void {
    this.byte(C_OPEN);
    for (let i = 0; i < rs.length; i++) { if (i > 0) this.byte(C_COMMA); this.positions(rs[i]); }
    this.byte(C_CLOSE);
  }

  /**
   * GeoJSON geometry of tiled geometry. A LineString cut into several parts by the tile edge becomes a
   * MultiLineString; every other type keeps its input type.
   */
  geometry(g: TileGeometry): void {
    switch (g.k) {
      case 'points':
        if (g.type === 'Point') {
          this.bytes(T.point); this.byte(C_OPEN); this.coord(g.xy[0]); this.byte(C_COMMA); this.coord(g.xy[1]); this.byte(C_CLOSE);
        } else { this.bytes(T.multiPoint); this.positions(g.xy); }
        break;
      case 'lines':
        if (g.type === 'LineString' && g.parts.length === 1) { this.bytes(T.line); this.positions(g.parts[0]); } else { this.bytes(T.multiLine); this.rings(g.parts); }
        break;
      case 'polygons':
        if (g.type === 'Polygon') { this.bytes(T.polygon); this.rings(g.polys[0]); } else {
          this.bytes(T.multiPolygon); this.byte(C_OPEN);
          for (let i = 0; i < g.polys.length; i++) { if (i > 0) this.byte(C_COMMA); this.rings(g.polys[i]); }
          this.byte(C_CLOSE);
        }
        break;
      case 'mesh':
        // Meshes travel whole, in their own coordinates (3D included) and with their members.
        g.json ??= utf8.encode(JSON.stringify(g.geometry));
        this.bytes(g.json);
        return;
      case 'collection':
        this.bytes(T.collection);
        for (let i = 0; i < g.members.length; i++) { if (i > 0) this.byte(C_COMMA); this.geometry(g.members[i]); }
        this.byte(C_CLOSE);
        break;
    }
    this.byte(C_BRACE);
  }

  /** One feature: its encoded head, its geometry, the closing brace. */
  feature(head: Uint8Array, g: TileGeometry): void {
    this.bytes(head);
    this.geometry(g);
    this.byte(C_BRACE);
  }
}

/**
 * Assembles a JSON tile from a prefix and feature byte ranges `[start, end)` of `src`: the tiler writes every
 * feature of a tile once and, when thinning, keeps a subset without writing it again.
 */
export function jsonTile(prefix: Uint8Array, src: Uint8Array, ranges: readonly number[]): Uint8Array {
  let n = prefix.length + 2 + Math.max(0, ranges.length / 2 - 1);
  for (let i = 0; i < ranges.length; i += 2) n += ranges[i + 1] - ranges[i];
  const out = new Uint8Array(n);
  out.set(prefix);
  let p = prefix.length;
  for (let i = 0; i < ranges.length; i += 2) {
    if (i > 0) out[p++] = C_COMMA;
    out.set(src.subarray(ranges[i], ranges[i + 1]), p);
    p += ranges[i + 1] - ranges[i];
  }
  out[p++] = C_CLOSE; out[p++] = C_BRACE;
  return out;
}

/** Bytes a JSON tile with these feature sizes takes. */
export function jsonTileBytes(prefixBytes: number, featureBytes: number, count: number): number {
  return prefixBytes + 2 + featureBytes + Math.max(0, count - 1);
}
