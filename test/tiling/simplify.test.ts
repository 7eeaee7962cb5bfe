// Unit and property tests of Douglas–Peucker, quantisation and ring measures on flat arrays.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { reverseRing, ringArea2, ringUsable, Simplifier } from '../../src/tiling/simplify.js';

// One simplifier for every test, as one tiling call uses it: its scratch space must not leak from one call into the next.
const simplifier = new Simplifier();
const simplify = simplifier.simplify.bind(simplifier);
const simplifyQuantise = simplifier.simplifyQuantise.bind(simplifier);
const quantise = simplifier.quantise.bind(simplifier);

const flat = (ps: number[][]) => ps.flat();

describe('simplify', () => {
  it('drops collinear and near-collinear vertices of a line, keeping its ends', () => {
    expect(simplify(flat([[0, 0], [1, 0.1], [2, 0], [3, 0.05], [4, 0]]), 0.25, false)).toEqual(flat([[0, 0], [4, 0]]));
  });

  it('keeps a vertex only when strictly beyond the tolerance', () => {
    expect(simplify(flat([[0, 0], [1, 1], [2, 0]]), 1, false)).toEqual(flat([[0, 0], [2, 0]]));
    expect(simplify(flat([[0, 0], [1, 1], [2, 0]]), 0.99, false)).toEqual(flat([[0, 0], [1, 1], [2, 0]]));
  });

  it('returns the input itself when nothing goes', () => {
    const c = flat([[0, 0], [5, 5], [10, 0]]);
    expect(simplify(c, 0.1, false)).toBe(c);
  });

  it('keeps a ring closed, and returns null for a ring that collapses', () => {
    const ring = flat([[0, 0], [10, 0], [10.01, 5], [10, 10], [0, 10], [0, 0]]);
    const s = simplify(ring, 0.5, true);
    expect(s).toEqual(flat([[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]));
    expect(simplify(flat([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]), 4, true)).toBeNull();
  });

  it('is iterative: a 200k-vertex line does not overflow the stack', () => {
    // A random walk: Douglas–Peucker is quadratic only on adversarial input, so this stays fast.
    let seed = 7;
    const rnd = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed / 2 ** 32 - 0.5; };
    const c: number[] = [0, 0];
    for (let i = 1; i < 200_000; i++) c.push(c[c.length - 2] + 1, c[c.length - 1] + rnd() * 20);
    const s = simplify(c, 4, false) as number[];
    expect(s.length).toBeGreaterThan(4);
    expect(s.length).toBeLessThan(c.length);
    expect(s.slice(0, 2)).toEqual([0, 0]);
    expect(s.slice(-2)).toEqual(c.slice(-2));
  });

  it('nests: simplify(simplify(c, t1), t2) equals simplify(c, t2) for t2 >= t1 (property)', () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: -1000, max: 1000 })), { minLength: 2, maxLength: 60 }),
      fc.double({ min: 0, max: 1e4, noNaN: true }), fc.double({ min: 0, max: 1e5, noNaN: true }), fc.boolean(),
      (pts, a, b, ring) => {
        const c = flat(ring ? [...pts, pts[0]] : pts);
        const t1 = Math.min(a, b), t2 = Math.max(a, b);
        const once = simplify(c, t2, ring);
        const first = simplify(c, t1, ring);
        const twice = first === null ? null : simplify(first, t2, ring);
        expect(twice === null ? null : Array.from(twice)).toEqual(once === null ? null : Array.from(once));
      },
    ));
  });
});

describe('quantise', () => {
  it('rounds with a scale and drops consecutive duplicates, keeping closure', () => {
    expect(quantise(flat([[0.1, 0.1], [0.2, 0.2], [1.6, 0], [1.9, 1.2], [0, 0.4]]), 1)).toEqual(flat([[0, 0], [2, 0], [2, 1], [0, 0]]));
  });

  it('simplifyQuantise equals quantise after simplify, and skips simplification with a negative tolerance', () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(fc.double({ min: -100, max: 100, noNaN: true }), fc.double({ min: -100, max: 100, noNaN: true })), { minLength: 3, maxLength: 40 }),
      fc.double({ min: 0, max: 50, noNaN: true }),
      (pts, tol) => {
        const ring = flat([...pts, pts[0]]);
        const s = simplify(ring, tol, true);
        expect(simplifyQuantise(ring, tol, true, 4)).toEqual(s === null ? null : quantise(s, 4));
        expect(simplifyQuantise(ring, -1, true, 4)).toEqual(quantise(ring, 4));
      },
    ));
  });
});

describe('ring measures', () => {
  it('signed area is positive for a ring clockwise on a y-down screen', () => {
    const ring = flat([[0, 0], [4, 0], [4, 3], [0, 3], [0, 0]]);
    expect(ringArea2(ring)).toBe(24);
    reverseRing(ring);
    expect(ringArea2(ring)).toBe(-24);
    expect(ring.slice(0, 2)).toEqual(ring.slice(-2));
  });

  it('stays exact for small rings far from the origin', () => {
    const o = 2 ** 40;
    expect(ringArea2(flat([[o, o], [o + 1, o], [o + 1, o + 1], [o, o]]))).toBe(1);
  });

  it('usable rings are closed, have 4 positions and an area', () => {
    expect(ringUsable(flat([[0, 0], [1, 0], [1, 1], [0, 0]]))).toBe(true);
    expect(ringUsable(flat([[0, 0], [1, 0], [2, 0], [0, 0]]))).toBe(false);
    expect(ringUsable(flat([[0, 0], [1, 0], [0, 0]]))).toBe(false);
    expect(ringUsable(flat([[0, 0], [1, 0], [1, 1], [0, 1]]))).toBe(false);
  });
});
