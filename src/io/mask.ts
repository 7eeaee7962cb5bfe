// Label masks (8, 16, 32-bit PNG/TIFF) to one exact pixel-outline polygon feature per label, in one pass over the pixels.
import sharp, { type DepthEnum, type Metadata, type OutputInfo } from 'sharp';
import type { MultiPolygon, Polygon, Position } from '../model/geometry.js';
import type { Feature } from '../model/feature.js';
import { ImageError, describeSharpError } from './image.js';

/** A greyscale label image in row-major order; 0 is background, every other value one label. */
export interface LabelMask {
  width: number;
  height: number;
  data: Uint8Array | Uint16Array | Uint32Array;
}

export interface LabelProperties {
  label: number;
  /** Pixel count, which is also the polygon's area: outlines run along pixel edges. */
  area: number;
  [name: string]: unknown;
}

export type LabelFeature = Feature<Polygon | MultiPolygon> & { id: number; properties: LabelProperties };

/**
 * Reads a label mask from a PNG or TIFF file (the first page of a TIFF). Unsigned 8, 16 and 32-bit samples keep
 * their values exactly; signed 8 and 32-bit and floating-point samples are accepted when every value is a
 * non-negative integer that fits 32 bits. Signed 16-bit samples are read through libvips' 16-bit grey path, which
 * clamps negative values to 0 (background). Colour images are refused: a colour or palette image does not carry
 * label numbers sharp can recover.
 */
export async function readLabelMask(path: string): Promise<LabelMask> {
  // Whole-slide masks exceed sharp's default pixel limit by far; the caller chose the file.
  const open = () => sharp(path, { limitInputPixels: false });
  let meta: Metadata;
  try {
    meta = await open().metadata();
  } catch (err) {
    throw new ImageError(path, await describeSharpError(path, err));
  }
  if (meta.format !== 'png' && meta.format !== 'tiff') {
    throw new ImageError(path, `unsupported label mask format '${meta.format}' (PNG or TIFF expected; JPEG is lossy)`);
  }
  const bands = meta.channels - (meta.hasAlpha ? 1 : 0);
  if (bands !== 1 || meta.isPalette) {
    throw new ImageError(path, `a label mask must be a single-channel greyscale image, this one has ${meta.channels} channels${meta.isPalette ? ' (palette)' : ''}`);
  }
  let pipeline = open();
  if (meta.hasAlpha) pipeline = pipeline.removeAlpha();
  const plan = READ_PLAN[meta.depth];
  if (plan === undefined) throw new ImageError(path, `unsupported sample type '${meta.depth}' for labels`);
  // Without an explicit colourspace sharp converts to 8-bit sRGB on output and the labels are lost.
  pipeline = pipeline.toColourspace(plan.space).raw({ depth: plan.raw });
  let out: { data: Buffer; info: OutputInfo };
  try {
    out = await pipeline.toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw new ImageError(path, await describeSharpError(path, err));
  }
  const { width, height, channels } = out.info;
  const n = width * height;
  if (channels !== 1 || out.data.byteLength !== n * plan.bytes) {
    throw new ImageError(path, `decoder returned ${channels} channels and ${out.data.byteLength} bytes for ${width} × ${height} pixels`);
  }
  // Typed views need an aligned offset; sharp's buffers are normally aligned, a copy covers the rare other case.
  const bytes = out.data.byteOffset % plan.bytes === 0 ? out.data : Buffer.from(out.data);
  const data = plan.convert(bytes, n, path);
  return { width, height, data };
}

interface ReadPlan {
  space: 'b-w' | 'grey16';
  raw: keyof DepthEnum;
  bytes: number;
  convert(b: Buffer, n: number, path: string): Uint8Array | Uint16Array | Uint32Array;
}

function checkNonNegativeIntegers(values: ArrayLike<number>, path: string): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!(v >= 0 && v <= 0xffffffff && Math.floor(v) === v)) {
      throw new ImageError(path, `label value ${v} at pixel ${i} is not a non-negative integer below 2^32`);
    }
  }
}

