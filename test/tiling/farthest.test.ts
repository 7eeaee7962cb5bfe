// Tests of the farthest-vertex search Douglas–Peucker splits at: the same vertex as a scan of every vertex, in work near-linear on a comb.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FarthestSearch, sqSegDist } from '../../src/tiling/farthest.js';
import { Ranker, Simplifier } from '../../src/tiling/simplify.js';

/** The farthest vertex strictly between first and last, first on ties, if beyond floor: every vertex measured. */
function scanFarthest(xy: ArrayLike<number>, first: number, last: number, floor: number): [number, number] {
  let maxD = floor, index = -1;
  for (let i = first + 1; i < last; i++) {
    const d = sqSegDist(xy[i * 2], xy[i * 2 + 1], xy[first * 2], xy[first * 2 + 1], xy[last * 2], xy[last * 2 + 1]);
    if (d > maxD) { maxD = d; index = i; }
  }
  return [index, maxD];
}

/** Douglas–Peucker ranks the plain way: split at the scanned farthest vertex, each rank capped by the splits above it. */
function referenceRanks(xy: ArrayLike<number>): Float64Array {
  const n = xy.length >> 1;
  const out = new Float64Array(n).fill(Infinity);
  const spans: Array<[number, number, number]> = n >= 3 ? [[0, n - 1, Infinity]] : [];
  for (let s = spans.pop(); s !== undefined; s = spans.pop()) {
    const [index, d] = scanFarthest(xy, s[0], s[1], -1);
    if (index < 0) continue;
    out[index] = Math.min(d, s[2]);
    spans.push([index, s[1], out[index]], [s[0], index, out[index]]);
  }
  return out;
}

/** A closed outline of a rectangle with `teeth` teeth one pixel wide and `height` high, at global pixel coordinates. */
function comb(teeth: number, height: number): number[] {
  const x0 = 40000.5, y0 = 30000;
  const ring = [x0, y0 + height + 50];
  for (let i = 0; i < teeth; i++) ring.push(x0 + 2 * i, y0, x0 + 2 * i + 1, y0, x0 + 2 * i + 1, y0 + height, x0 + 2 * i + 2, y0 + height);
  ring.push(x0 + 2 * teeth, y0 + height + 50, x0, y0 + height + 50);
  return ring;
}

describe('the farthest vertex', () => {
  it('is the one a scan of every vertex finds, first of those equally far, for any span and floor (property)', () => {
    const search = new FarthestSearch();
    // Small integers give many vertices equally far, steps along an axis (a mask's outline) more; a large offset and
    // fractions give rounding.
    const coordinate = fc.oneof(fc.integer({ min: 0, max: 12 }), fc.double({ min: -50, max: 50, noNaN: true }));
    const scattered = fc.array(fc.tuple(coordinate, coordinate), { minLength: 70, maxLength: 700 });
    const steps = fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 4 })), { minLength: 70, maxLength: 700 })
      .map((s) => { let x = 0; return s.map(([dx, y]): [number, number] => [(x += dx), y]); });
    fc.assert(fc.property(
      fc.oneof(scattered, steps),
      fc.constantFrom(0, 98765.4321, -3e9), fc.constantFrom(1, 0.01, 1e-12),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(-1, 0, 4, 1234.5)), { minLength: 1, maxLength: 20 }),
      (pts, offset, scale, spans) => {
        const xy = pts.flatMap(([x, y]) => [offset + x * scale, offset + y * scale]);
        const n = pts.length;
        // The tree at once: a real part is scanned until its splits have scanned 2·n·log2 n vertices.
        search.prepare(xy, 0);
        for (const [a, b, floor] of spans) {
          const first = a % n, last = first + (b % (n - first));
          const index = search.find(first, last, floor * scale * scale);
          const [want, wantD] = scanFarthest(xy, first, last, floor * scale * scale);
          expect(index).toBe(want);
          if (index >= 0) expect(search.maxD).toBe(wantD);
        }
      },
    ), { numRuns: 100 });
  });

  it('ranks a comb as the plain Douglas–Peucker does, and simplifies it alike at every tolerance', () => {
    const ring = comb(2000, 200);
    const ranks = new Ranker().rank(ring, new Float64Array(ring.length >> 1));
    const want = referenceRanks(ring);
    expect(Array.from(ranks)).toEqual(Array.from(want));
    const simplifier = new Simplifier();
    for (const sqTol of [0, 0.25, 1, 4, 1e4, 1e5]) {
      const kept = ring.filter((_, i) => want[i >> 1] > sqTol);
      expect(Array.from(simplifier.simplify(ring, sqTol, true) ?? [])).toEqual(kept.length >= 8 ? kept : []);
    }
  });

  it('measures about n log n vertices and boxes to rank a comb of 16,000 teeth (a scan per split measured n² / 4)', () => {
    const ring = comb(16000, 200);
    const n = ring.length >> 1;
    const ranker = new Ranker();
    ranker.rank(ring, new Float64Array(n));
    expect(ranker.search.work).toBeGreaterThan(n);
    expect(ranker.search.work).toBeLessThan(4 * n * Math.log2(n));
  });
});
