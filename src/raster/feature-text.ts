// A traced label's feature written as GeoJSON text straight from its rings, for the workers to parse as they parse a file.
import { grown } from '../bytes.js';
import type { LabelParts } from './features.js';
import type { LabelRings } from './trace.js';

const FEATURE_HEAD = ascii('{"type":"Feature","id":');
const GEOMETRY_POLYGON = ascii(',"geometry":{"type":"Polygon","coordinates":');
const GEOMETRY_MULTI = ascii(',"geometry":{"type":"MultiPolygon","coordinates":');
const PROPERTIES_LABEL = ascii('},"properties":{"label":');
const AREA = ascii(',"area":');
const PIECE = ascii(',"piece":');

/**
 * Strings in each text, member names among them: type, Feature, id, geometry, type, Polygon, coordinates, properties,
 * label, area; and piece in that of a piece (`LabelParts.piece`), which `stringsOf` counts.
 */
const FEATURE_TEXT_STRINGS = 10;

/** The strings of the text `write` gives for `parts`. */
export function stringsOf(parts: LabelParts): number {
  return parts.piece === undefined ? FEATURE_TEXT_STRINGS : FEATURE_TEXT_STRINGS + 1;
}

function ascii(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

/**
 * Writes labels' features into one buffer, each the text `JSON.stringify` of `labelFeature` would give (its numbers
 * are non-negative integers). Built as values, a traced mask's features were validated and encoded on the reading
 * thread, one core, while the workers waited: as text they are parsed where a file's features are. `reset` starts
 * the buffer again: the texts given before are views of it, to be read (copied) before then.
 */
export class FeatureTextWriter {
  private buf = new Uint8Array(1 << 20);
  private pos = 0;

  reset(): void {
    this.pos = 0;
  }

  /** The feature's text, a view of the buffer until the next `reset`; `top` is added to every y. */
  write(rings: LabelRings, parts: LabelParts, top: number): Uint8Array {
    const start = this.pos;
    this.bytes(FEATURE_HEAD);
    this.int(parts.id ?? parts.label);
    const multi = parts.polygons.length > 1;
    this.bytes(multi ? GEOMETRY_MULTI : GEOMETRY_POLYGON);
    if (multi) this.byte(0x5b);
    parts.polygons.forEach((polygon, p) => {
      if (p > 0) this.byte(0x2c);
      this.byte(0x5b);
      polygon.forEach((r, k) => {
        if (k > 0) this.byte(0x2c);
        this.ring(rings, r, top);
      });
      this.byte(0x5d);
    });
    if (multi) this.byte(0x5d);
    this.bytes(PROPERTIES_LABEL);
    this.int(parts.label);
    this.bytes(AREA);
    this.int(parts.area);
    if (parts.piece !== undefined) {
      this.bytes(PIECE);
      this.int(parts.piece);
    }
    this.byte(0x7d);
    this.byte(0x7d);
    return this.buf.subarray(start, this.pos);
  }

  /** A closed ring: its vertices, then its first again. Room made once, the bytes written by local index. */
  private ring(rings: LabelRings, r: number, top: number): void {
    const s = rings.start[r], n = rings.length[r], xy = rings.xy;
    // "[x,y]," of two 10-digit numbers at the most, per vertex and the closing repeat, and the brackets.
    if (this.pos + 24 * (n + 1) + 2 > this.buf.length) this.grow(24 * (n + 1) + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = 0x5b;
    for (let i = 0; i <= n; i++) {
      const v = 2 * (s + (i === n ? 0 : i));
      if (i > 0) buf[p++] = 0x2c;
      buf[p++] = 0x5b;
      p = digits(buf, p, xy[v]);
      buf[p++] = 0x2c;
      p = digits(buf, p, top + xy[v + 1]);
      buf[p++] = 0x5d;
    }
    buf[p++] = 0x5d;
    this.pos = p;
  }

  private byte(b: number): void {
    if (this.pos === this.buf.length) this.grow(1);
    this.buf[this.pos++] = b;
  }

  private bytes(b: Uint8Array): void {
    if (this.pos + b.length > this.buf.length) this.grow(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** A non-negative integer below 2^53 in decimal. */
  private int(v: number): void {
    if (this.pos + 16 > this.buf.length) this.grow(16);
    this.pos = digits(this.buf, this.pos, v);
  }

  private grow(n: number): void {
    this.buf = grown(this.buf, this.pos, n);
  }
}

/** Writes a non-negative integer below 2^53 in decimal at `p`; returns where it ends. */
function digits(buf: Uint8Array, p: number, v: number): number {
  if (v < 10) { buf[p] = 0x30 + v; return p + 1; }
  let n = 2;
  for (let t = 100; t <= v && n < 16; t *= 10) n++;
  const end = p + n;
  if (v < 2147483648) {
    for (let q = end, t = v | 0; q > p; t = (t / 10) | 0) buf[--q] = 0x30 + (t % 10);
  } else {
    for (let q = end, t = v; q > p; t = Math.floor(t / 10)) buf[--q] = 0x30 + (t % 10);
  }
  return end;
}
