// Uniform thinning: the keep rule, the one-pass simplification ranks, tile estimates and the per-zoom thresholds.
import { describe, expect, it } from 'vitest';
import { PRIORITY_RANGE, TileSketch, keeps, thinningPriority } from '../../src/stages/thinning.js';
import { fittingShare, planThresholds } from '../../src/stages/thresholds.js';
import { SKETCH_BLOCK } from '../../src/stages/number-ids.js';
import { Ranker, Simplifier } from '../../src/tiling/simplify.js';
import { mulberry32 } from '../../src/random.js';
import type { Geometry, Position } from '../../src/model/geometry.js';
import { flatten, type TileGeometry } from '../../src/tiling/flat.js';

const flat = (g: Geometry): TileGeometry => flatten(g) as TileGeometry;

const TAGS = { id: null, keys: ['featureClass', 'area'], values: ['cell', 12.5] };

function blob(random: () => number, cx: number, cy: number, r: number, n: number): Position[] {
  const ring: Position[] = [];
  for (let i = 0; i < n; i++) { const a = (i / n) * 2 * Math.PI; ring.push([cx + r * Math.cos(a) * (0.7 + 0.6 * random()), cy + r * Math.sin(a) * (0.7 + 0.6 * random())]); }
  ring.push(ring[0]);
  return ring;
}

describe('keep rule', () => {
  it('keeps a share of features close to 1 - threshold / 2^32, nested as thresholds rise', () => {
    const low = PRIORITY_RANGE * 0.5, high = PRIORITY_RANGE * 0.9;
    let a = 0, b = 0;
    for (let seq = 0; seq < 20000; seq++) {
      if (keeps(high, seq)) { b++; expect(keeps(low, seq)).toBe(true); }
      if (keeps(low, seq)) a++;
    }
    expect(a / 20000).toBeCloseTo(0.5, 1);
    expect(b / 20000).toBeCloseTo(0.1, 1);
    expect(keeps(0, 7)).toBe(true);
    expect(keeps(PRIORITY_RANGE, 7)).toBe(false);
    expect(thinningPriority(7)).toBe(thinningPriority(7));
  });
});

