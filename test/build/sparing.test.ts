// Thinning spares large lines and polygons (a region among cells, a class mask's regions) while they leave the budget to the rest, the largest first where they do not.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { fileSource, memorySource } from '../../src/io/read.js';
import type { BuildReport } from '../../src/report/types.js';
import { summaryLines } from '../../src/report/format.js';
import { decodePbf, readTree, squareCoords as square, tmpDir, treeDifferences } from '../helpers/pyramid.js';

const BUDGET = 8 * 1024;
const OPTS = { imageSize: '16384,16384', unitSize: 2048, format: 'pbf', tileBudget: BUDGET, maxZoom: 5, layerBy: 'featureClass', memoryBudget: 64 * 1024 * 1024 };

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

/** 2,000–4,000 six-pixel cells, and `regions` outlines of `vertices` points 800–1,200 px across. */
function slide(cells: number, regions: number, vertices: number, size: (random: () => number) => number): object {
  const random = lcg(7);
  const features: object[] = [];
  for (let i = 0; i < cells; i++) {
    features.push({ type: 'Feature', id: i, featureClass: 'cell', properties: { n: i }, geometry: { type: 'Polygon', coordinates: square(random() * 16000, random() * 16000, 6) } });
  }
  for (let k = 0; k < regions; k++) {
    const cx = 1000 + random() * 14000, cy = 1000 + random() * 14000, r = size(random) / 2;
    const ring = Array.from({ length: vertices }, (_, i) => {
      const a = (i / vertices) * 2 * Math.PI, w = 0.8 + 0.2 * Math.sin(7 * a);
      return [Math.round((cx + r * w * Math.cos(a)) * 100) / 100, Math.round((cy + r * w * Math.sin(a)) * 100) / 100];
    });
    ring.push(ring[0]);
    features.push({ type: 'Feature', id: 10_000 + k, featureClass: 'region', properties: { name: `region ${k}` }, geometry: { type: 'Polygon', coordinates: [ring] } });
  }
  return { type: 'FeatureCollection', features };
}

/** A closed ring of `n` vertices about (cx, cy), `r` from it give or take a fifth. */
function blobRing(cx: number, cy: number, r: number, n: number): number[][] {
  const ring = Array.from({ length: n }, (_, i) => {
    const a = (i / n) * 2 * Math.PI, w = 0.8 + 0.2 * Math.sin(5 * a);
    return [Math.round((cx + r * w * Math.cos(a)) * 100) / 100, Math.round((cy + r * w * Math.sin(a)) * 100) / 100];
  });
  ring.push(ring[0]);
  return ring;
}

function getSet<K, V>(m: Map<K, Set<V>>, k: K): Set<V> {
  let s = m.get(k);
  if (s === undefined) m.set(k, (s = new Set()));
  return s;
}

async function build(doc: object, workers = 1): Promise<{ sink: MemorySink; report: BuildReport }> {
  const sink = new MemorySink();
  const report = await buildPyramid([{ source: memorySource('slide.json', JSON.stringify(doc)) }], { ...OPTS, workers }, { sink });
  return { sink, report };
}

/** Per zoom below the finest: the ids of each layer drawn, every PBF tile checked against the budget. */
function drawn(sink: MemorySink): Map<number, Map<string, Set<unknown>>> {
  const out = new Map<number, Map<string, Set<unknown>>>();
  for (const [p, bytes] of sink.files) {
    const m = /^(\d+)\/(\d+)\/(\d+)\.pbf$/.exec(p);
    if (!m || Number(m[1]) >= OPTS.maxZoom) continue;
    expect(bytes.length, p).toBeLessThanOrEqual(BUDGET);
    const z = Number(m[1]);
    const layers = out.get(z) ?? new Map<string, Set<unknown>>();
    out.set(z, layers);
    for (const f of decodePbf(bytes, 16384, z, Number(m[2]), Number(m[3]))) {
      const ids = layers.get(f.layer) ?? new Set();
      layers.set(f.layer, ids);
      ids.add(f.id);
    }
  }
  return out;
}

