// Clipping of flat coordinate arrays (x, y pairs) against an axis-aligned rectangle: rings, polylines and points.
import { take, type Coords, type Flat, type TileGeometry } from './flat.js';

/** Inclusive rectangle `[minX, minY, maxX, maxY]`. */
export interface Rect { minX: number; minY: number; maxX: number; maxY: number }

/**
 * One Sutherland–Hodgman pass against the half-plane `coord(axis) >= bound` (keepAbove) or `<= bound`.
 * `src` holds `n` open-ring vertices; returns the vertex count written to `dst`.
 */
function clipPass(src: Float64Array, n: number, dst: Float64Array, axis: 0 | 1, bound: number, keepAbove: boolean, round: boolean): number {
  let m = 0;
  if (n === 0) return 0;
  const o = 1 - axis;
  let pa = src[(n - 1) * 2 + axis], po = src[(n - 1) * 2 + o];
  let pIn = keepAbove ? pa >= bound : pa <= bound;
  for (let i = 0; i < n; i++) {
    const ca = src[i * 2 + axis], co = src[i * 2 + o];
    const cIn = keepAbove ? ca >= bound : ca <= bound;
    if (cIn !== pIn) {
      // Interpolate from the inside end so the same edge clipped in either direction gives the same point.
      let t: number, v: number;
      if (pIn) { t = (bound - pa) / (ca - pa); v = po + (co - po) * t; } else { t = (bound - ca) / (pa - ca); v = co + (po - co) * t; }
      if (round) v = Math.round(v);
      dst[m * 2 + axis] = bound; dst[m * 2 + o] = v; m++;
    }
    if (cIn) { dst[m * 2 + axis] = ca; dst[m * 2 + o] = co; m++; }
    pa = ca; po = co; pIn = cIn;
  }
  return m;
}

/** Accumulates one polyline part, skipping consecutive duplicates. */
class Part {
  a = new Float64Array(64);
  n = 0;
  push(x: number, y: number): void {
    if (this.n > 0 && this.a[this.n - 2] === x && this.a[this.n - 1] === y) return;
    if (this.n + 2 > this.a.length) { const b = new Float64Array(this.a.length * 2); b.set(this.a); this.a = b; }
    this.a[this.n++] = x; this.a[this.n++] = y;
  }
  flush(out: Flat[]): void {
    if (this.n >= 4) out.push(take(this.a, this.n));
    this.n = 0;
  }
}

/**
 * Clips rings and polylines, reusing its scratch space from call to call: the tiler clips every ring that crosses
 * a buffered tile edge, and allocating per pass dominated the profile. One clipper per tiling call.
 */
export class Clipper {
  // Sutherland–Hodgman passes ping-pong between these two.
  private bufA = new Float64Array(1024);
  private bufB = new Float64Array(1024);
  private readonly part = new Part();
  // Liang–Barsky parameter interval of the current segment.
  private t0 = 0;
  private t1 = 1;

  /**
   * Clips a ring (closed or not) to the rectangle with Sutherland–Hodgman. Returns a closed ring with consecutive
   * duplicates removed, or an empty array when nothing is left. With `round`, intersection points are rounded to
   * integers: the tiler clips quantised geometry and must stay on the integer grid.
   */
  ring(ring: Coords, r: Rect, round = false): Flat {
    let n = ring.length >> 1;
    if (n > 1 && ring[0] === ring[(n - 1) * 2] && ring[1] === ring[(n - 1) * 2 + 1]) n--;
    if (n === 0) return [];
    this.ensure(n * 2);
    for (let i = 0; i < n * 2; i++) this.bufA[i] = ring[i];
    // A pass emits at most one vertex per input vertex plus one per crossing: twice the input is always enough.
    this.ensure(n * 4); n = clipPass(this.bufA, n, this.bufB, 0, r.minX, true, round);
    this.ensure(n * 4); n = clipPass(this.bufB, n, this.bufA, 0, r.maxX, false, round);
    this.ensure(n * 4); n = clipPass(this.bufA, n, this.bufB, 1, r.minY, true, round);
    this.ensure(n * 4); n = clipPass(this.bufB, n, this.bufA, 1, r.maxY, false, round);
    if (n === 0) return [];
    // Remove consecutive duplicates (rounding and corner crossings make them), then close.
    const a = this.bufA, b = this.bufB;
    let m = 0;
    for (let i = 0; i < n; i++) {
      const x = a[i * 2], y = a[i * 2 + 1];
      if (m > 0 && b[(m - 1) * 2] === x && b[(m - 1) * 2 + 1] === y) continue;
      b[m * 2] = x; b[m * 2 + 1] = y; m++;
    }
    while (m > 1 && b[(m - 1) * 2] === b[0] && b[(m - 1) * 2 + 1] === b[1]) m--;
    b[m * 2] = b[0]; b[m * 2 + 1] = b[1];
    return take(b, (m + 1) * 2);
  }