describe('TileSketch', () => {
  it('counts a feature in every tile its buffered box meets, and far from the origin in one tile per size', () => {
    const s = new TileSketch('pbf');
    const ring: Position[] = [[3000, 3000], [3030, 3000], [3030, 3030], [3000, 3030], [3000, 3000]];
    s.add('0/0/0', flat({ type: 'Polygon', coordinates: [ring] }), [3000, 3000, 3030, 3030], TAGS, 5, 80, 5);
    // 1024-px tiles: 3000..3030 lies in tile (2, 2) only; 2048: tile (1, 1); 4096 and up: tile (0, 0).
    expect([...s.tiles(10)].map((t) => t[0])).toEqual([1]);
    expect([...s.tiles(11)].map((t) => t[0])).toEqual([1]);
    for (const j of [12, 16, 20]) expect([...s.tiles(j)].map((t) => t[0])).toEqual([1]);
    // At the edge of two 1024-px tiles the buffer (16 px there) takes both.
    const t = new TileSketch('pbf');
    t.add('0/0/0', flat({ type: 'Point', coordinates: [2040, 500] }), [2040, 500, 2040, 500], TAGS, 5, 80, 5);
    expect([...t.tiles(10)].map((x) => x[0])).toEqual([1, 1]);
  });

  it('estimates fewer bytes at coarser sizes (simplified, then a point) and shares repeated values', () => {
    const random = mulberry32(1);
    const s = new TileSketch('pbf');
    const g: Geometry = { type: 'Polygon', coordinates: [blob(random, 500, 500, 20, 40)] };
    s.add('0/0/0', flat(g), [480, 480, 520, 520], TAGS, 1, 80, 1);
    // All bytes, and among them the spared: 40 px is 10 display pixels of 1024-px tiles, so spared there (drawn
    // whatever the share where the zoom spares), and not at 4096 px.
    const bytes = (j: number) => [...s.tiles(j)][0][1];
    expect([...s.tiles(10)][0][5]).toBe(bytes(10));
    expect([...s.tiles(12)][0][5]).toBe(0);
    expect(bytes(10)).toBeGreaterThan(bytes(12));
    expect(bytes(12)).toBeGreaterThan(bytes(14)); // 40 px is below a display pixel of 16384-px tiles: a point
    const first = bytes(14);
    s.add('0/0/0', flat(g), [480, 480, 520, 520], TAGS, 2, 80, 2);
    // The second feature repeats both values: only its own message counts.
    expect(bytes(14) - first).toBeLessThan(first);
  });

  it('takes a value as shared within a block of SKETCH_BLOCK features by sequence, however the features are split into sketches', () => {
    const g = flat({ type: 'Point', coordinates: [100, 100] });
    const tags = { id: null, keys: ['class'], values: ['a long class name that costs its bytes'] };
    const bytesOf = (seqs: number[][]) => {
      const whole = new TileSketch('pbf');
      // Each inner list is one parse batch's sketch, merged as the reading thread merges them.
      for (const batch of seqs) {
        const s = new TileSketch('pbf');
        for (const seq of batch) s.add('0/0/0', g, [100, 100, 100, 100], tags, seq, 60, seq);
        whole.merge(s.data());
      }
      return [...whole.tiles(10)][0][1];
    };
    const b = SKETCH_BLOCK;
    // The same block in one sketch or (as a worker never gets it) in two: in one, the value counts once.
    expect(bytesOf([[1, 2]])).toBeLessThan(bytesOf([[1], [2]]));
    // Two blocks count it once each, in one sketch or two (a nucleus, 2^52 + its cell's, in its cell's block).
    expect(bytesOf([[b - 1, b]])).toBe(bytesOf([[b - 1], [b]]));
    expect(bytesOf([[b - 1, 2 ** 52 + b - 1, b]])).toBe(bytesOf([[b - 1, 2 ** 52 + b - 1], [b]]));
  });

  it('merges sums from workers in any order to the same totals', () => {
    const random = mulberry32(3);
    const parts = [new TileSketch('pbf'), new TileSketch('pbf')];
    const whole = new TileSketch('pbf');
    for (let i = 0; i < 200; i++) {
      const x = random() * 20000, y = random() * 9000;
      const g: Geometry = { type: 'Polygon', coordinates: [blob(random, x, y, 15, 12)] };
      const tags = { id: null, keys: ['n'], values: [i] };
      parts[i % 2].add('0/0/0', flat(g), [x - 20, y - 20, x + 20, y + 20], tags, i, 60, i);
      whole.add('0/0/0', flat(g), [x - 20, y - 20, x + 20, y + 20], tags, i, 60, i);
    }
    const ab = new TileSketch('pbf'), ba = new TileSketch('pbf');
    ab.merge(parts[0].data()); ab.merge(parts[1].data());
    ba.merge(parts[1].data()); ba.merge(parts[0].data());
    const total = (sk: TileSketch, j: number) => [...sk.tiles(j)].reduce((n, t) => n + t[1], 0);
    for (const j of [10, 12, 15]) {
      expect(total(ab, j)).toBeCloseTo(total(ba, j), 6);
      expect(total(ab, j)).toBeCloseTo(total(whole, j), 6);
    }
  });
});

