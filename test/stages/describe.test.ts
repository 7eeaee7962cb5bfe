// The describe stage: tileset.json and the per-plane overview descriptors, from the plan and the statistics.
import { describe, expect, it } from 'vitest';
import { observeFeature, type LayerStats } from '../../src/stages/assign.js';
import { overviewDescriptor, tilesetDescriptor, type DescribeInput } from '../../src/stages/describe.js';
import type { BuildPlan } from '../../src/stages/plan.js';
import type { IdCounts } from '../../src/model/descriptor.js';
import { validateDescriptor } from '../../src/validate/index.js';

function plan(over: Partial<BuildPlan> = {}): BuildPlan {
  return {
    world: { side: 4096, width: 3000, height: 2000 }, minZoom: 0, maxZoom: 3, cellSize: 2048, dims: [], layers: ['cells', 'nuclei'],
    planes: [{ t: 0, c: 0, z: 0 }], levels: [{ zoom: 1, topZoom: 3 }, { zoom: 0, topZoom: 0 }],
    formats: { json: true, pbf: true }, lod: 'auto', tileBudget: 500 * 1024, collection: {}, thresholds: [], raised: [], spareFrom: 0, spareSizes: [8, 8, 8, 8], ...over,
  };
}

function input(over: Partial<DescribeInput> = {}): DescribeInput {
  const stats: LayerStats = {};
  observeFeature(stats, 'cells', { type: 'Feature', featureClass: 'cell', properties: { area: 12, cls: 'tumor' }, geometry: null });
  observeFeature(stats, 'nuclei', { type: 'Feature', properties: { area: 3 }, geometry: null });
  return { plan: plan(), stats, pointified: [[0, 40], [0, 2], [0, 0], [0, 0]], thinned: [[5, 0], [0, 0], [0, 0], [0, 0]], meta: {}, ...over };
}

const errors = (d: unknown) => validateDescriptor(d).filter((i) => i.severity === 'error');