  /**
   * Clips a polyline to the rectangle: the parts inside, each with at least two distinct positions. With `round`,
   * entry and exit points are rounded to integers.
   */
  line(line: Coords, r: Rect, round = false): Flat[] {
    const out: Flat[] = [];
    const n = line.length >> 1;
    const part = this.part;
    part.n = 0;
    if (n === 1) return out;
    for (let i = 0; i + 1 < n; i++) {
      const ax = line[i * 2], ay = line[i * 2 + 1], bx = line[i * 2 + 2], by = line[i * 2 + 3];
      if (!this.segmentRange(ax, ay, bx, by, r)) { part.flush(out); continue; }
      const s0 = this.t0, s1 = this.t1;
      if (s0 > 0) {
        part.flush(out);
        let x = ax + (bx - ax) * s0, y = ay + (by - ay) * s0;
        if (round) { x = Math.round(x); y = Math.round(y); }
        part.push(x, y);
      } else if (part.n === 0) part.push(ax, ay);
      if (s1 < 1) {
        let x = ax + (bx - ax) * s1, y = ay + (by - ay) * s1;
        if (round) { x = Math.round(x); y = Math.round(y); }
        part.push(x, y);
        part.flush(out);
      } else part.push(bx, by);
    }
    part.flush(out);
    return out;
  }

  /** Grows both scratch buffers to hold `n` numbers, keeping their contents (a pass reads one while writing the other). */
  private ensure(n: number): void {
    if (this.bufA.length < n) { const a = new Float64Array(n * 2); a.set(this.bufA); this.bufA = a; }
    if (this.bufB.length < n) { const b = new Float64Array(n * 2); b.set(this.bufB); this.bufB = b; }
  }

  /** Narrows [t0, t1] by the constraint p·t <= q; false when the segment misses it entirely. */
  private narrow(p: number, q: number): boolean {
    if (p === 0) return q >= 0;
    const t = q / p;
    if (p < 0) { if (t > this.t1) return false; if (t > this.t0) this.t0 = t; } else { if (t < this.t0) return false; if (t < this.t1) this.t1 = t; }
    return true;
  }

  /** Parameter interval of segment a→b inside the rectangle, left in t0, t1; false when it lies outside. */
  private segmentRange(ax: number, ay: number, bx: number, by: number, r: Rect): boolean {
    this.t0 = 0; this.t1 = 1;
    const dx = bx - ax, dy = by - ay;
    return this.narrow(-dx, ax - r.minX) && this.narrow(dx, r.maxX - ax) && this.narrow(-dy, ay - r.minY) && this.narrow(dy, r.maxY - ay);
  }
}

/** The points inside the rectangle (edges included). */
export function clipPoints(points: Coords, r: Rect): Flat {
  const n = points.length >> 1;
  let m = 0;
  for (let i = 0; i < n; i++) {
    const x = points[i * 2], y = points[i * 2 + 1];
    if (x >= r.minX && x <= r.maxX && y >= r.minY && y <= r.maxY) m++;
  }
  const out = new Array<number>(m * 2);
  m = 0;
  for (let i = 0; i < n; i++) {
    const x = points[i * 2], y = points[i * 2 + 1];
    if (x >= r.minX && x <= r.maxX && y >= r.minY && y <= r.maxY) { out[m++] = x; out[m++] = y; }
  }
  return out;
}