describe('thresholds', () => {
  it('gives each zoom the share its densest tile can hold, never more than a finer zoom', () => {
    const s = new TileSketch('pbf');
    const random = mulberry32(9);
    // A dense left quarter and a sparse rest on a 16384-px world.
    for (let i = 0; i < 6000; i++) {
      const dense = i % 10 !== 0;
      const x = dense ? random() * 4096 : 4096 + random() * 12288, y = random() * 16384;
      s.add('0/0/0', flat({ type: 'Point', coordinates: [x, y] }), [x, y, x, y], { id: null, keys: ['v'], values: [random()] }, i, 60, i);
    }
    const { thresholds: t, spareFrom } = planThresholds({ sketch: s, side: 16384, minZoom: 0, maxZoom: 5, budget: 64 * 1024, overhead: 100 });
    expect(spareFrom).toBe(0);
    expect(t[5]).toBe(0);
    for (let z = 0; z < 5; z++) expect(t[z]).toBeGreaterThanOrEqual(t[z + 1]);
    // Zoom 0 (one tile, all 6000 points) is thinned; at zoom 2 (4096-px tiles) the densest holds ≈1350 points.
    expect(t[0]).toBeGreaterThan(0);
    const share = (z: number) => 1 - t[z] / PRIORITY_RANGE;
    expect(share(0)).toBeLessThan(share(1) + 1e-9);
    const bytesPerPoint = [...s.tiles(14)][0][1] / 6000;
    expect(share(0) * 6000 * bytesPerPoint).toBeLessThan(64 * 1024);
    expect(share(0) * 6000 * bytesPerPoint).toBeGreaterThan(0.8 * 64 * 1024);
  });

  it('spares large outlines at every zoom while they leave the budget to the rest, and where they do not, only larger ones', () => {
    // Outlines 1000 px across on a 16384-px world: 16 display pixels of a zoom-0 tile, so spared at every zoom by size.
    const sketch = (outlines: number) => {
      const s = new TileSketch('pbf');
      const random = mulberry32(5);
      for (let i = 0; i < outlines; i++) {
        const x = 500 + random() * 15000, y = 500 + random() * 15000;
        s.add('0/0/0', flat({ type: 'Polygon', coordinates: [blob(random, x, y, 500, 120)] }), [x - 650, y - 650, x + 650, y + 650], TAGS, i, 60, i);
      }
      for (let i = 0; i < 2000; i++) {
        const x = random() * 16384, y = random() * 16384;
        s.add('0/0/0', flat({ type: 'Polygon', coordinates: [blob(random, x, y, 3, 8)] }), [x - 4, y - 4, x + 4, y + 4], TAGS, 1000 + i, 60, 1000 + i);
      }
      return planThresholds({ sketch: s, side: 16384, minZoom: 0, maxZoom: 5, budget: 8 * 1024, overhead: 100 });
    };
    expect(sketch(4).spareFrom).toBe(0);
    expect(sketch(4).spareSizes).toEqual([8, 8, 8, 8, 8, 8]);
    const crowded = sketch(300);
    // All 300 would fill the coarse tiles: those zooms spare only what is wider than these 1,300-px boxes.
    expect(crowded.spareFrom).toBe(0);
    expect(crowded.spareSizes[0]).toBeGreaterThan(1300 / 64);
    // Nested: in image pixels a zoom's sparing size is never below the next finer zoom's.
    for (let z = 0; z < 5; z++) expect(crowded.spareSizes[z] * 2 ** -z).toBeGreaterThanOrEqual(crowded.spareSizes[z + 1] * 2 ** -(z + 1));
    // Thinned with the rest there, the share counts them: the zoom keeps a share, not nothing.
    expect(crowded.thresholds[0]).toBeLessThan(PRIORITY_RANGE);
  });

  it('counts spared bytes whole only where the zoom spares their class (-1: none)', () => {
    // 20,000 bytes, 15,000 of them in 10 spared features: with sparing they alone pass 95% of a 12,000-byte budget.
    const sums = [1000, 20000, 1e6, 1000, 1000, 15000, 2.5e7, 10];
    expect(fittingShare(sums, 50, 12000, 0)).toBe(0);
    expect(fittingShare(sums, 50, 12000, -1)).toBeGreaterThan(0.3);
    expect(fittingShare(sums, 50, 40000, 0)).toBe(1);
  });

  it('fits everything when the whole tile is within the aim, and shrinks with the tile', () => {
    expect(fittingShare([10, 1000, 1e5, 10, 10], 50, 2000)).toBe(1);
    const f = fittingShare([1000, 200000, 4e7, 1000, 1000], 50, 20000);
    expect(f).toBeGreaterThan(0.05);
    expect(f).toBeLessThan(0.1);
  });
});

describe('simplification ranks', () => {
  it('keep exactly the vertices simplify keeps, at every tolerance', () => {
    const random = mulberry32(5);
    for (let k = 0; k < 50; k++) {
      const ring = blob(random, 100, 100, 50, 10 + Math.floor(random() * 60)).flat();
      const ranks = new Ranker().rank(Float64Array.from(ring), new Float64Array(ring.length >> 1));
      for (const tol of [0.5, 2, 6, 20]) {
        const kept = (new Simplifier().simplify(ring, tol * tol, false) ?? []) as number[];
        const ranked = ring.filter((_, i) => ranks[i >> 1] > tol * tol);
        expect(ranked).toEqual(Array.from(kept));
      }
    }
  });
});
