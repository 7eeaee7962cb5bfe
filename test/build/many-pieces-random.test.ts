// Random multi-geometries of many pieces (class masks' labels, a gene's transcripts, tracks): the same tiles, previews and shards however the build is cut into units.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { fileSource, memorySource } from '../../src/io/read.js';
import { mulberry32 } from '../../src/random.js';
import { NEAR_PIECES } from '../../src/stages/record-stream.js';
import { tmpDir, treeDifferences, withoutReport as strip } from '../helpers/pyramid.js';

const SIDE = 8192;
type Ring = number[][];

/** A rectangle ring, corner (x, y); `hole`: the other way round. */
const rect = (x: number, y: number, w: number, h: number, hole = false): Ring => {
  const r = [[x, y], [x + w, y], [x + w, y + h], [x, y + h], [x, y]];
  return hole ? r.reverse() : r;
};

/** A star-shaped ring of `n` vertices around (cx, cy), radius about `r`. */
function blob(rnd: () => number, cx: number, cy: number, r: number, n: number): Ring {
  const out: Ring = [];
  for (let i = 0; i < n; i++) {
    const a = (2 * Math.PI * i) / n, rr = r * (0.6 + 0.4 * rnd());
    out.push([cx + rr * Math.cos(a), cy + rr * Math.sin(a)]);
  }
  out.push(out[0]);
  return out;
}

/** One piece of about `size` px at (x, y): a rectangle or a blob, some with a hole, a few of hundreds of vertices. */
function piece(rnd: () => number, x: number, y: number, size: number): Ring[] {
  if (rnd() < 0.5) {
    const h = size * (0.2 + rnd() * 1.8);
    return size > 6 && rnd() < 0.3 ? [rect(x, y, size, h), rect(x + size / 4, y + h / 4, size / 2, h / 2, true)] : [rect(x, y, size, h)];
  }
  const n = size > 50 && rnd() < 0.2 ? 200 + Math.floor(rnd() * 300) : 5 + Math.floor(rnd() * 12);
  const outer = blob(rnd, x + size / 2, y + size / 2, size / 2, n);
  return size > 10 && rnd() < 0.2 ? [outer, blob(rnd, x + size / 2, y + size / 2, size / 6, 6).reverse()] : [outer];
}

/** A size between `lo` and `hi` px, even on a log scale. */
const between = (rnd: () => number, lo: number, hi: number) => Math.exp(Math.log(lo) + rnd() * (Math.log(hi) - Math.log(lo)));

/**
 * The pieces of one label: most in 1 to 3 clusters (sub-pixel to 40 px, so the centroid and the box centre fall in
 * different cells), some anywhere up to 300 px, a few huge ones, some on cell borders or across the slide's edge.
 */
function label(rnd: () => number, count: number): Ring[][] {
  const clusters = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => [rnd() * SIDE, rnd() * SIDE, 50 + (rnd() * SIDE) / 4]);
  const polys: Ring[][] = [];
  for (let i = 0; i < count; i++) {
    const u = rnd();
    let x: number, y: number, size: number;
    if (u < 0.75) {
      const [cx, cy, r] = clusters[Math.floor(rnd() * clusters.length)];
      x = cx + (rnd() - 0.5) * 2 * r; y = cy + (rnd() - 0.5) * 2 * r; size = between(rnd, 0.2, 40);
    } else if (u < 0.97) {
      x = rnd() * SIDE; y = rnd() * SIDE; size = between(rnd, 0.3, 300);
    } else {
      x = rnd() * SIDE * 0.7; y = rnd() * SIDE * 0.7; size = between(rnd, 500, SIDE / 2);
    }
    if (rnd() < 0.1) x = Math.round(x / 256) * 256 - size / 2;
    if (rnd() < 0.1) y = Math.round(y / 256) * 256 - size / 2;
    if (rnd() < 0.02) x = -size / 2;
    polys.push(piece(rnd, x, y, size));
  }
  return polys;
}

/**
 * A random input: 1 to 3 labels of NEAR_PIECES - 1 to several hundred pieces, one of a dense corner of sub-pixel
 * pieces with pieces on a grid over the slide, one with a long piece across it; a GeometryCollection holding such a MultiPolygon (stored whole); small
 * features; with `carpet`, a point in every 256-px cell (level 0 then has enough light units to be gathered).
 */
