// End-to-end tests of buildPyramid in memory: outputs, areas, JSON/PBF agreement, determinism, errors.
import { Readable } from 'node:stream';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild, type InputSpec } from '../../src/build/pipeline.js';
import type { FeatureSource } from '../../src/io/source.js';
import type { Feature } from '../../src/model/feature.js';
import { MemorySink } from '../../src/io/sink.js';
import { MemoryWorkDir } from '../../src/io/workdir-memory.js';
import { fileSource, memorySource, streamSource } from '../../src/io/read.js';
import { validateDescriptor, validateDocument } from '../../src/validate/index.js';
import { summaryLines } from '../../src/report/format.js';
import { DataError, OutputError, UsageError, WorkStateError } from '../../src/report/errors.js';
import { circleRing, clipRingToRect, decodePbf, longOutlineInput, readTree, ringArea, sinkJson, squareCoords, tmpDir, treeDifferences, withoutReport } from '../helpers/pyramid.js';

const square = squareCoords;
const json = sinkJson;
const strip = withoutReport;

/** A small annotation set exercising every geometry kind, tile borders and the world's edges (S = 2048). */
function fixture(): object {
  const features: object[] = [
    { type: 'Feature', id: 1, featureClass: 'cell', properties: { label: 1, score: 0.5, class: 'tumor' }, geometry: { type: 'Polygon', coordinates: square(500, 500, 30) } },
    { type: 'Feature', id: 2, featureClass: 'cell', properties: { label: 2, score: 0.25, class: 'stroma' }, geometry: { type: 'Polygon', coordinates: [square(1000, 1000, 100)[0], [[1020, 1020], [1020, 1060], [1060, 1060], [1060, 1020], [1020, 1020]]] } },
    { type: 'Feature', id: 3, featureClass: 'cell', properties: { label: 3, class: 'tumor', tags: ['a', 'b'] }, geometry: { type: 'MultiPolygon', coordinates: [square(100, 1500, 20), square(160, 1500, 20)] } },
    { type: 'Feature', id: 4, featureClass: 'nucleus', parentId: 1, properties: { label: 4 }, geometry: { type: 'Point', coordinates: [515, 515] } },
    { type: 'Feature', id: 5, properties: { label: 5 }, geometry: { type: 'LineString', coordinates: [[10, 10], [2000, 900]] } },
    { type: 'Feature', id: 6, properties: null, geometry: null },
    { type: 'Feature', id: 7, properties: { label: 7 }, geometry: { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [700, 700] }, { type: 'Polygon', coordinates: square(710, 700, 12) }] } },
    { type: 'Feature', id: 8, properties: { label: 8 }, geometry: { type: 'TIN', coordinates: [[[[300, 300, 0], [340, 300, 0], [300, 340, 1], [300, 300, 0]]]] } },
    // At the world's edges: left, top, right, bottom.
    { type: 'Feature', id: 9, properties: { label: 9 }, geometry: { type: 'Polygon', coordinates: square(0, 800, 10) } },
    { type: 'Feature', id: 10, properties: { label: 10 }, geometry: { type: 'Polygon', coordinates: square(800, 0, 10) } },
    { type: 'Feature', id: 11, properties: { label: 11 }, geometry: { type: 'Polygon', coordinates: square(2038, 600, 10) } },
    { type: 'Feature', id: 12, properties: { label: 12 }, geometry: { type: 'Polygon', coordinates: square(600, 2038, 10) } },
    // Crossing the border of the zoom-2 tiles at x = 512 and y = 1024, and a round one.
    { type: 'Feature', id: 13, featureClass: 'cell', properties: { label: 13, class: 'immune' }, geometry: { type: 'Polygon', coordinates: square(490, 1010, 40) } },
    { type: 'Feature', id: 14, featureClass: 'cell', properties: { label: 14 }, geometry: { type: 'Polygon', coordinates: [circleRing(1536, 512, 60, 24)] } },
    // Invalid: an open TIN face and a one-number position.
    { type: 'Feature', id: 15, properties: {}, geometry: { type: 'TIN', coordinates: [[[[0, 0, 0], [1, 0, 0], [0, 1, 0]]]] } },
    { type: 'Feature', id: 16, properties: {}, geometry: { type: 'Point', coordinates: [1] } },
  ];
  return { type: 'FeatureCollection', properties: { slide: 'test-slide' }, multiscale: { axes: [{ name: 'x', type: 'space', unit: 'micrometer' }, { name: 'y', type: 'space', unit: 'micrometer' }] }, features };
}

const OPTS = { imageSize: '2048,2048', unitSize: 256, workers: 1, memoryBudget: 64 * 1024 * 1024 } as const;

/** The ids of the features in a zoom's JSON tiles (not zoom 0's: that file is the overview descriptor). */
function idsAtZoom(sink: MemorySink, z: number): Set<number> {
  const ids = new Set<number>();
  for (const p of sink.files.keys()) {
    if (p.startsWith(`${z}/`) && p.endsWith('.json')) for (const f of json(sink, p).features as Array<{ id: number }>) ids.add(f.id);
  }
  return ids;
}

async function build(opts: Record<string, unknown> = {}, text = JSON.stringify(fixture())) {
  const sink = new MemorySink();
  const report = await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, ...opts }, { sink });
  return { sink, report };
}

