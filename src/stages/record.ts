// Binary unit records: a feature's flat geometry, JSON tile head, PBF tags and routing flags, so a unit loads without parsing JSON.
import type { Mesh } from '../model/geometry.js';
import { emptyBox, flatFeatureOf, growBox, pieceCount, tagsOf, type FeatureTags, type Flat, type FlatFeature, type PbfValue, type TileGeometry } from '../tiling/flat.js';
import { headTextOf } from './encode-json.js';
import { reachOf } from '../tiling/reach.js';
import { StringCache } from './record-strings.js';
import { grown } from '../bytes.js';
import { centroidIn, G, isMulti, lodAfter, NEAR_PIECES, piecesOf, sixFrom, StreamReader, type Pieces } from './record-stream.js';
import type { Rect } from '../tiling/clip.js';
import { LONG_PART } from '../tiling/collapse.js';

// Record layout, native byte order (every platform Node ships for is little-endian), 8-byte aligned so the numbers
// can be read through one Float64Array over the whole unit:
//   u32 byte length (a multiple of 8) | u32 flags | f64 seq | u32 text bytes | u32 count of numbers
//   | f64 × count: geometry stream, then the 6 lod numbers when flagged, then the head's byte length when meshes
//   are flagged | text: the tags, the JSON tile head (UTF-8), then the JSON array of meshes when flagged | padding
// Geometry stream: a code, then per code: points n·xy; lines parts (n·xy)…; polygons polys (rings (n·xy)…)…;
// mesh its index in the meshes and box; collection members then each member.
// The head is stored as the very bytes JSON tiles start each feature with: the tiler copies them as they are.
// The tags are the layer id and what PBF tiles need, binary, so a unit never parses JSON per feature (parsing
// heads for them was ≈7% of a worker): u32 bytes after this field | u8 has id | f64 id when it has
//   | u32 n, layer id | u32 count | u32 bytes of the keys | per tag: u32 n, key | per tag: u8 kind (0 string,
//   1 number, 2 false, 3 true), u32 n, string or f64 number; strings UTF-8, numbers little-endian and unaligned.
// A partial record (flagged, with lod) holds some pieces of a large multi-geometry (points, lines or polygons); after
// its lod come their indexes in the whole.
// MANY: a multi-geometry of NEAR_PIECES pieces or more as read, thinned piece by piece (tile/pieces.ts), the flag kept
// through reduction, which may drop collapsed polygons below that count. PIECES: such a feature reduced, its pieces as
// read one more number after its lod (a zoom's share counts them); never on a partial record, which no unit counts.
// REACH: a feature with a `radius` (tiling/reach.ts), the radius one more number after those (a partial record's: after
// its indexes), before the head's byte length: a unit that keeps the records near its cell reads it with the box.
const HOME = 1, LOD = 2, MESHES = 4, PARTIAL = 16, MANY = 32, PIECES = 64, REACH = 128;
/** Flag of a pointer to a record stored once for many cells (shared-records.ts), which readers replace before reading. */
export const SHARED_FLAG = 8;
const HEADER = 24;
const CODE = { Point: G.Point, MultiPoint: G.MultiPoint, LineString: G.LineString, MultiLineString: G.MultiLineString, Polygon: G.Polygon, MultiPolygon: G.MultiPolygon } as const;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** The head of a record without one (a build with no JSON tiles): one empty view, not one per record read. */
const NO_HEAD = new Uint8Array(0);

/** Writes a feature's tags (see the layout above) into a reused buffer; the view is valid until the next call. */
class TagWriter {
  private buf = new Uint8Array(1 << 10);
  private view = new DataView(this.buf.buffer);
  private pos = 0;

  encode(layer: string, t: FeatureTags): Uint8Array {
    this.pos = 4;
    this.room(9);
    if (t.id === null) this.buf[this.pos++] = 0;
    else { this.buf[this.pos++] = 1; this.view.setFloat64(this.pos, t.id, true); this.pos += 8; }
    this.str(layer);
    this.u32(t.keys.length);
    // The keys together, ahead of the values: a unit finds the list again by its bytes (`StringCache.keyList`).
    const keysAt = this.pos;
    this.u32(0);
    for (const k of t.keys) this.str(k);
    this.view.setUint32(keysAt, this.pos - keysAt - 4, true);
    for (let i = 0; i < t.keys.length; i++) {
      const v = t.values[i];
      this.room(9);
      if (typeof v === 'string') { this.buf[this.pos++] = 0; this.str(v); }
      else if (typeof v === 'number') { this.buf[this.pos++] = 1; this.view.setFloat64(this.pos, v, true); this.pos += 8; }
      else this.buf[this.pos++] = v ? 3 : 2;
    }
    this.view.setUint32(0, this.pos - 4, true);
    return this.buf.subarray(0, this.pos);
  }