function randomInput(seed: number, carpet: boolean, withSpots = true): string {
  const rnd = mulberry32(seed);
  const features: unknown[] = [];
  let id = 1;
  const labels = 1 + Math.floor(rnd() * 3);
  for (let m = 0; m < labels; m++) {
    const count = m === 0 ? NEAR_PIECES - 1 + Math.floor(rnd() * 3) : NEAR_PIECES + Math.floor(rnd() * 400);
    features.push({ type: 'Feature', id: id++, properties: { label: m + 1 }, geometry: { type: 'MultiPolygon', coordinates: label(rnd, count) } });
  }
  const grid: Ring[][] = [];
  const step = SIDE / (16 + Math.floor(rnd() * 16));
  for (let y = rnd() * step; y < SIDE; y += step) for (let x = rnd() * step; x < SIDE; x += step) grid.push(piece(rnd, x, y, between(rnd, 0.2, step * 1.5)));
  const cx = rnd() * SIDE, cy = rnd() * SIDE;
  for (let i = 0; i < 200; i++) grid.push(piece(rnd, cx + rnd() * 40, cy + rnd() * 40, between(rnd, 0.1, 3)));
  features.push({ type: 'Feature', id: id++, featureClass: 'tumor', properties: { label: 255 }, geometry: { type: 'MultiPolygon', coordinates: grid } });
  const inCollection = { type: 'MultiPolygon', coordinates: label(rnd, NEAR_PIECES + 20) };
  features.push({ type: 'Feature', id: id++, properties: {}, geometry: { type: 'GeometryCollection', geometries: [inCollection, { type: 'LineString', coordinates: [[10, 10], [SIDE - 10, 20]] }] } });
  // A gene's transcripts, one MultiPoint, in clusters and scattered; tracks, one MultiLineString of short lines and a few long.
  const spots: number[][] = [];
  const spotCentres = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => [rnd() * SIDE, rnd() * SIDE]);
  for (let i = 0, n = NEAR_PIECES - 2 + Math.floor(rnd() * 600); i < n; i++) {
    const [cx, cy] = spotCentres[Math.floor(rnd() * spotCentres.length)];
    spots.push(rnd() < 0.8 ? [cx + (rnd() - 0.5) * 300, cy + (rnd() - 0.5) * 300] : [rnd() * SIDE, rnd() * SIDE]);
  }
  if (withSpots) features.push({ type: 'Feature', id: id++, properties: { gene: 'ACTB' }, geometry: { type: 'MultiPoint', coordinates: spots } });
  const tracks = Array.from({ length: NEAR_PIECES - 2 + Math.floor(rnd() * 200) }, () => {
    const x = rnd() * SIDE, y = rnd() * SIDE, step = rnd() < 0.05 ? SIDE / 6 : 2 + rnd() * 30;
    return Array.from({ length: 2 + Math.floor(rnd() * 6) }, (_, k) => [x + k * step, y + (rnd() - 0.5) * step]);
  });
  features.push({ type: 'Feature', id: id++, properties: { track: 1 }, geometry: { type: 'MultiLineString', coordinates: tracks } });
  // A class's web of tissue: small pieces and one long zig-zag of 5,000 vertices across most of the slide, with a hole
  // every 150 px (the cells it reaches store it alone, shared: `nearFarReaching`; a unit reads only the holes near it).
  const y0 = rnd() * SIDE * 0.8, x0 = rnd() * SIDE * 0.1;
  const top = Array.from({ length: 2500 }, (_, i) => [x0 + (i * SIDE * 0.85) / 2500, y0 + (i % 2) * 9 + rnd() * 3]);
  const holes = Array.from({ length: Math.floor((SIDE * 0.85) / 150) }, (_, i) => rect(x0 + 20 + 150 * i, y0 + 15, 5 + (i % 7), 5, true));
  const web: Ring[][] = [[[...top, ...top.map(([x, y]) => [x, y + 30 + rnd() * 3]).reverse(), top[0]], ...holes], ...label(rnd, NEAR_PIECES + 10)];
  features.push({ type: 'Feature', id: id++, properties: { label: 254 }, geometry: { type: 'MultiPolygon', coordinates: web } });
  for (let i = 0; i < 60; i++) {
    const x = rnd() * SIDE, y = rnd() * SIDE;
    features.push({ type: 'Feature', id: id++, properties: { n: i }, geometry: { type: 'Polygon', coordinates: [rect(x, y, 1 + rnd() * 100, 1 + rnd() * 100)] } });
  }
  if (carpet) {
    for (let y = 128; y < SIDE; y += 256) for (let x = 128; x < SIDE; x += 256) features.push({ type: 'Feature', id: id++, properties: {}, geometry: { type: 'Point', coordinates: [x + rnd() * 50, y + rnd() * 50] } });
  }
  return JSON.stringify({ type: 'FeatureCollection', features });
}