const READ_PLAN: Partial<Record<string, ReadPlan>> = {
  uchar: { space: 'b-w', raw: 'uchar', bytes: 1, convert: (b, n) => new Uint8Array(b.buffer, b.byteOffset, n) },
  char: {
    space: 'b-w', raw: 'char', bytes: 1,
    convert: (b, n, path) => { checkNonNegativeIntegers(new Int8Array(b.buffer, b.byteOffset, n), path); return new Uint8Array(b.buffer, b.byteOffset, n); },
  },
  ushort: { space: 'grey16', raw: 'ushort', bytes: 2, convert: (b, n) => new Uint16Array(b.buffer, b.byteOffset, n) },
  short: { space: 'grey16', raw: 'ushort', bytes: 2, convert: (b, n) => new Uint16Array(b.buffer, b.byteOffset, n) },
  uint: { space: 'b-w', raw: 'uint', bytes: 4, convert: (b, n) => new Uint32Array(b.buffer, b.byteOffset, n) },
  int: {
    space: 'b-w', raw: 'int', bytes: 4,
    convert: (b, n, path) => { checkNonNegativeIntegers(new Int32Array(b.buffer, b.byteOffset, n), path); return new Uint32Array(b.buffer, b.byteOffset, n); },
  },
  float: {
    space: 'b-w', raw: 'float', bytes: 4,
    convert: (b, n, path) => { const f = new Float32Array(b.buffer, b.byteOffset, n); checkNonNegativeIntegers(f, path); return Uint32Array.from(f); },
  },
  double: {
    space: 'b-w', raw: 'double', bytes: 8,
    convert: (b, n, path) => { const f = new Float64Array(b.buffer, b.byteOffset, n); checkNonNegativeIntegers(f, path); return Uint32Array.from(f); },
  },
};

/*
 * Geometry conventions
 * --------------------
 * Pixel (x, y) is the square [x, x+1] × [y, y+1]; outlines run along pixel edges, so every vertex is an integer
 * pixel corner and a label's polygon area equals its pixel count exactly.
 *
 * Connectivity: a region is a 4-connected set of pixels of one label. Two pixels of a label that touch only at a
 * corner are separate components (a MultiPolygon when nothing else connects them).
 *
 * Winding (RFC 7946): exterior rings have positive signed area by the shoelace formula over the raw (x, y) numbers
 * — counter-clockwise when y is drawn up, as GeoJSON states it; clockwise as seen on screen with y down, which is
 * also the sign MVT requires of exterior rings in tile coordinates. Holes have negative signed area.
 *
 * At a corner where a label holds two diagonally opposite pixels of the 2 × 2 block (a "saddle"), each ring turns
 * around its own pixel, which is what 4-connectivity means, so rings never cross. A ring can still come back to a
 * saddle corner when both diagonal pixels belong to one component; such a ring is split there into an outer ring
 * and a hole (or two holes) touching at that single vertex, the form OGC simple features accepts as valid. So no
 * ring touches itself, rings only touch at isolated vertices, and no ring has a repeated or collinear vertex.
 */

// Directions: 0 = +x, 1 = +y, 2 = −x, 3 = −y. The label lies on the side (−dy, dx) of an edge.
const DX = [1, 0, -1, 0];
const DY = [0, 1, 0, -1];
// Relative to the corner reached, the pixel ahead on the label's side and the one ahead on the other side.
const IN_X = [0, -1, -1, 0];
const IN_Y = [0, 0, -1, -1];
const OUT_X = [0, 0, -1, -1];
const OUT_Y = [-1, 0, 0, -1];

/** Rings of every label, flat: what one raster pass produces before rings are grouped into features. */
export interface LabelRings {
  /** Number of rings. */
  count: number;
  label: Uint32Array;
  /** Offset of a ring's first vertex in `xy` (in positions, not numbers). */
  start: Float64Array;
  /** Vertices in the ring, without the closing repeat. */
  length: Uint32Array;
  /** Twice the signed area: positive for outer rings, negative for holes. */
  area2: Float64Array;
  /** Interleaved x, y of every vertex. */
  xy: Int32Array;
}

