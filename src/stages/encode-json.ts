// JSON tile encoder: data-model FeatureCollections in global pixels, written as bytes in a fixed key order.
import { membersOf, type FeatureHead, type FeatureMembers, type TileGeometry } from '../tiling/flat.js';
import { grown } from '../bytes.js';

const utf8 = new TextEncoder();

/**
 * Everything of a feature's JSON before its geometry, in the fixed key order type, id, featureClass, parentId,
 * ref, layer, properties, vocabularies, geometry. It does not depend on the tile, so the tiler encodes it once per feature.
 */
export function featureHead(f: FeatureHead, layerId: string): Uint8Array {
  return utf8.encode(featureHeadText(f, layerId));
}

export function featureHeadText(f: FeatureHead, layerId: string): string {
  let s = '{"type":"Feature"';
  if (f.id !== undefined) s += ',"id":' + JSON.stringify(f.id);
  if (f.featureClass !== undefined) s += ',"featureClass":' + JSON.stringify(f.featureClass);
  if (f.parentId !== undefined) s += ',"parentId":' + JSON.stringify(f.parentId);
  if (f.ref !== undefined) s += ',"ref":' + JSON.stringify(f.ref);
  s += ',"layer":' + JSON.stringify(layerId) + ',"properties":' + JSON.stringify(f.properties ?? null);
  if (f.vocabularies !== undefined) s += ',"vocabularies":' + JSON.stringify(f.vocabularies);
  return s + ',"geometry":';
}

/** The JSON tile head of a feature made from GeoJSON (one read from a unit record carries it as `headJson`). */
export function headTextOf(f: FeatureMembers, layerId: string): string {
  return featureHeadText(membersOf(f), layerId);
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
const C_COMMA = 44, C_OPEN = 91, C_CLOSE = 93, C_BRACE = 125, C_MINUS = 45, C_ZERO = 48;

// Two ASCII digits for every number below 100: halves the divisions when printing integers.
const PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) { PAIRS[i * 2] = C_ZERO + Math.floor(i / 10); PAIRS[i * 2 + 1] = C_ZERO + (i % 10); }

/** Writes a non-negative integer below 2^53 at `p`; returns the position after it. */
function uintAt(buf: Uint8Array, p: number, v: number): number {
  if (v < 10) { buf[p] = C_ZERO + v; return p + 1; }
  if (v >= 2147483648) {
    const s = String(v);
    for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
    return p;
  }
  let x = v | 0;
  const n = x < 100 ? 2 : x < 1000 ? 3 : x < 10000 ? 4 : x < 100000 ? 5 : x < 1000000 ? 6 : x < 10000000 ? 7
    : x < 100000000 ? 8 : x < 1000000000 ? 9 : 10;
  let e = p + n;
  while (x >= 100) {
    const q = (x / 100) | 0, r = (x - q * 100) * 2;
    buf[--e] = PAIRS[r + 1]; buf[--e] = PAIRS[r];
    x = q;
  }
  if (x >= 10) { buf[--e] = PAIRS[x * 2 + 1]; buf[--e] = PAIRS[x * 2]; } else buf[--e] = C_ZERO + x;
  return p + n;
}

/**
 * Growable byte buffer that JSON tiles are written into. Coordinates are integers q (tile units of the zoom)
 * times `unit` = 2^-shift pixels; they are printed exactly in decimal (a binary fraction with `shift` bits has
 * at most `shift` decimal digits, looked up in a table), so there is no float noise and no String() per number.
 */
export class JsonWriter {
  buf = new Uint8Array(1 << 16);
  pos = 0;
  private shift = 0;
  private unit = 1;
  private scale = 1;
  /** Decimal fraction bytes (with the dot) for every numerator below 2^shift, when shift is small. */
  private fractions: Uint8Array[] = [];

  /** Sets the coordinate unit: pixels per tile unit, a power of two. */
  setUnit(unit: number): void {
    if (unit === this.unit && this.fractions.length > 0) return;
    this.unit = unit;
    this.shift = Math.round(-Math.log2(unit));
    this.scale = 2 ** Math.max(0, this.shift);
    this.fractions = [];
    if (this.shift > 0 && this.shift <= 12) {
      const pow5 = 5 ** this.shift;
      for (let f = 0; f < this.scale; f++) {
        // f / 2^shift = f·5^shift / 10^shift: `shift` digits, trailing zeros dropped.
        const digits = String(f * pow5).padStart(this.shift, '0').replace(/0+$/, '');
        // Byte by byte: TextEncoder costs microseconds a call, and every tiling call sets its zooms' tables.
        const bytes = new Uint8Array(digits === '' ? 0 : digits.length + 1);
        for (let i = 0; i < digits.length; i++) bytes[i + 1] = digits.charCodeAt(i);
        if (bytes.length > 0) bytes[0] = 0x2e;
        this.fractions.push(bytes);
      }
    }
  }

  reserve(n: number): void {
    this.buf = grown(this.buf, this.pos, n);
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

  /** Writes one coordinate at `p` (room reserved by the caller: 32 bytes) and returns the position after it. */
  private coordAt(buf: Uint8Array, p: number, q: number): number {
    let a = q;
    if (a < 0) { buf[p++] = C_MINUS; a = -a; }
    if (this.shift <= 0) return uintAt(buf, p, a * this.unit);
    if (this.fractions.length === 0 || a >= 2 ** 53) {
      const s = String(a * this.unit);
      for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
      return p;
    }
    const ip = Math.floor(a / this.scale);
    p = uintAt(buf, p, ip);
    const fr = this.fractions[a - ip * this.scale];
    for (let i = 0; i < fr.length; i++) buf[p++] = fr[i];
    return p;
  }

  private positions(c: ArrayLike<number>): void {
    this.reserve(c.length * 36 + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = C_OPEN;
    for (let i = 0; i + 1 < c.length; i += 2) {
      if (i > 0) buf[p++] = C_COMMA;
      buf[p++] = C_OPEN;
      p = this.coordAt(buf, p, c[i]);
      buf[p++] = C_COMMA;
      p = this.coordAt(buf, p, c[i + 1]);
      buf[p++] = C_CLOSE;
    }
    buf[p++] = C_CLOSE;
    this.pos = p;
  }

  private point(x: number, y: number): void {
    this.reserve(72);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = C_OPEN;
    p = this.coordAt(buf, p, x);
    buf[p++] = C_COMMA;
    p = this.coordAt(buf, p, y);
    buf[p++] = C_CLOSE;
    this.pos = p;
  }

  private rings(rs: readonly ArrayLike<number>[]): void {
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
          this.bytes(T.point); this.point(g.xy[0], g.xy[1]);
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

  /** One feature whose head is the bytes [start, end) of `src` (a ByteArena's buffer). */
  featureFrom(src: Uint8Array, start: number, end: number, g: TileGeometry): void {
    this.reserve(end - start);
    this.buf.set(src.subarray(start, end), this.pos);
    this.pos += end - start;
    this.geometry(g);
    this.byte(C_BRACE);
  }
}

/** The end of every JSON tile: closes `features` and the collection. */
export const TILE_SUFFIX = utf8.encode(']}');
