// Label raster → rings: every outline of every label in one pass over the pixels (pure; no decoding, no I/O).

/** A greyscale label image in row-major order; 0 is background, every other value one label. */
export interface LabelMask {
  width: number;
  height: number;
  data: Uint8Array | Uint16Array | Uint32Array;
}

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
export const IN_X = [0, -1, -1, 0];
export const IN_Y = [0, 0, -1, -1];
export const OUT_X = [0, 0, -1, -1];
export const OUT_Y = [-1, 0, 0, -1];

/**
 * The direction a walk leaves a corner in, having arrived in direction d, from whether the pixel ahead on the label's
 * side (`inL`) and the one on the other side (`outL`) hold the label. Checking the label's own side first makes a
 * saddle turn around our pixel: 4-connectivity.
 */
export function leaving(d: number, inL: boolean, outL: boolean): number {
  if (!inL) return (d + 1) & 3;
  return outL ? (d + 3) & 3 : d;
}

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

/** Rings as a trace adds them, flat (`result`); a band's stitched walks (band-stitch.ts) are added as the trace adds its own. */
export class RingTable {
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
  return leaving(d, inL, outL) | (!inL && outL ? 4 : 0);
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
  closeWalk(t.table, L, ring, n, saddles, ns, H + 1);
}

/**
 * Adds one walked ring of label L (`n` corners from its first in raster order; `saddles`, the indexes of its saddle
 * corners, `ns` of them), cut into loops where it passes a saddle corner twice. `stride` is more than any y.
 */
export function closeWalk(table: RingTable, L: number, ring: Int32Array, n: number, saddles: Int32Array, ns: number, stride: number): void {
  if (ns < 2 || !commitPinched(table, L, ring, n, saddles, ns, stride)) table.add(L, ring, 0, n);
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