class GrowI32 {
  a: Int32Array;
  n = 0;
  constructor(capacity: number) { this.a = new Int32Array(Math.max(16, capacity)); }
  reserve(extra: number): void {
    if (this.n + extra <= this.a.length) return;
    let cap = this.a.length * 2;
    while (cap < this.n + extra) cap *= 2;
    const b = new Int32Array(cap);
    b.set(this.a.subarray(0, this.n));
    this.a = b;
  }
}

class RingTable {
  count = 0;
  label = new Uint32Array(1024);
  start = new Float64Array(1024);
  length = new Uint32Array(1024);
  area2 = new Float64Array(1024);
  xy = new GrowI32(1 << 16);

  add(label: number, src: Int32Array, from: number, to: number): void {
    // `from`, `to` index positions in src (pairs of numbers).
    if (this.count === this.label.length) this.grow();
    const n = to - from;
    let a2 = 0;
    for (let i = from; i < to; i++) {
      const j = i + 1 < to ? i + 1 : from;
      a2 += src[2 * i] * src[2 * j + 1] - src[2 * j] * src[2 * i + 1];
    }
    const k = this.count++;
    this.label[k] = label;
    this.start[k] = this.xy.n / 2;
    this.length[k] = n;
    this.area2[k] = a2;
    this.xy.reserve(2 * n);
    this.xy.a.set(src.subarray(2 * from, 2 * to), this.xy.n);
    this.xy.n += 2 * n;
  }

  /** Adds vertices by index list from src (used when a pinched ring is cut into loops). */
  addIndexed(label: number, src: Int32Array, idx: ArrayLike<number>, from: number, to: number): void {
    if (this.count === this.label.length) this.grow();
    const n = to - from;
    this.xy.reserve(2 * n);
    const dst = this.xy.a;
    let o = this.xy.n;
    const k = this.count++;
    this.label[k] = label;
    this.start[k] = o / 2;
    this.length[k] = n;
    // Like traced rings, a loop starts at its first corner in raster order (lowest y, then lowest x).
    let first = from;
    for (let i = from + 1; i < to; i++) {
      const p = idx[i], f = idx[first];
      if (src[2 * p + 1] < src[2 * f + 1] || (src[2 * p + 1] === src[2 * f + 1] && src[2 * p] < src[2 * f])) first = i;
    }
    let a2 = 0;
    for (let k = 0; k < n; k++) {
      const i = first + k < to ? first + k : first + k - n;
      const p = idx[i], q = idx[i + 1 < to ? i + 1 : from];
      a2 += src[2 * p] * src[2 * q + 1] - src[2 * q] * src[2 * p + 1];
      dst[o++] = src[2 * p];
      dst[o++] = src[2 * p + 1];
    }
    this.xy.n = o;
    this.area2[k] = a2;
  }

  private grow(): void {
    const cap = this.label.length * 2;
    const l = new Uint32Array(cap); l.set(this.label); this.label = l;
    const s = new Float64Array(cap); s.set(this.start); this.start = s;
    const n = new Uint32Array(cap); n.set(this.length); this.length = n;
    const a = new Float64Array(cap); a.set(this.area2); this.area2 = a;
  }

  result(): LabelRings {
    return {
      count: this.count,
      label: this.label.subarray(0, this.count),
      start: this.start.subarray(0, this.count),
      length: this.length.subarray(0, this.count),
      area2: this.area2.subarray(0, this.count),
      xy: this.xy.a.subarray(0, this.xy.n),
    };
  }
}

function checkMask(mask: LabelMask): void {
  const { width, height, data } = mask;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 0 || height < 0) {
    throw new RangeError(`label mask size ${width} × ${height} is not a pair of non-negative integers`);
  }
  if (data.length !== width * height) {
    throw new RangeError(`label mask data has ${data.length} values for ${width} × ${height} pixels`);
  }
}

/** What a raster pass shares with the ring walks it starts. */
interface Trace {
  W: number;
  H: number;
  m: Uint8Array | Uint16Array | Uint32Array;
  wordsPerLine: number;
  /** Visited bits per horizontal edge line y (0..H): an edge walked in +x (the label below it). */
  visitedDown: Uint32Array;
  /** Visited bits per horizontal edge line: an edge walked in −x (the label above it). */
  visitedUp: Uint32Array;
  ring: Int32Array<ArrayBuffer>;
  saddles: Int32Array<ArrayBuffer>;
  table: RingTable;
}

