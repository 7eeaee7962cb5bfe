// Random tissue outlines full of holes (a class mask's classes): the same tiles, previews and report counts however the build is cut into units.
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { mulberry32 } from '../../src/random.js';
import { NEAR_PIECES } from '../../src/stages/record-stream.js';
import { LONG_PART } from '../../src/tiling/collapse.js';

const SIDE = 4096;
type Ring = number[][];

/** A rectangle ring, corner (x, y), one way round or (`hole`) the other. */
const rect = (x: number, y: number, w: number, h: number, hole = false): Ring => {
  const r = [[x, y], [x + w, y], [x + w, y + h], [x, y + h], [x, y]];
  return hole ? r.reverse() : r;
};

/** A wavy ring of `n` vertices around (cx, cy), `rx` by `ry` across; `hole`: the other way round. */
function wavy(rnd: () => number, cx: number, cy: number, rx: number, ry: number, n: number, hole = false): Ring {
  const out: Ring = [];
  for (let i = 0; i < n; i++) {
    const a = (2 * Math.PI * i) / n, f = 0.93 + 0.05 * Math.sin(i / 7) + 0.02 * rnd();
    out.push([cx + rx * f * Math.cos(a), cy + ry * f * Math.sin(a)]);
  }
  out.push(out[0]);
  return hole ? out.reverse() : out;
}

/** A size between `lo` and `hi` px, even on a log scale. */
const between = (rnd: () => number, lo: number, hi: number) => Math.exp(Math.log(lo) + rnd() * (Math.log(hi) - Math.log(lo)));

/**
 * The holes of an outline `rx` by `ry` around (cx, cy): specks to 700 px, some across the borders of 256-px cells,
 * one long and wavy (LONG_PART positions alone), one over [1000, 1600]² (over whole tiles of every zoom from 3 on in
 * the outline round it, beyond the exterior of the others), and some beyond the exterior (invalid, warned of and
 * built), near it and far from it.
 */
function holes(rnd: () => number, cx: number, cy: number, rx: number, ry: number, count: number): Ring[] {
  const out: Ring[] = [];
  const inside = (k: number) => { const a = rnd() * 2 * Math.PI, d = Math.sqrt(rnd()) * k; return [cx + rx * d * Math.cos(a), cy + ry * d * Math.sin(a)]; };
  for (let i = 0; i < count; i++) {
    let [x, y] = inside(0.8);
    const s = rnd() < 0.05 ? between(rnd, 100, 700) : between(rnd, 0.3, 60);
    // On a cell border, or on the border of a coarser zoom's tiles.
    if (rnd() < 0.25) x = Math.round(x / 256) * 256 - s / 2;
    if (rnd() < 0.25) y = Math.round(y / 512) * 512 - s / 2;
    out.push(rnd() < 0.6 ? rect(x, y, s, s * (0.3 + rnd() * 1.5), true) : wavy(rnd, x, y, s / 2, s / 2, 5 + Math.floor(rnd() * 20), true));
  }
  const [lx, ly] = inside(0.3);
  out.push(wavy(rnd, lx, ly, 0.3 * rx, 0.15 * ry, LONG_PART + 100, true));
  // Over every tile of [1024, 1536]² and its buffer (zoom 3 of a 4,096-px world); the exterior goes round it.
  out.push(rect(1000, 1000, 600, 600, true));
  for (let i = 0; i < 12; i++) {
    const a = rnd() * 2 * Math.PI, d = 1.05 + rnd() * (i % 2 === 0 ? 0.1 : 1);
    const s = between(rnd, 2, 300);
    out.push(rect(cx + rx * d * Math.cos(a), cy + ry * d * Math.sin(a), s, s, true));
  }
  return out;
}

/** Specks, some on cell borders: the pieces that make a class a multi-geometry of many pieces. */
function specks(rnd: () => number, count: number): Ring[][] {
  return Array.from({ length: count }, () => {
    let x = rnd() * SIDE, y = rnd() * SIDE;
    const s = between(rnd, 0.3, 40);
    if (rnd() < 0.2) x = Math.round(x / 256) * 256 - s / 2;
    if (rnd() < 0.2) y = Math.round(y / 256) * 256 - s / 2;
    return [rect(x, y, s, s)];
  });
}

/**
 * A tissue class with hundreds of holes and specks (one MultiPolygon, its outline a long piece across most of the
 * slide, over [1024, 1536]² so the hole there covers whole tiles); a class of two such outlines, far apart; an outline
 * alone (a Polygon: at the coarser levels its record has a lod and its holes are read only near a unit); a heavy body
 * with a long arm full of holes (its centroid and its box centre in different cells); lines of many pieces, two long.
 */