describe('tilesetDescriptor', () => {
  it('describes the PBF pyramid in 2D: template, layers with their fields, zooms, bounds, center', () => {
    const d = tilesetDescriptor(input());
    expect(errors(d)).toEqual([]);
    expect(d).toMatchObject({
      tilejson: '3.0.0', tiles: ['{zlvl}/{x}/{y}.pbf'], minzoom: 0, maxzoom: 3, bounds: [0, 0, 3000, 2000], center: [1500, 1000, 0],
      scale_factor: 2, format: 'pbf',
    });
    expect(d.vector_layers.map((l) => [l.id, l.fields, l.minzoom, l.maxzoom])).toEqual([
      ['cells', { area: 'Number', cls: 'String', featureClass: 'String' }, 0, 3],
      ['nuclei', { area: 'Number' }, 0, 3],
    ]);
    expect(d.vector_layers[0].fieldranges).toEqual({ area: [12, 12] });
  });

  it('names the zooms where a layer is complete: no points there, nothing thinned there or finer', () => {
    const d = tilesetDescriptor(input());
    // cells: thinned at zoom 0 only; nuclei: points at zooms 0 and 1.
    expect(d.vector_layers.map((l) => l.complete_zooms)).toEqual([[1, 2, 3], [2, 3]]);
    const thinnedFine = tilesetDescriptor(input({ thinned: [[0, 0], [0, 0], [1, 0], [0, 0]], pointified: [[0, 0], [0, 0], [0, 0], [0, 0]] }));
    expect(thinnedFine.vector_layers.map((l) => l.complete_zooms)).toEqual([[3], [0, 1, 2, 3]]);
  });

  it('says per layer which share of its features each thinned zoom draws (kept_fraction), in the overview too', () => {
    const keptFraction = [[0.0123456, 1], [0.5, 1], [1, 1], [1, 1]];
    const d = tilesetDescriptor(input({ keptFraction }));
    expect(d.vector_layers.map((l) => l.kept_fraction)).toEqual([{ 0: 0.01235, 1: 0.5 }, undefined]);
    const o = overviewDescriptor(input({ keptFraction }), { t: 0, c: 0, z: 0 }, '0/0/0.json');
    expect(o.vector_layers[0].kept_fraction).toEqual({ 0: 0.01235, 1: 0.5 });
    expect(errors(d)).toEqual([]);
  });

  it('says per layer whose numbers its PBF ids are (feature_ids), nothing where no feature was counted or no counts came', () => {
    // Counts: integer ids, other ids (strings, shown from property `id`), none.
    const cases: Array<[Record<string, IdCounts>, unknown[]]> = [
      [{ cells: [5, 0, 0], nuclei: [0, 0, 3] }, ['input', 'sequence']],
      [{ cells: [5, 0, 1] }, ['mixed', undefined]],
      [{ cells: [0, 0, 0], nuclei: [2, 0, 0] }, [undefined, 'input']],
      // Strings beside integers: every feature shows an input id, so no "mixed" (the card noted every integer id).
      [{ cells: [5, 2, 0], nuclei: [0, 4, 0] }, ['input', 'sequence']],
      [{ cells: [5, 2, 1], nuclei: [0, 4, 1] }, ['mixed', 'sequence']],
    ];
    for (const [ids, want] of cases) {
      expect(tilesetDescriptor(input({ ids })).vector_layers.map((l) => l.feature_ids), JSON.stringify(ids)).toEqual(want);
      expect(overviewDescriptor(input({ ids }), { t: 0, c: 0, z: 0 }, '0/0/0.json').vector_layers.map((l) => l.feature_ids)).toEqual(want);
    }
    expect(tilesetDescriptor(input()).vector_layers.map((l) => 'feature_ids' in l)).toEqual([false, false]);
  });

  it('says nothing of zoom 0 of a JSON-only pyramid, whose zoom-0 tile is the overview: no features are drawn there', () => {
    const keptFraction = [[0.0123456, 1], [0.5, 1], [1, 1], [1, 1]];
    const d = tilesetDescriptor(input({ keptFraction, plan: plan({ formats: { json: true, pbf: false } }), pointified: [[0, 0], [0, 0], [0, 0], [0, 0]], thinned: [[0, 0], [0, 0], [0, 0], [0, 0]] }));
    expect(d.vector_layers.map((l) => l.kept_fraction)).toEqual([{ 1: 0.5 }, undefined]);
    expect(d.vector_layers.map((l) => l.complete_zooms)).toEqual([[1, 2, 3], [1, 2, 3]]);
  });

  it('describes the JSON pyramid when only JSON is built, and carries meta, base URL, multiscale and used vocabularies', () => {
    const multiscale = { axes: [{ name: 'x', type: 'space', unit: 'micrometer' }, { name: 'y', type: 'space', unit: 'micrometer' }] };
    const vocabularies = { cls: { terms: { tumor: { uri: 'http://purl.obolibrary.org/obo/NCIT_C18009' } } }, other: { terms: {} } };
    const d = tilesetDescriptor(input({
      plan: plan({ formats: { json: true, pbf: false }, collection: { multiscale } as BuildPlan['collection'] }),
      meta: { name: 'slide', description: 'cells', attribution: 'lab', version: '2.0.0', baseUrl: 'https://example.org/t' },
      vocabularies: vocabularies as DescribeInput['vocabularies'],
    }));
    expect(errors(d)).toEqual([]);
    expect(d).toMatchObject({ tiles: ['https://example.org/t/{zlvl}/{x}/{y}.json'], format: 'json', name: 'slide', description: 'cells', attribution: 'lab', version: '2.0.0', multiscale });
    expect(d.vector_layers[0].vocabularies).toEqual({ cls: vocabularies.cls });
    expect(d.vector_layers[1].vocabularies).toBeUndefined();
  });

  it('gives 10 bounds and 6 center numbers with plane dimensions, over every plane', () => {
    const planes = [{ t: 0, c: 1, z: 0 }, { t: 2, c: 0, z: 0 }];
    const d = tilesetDescriptor(input({ plan: plan({ dims: ['t', 'c'], planes }) }));
    expect(errors(d)).toEqual([]);
    expect(d.tiles).toEqual(['{zlvl}/{t}/{c}/{x}/{y}.pbf']);
    expect(d.bounds).toEqual([0, 0, 0, 0, 0, 2, 1, 0, 3000, 2000]);
    expect(d.center).toEqual([0, 0, 0, 1500, 1000, 0]);
  });
});

describe('overviewDescriptor', () => {
  it('describes one plane\'s JSON pyramid with URLs climbing back to the root, assets too', () => {
    const planes = [{ t: 0, c: 1, z: 0 }, { t: 2, c: 0, z: 0 }];
    const assets = [{ role: 'raster', href: 'previews/0_1.png', media_type: 'image/png' }, { role: 'raster', href: 'https://example.org/slide.tif', media_type: 'image/tiff' }];
    const d = overviewDescriptor(input({ plan: plan({ dims: ['t', 'c'], planes }), assets }), planes[1], '0/2/0/0/0.json');
    expect(errors(d)).toEqual([]);
    expect(d.tiles).toEqual(['../../../../{zlvl}/{t}/{c}/{x}/{y}.json']);
    expect(d.format).toBe('json');
    expect(d.bounds).toEqual([2, 0, 0, 0, 0, 2, 0, 0, 3000, 2000]);
    expect(d.assets?.map((a) => a.href)).toEqual(['../../../../previews/0_1.png', 'https://example.org/slide.tif']);
  });

  it('in 2D sits at 0/0/0.json, two levels below the root', () => {
    expect(overviewDescriptor(input(), { t: 0, c: 0, z: 0 }, '0/0/0.json').tiles).toEqual(['../../{zlvl}/{x}/{y}.json']);
  });
});