describe('sparing large outlines from thinning', () => {
  it('never thins a region 8 display pixels across or more, and meets the budget by thinning the small cells', async () => {
    // Four outlines 1500 px across: 23 display pixels of a zoom-0 tile (16384 px), spared at every zoom.
    const { sink, report } = await build(slide(4000, 4, 4, () => 1500));
    expect(report.tiles.thinning.spareFrom).toBe(0);
    expect(summaryLines(report, 'out').filter((l) => l.includes('display pixels across'))).toEqual([]);
    const d = JSON.parse(Buffer.from(sink.files.get('tileset.json') as Uint8Array).toString()) as { vector_layers: Array<{ id: string; kept_fraction?: Record<string, number> }> };
    expect(d.vector_layers.find((l) => l.id === 'region')?.kept_fraction).toBeUndefined();
    expect(d.vector_layers.find((l) => l.id === 'cell')?.kept_fraction?.['0']).toBeLessThan(0.5);
    const z = drawn(sink);
    for (let zoom = 0; zoom < OPTS.maxZoom; zoom++) expect([...(z.get(zoom)?.get('region') ?? [])].sort(), `zoom ${zoom}`).toEqual([10_000, 10_001, 10_002, 10_003]);
  });

  it('spares only the larger outlines where all of them would fill tiles: the largest drawn at every zoom, kept sets nested', async () => {
    // 300 outlines of 120 vertices, 800–1200 px across, and 1 in 20 of them 3000–5000 px, among 2,000 cells: at the
    // coarse zooms all outlines alone pass the budget. Sparing them there wrote tiles of 60 KiB against 8 KiB; sparing
    // none thinned the largest with the rest, so the overview showed a share of regions at random.
    const doc = slide(2000, 300, 120, (random) => (random() < 0.05 ? 3000 + random() * 2000 : 800 + random() * 400));
    const { sink, report } = await build(doc);
    const { spareFrom, spareSizes = [] } = report.tiles.thinning;
    expect(spareFrom).toBe(0);
    expect(spareSizes[0]).toBeGreaterThan(8);
    expect(summaryLines(report, 'out').some((l) => l.includes('drawn whatever the share where this many display pixels across or more'))).toBe(true);
    const widths = new Map<unknown, number>();
    for (const f of (doc as { features: Array<{ id: number; featureClass: string; geometry: { coordinates: number[][][] } }> }).features) {
      if (f.featureClass !== 'region') continue;
      const ring = f.geometry.coordinates[0], xs = ring.map((p) => p[0]), ys = ring.map((p) => p[1]);
      widths.set(f.id, Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)));
    }
    const z = drawn(sink);
    for (let zoom = 0; zoom < OPTS.maxZoom; zoom++) {
      const regions = z.get(zoom)?.get('region') ?? new Set();
      // Every outline at least the zoom's sparing size across is drawn; the rest, and the cells, a share.
      const width = spareSizes[zoom] * (16384 / 2 ** zoom / 256);
      for (const [id, w] of widths) if (w >= width) expect(regions.has(id), `zoom ${zoom}: region ${String(id)}, ${Math.round(w)} px`).toBe(true);
      expect(z.get(zoom)?.get('cell')?.size ?? 0, `zoom ${zoom}`).toBeGreaterThan(0);
      // What a zoom draws, the next finer one draws.
      if (zoom + 1 < OPTS.maxZoom) for (const [layer, ids] of z.get(zoom) ?? []) for (const id of ids) expect(z.get(zoom + 1)?.get(layer)?.has(id), `zoom ${zoom + 1}: ${layer} ${String(id)}`).toBe(true);
    }
    expect(z.get(0)?.get('region')?.size ?? 0).toBeLessThan(300);
    expect([...widths.values()].filter((w) => w >= 3000).length).toBeGreaterThan(5);
    for (const [id, w] of widths) if (w >= 3000) expect(z.get(0)?.get('region')?.has(id), `zoom 0: region ${String(id)}`).toBe(true);
    // Same bytes with two workers.
    const two = await build(doc, 2);
    expect([...two.sink.files.keys()].sort()).toEqual([...sink.files.keys()].sort());
    for (const [p, bytes] of sink.files) if (p !== 'build-report.json') expect(Buffer.from(two.sink.files.get(p) as Uint8Array).equals(Buffer.from(bytes)), p).toBe(true);
  });

  it('spares the large pieces of a class mask\'s label at the coarse zooms, thins the small ones, the same bytes at 1 and 2 workers and sharded', async () => {
    // One MultiPolygon: 800 small blobs 80–200 px across on a 400-px grid in the top half, and 3 regions 2,400 px
    // across below. Spared whole, the label alone filled every coarse tile, so no zoom spared and the regions were
    // thinned like specks; spared by piece, the regions stay in the overview.
    const random = lcg(3);
    const polys: number[][][][] = [];
    for (let gy = 0; gy < 20; gy++) for (let gx = 0; gx < 40; gx++) polys.push([blobRing(200 + gx * 400, 200 + gy * 400, 40 + random() * 60, 12)]);
    for (const x of [3000, 8000, 13000]) polys.push([blobRing(x, 12000, 1200, 120)]);
    const doc = { type: 'FeatureCollection', features: [{ type: 'Feature', id: 1, featureClass: 'tissue', properties: { name: 'tumour' }, geometry: { type: 'MultiPolygon', coordinates: polys } }] };
    const dir = tmpDir('mudm-sparing-pieces');
    const input = path.join(dir, 'mask.json');
    fs.writeFileSync(input, JSON.stringify(doc));
    const opts = { ...OPTS, tileBudget: 4 * 1024, unitSize: 2048 };
    const one = path.join(dir, 'one'), two = path.join(dir, 'two'), sharded = path.join(dir, 'sharded');
    const report = await buildPyramid([{ source: fileSource(input) }], { ...opts, out: one, workers: 1 });
    expect(report.tiles.thinning.share[0]).toBeLessThan(1);
    // Per zoom below the finest: which small blobs (by grid cell) and how many large regions are drawn.
    const small = new Map<number, Set<number>>(), large = new Map<number, Set<number>>();
    for (const [p, bytes] of readTree(one)) {
      const m = /^(\d+)\/(\d+)\/(\d+)\.pbf$/.exec(p);
      if (!m || Number(m[1]) >= OPTS.maxZoom) continue;
      const zoom = Number(m[1]);
      for (const f of decodePbf(bytes, 16384, zoom, Number(m[2]), Number(m[3]))) {
        for (const ring of f.rings) {
          const [x, y] = ring[0];
          if (y < 8000) getSet(small, zoom).add(Math.floor(y / 400) * 40 + Math.floor(x / 400));
          else getSet(large, zoom).add(x < 5500 ? 1 : x < 10500 ? 2 : 3);
        }
      }
    }
    for (let zoom = 0; zoom < OPTS.maxZoom; zoom++) {
      expect([...getSet(large, zoom)].sort(), `zoom ${zoom}`).toEqual([1, 2, 3]);
      if (zoom + 1 < OPTS.maxZoom) for (const k of getSet(small, zoom)) expect(getSet(small, zoom + 1).has(k), `zoom ${zoom + 1}: blob ${k}`).toBe(true);
    }
    expect(getSet(small, 0).size).toBeLessThan(800);
    await buildPyramid([{ source: fileSource(input) }], { ...opts, out: two, workers: 2 });
    expect(treeDifferences(one, two)).toEqual([]);
    await planShardedBuild([{ source: fileSource(input) }], { ...opts, out: sharded, shards: 3, workers: 1 });
    for (const i of [2, 0, 1]) await buildShard({ out: sharded, workers: 1 }, i);
    await finalizeShardedBuild({ out: sharded, workers: 1 });
    expect(treeDifferences(one, sharded)).toEqual([]);
  });

  it('draws a tissue outline of many vertices at every zoom: its bytes are shared among the tiles it crosses, not counted whole in each', async () => {
    // One outline 12,000 px across of 20,000 vertices a few pixels astray (a tissue detection), among 2,000 cells.
    // Counted whole in every tile its box meets, it looked several times the 8 KiB budget in each, so zooms 0–4 were
    // thinned to 0.6%: the outline and all but 6 cells gone, tiles of 143 bytes at most.
    const random = lcg(5);
    const doc = slide(2000, 0, 0, () => 0) as { features: object[] };
    const ring: number[][] = [];
    for (let i = 0; i < 20_000; i++) {
      const a = (i / 20_000) * 2 * Math.PI;
      ring.push([Math.round((8000 + 6000 * Math.cos(a) + (random() - 0.5) * 6) * 100) / 100, Math.round((8000 + 4500 * Math.sin(a) + (random() - 0.5) * 6) * 100) / 100]);
    }
    ring.push(ring[0]);
    doc.features.push({ type: 'Feature', id: 50_000, featureClass: 'tissue', properties: { name: 'tissue' }, geometry: { type: 'Polygon', coordinates: [ring] } });
    const { sink, report } = await build(doc);
    const z = drawn(sink);
    for (let zoom = 0; zoom < OPTS.maxZoom; zoom++) {
      expect([...(z.get(zoom)?.get('tissue') ?? [])], `zoom ${zoom}`).toEqual([50_000]);
      expect(z.get(zoom)?.get('cell')?.size ?? 0, `zoom ${zoom}`).toBeGreaterThan(200);
    }
    expect(report.tiles.thinning.share.slice(0, OPTS.maxZoom).every((s) => s > 0.1)).toBe(true);
  });

  it('where only tiles show it (under 1024 px, which the plan does not estimate), thins the outlines there too, as far as the budget needs', async () => {
    // A 2048-px world: zooms 2 and finer are not estimated; 40–60-px outlines are spared there by size, and 300 of
    // them alone take more than half a 1,500-byte budget.
    const random = lcg(11);
    const features: object[] = [];
    for (let i = 0; i < 1500; i++) features.push({ type: 'Feature', id: i, featureClass: 'cell', properties: {}, geometry: { type: 'Polygon', coordinates: square(random() * 2040, random() * 2040, 2) } });
    for (let k = 0; k < 300; k++) {
      const cx = 60 + random() * 1900, cy = 60 + random() * 1900, r = 20 + random() * 10;
      const ring = Array.from({ length: 40 }, (_, i) => [Math.round(cx + r * Math.cos((i / 40) * 2 * Math.PI)), Math.round(cy + r * Math.sin((i / 40) * 2 * Math.PI))]);
      ring.push(ring[0]);
      features.push({ type: 'Feature', id: 10_000 + k, featureClass: 'region', properties: {}, geometry: { type: 'Polygon', coordinates: [ring] } });
    }
    const sink = new MemorySink();
    const opts = { ...OPTS, imageSize: '2048,2048', unitSize: 512, tileBudget: 1500, maxZoom: 4, workers: 1 };
    const report = await buildPyramid([{ source: memorySource('small.json', JSON.stringify({ type: 'FeatureCollection', features })) }], opts, { sink });
    const { spareFrom, raised } = report.tiles.thinning;
    expect(spareFrom).toBeGreaterThan(2);
    expect(raised).toContain(spareFrom - 1);
    // Every coarse tile within the budget, and the densest of each zoom that stopped sparing close to it.
    for (let z = 0; z < spareFrom; z++) {
      const largest = Math.max(...[...sink.files].filter(([p]) => p.startsWith(`${z}/`) && p.endsWith('.pbf')).map(([, b]) => b.length));
      expect(largest, `zoom ${z}`).toBeLessThanOrEqual(1500);
      expect(largest, `zoom ${z}`).toBeGreaterThan(1500 / 2);
    }
  });
});
