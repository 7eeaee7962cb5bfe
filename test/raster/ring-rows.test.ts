// Point-in-ring tests through the row index of a long ring agree with a scan of the whole ring, and give each hole its owner.
import { describe, expect, it } from 'vitest';
import { INDEXED_RING, RingTester } from '../../src/raster/ring-rows.js';
import { labelsToFeatures } from '../../src/raster/features.js';
import type { LabelRings } from '../../src/raster/trace.js';
import { mulberry32 } from '../../src/random.js';

/** Even-odd over every edge: the reference. */
function scan(xy: ArrayLike<number>, px: number, py: number): boolean {
  const n = xy.length / 2;
  let inside = false;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const xi = xy[2 * i], yi = xy[2 * i + 1], xj = xy[2 * j], yj = xy[2 * j + 1];
    if ((yi > py) !== (yj > py) && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Rings given as flat x, y lists, as the tracer stores them (open, each its own start). */
function ringsOf(...list: number[][]): LabelRings {
  const xy = new Int32Array(list.flat());
  const start = new Float64Array(list.length), length = new Uint32Array(list.length);
  let at = 0;
  list.forEach((r, k) => { start[k] = at; length[k] = r.length / 2; at += r.length / 2; });
  return { count: list.length, label: new Uint32Array(list.length).fill(1), start, length, area2: new Float64Array(list.length), xy };
}

describe('RingTester', () => {
  it('answers as a scan of the whole ring, for a long comb of pixel edges and a long star of slanted ones', () => {
    // A comb: 1,500 teeth of varying height along x (6,002 vertices), every edge on the pixel grid.
    const next = mulberry32(7);
    const comb: number[] = [0, 0];
    for (let t = 0; t < 1500; t++) { const h = 1 + Math.floor(next() * 40); comb.push(2 * t, h, 2 * t + 1, h, 2 * t + 1, 2 * t + 2, 0); }
    comb.push(3000, -5, 0, -5);
    // A star of 5,000 points at integer positions: slanted edges crossing several rows each.
    const star: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const a = (2 * Math.PI * i) / 5000, r = i % 2 === 0 ? 900 : 300 + Math.floor(next() * 400);
      star.push(Math.round(1000 + r * Math.cos(a)), Math.round(1000 + r * Math.sin(a)));
    }
    const rings = ringsOf(comb, star, [0, 0, 10, 0, 10, 10, 0, 10]);
    expect(rings.length[0]).toBeGreaterThanOrEqual(INDEXED_RING);
    expect(rings.length[1]).toBeGreaterThanOrEqual(INDEXED_RING);
    const tester = new RingTester(rings);
    let insides = 0;
    for (let k = 0; k < 9000; k++) {
      const r = k % 3;
      const px = r === 0 ? -3.5 + Math.floor(next() * 3010) : r === 1 ? 50.5 + Math.floor(next() * 1900) : Math.floor(next() * 14) - 1.5;
      const py = r === 0 ? -7.5 + Math.floor(next() * 52) : r === 1 ? 50.5 + Math.floor(next() * 1900) : Math.floor(next() * 14) - 1.5;
      const own = r === 0 ? comb : r === 1 ? star : [0, 0, 10, 0, 10, 10, 0, 10];
      const want = scan(own, px, py);
      expect(tester.contains(r, px, py)).toBe(want);
      if (want) insides++;
    }
    // Both answers are well represented.
    expect(insides).toBeGreaterThan(1500);
    expect(insides).toBeLessThan(7500);
  });
});

describe('labelsToFeatures: holes of one long outline', () => {
  it('puts each hole under its own outer ring when one ring is long: lakes in a comb, and an island with its own hole', () => {
    // Label 1: a band 3,000 px wide with a jagged top (a long outline), lakes of 1 px in it, and in one larger lake
    // (rows 20–28, x 100–108) an island of label 1 with a hole of its own.
    const W = 3002, H = 40, data = new Uint8Array(W * H);
    for (let x = 1; x < W - 1; x++) for (let y = 2 + (x % 3); y < H - 1; y++) data[y * W + x] = 1;
    const lakes: Array<[number, number]> = [];
    for (let x = 200; x < 1900; x += 20) { data[10 * W + x] = 0; lakes.push([x, 10]); }
    for (let y = 20; y <= 28; y++) for (let x = 100; x <= 108; x++) data[y * W + x] = 0;
    for (let y = 22; y <= 26; y++) for (let x = 102; x <= 106; x++) data[y * W + x] = y === 24 && x === 104 ? 0 : 1;
    const [f] = [...labelsToFeatures({ width: W, height: H, data })];
    const g = f.geometry;
    if (g.type !== 'MultiPolygon') throw new Error(`a MultiPolygon, not ${g.type}`);
    expect(g.coordinates).toHaveLength(2);
    const [band, island] = g.coordinates;
    expect(band[0].length - 1).toBeGreaterThanOrEqual(INDEXED_RING);
    // The band's holes: every 1-px lake and the large lake; the island's: its 1-px hole.
    const topLefts = (rings: number[][][]) => rings.map((r) => r.reduce((m, p) => (p[1] < m[1] || (p[1] === m[1] && p[0] < m[0]) ? p : m)));
    expect(topLefts(band.slice(1)).map(([x, y]) => `${x},${y}`).sort()).toEqual([...lakes.map(([x, y]) => `${x},${y}`), '100,20'].sort());
    expect(topLefts(island.slice(1))).toEqual([[104, 24]]);
    expect(island[0][0]).toEqual([102, 22]);
  });
});