  private u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }

  private str(s: string): void {
    this.room(4 + s.length * 3);
    const b = this.buf, at = this.pos + 4;
    // Keys and classes are short ASCII: copied by hand, without a view and a native call per string.
    let n = 0;
    for (; n < s.length; n++) {
      const c = s.charCodeAt(n);
      if (c >= 0x80) break;
      b[at + n] = c;
    }
    if (n < s.length) n = encoder.encodeInto(s, b.subarray(at)).written;
    this.view.setUint32(this.pos, n, true);
    this.pos = at + n;
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.buf = grown(this.buf, this.pos, n) as Uint8Array<ArrayBuffer>;
    this.view = new DataView(this.buf.buffer);
  }
}

/** What a record holds: a feature in the tiler's form, but for its layer, which the record names by id. */
export type RecordFeature = Omit<FlatFeature, 'layer'>;

/**
 * Encodes one record at a time into a reused buffer; `bytes()` is a view valid until the next `encode`. Without
 * `heads` (a build with no JSON tiles) a record's JSON head is left empty: nothing reads it, and it was a quarter of
 * a cell's record.
 */
export class RecordEncoder {
  private buf = new Uint8Array(1 << 12);
  private f64 = new Float64Array(this.buf.buffer);
  private u32 = new Uint32Array(this.buf.buffer);
  private n = 0; // numbers written
  private meshes: Mesh[] = [];
  private length = 0;
  private readonly tags = new TagWriter();
  /** 2D bbox `[minX, minY, maxX, maxY]` of the positions of the last record (empty: min > max). */
  readonly box = new Float64Array(4);
  /** How far beyond `box` the last record's feature is drawn (`reachOf`): routed that much farther. */
  reach = 0;

  constructor(private readonly heads = true) {}

  /**
   * A feature (read from GeoJSON, or reduced on its way to the next level) of the layer `layer` (its id). False,
   * with nothing to use, when the geometry has no position: a mesh given by `tiles`, empty coordinates.
   */
  encode(layer: string, f: RecordFeature): boolean {
    emptyBox(this.box);
    this.n = 0;
    this.meshes = [];
    this.geometry(f.geom);
    if (!(this.box[0] <= this.box[2])) return false;
    this.reach = reachOf(f);
    this.finish(f.seq, f.tagsBytes ?? this.tags.encode(layer, tagsOf(f)), !this.heads ? NO_HEAD : f.headJson ?? headTextOf(f, layer), f.lod, f.many === true || pieceCount(f.geom) >= NEAR_PIECES, f.pieces);
    return true;
  }

  bytes(): Uint8Array { return this.buf.subarray(0, this.length); }

  private finish(seq: number, tags: Uint8Array, head: string | Uint8Array, lod: number[] | undefined, many: boolean, pieces: number | undefined): void {
    let flags = many ? MANY : 0;
    if (lod) { flags |= LOD; for (const v of lod) this.num(v); }
    if (pieces !== undefined) { flags |= PIECES; this.num(pieces); }
    if (this.reach > 0) { flags |= REACH; this.num(this.reach); }
    const meshes = this.meshes.length > 0 ? JSON.stringify(this.meshes) : '';
    const textAt = HEADER + (this.n + (meshes ? 1 : 0)) * 8;
    const headAt = textAt + tags.length;
    this.room(headAt + (typeof head === 'string' ? head.length * 3 : head.length) + meshes.length * 3 + 8);
    this.buf.set(tags, textAt);
    const headBytes = typeof head === 'string' ? encoder.encodeInto(head, this.buf.subarray(headAt)).written : (this.buf.set(head, headAt), head.length);
    let t = tags.length + headBytes;
    if (meshes) {
      flags |= MESHES;
      this.num(headBytes);
      t += encoder.encodeInto(meshes, this.buf.subarray(headAt + headBytes)).written;
    }
    const len = (textAt + t + 7) & ~7;
    this.buf.fill(0, textAt + t, len);
    const u32 = this.u32;
    u32[0] = len; u32[1] = flags; u32[4] = t; u32[5] = this.n;
    this.f64[1] = seq;
    this.length = len;
  }

