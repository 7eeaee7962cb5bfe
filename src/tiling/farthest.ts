// The vertex of a span farthest from the segment between its ends, as Douglas–Peucker asks at every split: found by
// pruning boxes of vertices on long parts, with exactly the answer a scan of every vertex gives.
import type { Coords } from './flat.js';

/** Squared distance from p to the segment a–b (to a itself when the segment is a point). */
export function sqSegDist(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  let x = ax, y = ay;
  let dx = bx - ax, dy = by - ay;
  if (dx !== 0 || dy !== 0) {
    const t = ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy);
    if (t > 1) { x = bx; y = by; } else if (t > 0) { x += dx * t; y += dy * t; }
  }
  dx = px - x; dy = py - y;
  return dx * dx + dy * dy;
}

/** Unit roundoff of a double. */
const EPS = 2 ** -53;
/** Absolute slack for products that underflow (segments shorter than MIN_DEN's root are scanned). */
const TINY = 2 ** -100;
const MIN_DEN = 2 ** -200;
/** Coordinates beyond this are scanned: the error bounds below assume no product overflows. */
const MAX_COORD = 2 ** 50;
/** Vertices per box at the bottom of the tree. */
const LEAF = 16;
/** Spans with fewer interior vertices than this are scanned: a box costs about as much as a few vertices. */
const SHORT = 64;

/**
 * The farthest vertex of a span, first on ties, as a scan of `sqSegDist` over it finds it. A scan costs the span's
 * length, and on a comb-like outline (a class mask's spiky region) Douglas–Peucker splits off a vertex or two at a time,
 * so ranking its 64,000 vertices took seconds. On a long part whose splits have scanned 2·n·log2 n vertices (a class
 * mask's outlines scan 1.1–1.2 times n·log2 n in all, and a tree for each of their long rings cost the build 4% more
 * CPU than scanning them) this builds a tree of boxes over runs of vertices and then
 * measures only boxes that may hold a vertex at least as far as the best yet, largest bound first. The bounds hold for
 * the distance as rounded (each floating-point operation rounds monotonically, and where that does not give a bound,
 * a rounding-error bound is added), so the vertex found is the very one the scan finds. One search per caller: it keeps
 * its scratch space from call to call.
 */
export class FarthestSearch {
  /** Vertices measured and boxes bounded, in total: a test counts them to see that the search stays near-linear. */
  work = 0;
  /** The squared distance of the vertex the last `find` returned. */
  maxD = -1;
  private index = -1;
  private xy: Coords = [];
  /** Leaves of the tree (a power of two); 0 while the part is scanned. */
  private size = 0;
  /** Vertices scanned since `prepare`, and how many may be before the tree is built (Infinity: never). */
  private scanned = 0;
  private budget = Infinity;
  /** Per tree node (1 to 2·size − 1), the box of its vertices: minX, minY, maxX, maxY. */
  private boxes = new Float64Array(0);
  // The boxes still to look at: bound, node, first vertex, as a heap (largest bound, then first vertex, on top).
  private hb = new Float64Array(64);
  private hn = new Int32Array(64);
  private hs = new Int32Array(64);
  private hl = 0;

  /**
   * Readies the search for spans of `xy`: scanned, until a long part's splits have scanned `scans` vertices
   * (2·n·log2 n unless a test asks for the tree at once).
   */
  prepare(xy: Coords, scans?: number): void {
    this.xy = xy;
    this.size = 0;
    this.scanned = 0;
    const n = xy.length >> 1;
    this.budget = n - 2 < SHORT ? Infinity : scans ?? 2 * n * Math.log2(n);
  }

