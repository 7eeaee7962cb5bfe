// Long parts: cut down per block of tiles and ranked once, they tile to the very bytes the plain path gives.
import { describe, expect, it } from 'vitest';
import { Clipper, clipPoints } from '../../src/tiling/clip.js';
import { collapse, LONG_PART, PartTree, tilesRect } from '../../src/tiling/collapse.js';
import { Quantiser } from '../../src/tiling/quantise.js';
import { RankMemo, Ranker, Simplifier } from '../../src/tiling/simplify.js';
import { tileFeatures, TilerScratch } from '../../src/stages/tile/tiler.js';
import { baseSpec, rng, tf } from './tile-fixtures.js';

/** A random walk of `n` integer positions over about 6 × 6 tiles (zoom-global tile units), closed when `ring`. */
function walk(r: () => number, n: number, ring: boolean): number[] {
  const out: number[] = [];
  let x = r() * 6 * 4096, y = r() * 6 * 4096;
  const step = 50 + r() * 2000;
  for (let i = 0; i < n; i++) { x += (r() - 0.5) * step; y += (r() - 0.5) * step; out.push(Math.round(x), Math.round(y)); }
  if (ring) out.push(out[0], out[1]);
  return out;
}

describe('collapse', () => {
  it('clips to every tile of a block exactly as the whole part does (random walks: rings and lines, rounded or not)', () => {
    const r = rng(7);
    const clipper = new Clipper();
    let checked = 0, shortened = 0;
    for (let t = 0; t < 120; t++) {
      const ring = r() < 0.7;
      const part = walk(r, LONG_PART + Math.floor(r() * 700), ring);
      const x0 = Math.floor(r() * 4), y0 = Math.floor(r() * 4), x1 = x0 + Math.floor(r() * 3), y1 = y0 + Math.floor(r() * 3);
      const tree = new PartTree(part, x0, y0, x1, y1);
      for (let x = x0; x <= x1; x++) {
        for (let y = y0; y <= y1; y++) {
          const rect = tilesRect(x, y, x, y), near = tree.at(x, y);
          if (near.length < part.length) shortened++;
          for (const round of [true, false]) {
            const whole = ring ? clipper.ring(part, rect, round) : clipper.line(part, rect, round);
            const cut = ring ? clipper.ring(near, rect, round) : clipper.line(near, rect, round);
            expect(cut).toEqual(whole);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(800);
    expect(shortened).toBeGreaterThan(checked / 4);
  });

  it('keeps the extreme x of a run above the tile: the degenerate edges it makes along the tile stay', () => {
    // Found by the check above while runs kept only their ends: the run above the tile (y < -64) dips into the tile's
    // x range at (12237, -4133) between two vertices left of it, which makes a spike down the tile's left edge.
    const ring = [11788, 6664, 14828, 21793, 8921, 22781, 16455, 9638, 24766, 9024, 9526, -4014, 7803, 22996, 3737, 1581, 2031, 2494,
      21550, 9857, 5377, 14165, 22914, 3980, -642, -106, 17736, 843, 19233, 10311, 4394, 10789, 176, 7502, 5135, -4713, 12237, -4133,
      -3304, -4153, 11788, 6664];
    const block = tilesRect(3, 0, 4, 0), tile = tilesRect(3, 0, 3, 0);
    const cut = collapse(ring, block);
    expect(cut.length).toBeLessThan(ring.length);
    expect(Array.from(cut)).toContain(12237);
    const clipper = new Clipper();
    const whole = clipper.ring(ring, tile, true);
    expect(whole.slice(0, 4)).toEqual([12224, -64, 12224, 4160]);
    expect(clipper.ring(cut, tile, true)).toEqual(whole);
  });

  it('cuts a part down to a few positions for a tile it passes far from, and leaves one inside the block as it is', () => {
    // A circle of 40,000 vertices, radius 3 tiles, round the centre of an 8 × 8 block: tile (3, 3) is inside it, far
    // from every vertex.
    const circle: number[] = [];
    for (let i = 0; i <= 40000; i++) { const a = (2 * Math.PI * (i % 40000)) / 40000; circle.push(Math.round(4 * 4096 + 3 * 4096 * Math.cos(a)), Math.round(4 * 4096 + 3 * 4096 * Math.sin(a))); }
    const tree = new PartTree(circle, 0, 0, 7, 7);
    expect(tree.at(3, 3).length).toBeLessThan(40);
    expect(tree.at(7, 4).length).toBeLessThan(circle.length / 4);
    expect(new PartTree(circle, 0, 0, 8, 8).at(0, 0).length).toBeLessThan(circle.length);
    expect(collapse(circle, tilesRect(0, 0, 8, 8))).toBe(circle);
  });
});

describe('points', () => {
  it('are cut down to those inside each block, in their order, and clip to every tile as the whole set does', () => {
    const r = rng(13);
    const points = Array.from({ length: 20000 }, () => Math.round(r() * 8 * 4096));
    const tree = new PartTree(points, 1, 1, 6, 6, true);
    for (let x = 1; x <= 6; x++) {
      for (let y = 1; y <= 6; y++) {
        const rect = tilesRect(x, y, x, y), near = tree.at(x, y);
        expect(near.length).toBeLessThan(points.length / 4);
        expect(clipPoints(near, rect)).toEqual(clipPoints(points, rect));
      }
    }
  });
});

describe('ranks of long parts', () => {
  it('keep, at every tolerance, what Douglas–Peucker keeps', () => {
    const r = rng(11);
    const plain = new Simplifier(), ranked = new Simplifier(), ranker = new Ranker();
    for (let t = 0; t < 60; t++) {
      const ring = r() < 0.5;
      const part = walk(r, 20 + Math.floor(r() * 600), ring).map((v) => v / 7);
      const ranks = ranker.rank(part, new Float64Array(part.length >> 1));
      for (const sqTol of [0, 0.5, 4, 100, 1e4, 1e6, 1e8]) {
        expect(ranked.simplifyQuantise(part, sqTol, ring, 0.5, ranks)).toEqual(plain.simplifyQuantise(part, sqTol, ring, 0.5));
      }
    }
  });

  it('are kept for equal coordinates and forgotten, least recently used first, beyond the limit, but never one the call has used', () => {
    const r = rng(3);
    const a = walk(r, 600, true), b = walk(r, 600, true), c = walk(r, 600, true);
    const memo = new RankMemo(2500);
    memo.begin();
    const ra = memo.part(a).ranks;
    expect(ra).toEqual(new Ranker().rank(a, new Float64Array(a.length >> 1)));
    expect(memo.part([...a]).ranks).toBe(ra);
    const rb = memo.part(b).ranks;
    // 3 × 1,202 numbers: c does not fit beside a and b, which this call has used; it is ranked, not kept.
    const rc = memo.part(c).ranks;
    expect(rc).toEqual(new Ranker().rank(c, new Float64Array(c.length >> 1)));
    expect(memo.part(c).ranks).not.toBe(rc);
    expect(memo.part(a).ranks).toBe(ra);
    expect(memo.part(b).ranks).toBe(rb);
    // The next call uses a, then c: c takes the place of b, which that call has not used.
    memo.begin();
    expect(memo.part([...a]).ranks).toBe(ra);
    const rc2 = memo.part(c).ranks;
    expect(memo.part(c).ranks).toBe(rc2);
    expect(memo.part(b).ranks).not.toBe(rb);
    expect(memo.part(b).ranks).toEqual(rb);
  });

  it('finds each of thousands of short parts again (the holes of a tissue outline), and tells apart parts that differ in one number', () => {
    const r = rng(4);
    const parts = Array.from({ length: 3000 }, () => walk(r, 4 + Math.floor(r() * 20), true));
    const memo = new RankMemo();
    memo.begin();
    const first = parts.map((p) => memo.part(p));
    memo.begin();
    parts.forEach((p, i) => expect(memo.part([...p])).toBe(first[i]));
    const moved = [...parts[7]];
    moved[3] += 1e-9;
    expect(memo.part(moved)).not.toBe(first[7]);
  });
});

describe('the tiler on long outlines', () => {
  it('gives the bytes of the plain path, in the whole world and in a cell', () => {
    const r = rng(5);
    // World 4,096 px, zooms 0–4 (finest tile 256 px): a wavy outline of 5,000 vertices across most of it with 300 short
    // holes, a polygon of short rings that are long together, a line of
    // 5,000 across it, a MultiPolygon of a long ring with a long hole and a short ring, a collection of a long ring and
    // a long line, and 6,000 points in one MultiPoint (long: LONG_PART positions or more).
    const wavy = (cx: number, cy: number, rad: number, n: number, ccw = true): [number, number][] => {
      const ring: [number, number][] = [];
      for (let i = 0; i < n; i++) {
        const a = ((ccw ? 1 : -1) * 2 * Math.PI * i) / n, rr = rad * (1 + 0.1 * Math.sin(a * 37) + 0.03 * (r() - 0.5));
        ring.push([Math.round((cx + rr * Math.cos(a)) * 100) / 100, Math.round((cy + rr * Math.sin(a)) * 100) / 100]);
      }
      ring.push(ring[0]);
      return ring;
    };
    const line: [number, number][] = [];
    for (let i = 0; i < 5000; i++) line.push([5 + i * 0.816, 2000 + 900 * Math.sin(i / 125) + 20 * r()]);
    // Holes of a tissue outline: short rings, some across tile borders, kept as the long polygon's parts.
    const holes = (cx: number, cy: number, spread: number, count: number, n: number) => Array.from({ length: count }, (_, i) => {
      const a = (2 * Math.PI * i) / count, d = spread * (0.2 + 0.7 * r());
      return wavy(cx + d * Math.cos(a), cy + d * Math.sin(a), 4 + 20 * r(), n, i % 2 === 0);
    });
    const features = [
      // Given the other way round: each zoom's ring is reversed, in place, once.
      tf(0, { type: 'Polygon', coordinates: [wavy(2048, 2048, 1800, 5000, false), ...holes(2048, 2048, 1500, 300, 12)] }, { id: 1 }),
      // Long by its holes alone: 2,000 vertices round and 40 holes of 60.
      tf(5, { type: 'Polygon', coordinates: [wavy(3000, 800, 400, 2000), ...holes(3000, 800, 300, 40, 60)] }, { id: 6 }),
      tf(1, { type: 'LineString', coordinates: line }, { id: 2 }),
      tf(2, { type: 'MultiPolygon', coordinates: [[wavy(1000, 1000, 700, 4500), wavy(1000, 1000, 300, 4200, false)], [wavy(3100, 3000, 600, 2500)]] }, { id: 3 }),
      tf(3, { type: 'GeometryCollection', geometries: [{ type: 'Polygon', coordinates: [wavy(2900, 1100, 800, 4500)] }, { type: 'LineString', coordinates: line.map(([x, y]) => [y, x]) }] }, { id: 4 }),
      tf(4, { type: 'MultiPoint', coordinates: Array.from({ length: 6000 }, () => [Math.round(r() * 409600) / 100, Math.round(r() * 409600) / 100]) }, { id: 5 }),
    ];
    // One scratch for every call, as a worker keeps one: each call reads its own copy of the features, as each unit
    // decodes its records, and finds the long parts' results of the calls before.
    const scratch = new TilerScratch(new Quantiser());
    for (const cell of [undefined, { z: 2, x: 1, y: 2 }, { z: 2, x: 2, y: 2 }, { z: 2, x: 1, y: 2 }]) {
      const spec = baseSpec({ side: 4096, maxZoom: 4, finestZoom: 4, cell });
      const fast = tileFeatures(structuredClone(features), spec, scratch);
      const plain = tileFeatures(features, spec, new TilerScratch(new Quantiser(Infinity)));
      expect(fast.length).toBeGreaterThan(cell ? 15 : 100);
      expect(fast.map((t) => [t.z, t.x, t.y, Buffer.from(t.pbf ?? []).toString('base64'), Buffer.from(t.json ?? []).toString('base64')]))
        .toEqual(plain.map((t) => [t.z, t.x, t.y, Buffer.from(t.pbf ?? []).toString('base64'), Buffer.from(t.json ?? []).toString('base64')]));
    }
  });

  it('a MultiPolygon of many pieces (a class mask label) tiles to the same bytes when only the pieces near a tile are read', () => {
    const r = rng(11);
    const donut = (cx: number, cy: number, d: number): [number, number][][] => [
      [[cx, cy], [cx + d, cy], [cx + d, cy + d], [cx, cy + d], [cx, cy]],
      [[cx + d / 3, cy + d / 3], [cx + d / 3, cy + (2 * d) / 3], [cx + (2 * d) / 3, cy + (2 * d) / 3], [cx + (2 * d) / 3, cy + d / 3], [cx + d / 3, cy + d / 3]],
    ];
    const pieces = Array.from({ length: 400 }, () => donut(Math.round(r() * 4000), Math.round(r() * 4000), 3 + Math.round(r() * 60)));
    const features = [tf(0, { type: 'MultiPolygon', coordinates: pieces }, { id: 1 }), tf(1, { type: 'MultiPolygon', coordinates: pieces.slice(0, 10) }, { id: 2 })];
    for (const cell of [undefined, { z: 2, x: 1, y: 2 }]) {
      const spec = baseSpec({ side: 4096, maxZoom: 4, finestZoom: 4, cell });
      const fast = tileFeatures(structuredClone(features), spec, new TilerScratch(new Quantiser()));
      const plain = tileFeatures(features, spec, new TilerScratch(new Quantiser(Infinity, Infinity)));
      expect(fast.length).toBeGreaterThan(cell ? 15 : 100);
      expect(fast.map((t) => [t.z, t.x, t.y, Buffer.from(t.pbf ?? []).toString('base64'), Buffer.from(t.json ?? []).toString('base64')]))
        .toEqual(plain.map((t) => [t.z, t.x, t.y, Buffer.from(t.pbf ?? []).toString('base64'), Buffer.from(t.json ?? []).toString('base64')]));
    }
  });
});