async function build(text: string, opts: Record<string, unknown>): Promise<Map<string, string>> {
  const sink = new MemorySink();
  await buildPyramid([{ source: memorySource('mask.json', text) }], { workers: 1, memoryBudget: 128 * 1024 * 1024, imageSize: `${SIDE},${SIDE}`, ...opts }, { sink });
  return strip(sink);
}

/** The paths where two builds differ (missing in one, or other bytes): none when they are the same. */
function differences(a: Map<string, string>, b: Map<string, string>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();
}

describe('random multi-geometries of many pieces', () => {
  // Each case: options both builds share, then the unit sizes compared with a build of one cell (no piece stored apart).
  const cases: { name: string; seed: number; carpet?: boolean; spots?: boolean; opts: Record<string, unknown>; sizes: number[] }[] = [
    { name: 'cells of 512 to 2,048 px, one and two workers', seed: 11, opts: { maxZoom: 6 }, sizes: [512, 1024, 2048] },
    { name: 'light cells gathered 2 × 2 (a point in every cell)', seed: 12, carpet: true, opts: { maxZoom: 5 }, sizes: [256] },
    { name: '--lod none', seed: 13, opts: { maxZoom: 5, lod: 'none' }, sizes: [512] },
    { name: '--max-zoom coarser than the stored cells (units reading the cells around theirs)', seed: 14, opts: { maxZoom: 2 }, sizes: [256, 512] },
    { name: '--min-zoom 2, JSON only', seed: 15, opts: { minZoom: 2, maxZoom: 5, format: 'json' }, sizes: [512] },
    { name: 'a thinned pyramid (a small --tile-budget)', seed: 16, opts: { maxZoom: 5, tileBudget: 3000 }, sizes: [512] },
    // No MultiPoint: a point's disc in the preview is as wide as the cells' buffer allows, so other cells paint other discs.
    { name: '--preview (the patches paint the pieces each unit reads)', seed: 17, spots: false, opts: { maxZoom: 5, preview: true }, sizes: [512] },
  ];
  for (const c of cases) {
    it(`gives the bytes of a one-cell build: ${c.name}`, async () => {
      const text = randomInput(c.seed, c.carpet ?? false, c.spots ?? true);
      const whole = await build(text, { ...c.opts, unitSize: SIDE });
      expect(whole.size).toBeGreaterThan(10);
      if (c.opts.preview) expect([...whole.keys()].some((p) => p.endsWith('.png'))).toBe(true);
      for (const unitSize of c.sizes) {
        expect(differences(await build(text, { ...c.opts, unitSize }), whole), `unit size ${unitSize}`).toEqual([]);
      }
      if (c.seed === 11) expect(differences(await build(text, { ...c.opts, unitSize: 512, workers: 2 }), whole), 'two workers').toEqual([]);
    });
  }

  it('gives the bytes of a one-machine build sharded (plan, shards in any order, finalize), archives too', async () => {
    const dir = tmpDir('mudm-many-pieces-shards');
    const input = path.join(dir, 'mask.json');
    fs.writeFileSync(input, randomInput(18, false));
    for (const archive of [undefined, 'pmtiles']) {
      const opts = { imageSize: `${SIDE},${SIDE}`, unitSize: 512, maxZoom: 5, ...(archive ? { archive } : {}) };
      const one = path.join(dir, `one-${archive ?? 'files'}`), sharded = path.join(dir, `sharded-${archive ?? 'files'}`);
      await buildPyramid([{ source: fileSource(input) }], { ...opts, out: one, workers: 2 });
      await planShardedBuild([{ source: fileSource(input) }], { ...opts, out: sharded, shards: 3, workers: 1 });
      for (const i of [2, 0, 1]) await buildShard({ out: sharded, workers: 1 }, i);
      await finalizeShardedBuild({ out: sharded, workers: 1 });
      expect(treeDifferences(one, sharded), archive ?? 'files').toEqual([]);
    }
  });
});