  private room(n: number): void {
    if (n <= this.buf.length) return;
    this.buf = grown(this.buf, this.buf.length, n - this.buf.length) as Uint8Array<ArrayBuffer>;
    this.f64 = new Float64Array(this.buf.buffer);
    this.u32 = new Uint32Array(this.buf.buffer);
  }

  private num(v: number): void {
    const at = HEADER / 8 + this.n;
    if ((at + 1) * 8 > this.buf.length) this.room((at + 1) * 8);
    this.f64[at] = v;
    this.n++;
  }

  private flat(c: Flat): void {
    this.num(c.length);
    this.room(HEADER + (this.n + c.length) * 8);
    const base = HEADER / 8 + this.n;
    for (let i = 0; i < c.length; i++) this.f64[base + i] = c[i];
    growBox(this.box, c);
    this.n += c.length;
  }

  private geometry(g: TileGeometry): void {
    switch (g.k) {
      case 'points': this.num(CODE[g.type]); this.flat(g.xy); return;
      case 'lines': this.num(CODE[g.type]); this.num(g.parts.length); for (const p of g.parts) this.flat(p); return;
      case 'polygons':
        this.num(CODE[g.type]); this.num(g.polys.length);
        for (const poly of g.polys) { this.num(poly.length); for (const r of poly) this.flat(r); }
        return;
      case 'mesh': this.mesh(g.geometry, g.box); return;
      case 'collection': this.num(G.Collection); this.num(g.members.length); for (const m of g.members) this.geometry(m); return;
    }
  }

  private mesh(m: Mesh, box: ArrayLike<number>): void {
    this.num(G.Mesh); this.num(this.meshes.length); this.meshes.push(m);
    for (let i = 0; i < 4; i++) this.num(box[i]);
    growBox(this.box, box);
  }
}

/** Sets the home flag of a record written at `at` in `buf` (the same record goes to several cells). */
export function setHome(buf: Uint8Array, at: number, home: boolean): void {
  buf[at + 4] = (buf[at + 4] & ~HOME) | (home ? HOME : 0);
}

/**
 * The pieces (`piecesOf`) of the record at byte `at` of the buffer `f64` views (from its start), null for any record
 * but a multi-geometry of NEAR_PIECES pieces or more. Any other record costs one look at its first number.
 */
export function recordPieces(f64: Float64Array, at: number): Pieces | null {
  const base = (at + HEADER) >> 3;
  if (!isMulti(f64[base])) return null;
  return piecesOf(f64, base, (new Uint32Array(f64.buffer, at + 4, 1)[0] & LOD) !== 0);
}

/**
 * A record of the pieces `keep` (indexes, ascending) of the large multi-geometry whose record is at byte `at` of the
 * buffer `f64` views (`pieces`, from `recordPieces`), with the whole's lod and their indexes in it: what a cell away
 * from the feature's home and centroid stores of it. Not home; its tags and head as the whole's.
 */
export function partialRecord(f64: Float64Array, at: number, pieces: Pieces, keep: readonly number[]): Uint8Array {
  const u32 = new Uint32Array(f64.buffer, at, HEADER >> 2);
  const { code, starts, lod } = pieces;
  const reach = u32[1] & REACH ? 1 : 0;
  let count = 2 + 6 + keep.length + reach;
  for (const k of keep) count += starts[k + 1] - starts[k];
  const textBytes = u32[4], textAt = at + HEADER + u32[5] * 8;
  const len = (HEADER + count * 8 + textBytes + 7) & ~7;
  const out = new Uint8Array(len);
  const o32 = new Uint32Array(out.buffer), o64 = new Float64Array(out.buffer);
  o32[0] = len; o32[1] = (u32[1] & ~(HOME | PIECES)) | LOD | PARTIAL; o32[4] = textBytes; o32[5] = count;
  o64[1] = f64[(at >> 3) + 1];
  let n = HEADER >> 3;
  o64[n++] = code;
  // A MultiPoint's count is of its numbers, two a point; the others' of their pieces.
  o64[n++] = code === G.MultiPoint ? 2 * keep.length : keep.length;
  for (const k of keep) { o64.set(f64.subarray(starts[k], starts[k + 1]), n); n += starts[k + 1] - starts[k]; }
  o64.set(lod, n);
  n += 6;
  for (const k of keep) o64[n++] = k;
  // A multi-geometry has no meshes: its reach is its last number.
  if (reach) o64[n++] = f64[((at + HEADER) >> 3) + u32[5] - 1];
  out.set(new Uint8Array(f64.buffer, textAt, textBytes), n * 8);
  return out;
}