/**
 * Every ring of every label, in one raster pass. The scan looks at each horizontal pixel edge once; the first
 * unvisited boundary edge of a ring starts a walk along that ring, so each boundary edge is walked exactly once and
 * work is pixels + boundary length, whatever the number of labels. Only horizontal edges need "visited" bits,
 * because every ring has some and the scan only starts walks on them: 2 bits per pixel in total.
 */
export function traceLabelRings(mask: LabelMask): LabelRings {
  checkMask(mask);
  const W = mask.width, H = mask.height, m = mask.data;
  const table = new RingTable();
  if (W === 0 || H === 0) return table.result();
  const wordsPerLine = (W + 31) >>> 5;
  const t: Trace = {
    W, H, m, wordsPerLine, table,
    visitedDown: new Uint32Array(wordsPerLine * (H + 1)),
    visitedUp: new Uint32Array(wordsPerLine * (H + 1)),
    ring: new Int32Array(1024),
    saddles: new Int32Array(64),
  };
  // The image edge lines apart, so the loop over inner lines (nearly all the work) has no bounds tests.
  for (let x = 0; x < W; x++) if (m[x] !== 0) boundary(t, 0, m[x], x, 0);
  for (let y = 1; y < H; y++) {
    const end = y * W;
    for (let i = end - W; i < end; i++) {
      const a = m[i], b = m[i + W];
      if (a !== b) boundary(t, a, b, i + W - end, y);
    }
  }
  const last = (H - 1) * W;
  for (let x = 0; x < W; x++) if (m[last + x] !== 0) boundary(t, m[last + x], 0, x, H);
  return table.result();
}

/** Horizontal edge at column x of line y between label a above and b below (a ≠ b): start walks on unvisited sides. */
function boundary(t: Trace, a: number, b: number, x: number, y: number): void {
  const word = y * t.wordsPerLine + (x >>> 5), bit = 1 << (x & 31);
  if (b !== 0 && (t.visitedDown[word] & bit) === 0) walk(t, b, x, y, 0);
  if (a !== 0 && (t.visitedUp[word] & bit) === 0) {
    // The leftmost edge of the ring on this line ends at corner (x, y), a true corner: start there.
    walk(t, a, x, y, turn(t, a, x, y, 2) & 3);
  }
}

/** The direction leaving corner (vx, vy) after arriving in direction d; bit 4 set when the corner is a saddle. */
function turn(t: Trace, L: number, vx: number, vy: number, d: number): number {
  const W = t.W, H = t.H, m = t.m;
  const ix = vx + IN_X[d], iy = vy + IN_Y[d], ox = vx + OUT_X[d], oy = vy + OUT_Y[d];
  const inL = ix >= 0 && ix < W && iy >= 0 && iy < H && m[iy * W + ix] === L;
  const outL = ox >= 0 && ox < W && oy >= 0 && oy < H && m[oy * W + ox] === L;
  // Checking the label's own side first makes a saddle turn around our pixel: 4-connectivity.
  if (!inL) return ((d + 1) & 3) | (outL ? 4 : 0);
  return outL ? (d + 3) & 3 : d;
}