/** Whether the box `[minX, minY, maxX, maxY]` lies inside the rectangle (edges included). */
export function boxInside(b: ArrayLike<number>, r: Rect): boolean {
  return b[0] >= r.minX && b[1] >= r.minY && b[2] <= r.maxX && b[3] <= r.maxY;
}

/** Whether the box `[minX, minY, maxX, maxY]` meets the rectangle (edges included). */
export function boxMeets(b: ArrayLike<number>, r: Rect): boolean {
  return b[0] <= r.maxX && b[2] >= r.minX && b[1] <= r.maxY && b[3] >= r.minY;
}

/**
 * Coordinates beyond this are scaled down by an exact power of two while cutting: an edge between ±1e308 would
 * otherwise overflow to Infinity, and its intersection with the rectangle to NaN.
 */
const LARGE = 2 ** 960;
const SCALE = 2 ** -64;

function largest(g: TileGeometry): number {
  let m = 0;
  const grow = (c: Coords) => { for (let i = 0; i < c.length; i++) m = Math.max(m, Math.abs(c[i])); };
  const visit = (x: TileGeometry): void => {
    switch (x.k) {
      case 'points': grow(x.xy); return;
      case 'lines': x.parts.forEach(grow); return;
      case 'polygons': for (const p of x.polys) p.forEach(grow); return;
      case 'mesh': return;
      case 'collection': x.members.forEach(visit); return;
    }
  };
  visit(g);
  return m;
}

const scaled = (c: Coords, s: number): Flat => Array.from(c, (v) => v * s);

function cutScaled(g: TileGeometry, r: Rect, s: number, clipper: Clipper): TileGeometry | null {
  const back = (c: Flat) => (s === 1 ? c : c.map((v) => v / s));
  switch (g.k) {
    case 'points': {
      const xy = back(clipPoints(scaled(g.xy, s), r));
      return xy.length ? { k: 'points', type: xy.length > 2 ? 'MultiPoint' : g.type, xy } : null;
    }
    case 'lines': {
      const parts = g.parts.flatMap((p) => clipper.line(scaled(p, s), r)).map(back);
      return parts.length ? { k: 'lines', type: parts.length > 1 ? 'MultiLineString' : g.type, parts } : null;
    }
    case 'polygons': {
      const polys: Flat[][] = [];
      for (const poly of g.polys) {
        const rings: Flat[] = [];
        for (let i = 0; i < poly.length; i++) {
          const ring = clipper.ring(scaled(poly[i], s), r);
          // A ring left with fewer than 4 positions encloses nothing: an outer one leaves no polygon, a hole no hole.
          if (ring.length >= 8) rings.push(back(ring));
          else if (i === 0) break;
        }
        if (rings.length) polys.push(rings);
      }
      return polys.length ? { k: 'polygons', type: polys.length > 1 ? 'MultiPolygon' : g.type, polys } : null;
    }
    case 'mesh':
      // Meshes are kept whole, as the tiler keeps them.
      return g;
    case 'collection': {
      const members = g.members.map((m) => cutScaled(m, r, s, clipper)).filter((m): m is TileGeometry => m !== null);
      return members.length ? { k: 'collection', members } : null;
    }
  }
}

/**
 * The part of `g` (in pixels) inside the rectangle, or null when nothing is left: polygons cut with
 * Sutherland–Hodgman (their edges may then run along the rectangle), lines into the pieces inside, points kept or
 * dropped, meshes kept whole. Features are cut to the world this way before they are routed to work units.
 */
export function cutToRect(g: TileGeometry, r: Rect, clipper: Clipper): TileGeometry | null {
  if (largest(g) <= LARGE) return cutScaled(g, r, 1, clipper);
  return cutScaled(g, { minX: r.minX * SCALE, minY: r.minY * SCALE, maxX: r.maxX * SCALE, maxY: r.maxY * SCALE }, SCALE, clipper);
}