  /** The tree of boxes over the part's vertices, when its numbers are safe to bound. */
  private build(): void {
    const xy = this.xy;
    const n = xy.length >> 1;
    this.budget = Infinity;
    for (let i = 0; i < xy.length; i++) if (!(Math.abs(xy[i]) <= MAX_COORD)) return;
    const blocks = Math.ceil(n / LEAF);
    let size = 1;
    while (size < blocks) size *= 2;
    if (this.boxes.length < 8 * size) this.boxes = new Float64Array(8 * size);
    const b = this.boxes;
    for (let k = 0; k < size; k++) {
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (let i = k * LEAF, end = Math.min(n, i + LEAF); i < end; i++) {
        const x = xy[i * 2], y = xy[i * 2 + 1];
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
      const o = (size + k) * 4;
      b[o] = x0; b[o + 1] = y0; b[o + 2] = x1; b[o + 3] = y1;
    }
    for (let k = size - 1; k >= 1; k--) {
      const o = k * 4, l = k * 8, r = k * 8 + 4;
      b[o] = Math.min(b[l], b[r]); b[o + 1] = Math.min(b[l + 1], b[r + 1]);
      b[o + 2] = Math.max(b[l + 2], b[r + 2]); b[o + 3] = Math.max(b[l + 3], b[r + 3]);
    }
    this.size = size;
  }

  /**
   * The vertex strictly between `first` and `last` farthest from the segment between them, the first of those
   * equally far, when it is farther than `floor` (its distance in `maxD`); otherwise -1.
   */
  find(first: number, last: number, floor: number): number {
    const xy = this.xy;
    const ax = xy[first * 2], ay = xy[first * 2 + 1], bx = xy[last * 2], by = xy[last * 2 + 1];
    const lo = first + 1, hi = last - 1;
    this.maxD = floor;
    this.index = -1;
    const dx = bx - ax, dy = by - ay, den = dx * dx + dy * dy;
    if (this.scanned >= this.budget) this.build();
    if (this.size === 0 || hi - lo < SHORT || !((dx === 0 && dy === 0) || den >= MIN_DEN)) {
      this.scan(lo, hi + 1, ax, ay, bx, by);
      return this.index;
    }
    // The whole boxes inside the span are searched; the vertices before and after them are measured.
    const b0 = Math.ceil(lo / LEAF), b1 = Math.floor((hi + 1) / LEAF), size = this.size;
    this.scan(lo, b0 * LEAF, ax, ay, bx, by);
    this.scan(b1 * LEAF, hi + 1, ax, ay, bx, by);
    this.hl = 0;
    for (let l = b0 + size, r = b1 + size, level = 0; l < r; l >>= 1, r >>= 1, level++) {
      if (l & 1) { this.push(this.bound(l, ax, ay, bx, by, den), l, ((l << level) - size) * LEAF); l++; }
      if (r & 1) { r--; this.push(this.bound(r, ax, ay, bx, by, den), r, ((r << level) - size) * LEAF); }
    }
    while (this.hl > 0) {
      const u = this.hb[0], node = this.hn[0], start = this.hs[0];
      this.pop();
      if (u < this.maxD) break;
      // A box bounded by the best distance yet can only hold a vertex equally far, which wins only if earlier.
      if (!(u > this.maxD) && !(this.index >= 0 && start < this.index)) continue;
      if (node >= size) { this.scan(start, start + LEAF, ax, ay, bx, by); continue; }
      const half = (size >> (32 - Math.clz32(node))) * LEAF;
      this.push(this.bound(node * 2, ax, ay, bx, by, den), node * 2, start);
      this.push(this.bound(node * 2 + 1, ax, ay, bx, by, den), node * 2 + 1, start + half);
    }
    return this.index;
  }

  /** Measures vertices `from` to `to` (exclusive), in any order of calls: an equally far vertex wins only if earlier. */
  private scan(from: number, to: number, ax: number, ay: number, bx: number, by: number): void {
    const xy = this.xy;
    let maxD = this.maxD, index = this.index;
    this.work += to - from;
    this.scanned += to - from;
    for (let i = from; i < to; i++) {
      const d = sqSegDist(xy[i * 2], xy[i * 2 + 1], ax, ay, bx, by);
      if (d > maxD || (d === maxD && index >= 0 && i < index)) { maxD = d; index = i; }
    }
    this.maxD = maxD;
    this.index = index;
  }

  /**
   * A bound on `sqSegDist` as computed (rounded) for every vertex in the box of `node`. Where t ≤ 0 or t > 1 the
   * distance is to an end, and rounding is monotone, so the box's far corner bounds it exactly; t, monotone too, has
   * its least and greatest values at two corners. Between, the distance is bounded by the perpendicular one at the
   * box's corners plus an error bound of the rounding; along an axis-parallel segment one of its parts is exact.
   */
  private bound(node: number, ax: number, ay: number, bx: number, by: number, den: number): number {
    this.work++;
    const o = node * 4, b = this.boxes;
    const p0 = b[o] - ax, p1 = b[o + 2] - ax, q0 = b[o + 1] - ay, q1 = b[o + 3] - ay;
    const pm = Math.max(-p0, p1), qm = Math.max(-q0, q1);
    const dx = bx - ax, dy = by - ay;
    if (dx === 0 && dy === 0) return pm * pm + qm * qm;
    const tLo = ((dx >= 0 ? p0 : p1) * dx + (dy >= 0 ? q0 : q1) * dy) / den;
    const tHi = ((dx >= 0 ? p1 : p0) * dx + (dy >= 0 ? q1 : q0) * dy) / den;
    let most = 0;
    if (!(tLo > 0)) most = pm * pm + qm * qm;
    if (tHi > 1) {
      const rx = Math.max(bx - b[o], b[o + 2] - bx), ry = Math.max(by - b[o + 1], b[o + 3] - by);
      most = Math.max(most, rx * rx + ry * ry);
    }
    if (!(tHi > 0) || tLo > 1) return most;
    const adx = Math.abs(dx), ady = Math.abs(dy);
    // |t − t*| (t* the exact t) and the rounding of the projected point, with twice the slack the analysis needs.
    const s = (pm * adx + qm * ady) / den;
    const ex = EPS * (adx * (16 * s + 4) + 2 * Math.abs(ax)) + TINY, ey = EPS * (ady * (16 * s + 4) + 2 * Math.abs(ay)) + TINY;
    let ux: number, uy: number;
    if (dy === 0) { ux = ex; uy = qm; } else if (dx === 0) { ux = pm; uy = ey; } else {
      // The cross product with the segment, linear over the box: largest in size at a corner.
      const c = Math.max(Math.abs(dx * q0 - dy * p0), Math.abs(dx * q1 - dy * p0), Math.abs(dx * q0 - dy * p1), Math.abs(dx * q1 - dy * p1))
        * (1 + 16 * EPS) + 8 * EPS * (adx * qm + ady * pm);
      ux = ((ady * c) / den) * (1 + 16 * EPS) + ex;
      uy = ((adx * c) / den) * (1 + 16 * EPS) + ey;
    }
    return Math.max(most, ux * ux + uy * uy);
  }

  private push(u: number, node: number, start: number): void {
    if (this.hl === this.hb.length) {
      const grow = <T extends Float64Array | Int32Array>(a: T, m: T): T => { m.set(a); return m; };
      this.hb = grow(this.hb, new Float64Array(this.hl * 2));
      this.hn = grow(this.hn, new Int32Array(this.hl * 2));
      this.hs = grow(this.hs, new Int32Array(this.hl * 2));
    }
    const hb = this.hb, hn = this.hn, hs = this.hs;
    let i = this.hl++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!(u > hb[p] || (u === hb[p] && start < hs[p]))) break;
      hb[i] = hb[p]; hn[i] = hn[p]; hs[i] = hs[p];
      i = p;
    }
    hb[i] = u; hn[i] = node; hs[i] = start;
  }

  private pop(): void {
    const hb = this.hb, hn = this.hn, hs = this.hs;
    const n = --this.hl;
    if (n === 0) return;
    const u = hb[n], node = hn[n], start = hs[n];
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && (hb[c + 1] > hb[c] || (hb[c + 1] === hb[c] && hs[c + 1] < hs[c]))) c++;
      if (!(hb[c] > u || (hb[c] === u && hs[c] < start))) break;
      hb[i] = hb[c]; hn[i] = hn[c]; hs[i] = hs[c];
      i = c;
    }
    hb[i] = u; hn[i] = node; hs[i] = start;
  }
}