/** Walks one ring from corner (sx, sy), leaving in direction sd, and adds it (cut at pinches) to the table. */
function walk(t: Trace, L: number, sx: number, sy: number, sd: number): void {
  const { W, H, m, wordsPerLine, visitedDown, visitedUp } = t;
  let ring = t.ring, saddles = t.saddles;
  let n = 1, ns = 0;
  ring[0] = sx; ring[1] = sy;
  let vx = sx, vy = sy, d = sd;
  for (;;) {
    if (d === 0) {
      visitedDown[vy * wordsPerLine + (vx >>> 5)] |= 1 << (vx & 31);
    } else if (d === 2) {
      const x = vx - 1;
      visitedUp[vy * wordsPerLine + (x >>> 5)] |= 1 << (x & 31);
    }
    vx += DX[d]; vy += DY[d];
    // The turn, inlined: this loop runs once per boundary edge of the whole mask. Away from the image edge the
    // four pixels around a corner are all inside, and their offsets from the corner's pixel index are fixed.
    let inL: boolean, outL: boolean;
    if (vx > 0 && vx < W && vy > 0 && vy < H) {
      const p = vy * W + vx;
      switch (d) {
        case 0: inL = m[p] === L; outL = m[p - W] === L; break;
        case 1: inL = m[p - 1] === L; outL = m[p] === L; break;
        case 2: inL = m[p - W - 1] === L; outL = m[p - 1] === L; break;
        default: inL = m[p - W] === L; outL = m[p - W - 1] === L; break;
      }
    } else {
      const ix = vx + IN_X[d], iy = vy + IN_Y[d], ox = vx + OUT_X[d], oy = vy + OUT_Y[d];
      inL = ix >= 0 && ix < W && iy >= 0 && iy < H && m[iy * W + ix] === L;
      outL = ox >= 0 && ox < W && oy >= 0 && oy < H && m[oy * W + ox] === L;
    }
    const nd = inL ? (outL ? (d + 3) & 3 : d) : (d + 1) & 3;
    const saddle = !inL && outL;
    if (vx === sx && vy === sy && nd === sd) {
      if (saddle) { if (ns === saddles.length) saddles = t.saddles = grow32(saddles); saddles[ns++] = 0; }
      break;
    }
    if (nd !== d) {
      if (2 * n + 2 > ring.length) ring = t.ring = grow32(ring);
      if (saddle) { if (ns === saddles.length) saddles = t.saddles = grow32(saddles); saddles[ns++] = n; }
      ring[2 * n] = vx; ring[2 * n + 1] = vy; n++;
      d = nd;
    }
  }
  if (ns < 2 || !commitPinched(t.table, L, ring, n, saddles, ns, H + 1)) t.table.add(L, ring, 0, n);
}

function grow32(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Cuts a ring that passes a saddle corner twice into loops at that corner. Returns false (nothing committed) when no
 * saddle corner repeats, the common case.
 */
function commitPinched(table: RingTable, L: number, ring: Int32Array, n: number, saddles: Int32Array, ns: number, stride: number): boolean {
  const seen = new Map<number, number>();
  const repeated = new Set<number>();
  for (let k = 0; k < ns; k++) {
    const i = saddles[k];
    const key = ring[2 * i] * stride + ring[2 * i + 1];
    if (seen.has(key)) repeated.add(key); else seen.set(key, i);
  }
  if (repeated.size === 0) return false;
  // Stack walk: when a repeated corner comes round again, everything since its first visit is a closed loop.
  const stack = new Int32Array(n);
  let top = 0;
  const onStack = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const key = ring[2 * i] * stride + ring[2 * i + 1];
    if (repeated.has(key)) {
      const p = onStack.get(key);
      if (p !== undefined) {
        table.addIndexed(L, ring, stack, p, top);
        for (const [k, q] of onStack) if (q > p) onStack.delete(k);
        top = p + 1;
        continue;
      }
      onStack.set(key, top);
    }
    stack[top++] = i;
  }
  table.addIndexed(L, ring, stack, 0, top);
  return true;
}

/**
 * One Polygon or MultiPolygon feature per label, sorted by label: `id` and `properties.label` are the label,
 * `properties.area` its pixel count. Holes are inner rings of the outer ring that contains them; a label with
 * several 4-connected components becomes a MultiPolygon, components in raster order of their top-left pixel.
 * Rings are closed, start at their first vertex in raster order (lowest y, then lowest x), and have no collinear
 * vertices. The raster pass runs on the first call to `next()`; features are then built one at a time so that only
 * flat typed arrays are held between them.
 */
export function* labelsToFeatures(mask: LabelMask): Generator<LabelFeature, void, undefined> {
  const rings = traceLabelRings(mask);
  yield* ringsToFeatures(rings);
}

/** Groups rings by label (ascending) and builds the features; see `labelsToFeatures`. */
export function* ringsToFeatures(rings: LabelRings): Generator<LabelFeature, void, undefined> {
  const { count, label } = rings;
  const order = sortByLabel(label, count);
  let g = 0;
  while (g < count) {
    const L = label[order[g]];
    let e = g + 1;
    while (e < count && label[order[e]] === L) e++;
    yield buildFeature(rings, order.subarray(g, e), L);
    g = e;
  }
}

