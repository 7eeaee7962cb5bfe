// Unit and property tests of the rectangle clipper: rings, polylines, points.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Clipper, clipPoints, type Rect } from '../../src/tiling/clip.js';
import { ringArea2 } from '../../src/tiling/simplify.js';

// One clipper for every test, as one tiling call uses it: its scratch space must not leak from one call into the next.
const clipper = new Clipper();
const clipRing = clipper.ring.bind(clipper);
const clipLine = clipper.line.bind(clipper);

const R: Rect = { minX: 0, minY: 0, maxX: 10, maxY: 10 };
const flat = (ps: number[][]) => ps.flat();

describe('clipRing', () => {
  it('keeps a ring inside the rectangle unchanged and closed', () => {
    const ring = flat([[1, 1], [5, 1], [5, 5], [1, 1]]);
    expect(clipRing(ring, R)).toEqual(ring);
  });

  it('closes an open input ring', () => {
    expect(clipRing(flat([[1, 1], [5, 1], [5, 5]]), R)).toEqual(flat([[1, 1], [5, 1], [5, 5], [1, 1]]));
  });

  it('cuts a square that sticks out on the right', () => {
    const out = clipRing(flat([[5, 2], [15, 2], [15, 8], [5, 8], [5, 2]]), R);
    expect(out).toEqual(flat([[5, 2], [10, 2], [10, 8], [5, 8], [5, 2]]));
  });

  it('returns the rectangle for a ring covering it, and nothing for a ring outside', () => {
    const big = clipRing(flat([[-5, -5], [20, -5], [20, 20], [-5, 20], [-5, -5]]), R);
    expect(Math.abs(ringArea2(big)) / 2).toBe(100);
    expect(clipRing(flat([[20, 20], [30, 20], [30, 30], [20, 20]]), R)).toEqual([]);
  });

  it('rounds intersections to integers when asked, keeping edge coordinates exact', () => {
    const out = clipRing(flat([[0, 0], [13, 3], [0, 6], [0, 0]]), R, true);
    for (const v of out) expect(Number.isInteger(v)).toBe(true);
    expect(out.filter((v, i) => i % 2 === 0 && v === 10).length).toBe(2);
  });

  it('keeps the orientation of the input ring', () => {
    const cw = flat([[-2, -2], [12, -2], [12, 5], [-2, 5], [-2, -2]]);
    expect(Math.sign(ringArea2(clipRing(cw, R)))).toBe(Math.sign(ringArea2(cw)));
    const ccw = flat([[-2, -2], [-2, 5], [12, 5], [12, -2], [-2, -2]]);
    expect(Math.sign(ringArea2(clipRing(ccw, R)))).toBe(Math.sign(ringArea2(ccw)));
  });

  it('splits area exactly: the two halves of any star polygon add up to the whole (property)', () => {
    fc.assert(fc.property(
      fc.array(fc.double({ min: 0.5, max: 8, noNaN: true }), { minLength: 3, maxLength: 30 }),
      fc.double({ min: -6, max: 6, noNaN: true }),
      (radii, cut) => {
        const ring: number[] = [];
        radii.forEach((r, i) => { const a = (2 * Math.PI * i) / radii.length; ring.push(r * Math.cos(a), r * Math.sin(a)); });
        ring.push(ring[0], ring[1]);
        const left = clipRing(ring, { minX: -100, minY: -100, maxX: cut, maxY: 100 });
        const right = clipRing(ring, { minX: cut, minY: -100, maxX: 100, maxY: 100 });
        const whole = ringArea2(ring);
        expect(ringArea2(left) + ringArea2(right)).toBeCloseTo(whole, 6);
      },
    ));
  });
});

describe('clipLine', () => {
  it('keeps a line inside, whole', () => {
    expect(clipLine(flat([[1, 1], [2, 2], [3, 1]]), R)).toEqual([flat([[1, 1], [2, 2], [3, 1]])]);
  });

  it('splits a line that leaves and re-enters into parts', () => {
    const parts = clipLine(flat([[2, 5], [15, 5], [15, 7], [2, 7]]), R);
    expect(parts).toEqual([flat([[2, 5], [10, 5]]), flat([[10, 7], [2, 7]])]);
  });

  it('cuts a segment crossing the whole rectangle at both ends', () => {
    expect(clipLine(flat([[-5, 5], [15, 5]]), R)).toEqual([flat([[0, 5], [10, 5]])]);
  });

  it('drops a line that only touches a corner, and one outside', () => {
    expect(clipLine(flat([[12, 8], [8, 12]]), R)).toEqual([]);
    expect(clipLine(flat([[11, 0], [11, 10]]), R)).toEqual([]);
  });

  it('rounds entry and exit points when asked', () => {
    const [p] = clipLine(flat([[-3, 1], [13, 4]]), R, true);
    for (const v of p) expect(Number.isInteger(v)).toBe(true);
    expect(p[0]).toBe(0);
    expect(p[2]).toBe(10);
  });
});

describe('clipPoints', () => {
  it('keeps points inside, edges included', () => {
    expect(clipPoints(flat([[0, 0], [10, 10], [10.5, 3], [5, -1], [4, 4]]), R)).toEqual(flat([[0, 0], [10, 10], [4, 4]]));
  });
});
