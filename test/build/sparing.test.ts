// Thinning spares large lines and polygons (a region among cells) while they leave the budget to the rest, and thins them too where they do not.
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import type { BuildReport } from '../../src/report/types.js';
import { summaryLines } from '../../src/report/format.js';
import { decodePbf, squareCoords as square } from '../helpers/pyramid.js';

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

  it('thins outlines with the rest from the zoom where they alone would fill tiles, every tile within the budget', async () => {
    // 300 outlines of 120 vertices, 800–1200 px across, among 2,000 cells: at the coarse zooms the outlines alone pass
    // the budget; sparing them there wrote tiles of 60 KiB against 8 KiB and thinned every cell.
    const doc = slide(2000, 300, 120, (random) => 800 + random() * 400);
    const { sink, report } = await build(doc);
    const { spareFrom, share } = report.tiles.thinning;
    expect(spareFrom).toBeGreaterThan(0);
    expect(summaryLines(report, 'out')).toContain(`  lines and polygons 8 display pixels across or more: drawn whatever the share from zoom ${spareFrom}, thinned with the rest below (too many for the budget there)`);
    const z = drawn(sink);
    for (let zoom = 0; zoom < spareFrom; zoom++) {
      // Thinned like the cells: a share of each, not all outlines and no cells.
      expect(z.get(zoom)?.get('region')?.size ?? 0, `zoom ${zoom}`).toBeLessThan(300);
      expect(share[zoom]).toBeGreaterThan(0);
      expect(z.get(zoom)?.get('cell')?.size ?? 0, `zoom ${zoom}`).toBeGreaterThan(0);
    }
    // Same bytes with two workers.
    const two = await build(doc, 2);
    expect([...two.sink.files.keys()].sort()).toEqual([...sink.files.keys()].sort());
    for (const [p, bytes] of sink.files) if (p !== 'build-report.json') expect(Buffer.from(two.sink.files.get(p) as Uint8Array).equals(Buffer.from(bytes)), p).toBe(true);
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