/**
 * Ring indexes ordered by label, two stable 16-bit counting passes: rings of a label keep raster discovery order,
 * and it takes linear time where a comparison sort of 10^5–10^6 rings with a callback was the slowest step.
 */
function sortByLabel(label: Uint32Array, count: number): Uint32Array {
  let src = new Uint32Array(count), dst = new Uint32Array(count);
  for (let i = 0; i < count; i++) src[i] = i;
  const bucket = new Uint32Array(65537);
  for (const shift of [0, 16]) {
    bucket.fill(0);
    for (let i = 0; i < count; i++) bucket[((label[src[i]] >>> shift) & 0xffff) + 1]++;
    for (let k = 1; k <= 65536; k++) bucket[k] += bucket[k - 1];
    for (let i = 0; i < count; i++) { const r = src[i]; dst[bucket[(label[r] >>> shift) & 0xffff]++] = r; }
    const swap = src; src = dst; dst = swap;
  }
  return src;
}

function ringPositions(rings: LabelRings, r: number): Position[] {
  const s = rings.start[r], n = rings.length[r], xy = rings.xy;
  const out: Position[] = new Array(n + 1);
  for (let i = 0; i < n; i++) out[i] = [xy[2 * (s + i)], xy[2 * (s + i) + 1]];
  out[n] = [out[0][0], out[0][1]];
  return out;
}

function buildFeature(rings: LabelRings, members: Uint32Array, L: number): LabelFeature {
  const outers: number[] = [];
  const holes: number[] = [];
  let area2 = 0;
  for (const r of members) {
    area2 += rings.area2[r];
    if (rings.area2[r] > 0) outers.push(r); else holes.push(r);
  }
  const holesOf: number[][] = outers.map(() => []);
  if (outers.length === 1) {
    holesOf[0] = holes;
  } else {
    for (const h of holes) holesOf[ownerOf(rings, h, outers)].push(h);
  }
  const polygons = outers.map((o, k) => [ringPositions(rings, o), ...holesOf[k].map((h) => ringPositions(rings, h))]);
  const geometry: Polygon | MultiPolygon = polygons.length === 1
    ? { type: 'Polygon', coordinates: polygons[0] }
    : { type: 'MultiPolygon', coordinates: polygons };
  return { type: 'Feature', id: L, geometry, properties: { label: L, area: area2 / 2 } };
}

/**
 * The outer ring a hole belongs to. The probe is the centre of the labelled pixel beside the hole's first edge: a
 * half-integer point is never on an outline, and that pixel belongs to the hole's own component. An outer ring of
 * a component that surrounds this one (the component sits in its hole) contains the probe too; the innermost,
 * i.e. the smallest containing outer ring, is the owner.
 */
function ownerOf(rings: LabelRings, h: number, outers: number[]): number {
  const xy = rings.xy, s = rings.start[h];
  const x0 = xy[2 * s], y0 = xy[2 * s + 1];
  const dx = Math.sign(xy[2 * s + 2] - x0), dy = Math.sign(xy[2 * s + 3] - y0);
  const px = x0 + 0.5 * dx - 0.5 * dy, py = y0 + 0.5 * dy + 0.5 * dx;
  let best = 0, bestArea = Infinity;
  for (let k = 0; k < outers.length; k++) {
    const o = outers[k];
    if (rings.area2[o] < bestArea && contains(rings, o, px, py)) { best = k; bestArea = rings.area2[o]; }
  }
  return best;
}

/** Even-odd ray casting; the probe is never on the ring, so edge cases of the test do not arise. */
function contains(rings: LabelRings, r: number, px: number, py: number): boolean {
  const xy = rings.xy, s = rings.start[r], n = rings.length[r];
  let inside = false;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const xi = xy[2 * (s + i)], yi = xy[2 * (s + i) + 1], xj = xy[2 * (s + j)], yj = xy[2 * (s + j) + 1];
    if ((yi > py) !== (yj > py) && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}