function randomInput(seed: number): string {
  const rnd = mulberry32(seed);
  const features: unknown[] = [];
  const cx = 1300 + rnd() * 300, cy = 1300 + rnd() * 300;
  const tissue = [wavy(rnd, cx, cy, 1250, 1100, 3000), ...holes(rnd, cx, cy, 1250, 1100, 400)];
  features.push({ type: 'Feature', id: 1, properties: { label: 1 }, geometry: { type: 'MultiPolygon', coordinates: [tissue, ...specks(rnd, NEAR_PIECES + 40)] } });
  const two = [[2900, 800, 500, 650], [800, 3200, 700, 500]].map(([x, y, w, h]) => [wavy(rnd, x, y, w, h, 2500), ...holes(rnd, x, y, w, h, 150)]);
  features.push({ type: 'Feature', id: 2, properties: { label: 2 }, geometry: { type: 'MultiPolygon', coordinates: [...two, ...specks(rnd, NEAR_PIECES)] } });
  features.push({ type: 'Feature', id: 3, properties: { label: 3 }, geometry: { type: 'Polygon', coordinates: [wavy(rnd, 3100, 3000, 800, 700, 2500), ...holes(rnd, 3100, 3000, 800, 700, 200)] } });
  // A body of 600 px at the left and an arm of 40 px to the right edge, holes along it: the box centre is mid-arm.
  const ay = 2200 + rnd() * 200;
  const arm = Array.from({ length: 2200 }, (_, i) => [700 + (i * 3300) / 2200, ay + (i % 2) * 3]);
  const body = [[100, ay - 300], [700, ay - 300], ...arm, [4000, ay + 40], ...arm.map(([x, y]) => [x, y + 40]).reverse(), [700, ay + 300], [100, ay + 300], [100, ay - 300]];
  const armHoles = Array.from({ length: 160 }, (_, i) => rect(720 + 20 * i + rnd() * 5, ay + 12, 2 + rnd() * 12, 4 + rnd() * 10, true));
  features.push({ type: 'Feature', id: 4, properties: { label: 4 }, geometry: { type: 'Polygon', coordinates: [body, ...armHoles, rect(200, ay - 200, 300, 400, true)] } });
  const lines = Array.from({ length: NEAR_PIECES + 10 }, () => {
    const x = rnd() * SIDE, y = rnd() * SIDE;
    return [[x, y], [x + rnd() * 30, y + rnd() * 30]];
  });
  for (let k = 0; k < 2; k++) lines.push(Array.from({ length: LONG_PART + 50 }, (_, i) => [20 + (i * (SIDE - 40)) / (LONG_PART + 50), 300 + 3000 * k + 200 * Math.sin(i / 90) + rnd() * 2]));
  features.push({ type: 'Feature', id: 5, properties: { track: 1 }, geometry: { type: 'MultiLineString', coordinates: lines } });
  return JSON.stringify({ type: 'FeatureCollection', features });
}

/** A build's files (the report without its timings, run and units, which differ by design), path → base64. */
async function build(text: string, opts: Record<string, unknown>): Promise<Map<string, string>> {
  const sink = new MemorySink();
  await buildPyramid([{ source: memorySource('tissue.json', text) }], { workers: 1, memoryBudget: 128 * 1024 * 1024, imageSize: `${SIDE},${SIDE}`, ...opts }, { sink });
  const out = new Map<string, string>();
  for (const [k, v] of sink.files) {
    if (k !== 'build-report.json') { out.set(k, Buffer.from(v).toString('base64')); continue; }
    const { timings: _t, run: _r, units: _u, ...counts } = JSON.parse(Buffer.from(v).toString('utf8')) as Record<string, unknown>;
    out.set(k, JSON.stringify(counts));
  }
  return out;
}

/** The widest ring (px) of the tissue (label 1) in a JSON tile of a build. */
function widest(files: Map<string, string>, tile: string): number {
  type Json = { features: { properties: { label?: number }; geometry: { type: string; coordinates: number[][][][] } }[] };
  const { features } = JSON.parse(Buffer.from(files.get(tile) ?? '', 'base64').toString('utf8')) as Json;
  let w = 0;
  for (const f of features) {
    if (f.properties.label !== 1 || f.geometry.type !== 'MultiPolygon') continue;
    for (const ring of f.geometry.coordinates.flat()) {
      const xs = ring.map((p) => p[0]);
      w = Math.max(w, Math.round(Math.max(...xs) - Math.min(...xs)));
    }
  }
  return w;
}

/** The paths where two builds differ (missing in one, or other bytes): none when they are the same. */
function differences(a: Map<string, string>, b: Map<string, string>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();
}

describe('tissue outlines with holes', () => {
  // Each case: options both builds share, then the unit sizes compared with a build of one cell (every unit home).
  const cases: { name: string; seed: number; opts: Record<string, unknown>; sizes: number[] }[] = [
    { name: 'cells of 256 to 1,024 px', seed: 21, opts: { maxZoom: 5 }, sizes: [256, 512] },
    { name: '--lod none, JSON only', seed: 22, opts: { maxZoom: 5, lod: 'none', format: 'json' }, sizes: [256] },
    { name: '--preview, a thinned pyramid (a small --tile-budget)', seed: 23, opts: { maxZoom: 5, preview: true, tileBudget: 6000 }, sizes: [512] },
    { name: '--max-zoom coarser than the stored cells', seed: 24, opts: { maxZoom: 3 }, sizes: [256] },
  ];
  for (const c of cases) {
    it(`gives the bytes and counts of a one-cell build: ${c.name}`, async () => {
      const text = randomInput(c.seed);
      const whole = await build(text, { ...c.opts, unitSize: SIDE });
      expect(whole.size).toBeGreaterThan(10);
      // The tissue's outline is drawn, but not in the tile its hole covers with its buffer (its specks are).
      if (c.seed === 21) {
        expect(widest(whole, '3/1/1.json')).toBe(512 + 16);
        expect(widest(whole, '3/2/2.json')).toBeLessThanOrEqual(40);
      }
      for (const unitSize of c.sizes) {
        expect(differences(await build(text, { ...c.opts, unitSize }), whole), `unit size ${unitSize}`).toEqual([]);
      }
      if (c.seed === 21) expect(differences(await build(text, { ...c.opts, unitSize: 1024, workers: 2 }), whole), 'two workers').toEqual([]);
    });
  }
});