/** Walks the records of a unit's bytes: `next()` moves on, fields describe the current record, `feature()` decodes it. */
export class RecordReader {
  private readonly bytes: Uint8Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly view: DataView;
  private at = -1;
  /** Where `tags` is reading. */
  private tp = 0;
  private end = 0;
  seq = 0;
  home = false;
  /** The current record's reach (`RecordEncoder.reach`): how far beyond its box its feature is drawn. */
  reach = 0;
  /** Whether the current record is partial (`partialRecord`): `feature()` then sets `pieces` to its polygons' indexes in the whole. */
  partial = false;
  pieces: number[] = [];

  /** `strings`: the cache of tag strings, shared by the readers of one unit's records. */
  constructor(bytes: Uint8Array, private readonly strings = new StringCache()) {
    // Typed views need aligned offsets: a buffer from a pool or a base64 decode may not be.
    this.bytes = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
    const b = this.bytes;
    this.u32 = new Uint32Array(b.buffer, b.byteOffset, b.byteLength >> 2);
    this.f64 = new Float64Array(b.buffer, b.byteOffset, b.byteLength >> 3);
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  next(): boolean {
    this.at = this.at < 0 ? 0 : this.end;
    if (this.at + HEADER > this.bytes.byteLength) return false;
    const w = this.at >> 2;
    this.end = this.at + this.u32[w];
    this.home = (this.u32[w + 1] & HOME) !== 0;
    this.partial = (this.u32[w + 1] & PARTIAL) !== 0;
    this.seq = this.f64[(this.at >> 3) + 1];
    const flags = this.u32[w + 1];
    this.reach = flags & REACH ? this.f64[((this.at + HEADER) >> 3) + this.u32[w + 5] - 1 - (flags & MESHES ? 1 : 0)] : 0;
    return true;
  }

  /** Byte length of the current record. */
  get length(): number {
    return this.end - this.at;
  }

  /** The current record's bytes, a view. */
  get record(): Uint8Array {
    return this.bytes.subarray(this.at, this.end);
  }

  /**
   * The 2D box of the current record's positions (meshes by their box) into `out`, the very box it was routed by,
   * without decoding it: a unit that keeps only the records meeting its cell looks at every record this way.
   */
  box(out: Float64Array): Float64Array {
    emptyBox(out);
    new StreamReader(this.f64, (this.at + HEADER) >> 3, []).extend(out);
    return out;
  }

  /**
   * The current record as a feature of layer index `layerIndex(layer id)`. With `near` (the reach of the unit reading
   * it, `partialRecord`'s rule), a large multi-geometry that is not its own and whose centroid lies outside `near` is
   * read as its pieces meeting `near`, partial.
   */
  feature(layerIndex: (id: string) => number, near?: Rect): FlatFeature {
    const w = this.at >> 2;
    const flags = this.u32[w + 1], textBytes = this.u32[w + 4], count = this.u32[w + 5];
    const base = (this.at + HEADER) >> 3;
    const textAt = this.at + HEADER + count * 8;
    const headAt = textAt + 4 + this.view.getUint32(textAt, true);
    const headBytes = flags & MESHES ? this.f64[base + count - 1] : textAt + textBytes - headAt;
    const headJson = headBytes === 0 ? NO_HEAD : this.bytes.subarray(headAt, headAt + headBytes);
    const { layer, tags } = this.tags(textAt);
    const meshes = flags & MESHES ? JSON.parse(decoder.decode(this.bytes.subarray(headAt + headBytes, textAt + textBytes))) as Mesh[] : [];
    const r = new StreamReader(this.f64, base, meshes);
    // Pieces of a point's circle reach that much farther than the points.
    if (near !== undefined && this.reach > 0) near = { minX: near.minX - this.reach, minY: near.minY - this.reach, maxX: near.maxX + this.reach, maxY: near.maxY + this.reach };
    const pieces = near !== undefined && !this.home ? piecesOf(this.f64, base, (flags & LOD) !== 0) : null;
    // A large polygon not its own, whose lod is known and lies beyond: its holes beyond are not read (`holesBeyond`).
    if (near !== undefined && !this.home && count >= 2 * LONG_PART) {
      const known = pieces?.lod ?? (flags & LOD ? lodAfter(this.f64, base) : undefined);
      if (known !== undefined && !centroidIn(known, near)) r.holesBeyond = near;
    }
    const cut = pieces !== null && near !== undefined && !centroidIn(pieces.lod, near) ? r.piecesNear(pieces, near) : null;
    const geom = cut?.geom ?? r.geometry();
    const lod = flags & LOD ? sixFrom(this.f64, r.i) : pieces?.lod;
    if (flags & PARTIAL) this.pieces = Array.from(this.f64.subarray(r.i + 6, base + count - (flags & REACH ? 1 : 0)));
    if (cut !== null) this.pieces = flags & PARTIAL ? cut.places.map((p) => this.pieces[p]) : cut.places;
    // Read without holes, a whole record is partial too: a copy at home later in a unit of several cells takes its place.
    else if (r.holesLeftOut > 0 && !(flags & PARTIAL)) this.pieces = geom.k === 'polygons' ? geom.polys.map((_, i) => i) : [0];
    if (cut !== null || r.holesLeftOut > 0) this.partial = true;
    const whole = flags & PIECES ? this.f64[r.i + (flags & LOD ? 6 : 0)] : undefined;
    return flatFeatureOf(this.seq, layerIndex(layer), geom, lod, undefined, headJson, tags, this.bytes.subarray(textAt, headAt), (flags & MANY) !== 0, whole);
  }

  /** The tags written at `at` (see TagWriter): the layer id and the feature's PBF id and tags. */
  private tags(at: number): { layer: string; tags: FeatureTags } {
    const b = this.bytes, view = this.view;
    this.tp = at + 4;
    let id: number | null = null;
    if (b[this.tp++] === 1) { id = view.getFloat64(this.tp, true); this.tp += 8; }
    const layer = this.tagString();
    const count = view.getUint32(this.tp, true), keyBytes = view.getUint32(this.tp + 4, true);
    const keys = this.strings.keyList(b, this.tp + 8, this.tp + 8 + keyBytes, count);
    this.tp += 8 + keyBytes;
    const values = new Array<PbfValue>(count);
    for (let i = 0; i < count; i++) {
      const kind = b[this.tp++];
      if (kind === 0) values[i] = this.tagString();
      else if (kind === 1) { values[i] = view.getFloat64(this.tp, true); this.tp += 8; }
      else values[i] = kind === 3;
    }
    return { layer, tags: { id, keys, values } };
  }

  private tagString(): string {
    const n = this.view.getUint32(this.tp, true);
    const s = this.strings.get(this.bytes, this.tp + 4, this.tp + 4 + n);
    this.tp += 4 + n;
    return s;
  }
}

/** Per record of `min` bytes or more in `buf` (records back to back): its bytes and its box's larger side (`wideBytesOf`). */
export function largeRecords(buf: Uint8Array, min: number): Array<[bytes: number, side: number]> {
  const out: Array<[number, number]> = [];
  const b = buf.byteOffset % 8 === 0 ? buf : buf.slice();
  const u32 = new Uint32Array(b.buffer, b.byteOffset, b.byteLength >> 2);
  const box = new Float64Array(4);
  for (let at = 0, len = 0; at < b.byteLength; at += len) {
    len = u32[at >> 2];
    if (len < HEADER || at + len > b.byteLength) break;
    if (len < min) continue;
    new StreamReader(new Float64Array(b.buffer, b.byteOffset + at, len >> 3), HEADER >> 3, []).extend(emptyBox(box));
    out.push([len, Math.max(box[2] - box[0], box[3] - box[1])]);
  }
  return out;
}