describe('buildPyramid', () => {
  it('writes a valid descriptor, overview and report, counting invalid features by rule', async () => {
    const { sink, report } = await build();
    const d = json(sink, 'tileset.json');
    expect(validateDescriptor(d).filter((i) => i.severity === 'error')).toEqual([]);
    expect(d).toMatchObject({ tilejson: '3.0.0', tiles: ['{zlvl}/{x}/{y}.pbf'], format: 'pbf', minzoom: 0, maxzoom: 2, bounds: [0, 0, 2048, 2048], scale_factor: 2 });
    const layer = (d.vector_layers as Array<Record<string, unknown>>)[0];
    expect(layer.id).toBe('cells');
    expect(layer.fields).toMatchObject({ label: 'Number', score: 'Number', class: 'String', featureClass: 'String', parentId: 'Number', tags: 'String' });
    expect(layer.fieldranges).toMatchObject({ label: [1, 14], score: [0.25, 0.5] });
    expect(layer.fieldenums).toMatchObject({ class: ['immune', 'stroma', 'tumor'], featureClass: ['cell', 'nucleus'] });
    const overview = json(sink, '0/0/0.json');
    expect(overview).toMatchObject({ format: 'json', tiles: ['../../{zlvl}/{x}/{y}.json'] });
    expect(validateDescriptor(overview).filter((i) => i.severity === 'error')).toEqual([]);
    expect(report.features).toMatchObject({ read: 16, valid: 14, invalid: 2, notPlaced: { 'null-geometry': 1 }, jsonOnly: 1 });
    expect(Object.keys(report.features.invalidByCode).sort()).toEqual(expect.arrayContaining([expect.stringMatching(/tin/), expect.stringMatching(/position/)]));
    const r = json(sink, 'build-report.json') as { features: { read: number } };
    expect(r.features.read).toBe(16);
  });

  it('keeps every polygon whole: areas summed over the finest tiles match the input', async () => {
    const { sink } = await build();
    const fc = fixture() as { features: Array<{ id: number; geometry: { type: string; coordinates: number[][][] | number[][][][] } | null }> };
    const S = 2048, ts = S / 4;
    const areas = new Map<number, number>();
    for (const [p, bytes] of sink.files) {
      const m = /^2\/(\d+)\/(\d+)\.json$/.exec(p);
      if (!m) continue;
      const [x, y] = [Number(m[1]), Number(m[2])];
      const tile = JSON.parse(Buffer.from(bytes).toString()) as { features: Array<{ id: number; geometry: { type: string; coordinates: unknown } }> };
      for (const f of tile.features) {
        const polys = f.geometry.type === 'Polygon' ? [f.geometry.coordinates as number[][][]] : f.geometry.type === 'MultiPolygon' ? (f.geometry.coordinates as number[][][][]) : [];
        for (const poly of polys) {
          poly.forEach((ring, i) => {
            const a = Math.abs(ringArea(clipRingToRect(ring, x * ts, y * ts, (x + 1) * ts, (y + 1) * ts)));
            areas.set(f.id, (areas.get(f.id) ?? 0) + (i === 0 ? a : -a));
          });
        }
      }
    }
    for (const f of fc.features) {
      if (!f.geometry || (f.geometry.type !== 'Polygon' && f.geometry.type !== 'MultiPolygon') || f.id > 14) continue;
      const polys = f.geometry.type === 'Polygon' ? [f.geometry.coordinates as number[][][]] : (f.geometry.coordinates as number[][][][]);
      const want = polys.reduce((s, poly) => s + poly.reduce((t, ring, i) => t + (i === 0 ? 1 : -1) * Math.abs(ringArea(ring)), 0), 0);
      // Vertices are quantised to 1/8 pixel at the finest zoom: a relative error of 1e-3 is the budget.
      expect(Math.abs((areas.get(f.id) ?? 0) - want) / want, `feature ${f.id}`).toBeLessThan(1e-3);
    }
  });

  it('writes JSON and PBF tiles that agree feature for feature', async () => {
    const { sink } = await build();
    let compared = 0;
    for (const [p, bytes] of sink.files) {
      const m = /^(\d+)\/(\d+)\/(\d+)\.pbf$/.exec(p);
      if (!m) continue;
      const [z, x, y] = m.slice(1).map(Number);
      const pbf = decodePbf(bytes, 2048, z, x, y);
      if (z === 0) continue; // 0/0/0.json is the overview descriptor
      const tile = json(sink, p.replace(/\.pbf$/, '.json')) as { features: Array<{ id: number; properties: Record<string, unknown>; geometry: { type: string } }> };
      const jsonIds = tile.features.filter((f) => f.geometry.type !== 'TIN').map((f) => f.id);
      expect([...new Set(pbf.map((f) => f.id))]).toEqual([...new Set(jsonIds)]);
      for (const f of pbf) {
        const jf = tile.features.find((g) => g.id === f.id);
        expect(f.properties.label).toBe(jf?.properties?.label);
      }
      compared++;
    }
    expect(compared).toBeGreaterThan(5);
  });

  it('keeps fields and layers named like Object members (constructor, toString, __proto__) as data', async () => {
    // Written as text: an object literal's `__proto__` would set the prototype, not a member.
    const props = '{"constructor":"x","toString":"ts","valueOf":1,"__proto__":5,"nested":{"__proto__":{"b":2}},"kind":"constructor"}';
    const text = `{"type":"FeatureCollection","features":[{"type":"Feature","id":1,"properties":${props},"geometry":{"type":"Point","coordinates":[100,100]}}]}`;
    const { sink } = await build({ layerBy: 'kind', maxZoom: 1 }, text);
    const d = json(sink, 'tileset.json') as { vector_layers: Array<{ id: string; fields: Record<string, string> }> };
    expect(d.vector_layers.map((l) => l.id)).toEqual(['constructor']);
    expect(Object.entries(d.vector_layers[0].fields)).toEqual([
      ['__proto__', 'Number'], ['constructor', 'String'], ['kind', 'String'], ['nested.__proto__.b', 'Number'], ['toString', 'String'], ['valueOf', 'Number'],
    ]);
    const tile = Buffer.from(sink.files.get('1/0/0.json') as Uint8Array).toString('utf8');
    expect(tile).toContain(`"properties":${props}`);
    const [f] = decodePbf(sink.files.get('1/0/0.pbf') as Uint8Array, 2048, 1, 0, 0);
    expect(f.layer).toBe('constructor');
    expect(f.properties).toMatchObject({ constructor: 'x', toString: 'ts', valueOf: 1, kind: 'constructor', 'nested.__proto__.b': 2 });
    const report = json(sink, 'build-report.json') as { tiles: { byLayer: Record<string, unknown> } };
    expect(Object.keys(report.tiles.byLayer)).toEqual(['constructor']);
  });

  it('places features at the world edges exactly once in the unbuffered finest tiles', async () => {
    const { sink } = await build();
    for (const id of [9, 10, 11, 12]) {
      let owners = 0;
      for (const [p, bytes] of sink.files) {
        const m = /^2\/(\d+)\/(\d+)\.json$/.exec(p);
        if (!m) continue;
        const ts = 512, x = Number(m[1]), y = Number(m[2]);
        const tile = JSON.parse(Buffer.from(bytes).toString()) as { features: Array<{ id: number; geometry: { coordinates: number[][][] } }> };
        for (const f of tile.features.filter((g) => g.id === id)) {
          if (Math.abs(ringArea(clipRingToRect(f.geometry.coordinates[0], x * ts, y * ts, (x + 1) * ts, (y + 1) * ts))) > 0) owners++;
        }
      }
      expect(owners, `feature ${id}`).toBe(1);
    }
  });

  it('gives byte-identical output for 1 and 2 workers, with and without spilling to disk', async () => {
    const a = await build({ workers: 1 });
    const b = await build({ workers: 2 });
    const c = await build({ workers: 2, memoryBudget: 1 });
    expect(strip(b.sink)).toEqual(strip(a.sink));
    expect(strip(c.sink)).toEqual(strip(a.sink));
    expect(c.report.run.spilled).toBe(true);
  });

  it('gives the same bytes at any parallelism when a long feature makes each level wait for the whole level below', async () => {
    // 256 px units in a 4,096 px world to zoom 4: three levels (cells at zoom 4; at zoom 1 for zooms 1–3; zoom 0).
    // The 2,000 px LineString reaches beyond a parent's neighbours from each, so each level waits for nearly all of
    // the level below (build/schedule.ts).
    const opts = { unitSize: 256, imageSize: '4096,4096', maxZoom: 4 };
    const a = await build({ ...opts, workers: 1 });
    const b = await build({ ...opts, workers: 2 });
    const c = await build({ ...opts, workers: 2, memoryBudget: 1 });
    expect(a.report.units.levels).toBe(3);
    expect(strip(b.sink)).toEqual(strip(a.sink));
    expect(strip(c.sink)).toEqual(strip(a.sink));
  });

  it('gives the same bytes when a long outline across many cells is shared between them, in memory or spilled once', async () => {
    // An outline of 6,000 vertices (a record of about 100 KiB) across most of the 64 cells of 256 px, and a few cells:
    // shared between the cells' records (partition.ts), in memory at the default budget, spilled to shared.bin once
    // with a pointer per cell at a budget of 1 byte; tiled ranked once and cut down per block of tiles (collapse.ts).
    const ring = circleRing(1024, 1024, 900, 6000).map(([x, y], i) => [x + (i % 7) * 0.37, y + (i % 5) * 0.29]);
    ring[ring.length - 1] = ring[0];
    const features = [
      { type: 'Feature', id: 1, properties: { class: 'Tumor' }, geometry: { type: 'Polygon', coordinates: [ring] } },
      ...[300, 1000, 1700].map((c, i) => ({ type: 'Feature', id: 2 + i, properties: {}, geometry: { type: 'Polygon', coordinates: square(c, c, 20) } })),
    ];
    const text = JSON.stringify({ type: 'FeatureCollection', features });
    const a = await build({ workers: 1, maxZoom: 3 }, text);
    const b = await build({ workers: 2, maxZoom: 3, memoryBudget: 1 }, text);
    expect(b.report.run.spilled).toBe(true);
    expect(strip(b.sink)).toEqual(strip(a.sink));
    // The outline is in the finest tiles (256 px) it crosses or covers, and not in a corner tile beyond it.
    const ids = (p: string) => (sink: MemorySink) => (json(sink, p).features as Array<{ id: number }>).map((f) => f.id);
    expect(ids('3/0/3.json')(a.sink)).toContain(1);
    expect(ids('3/3/3.json')(a.sink)).toContain(1);
    expect(a.sink.files.has('3/0/0.json')).toBe(false);
  });

  it('reads an input of many parse batches whole and in place, at one worker and at two', async () => {
    // 40,000 features: ten batches of 4,096, so the text buffers the workers hand back carry later batches. A buffer
    // filled again while a worker still parsed it would move or drop features: each must be in the finest tiles, with
    // its own id and at its own place.
    const N = 40_000;
    const at = (i: number) => [(i % 200) * 10 + 3, Math.floor(i / 200) * 10 + 3];
    const features = Array.from({ length: N }, (_, i) => ({ type: 'Feature', id: i + 1, properties: { label: i + 1 }, geometry: { type: 'Polygon', coordinates: square(at(i)[0], at(i)[1], 4) } }));
    const text = JSON.stringify({ type: 'FeatureCollection', features });
    const opts = { maxZoom: 3, unitSize: 1024, format: 'pbf' };
    const one = await build({ ...opts, workers: 1 }, text);
    const two = await build({ ...opts, workers: 2 }, text);
    expect(two.report.features).toMatchObject({ read: N, valid: N, invalid: 0 });
    const seen = new Set<number>();
    for (const [k, v] of two.sink.files) {
      const m = /^3\/(\d+)\/(\d+)\.pbf$/.exec(k);
      if (!m) continue;
      for (const f of decodePbf(v, 2048, 3, Number(m[1]), Number(m[2]))) {
        const id = Number(f.id);
        const xs = f.rings.flat().map((p) => p[0]), ys = f.rings.flat().map((p) => p[1]);
        // Inside its own square (a tile's buffer edge may cut it).
        const [x, y] = at(id - 1);
        expect([f.properties.label, Math.min(...xs) >= x, Math.max(...xs) <= x + 4, Math.min(...ys) >= y, Math.max(...ys) <= y + 4]).toEqual([id, true, true, true, true]);
        seen.add(id);
      }
    }
    expect(seen.size).toBe(N);
    expect(strip(two.sink)).toEqual(strip(one.sink));
  });

  it('cuts units of about --unit-size pixels when --min-zoom is finer, with the same tiles', async () => {
    // 2048 px world, 1024 px cells: units at zoom 1, each tiling zooms 2-3 of its cell (not one unit per zoom-2 tile
    // re-reading a whole cell). The tiles are those of a build over all zooms.
    const fine = await build({ minZoom: 2, maxZoom: 3, unitSize: 1024 });
    const all = await build({ minZoom: 0, maxZoom: 3 });
    expect(fine.report.units).toEqual({ levels: 1, total: 4 });
    const tiles = (s: MemorySink) => new Map([...s.files].filter(([k]) => /^[23]\//.test(k)).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    expect(tiles(fine.sink).size).toBeGreaterThan(10);
    expect(tiles(fine.sink)).toEqual(tiles(all.sink));
    // Nothing coarser than --min-zoom but the overview descriptor at 0/0/0.
    expect([...fine.sink.files.keys()].filter((k) => /^[01]\/\d+\/\d+\.(json|pbf)$/.test(k))).toEqual(['0/0/0.json']);
  });

  it('puts a feature in the buffer of every tile it reaches whatever --unit-size, also where --max-zoom is coarser than the stored cells', async () => {
    // A 6-px square 6 px right of x = 1,024, the edge between the two zoom-1 tiles (1,024 px, a 16-px buffer): it
    // belongs to tile 1/1/0 and to the buffer of tile 1/0/0. Records are stored in 256-px cells; a zoom-1 unit
    // (1,024 px) is wider than their records reach. It used to miss the square in tile 1/0/0: the square's cell
    // (1,024–1,280 px) belongs to the next unit, and stored it only for neighbours within 4 px.
    const text = JSON.stringify({ type: 'FeatureCollection', features: [
      { type: 'Feature', id: 1, properties: {}, geometry: { type: 'Polygon', coordinates: squareCoords(1030, 500, 6) } },
      { type: 'Feature', id: 2, properties: {}, geometry: { type: 'Polygon', coordinates: squareCoords(300, 300, 6) } },
    ] });
    const ids = (s: MemorySink, tile: string) => decodePbf(s.files.get(tile) as Uint8Array, 2048, 1, Number(tile.split('/')[1]), 0).map((f) => Number(f.id));
    for (const unitSize of [256, 512, 2048]) {
      const { sink } = await build({ unitSize, maxZoom: 1, format: 'pbf', lod: 'none' }, text);
      expect([unitSize, ids(sink, '1/0/0.pbf'), ids(sink, '1/1/0.pbf')]).toEqual([unitSize, [1, 2], [1]]);
    }
    const narrow = await build({ unitSize: 256, maxZoom: 1, format: 'pbf', lod: 'none' }, text);
    const wide = await build({ unitSize: 2048, maxZoom: 1, format: 'pbf', lod: 'none' }, text);
    expect(strip(narrow.sink)).toEqual(strip(wide.sink));
  });

  it('with --lod none, counts features that collapse as not drawn, the same whatever --unit-size', async () => {
    // Round cells of 0.2-3.5 px across: each collapses (nothing left after simplification) below some zoom. With
    // 256-px units the zooms coarser than 3 are tiled by another level, which receives only what did not collapse at
    // zoom 2; one 2,048-px unit tiles every zoom itself. The descriptor's kept_fraction and the report's counts used
    // to count a collapsed feature as drawn within a level and as thinned beyond it.
    const features: object[] = [];
    for (let i = 0; i < 240; i++) {
      const r = 0.1 + (i % 12) * 0.15;
      features.push({ type: 'Feature', id: i + 1, properties: { r }, geometry: { type: 'Polygon', coordinates: [circleRing(40 + (i % 20) * 100, 40 + Math.floor(i / 20) * 160, r, 12)] } });
    }
    // Lines never collapse in simplification, but one shorter than a tile unit (0.25 px at zoom 1) may round to one
    // position, which the tiler drops.
    for (let i = 0; i < 40; i++) {
      const x = 90 + (i % 20) * 100 + 0.013 * i, y = 120 + Math.floor(i / 20) * 800;
      features.push({ type: 'Feature', id: 1000 + i, properties: { r: 0 }, geometry: { type: 'LineString', coordinates: [[x, y], [x + 0.02 * (i % 10), y + 0.01 * (i % 7)]] } });
    }
    const text = JSON.stringify({ type: 'FeatureCollection', features });
    const counts = (r: { tiles: { byZoom: Record<string, { thinned: number }> } }) => Object.entries(r.tiles.byZoom).map(([z, v]) => [z, v.thinned]);
    const narrow = await build({ unitSize: 256, maxZoom: 5, lod: 'none' }, text);
    const wide = await build({ unitSize: 2048, maxZoom: 5, lod: 'none' }, text);
    expect(narrow.report.units.levels).toBeGreaterThan(wide.report.units.levels);
    const kept = (json(narrow.sink, 'tileset.json').vector_layers as Array<{ kept_fraction?: Record<string, number> }>)[0].kept_fraction ?? {};
    // Collapsed cells are not drawn: the coarse zooms draw fewer than all, the coarser the fewer.
    expect(Object.keys(kept).length).toBeGreaterThan(1);
    expect(kept['0']).toBeLessThan(kept['2']);
    // The share counted is the share of the layer's features that the zoom's tiles hold (JSON tiles: zoom 0's is the
    // overview descriptor). A line of length 0 is drawn at no zoom: left out at the finest zoom too.
    expect(idsAtZoom(narrow.sink, 5).size).toBe(features.length - 1);
    expect(kept['5']).toBeCloseTo((features.length - 1) / features.length, 4);
    for (const z of [1, 2]) expect([z, idsAtZoom(narrow.sink, z).size]).toEqual([z, Math.round((kept[String(z)] ?? 1) * features.length)]);
    expect(counts(narrow.report)).toEqual(counts(wide.report));
    expect(strip(narrow.sink)).toEqual(strip(wide.sink));
    // Nothing was thinned by priority: the summary says why the coarse zooms draw less.
    expect(summaryLines(narrow.report, 'out').find((l) => l.startsWith('  layer cells:'))).toMatch(/^ {2}layer cells: complete at zooms none; features too small for a zoom left out, share drawn at zoom 0: \d+%/);
  });

  it('counts nothing drawn as a point or thinned at a JSON-only pyramid\'s zoom 0, which holds the overview and no tile', async () => {
    const features = Array.from({ length: 400 }, (_, i) => ({ type: 'Feature', id: i + 1, properties: {}, geometry: { type: 'Polygon', coordinates: squareCoords(20 + (i % 20) * 100, 20 + Math.floor(i / 20) * 100, 3) } }));
    const { report } = await build({ maxZoom: 3, format: 'json', tileBudget: '20K' }, JSON.stringify({ type: 'FeatureCollection', features }));
    expect(report.tiles.byZoom['0']).toMatchObject({ tiles: 0, features: 0, pointified: 0, thinned: 0 });
    expect(report.tiles.byZoom['1'].pointified + report.tiles.byZoom['1'].thinned).toBeGreaterThan(0);
  });

  it('with --lod none, counts a line as left out where a zoom rounds it away, and a zoom that draws it as drawing everything, not more', async () => {
    // World 2,048 px, finest zoom 3 (a grid unit of 1/16 px), zoom 2 (1/8 px): the line rounds to one position at
    // zoom 3 (0.96 and 1.04 units) and to two at zoom 2 (0.48 and 0.52).
    const text = JSON.stringify({ type: 'FeatureCollection', features: [
      { type: 'Feature', id: 1, properties: {}, geometry: { type: 'LineString', coordinates: [[0.06, 100], [0.065, 100]] } },
      { type: 'Feature', id: 2, properties: {}, geometry: { type: 'Polygon', coordinates: squareCoords(300, 300, 50) } },
    ] });
    const { sink, report } = await build({ maxZoom: 3, lod: 'none', format: 'json' }, text);
    const ids = (tile: string) => (json(sink, tile).features as Array<{ id: number }>).map((f) => f.id);
    expect([ids('2/0/0.json'), sink.files.has('3/0/0.json'), ids('3/1/1.json')]).toEqual([[1, 2], false, [2]]);
    // Zooms 1 and 3 round it to one position (zoom 0 is the overview); zoom 2 draws it. It is left out at the finest
    // zoom, so no zoom holds every feature of a layer no coarser zoom may hold more of.
    expect(Object.values(report.tiles.byZoom).map((z) => z.thinned)).toEqual([0, 1, 0, 1]);
    const layer = (json(sink, 'tileset.json').vector_layers as Array<Record<string, unknown>>)[0];
    expect([layer.kept_fraction, layer.complete_zooms]).toEqual([{ 1: 0.5, 3: 0.5 }, []]);
  });

  it('with --lod none, leaves out of the counts what lies past the world\'s edge though its box reaches a tile', async () => {
    // Three features by the corner (0, 0) whose boxes reach the world and whose geometry does not (a MultiPoint, a
    // line, a triangle), a square, and a 0.2-px triangle that collapses below the finest zoom: zoom 1 draws one of
    // the two features the finest zoom draws.
    const text = JSON.stringify({ type: 'FeatureCollection', features: [
      { type: 'Feature', id: 1, properties: {}, geometry: { type: 'MultiPoint', coordinates: [[-50, 10], [10, -50]] } },
      { type: 'Feature', id: 2, properties: {}, geometry: { type: 'LineString', coordinates: [[-50, 10], [10, -50]] } },
      { type: 'Feature', id: 3, properties: {}, geometry: { type: 'Polygon', coordinates: [[[-50, 10], [-50, -50], [10, -50], [-50, 10]]] } },
      { type: 'Feature', id: 4, properties: {}, geometry: { type: 'Polygon', coordinates: squareCoords(300, 300, 50) } },
      { type: 'Feature', id: 5, properties: {}, geometry: { type: 'Polygon', coordinates: [[[900, 900], [900.2, 900], [900.2, 900.2], [900, 900]]] } },
    ] });
    const { sink } = await build({ maxZoom: 5, lod: 'none', format: 'json' }, text);
    expect([[...idsAtZoom(sink, 5)].sort(), [...idsAtZoom(sink, 1)]]).toEqual([[4, 5], [4]]);
    const layer = (json(sink, 'tileset.json').vector_layers as Array<Record<string, unknown>>)[0];
    expect(layer.kept_fraction).toMatchObject({ 1: 0.5 });
  });

  it('gives the same bytes for a file and the same file on stdin', async () => {
    const dir = tmpDir('mudm-stdin');
    const file = path.join(dir, 'cells.json');
    fs.writeFileSync(file, JSON.stringify(fixture(), null, 2));
    const fromFile = new MemorySink();
    await buildPyramid([{ source: fileSource(file) }], { ...OPTS, layer: 'cells' }, { sink: fromFile });
    const fromStdin = new MemorySink();
    await buildPyramid([{ source: streamSource('-', Readable.from([fs.readFileSync(file)])) }], { ...OPTS, layer: 'cells' }, { sink: fromStdin });
    expect(strip(fromStdin)).toEqual(strip(fromFile));
  });

  it('gives the same bytes whatever the input framing and however the bytes are chunked', async () => {
    const features = (fixture() as { features: Array<Record<string, unknown>> }).features;
    // Multi-byte UTF-8 that tiny chunks cut in the middle.
    (features[0].properties as Record<string, unknown>).note = 'Zellkern µ 🔬';
    const texts = {
      minified: JSON.stringify({ type: 'FeatureCollection', features }),
      prettyCrlf: JSON.stringify({ type: 'FeatureCollection', features }, null, 2).replace(/\n/g, '\r\n'),
      ndjson: features.map((f) => JSON.stringify(f)).join('\n') + '\n',
      sequence: features.map((f) => `\x1e${JSON.stringify(f, null, 1)}\n`).join(''),
    };
    const outputs: Array<Map<string, string>> = [];
    for (const text of Object.values(texts)) {
      const bytes = Buffer.from(text, 'utf8');
      const chunks = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7));
      const sink = new MemorySink();
      await buildPyramid([{ source: streamSource('cells', Readable.from(chunks)) }], { ...OPTS, layer: 'cells' }, { sink });
      outputs.push(new Map([...sink.files].filter(([k]) => k !== 'build-report.json').map(([k, v]) => [k, Buffer.from(v).toString('base64')])));
    }
    expect(outputs[0].size).toBeGreaterThan(10);
    for (const o of outputs.slice(1)) expect(o).toEqual(outputs[0]);
    const tile = JSON.parse(Buffer.from(outputs[0].get('2/0/0.json') as string, 'base64').toString('utf8')) as { features: Array<{ id: unknown; properties: Record<string, unknown> }> };
    expect(tile.features.find((f) => f.id === 1)?.properties.note).toBe('Zellkern µ 🔬');
  });

  it('gives the same bytes for features handed over as values (a FeatureSource, a whole-file Feature) as for their JSON', async () => {
    const features = (fixture() as { features: Feature[] }).features;
    const files = async (inputs: InputSpec[]) => {
      const sink = new MemorySink();
      const report = await buildPyramid(inputs, { ...OPTS, layer: 'cells' }, { sink });
      return { report, files: new Map([...sink.files].filter(([k]) => k !== 'build-report.json').map(([k, v]) => [k, Buffer.from(v).toString('base64')])) };
    };
    const text = await files([{ source: memorySource('cells.json', JSON.stringify({ type: 'FeatureCollection', features })) }]);
    // Groups of 5 put the 64-value batch boundaries elsewhere than the groups'.
    const made: FeatureSource = {
      name: 'made',
      features: async function* () { for (let i = 0; i < features.length; i += 5) yield structuredClone(features.slice(i, i + 5)); },
    };
    const values = await files([{ source: made }]);
    expect(values.files.size).toBeGreaterThan(10);
    expect(values.files).toEqual(text.files);
    expect(values.report.features).toMatchObject({ read: 16, valid: text.report.features.valid, invalidByCode: text.report.features.invalidByCode });
    // Made features have no place in a text: their issues name the feature but no line.
    expect(values.report.features.samples.every((x) => x.file === 'made' && x.feature !== null && x.line === null && x.column === null)).toBe(true);
    const one = features[13];
    const documents = await files([{ source: memorySource('one.json', JSON.stringify(one, null, 2)) }]);
    const ndjson = await files([{ source: memorySource('one.ndjson', `${JSON.stringify(one)}\n`) }]);
    expect(documents.files.size).toBeGreaterThan(3);
    expect(documents.files).toEqual(ndjson.files);
  });

  it('puts planes into paths, bounds and center, and splits layers by featureClass', async () => {
    const fc = fixture() as { features: Array<{ properties: Record<string, unknown> | null }> };
    fc.features.forEach((f, i) => { if (f.properties) f.properties.ch = i % 2; });
    const { sink, report } = await build({ planeField: 'c=ch', layerBy: 'featureClass' }, JSON.stringify(fc));
    const d = json(sink, 'tileset.json');
    expect(d.tiles).toEqual(['{zlvl}/{c}/{x}/{y}.pbf']);
    expect(d.bounds).toEqual([0, 0, 0, 0, 0, 0, 1, 0, 2048, 2048]);
    expect((d.center as number[]).length).toBe(6);
    expect(report.world.layers).toEqual(['cell', 'cells', 'nucleus']);
    expect([...sink.files.keys()].some((k) => /^2\/1\/\d+\/\d+\.pbf$/.test(k))).toBe(true);
    const overview = json(sink, '0/1/0/0.json');
    expect(overview.tiles).toEqual(['../../../{zlvl}/{c}/{x}/{y}.json']);
    expect(overview.bounds).toEqual([0, 1, 0, 0, 0, 0, 1, 0, 2048, 2048]);
  });

  it('keeps JSON tiles valid data-model FeatureCollections with the collection members', async () => {
    const { sink } = await build();
    const tile = json(sink, '2/1/1.json');
    expect(validateDocument(tile).filter((i) => i.severity === 'error')).toEqual([]);
    expect(tile).toMatchObject({ type: 'FeatureCollection', properties: { slide: 'test-slide' }, multiscale: { axes: [{ name: 'x' }, { name: 'y' }] } });
  });

  it('writes a PNG preview per plane, listed as a raster asset', async () => {
    const { sink } = await build({ preview: true });
    const d = json(sink, 'tileset.json') as { assets: Array<Record<string, unknown>> };
    expect(d.assets).toEqual([{ role: 'raster', href: 'preview/preview.png', media_type: 'image/png', title: 'preview', bbox: [0, 0, 2048, 2048] }]);
    const png = sink.files.get('preview/preview.png') as Uint8Array;
    const meta = await sharp(Buffer.from(png)).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 2048, 2048]);
    // The pixel under the centre of feature 2 (a 100 px square at 1000..1100) is not background.
    const { data } = await sharp(Buffer.from(png)).extract({ left: 1010, top: 1005, width: 1, height: 1 }).raw().toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 3)]).not.toEqual([17, 19, 24]);
    expect(json(sink, '0/0/0.json').assets).toEqual([{ role: 'raster', href: '../../preview/preview.png', media_type: 'image/png', title: 'preview', bbox: [0, 0, 2048, 2048] }]);
  });

  it('stops with --strict before writing, leaving what was there', async () => {
    const sink = new MemorySink();
    sink.files.set('keep.txt', new Uint8Array([1]));
    await expect(buildPyramid([{ source: memorySource('cells.json', JSON.stringify(fixture())) }], { ...OPTS, strict: true, force: true }, { sink }))
      .rejects.toThrow(DataError);
    expect([...sink.files.keys()]).toEqual(['keep.txt']);
  });

  it('marks a --force removal in the work directory from before its plan until the removal is done, so a kill anywhere in between is finished by --resume', async () => {
    const seen: string[] = [];
    class WatchedWork extends MemoryWorkDir {
      override writeJson(rel: string, value: unknown): void {
        if (rel === 'plan.json') seen.push(`plan written: marked ${this.exists('removing.json')}`);
        super.writeJson(rel, value);
      }
    }
    const work = new WatchedWork();
    class Watching extends MemorySink {
      override async begin(opts: Parameters<MemorySink['begin']>[0]) {
        seen.push(`begin: plan ${work.exists('plan.json')}, marked ${work.exists('removing.json')}, force ${opts.force}`);
        return super.begin(opts);
      }
    }
    const sink = new Watching();
    sink.files.set('0/0/0.pbf', new Uint8Array([1]));
    await buildPyramid([{ source: memorySource('cells.json', JSON.stringify(fixture())) }], { ...OPTS, force: true }, { sink, work });
    expect(seen).toEqual(['plan written: marked true', 'begin: plan true, marked true, force true']);
    expect(work.exists('removing.json')).toBe(false);
  });

  it('names layers by each input\'s own layer first, then the layer option, then the file name', async () => {
    const fc = JSON.stringify(fixture());
    const layersOf = async (inputs: InputSpec[], opts: Record<string, unknown>) => (await buildPyramid(inputs, { ...OPTS, ...opts }, { sink: new MemorySink() })).world.layers;
    expect(await layersOf([{ source: memorySource('a.json', fc), layer: 'A' }, { source: memorySource('b.json', fc), layer: 'B' }], { layer: 'OPT' })).toEqual(['A', 'B']);
    expect(await layersOf([{ source: memorySource('a.json', fc), layer: 'A' }, { source: memorySource('b.json', fc) }], { layer: 'OPT' })).toEqual(['A', 'OPT']);
    expect(await layersOf([{ source: memorySource('a.json', fc) }], {})).toEqual(['a']);
  });

  it('refuses input and manifest options, which only the command line reads (a library build takes InputSpec[])', async () => {
    const why = 'input and manifest name files for the command line to read; a library build takes its inputs as InputSpec[]';
    await expect(buildPyramid([], { ...OPTS, input: ['c=1:cells.json'] }, { sink: new MemorySink() })).rejects.toThrow(why);
    await expect(buildPyramid([], { ...OPTS, manifest: 'inputs.json' }, { sink: new MemorySink() })).rejects.toThrow(UsageError);
  });

  it('refuses a non-empty output without --force', async () => {
    const sink = new MemorySink();
    sink.files.set('old.json', new Uint8Array([1]));
    await expect(buildPyramid([{ source: memorySource('cells.json', JSON.stringify(fixture())) }], OPTS, { sink })).rejects.toThrow(OutputError);
  });

  it('builds the same pyramid sharded (plan, shards in any order, finalize) as on one machine', async () => {
    const dir = tmpDir('mudm-shard');
    const input = path.join(dir, 'cells.json');
    fs.writeFileSync(input, JSON.stringify(fixture()));
    const one = path.join(dir, 'one');
    await buildPyramid([{ source: fileSource(input) }], { ...OPTS, out: one });
    const sharded = path.join(dir, 'sharded');
    const planned = await planShardedBuild([{ source: fileSource(input) }], { ...OPTS, out: sharded, shards: 3 });
    expect(planned.shards).toBe(3);
    for (const i of [2, 0, 1, 1]) await buildShard({ out: sharded, workers: 1 }, i);
    await finalizeShardedBuild({ out: sharded, workers: 1 });
    expect(treeDifferences(one, sharded)).toEqual([]);
    expect(fs.existsSync(path.join(sharded, '.mudm-work'))).toBe(false);
  });

  it('gives a sharded build of a long outline the bytes of a one-machine build, its shared record spilled once for the shards', async () => {
    const dir = tmpDir('mudm-shard-outline');
    const input = longOutlineInput(dir);
    const one = path.join(dir, 'one');
    await buildPyramid([{ source: fileSource(input) }], { ...OPTS, out: one });
    const sharded = path.join(dir, 'sharded');
    await planShardedBuild([{ source: fileSource(input) }], { ...OPTS, out: sharded, shards: 2 });
    const records = path.join(sharded, '.mudm-work', 'level-0');
    expect(fs.statSync(path.join(records, 'shared.bin')).size).toBeGreaterThan(6000 * 16);
    // Without it a shard is refused before it tiles, naming it; given back, the build goes on.
    fs.renameSync(path.join(records, 'shared.bin'), path.join(dir, 'shared.bin'));
    await expect(buildShard({ out: sharded, workers: 1 }, 0)).rejects.toThrow(`build-shard: 1 of the plan's records is missing (${path.join(records, 'shared.bin')})`);
    fs.renameSync(path.join(dir, 'shared.bin'), path.join(records, 'shared.bin'));
    for (const i of [1, 0]) await buildShard({ out: sharded, workers: 1 }, i);
    await finalizeShardedBuild({ out: sharded, workers: 1 });
    expect(treeDifferences(one, sharded)).toEqual([]);
  });

  it('finalize refuses tiles of the shards lost before it (a partial merge), writing no descriptor; with them back it finishes', async () => {
    const dir = tmpDir('mudm-shard-lost');
    const input = path.join(dir, 'cells.json');
    fs.writeFileSync(input, JSON.stringify(fixture()));
    const out = path.join(dir, 'out');
    await planShardedBuild([{ source: fileSource(input) }], { ...OPTS, out, shards: 2 });
    for (const i of [0, 1]) await buildShard({ out, workers: 1 }, i);
    const finest = readTree(out);
    const zoom = Math.max(...[...finest.keys()].map((k) => Number(/^(\d+)\/\d+\/\d+\.pbf$/.exec(k)?.[1] ?? -1)));
    const lost = [...finest.keys()].filter((k) => k.startsWith(`${zoom}/`) && k.endsWith('.pbf')).slice(0, 2);
    expect(lost).toHaveLength(2);
    for (const k of lost) fs.rmSync(path.join(out, k));
    const refused = finalizeShardedBuild({ out, workers: 1 });
    await expect(refused).rejects.toThrow(new RegExp(`^cannot finalize: ${out} holds \\d+ pbf tiles of zoom ${zoom}, where the units' markers count \\d+: tiles were lost between the steps`));
    // The units whose cells lack the tiles, with their shard: those of the tiles removed, found from the plan.
    const plan = JSON.parse(fs.readFileSync(path.join(out, '.mudm-work', 'plan.json'), 'utf8')) as { units: { key: string; cell: { z: number; x: number; y: number } }[] };
    const owners = new Map<string, string>();
    plan.units.forEach((u, i) => {
      for (const k of lost) {
        const [, x, y] = /^\d+\/(\d+)\/(\d+)\.pbf$/.exec(k)?.map(Number) ?? [];
        const d = 2 ** (zoom - u.cell.z);
        if (Math.floor(x / d) === u.cell.x && Math.floor(y / d) === u.cell.y) owners.set(u.key, `${u.key} (shard ${i % 2}: `);
      }
    });
    expect(owners.size).toBeGreaterThan(0);
    const message = await refused.catch((e: Error) => e.message);
    for (const start of owners.values()) expect(message).toContain(start);
    expect(message).toMatch(/; units short of tiles: .*; shards? [01](, 1)? of 2;/);
    await expect(refused).rejects.toBeInstanceOf(WorkStateError);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    for (const k of lost) fs.writeFileSync(path.join(out, k), finest.get(k) as Buffer);
    await finalizeShardedBuild({ out, workers: 1 });
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(true);
  });
});
