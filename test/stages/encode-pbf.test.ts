// PBF encoder tests: agreement with vt-pbf after decoding, id and value rules, key/value tables, layers.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { PbfReader } from 'pbf';
import { PbfDictionary } from '../../src/stages/encode-pbf.js';
import { tileFeatures } from '../../src/stages/tile/tiler.js';
import type { TileResult } from '../../src/stages/tile/spec.js';
import type { TileFeature } from '../../src/tiling/flat.js';
import {
  baseSpec, expectedId, expectedTags, jsonOf, jsonToTileUnits, pbfFeatures, pbfLayers, randomFeatures, tf,
} from '../tiling/tile-fixtures.js';

interface VtFeature { id: number; type: number; tags: Record<string, unknown>; geometry: number[][] | number[][][] }
// vt-pbf 3 is CommonJS without types: the two entry points used here, typed by hand.
const vtpbf = createRequire(import.meta.url)('vt-pbf') as {
  fromGeojsonVt(layers: Record<string, { features: VtFeature[] }>, options: { version: number; extent: number }): Uint8Array;
};

/** What vt-pbf would be given for this tile: built from the JSON tile and the input features by the spec's rules. */
function vtInput(t: TileResult, side: number, source: Map<string, TileFeature>): Record<string, { features: VtFeature[] }> {
  const layers: Record<string, { features: VtFeature[] }> = {};
  for (const jf of jsonOf(t).features) {
    const src = source.get(JSON.stringify(jf.id)) as TileFeature;
    for (const part of jsonToTileUnits(jf.geometry as NonNullable<typeof jf.geometry>, side, t.z, t.x, t.y)) {
      layers[jf.layer] ??= { features: [] };
      layers[jf.layer].features.push({
        id: expectedId(src.feature, src.seq), type: part.type, tags: expectedTags(src.feature),
        geometry: part.type === 1 ? part.geometry.map((p) => p[0]) : part.geometry,
      });
    }
  }
  return layers;
}

describe('agreement with vt-pbf', () => {
  it('decodes to the same layers, tables and features as vt-pbf fed the same tile features', () => {
    const side = 2048;
    const features = randomFeatures(23, 300, side);
    const source = new Map(features.map((f) => [JSON.stringify(f.feature.id), f]));
    const tiles = tileFeatures(features, baseSpec({ side, minZoom: 0, maxZoom: 3, finestZoom: 3, layers: [{ id: 'cells' }, { id: 'other' }] }));
    expect(tiles.length).toBeGreaterThan(40);
    for (const t of tiles) {
      const theirs = vtpbf.fromGeojsonVt(vtInput(t, side, source), { version: 2, extent: 4096 });
      const ours = t.pbf as Uint8Array;
      expect(pbfFeatures(ours)).toEqual(pbfFeatures(theirs));
      expect(pbfLayers(ours)).toEqual(pbfLayers(theirs));
    }
  });
});

/** Field numbers of every value message of every layer, in order (4: int, 5: uint, 6: sint, 3: double…). */
function valueFields(bytes: Uint8Array): number[][] {
  const layers: number[][] = [];
  new PbfReader(bytes).readFields((tag, _: unknown, pbf) => {
    if (tag !== 3) return;
    const fields: number[] = [];
    pbf.readMessage((ltag, __: unknown, lp) => {
      if (ltag !== 4) return;
      lp.readMessage((vtag) => { fields.push(vtag); }, null);
    }, null);
    layers.push(fields);
  }, null);
  return layers;
}

describe('ids, values and tables', () => {
  const square = (x: number): TileFeature['feature']['geometry'] => ({ type: 'Polygon', coordinates: [[[x, 10], [x + 20, 10], [x + 20, 30], [x, 30], [x, 10]]] });
  const run = (fs: TileFeature[]) => tileFeatures(fs, baseSpec({ minZoom: 2, maxZoom: 2 }))[0];

  it('uses the input id when a non-negative safe integer, else seq; any other id becomes the tag id', () => {
    const t = run([
      tf(10, square(10), { id: 5 }), tf(11, square(40), { id: -3 }), tf(12, square(70), { id: 2 ** 53 }),
      tf(13, square(100), { id: 'abc' }), tf(14, square(130)), tf(15, square(160), { id: 0 }),
    ]);
    expect(pbfFeatures(t.pbf as Uint8Array).map((f) => [f.id, f.properties.id])).toEqual([
      [5, undefined], [11, -3], [12, 2 ** 53], [13, 'abc'], [14, undefined], [0, undefined],
    ]);
  });

  it('encodes integers as uint or sint, fractions and huge integers as doubles, arrays as JSON text', () => {
    const t = run([tf(0, square(10), {
      featureClass: 'cell', parentId: 'p1', ref: 7,
      properties: { u: 7, s: -7, d: 2.5, b: true, str: 'x', arr: [1, 2], nul: null, huge: 2 ** 60, featureClass: 'ignored' },
    })]);
    const [f] = pbfFeatures(t.pbf as Uint8Array);
    expect(f.properties).toEqual({ featureClass: 'cell', parentId: 'p1', ref: 7, u: 7, s: -7, d: 2.5, b: true, str: 'x', arr: '[1,2]', huge: 2 ** 60 });
    expect(pbfLayers(t.pbf as Uint8Array)[0].keys).toEqual(['featureClass', 'parentId', 'ref', 'u', 's', 'd', 'b', 'str', 'arr', 'huge']);
    // cell, p1: string; 7: uint (shared by ref and u); -7: sint; 2.5: double; true: bool; x, [1,2]: string; 2^60: double.
    expect(valueFields(t.pbf as Uint8Array)).toEqual([[1, 1, 5, 6, 3, 7, 1, 1, 3]]);
  });

  it('flattens nested objects to dotted fields, keeping the first of two fields of one name; JSON tiles keep the objects', () => {
    const properties = {
      classification: { name: 'Tumor: Positive', names: ['Tumor', 'Positive'], color: [200, 0, 0] },
      measurements: { 'Cell: Area': 52.5, 'Nucleus: Area': 20 }, 'measurements.Cell: Area': 1, deep: { a: { b: { c: true } }, empty: {} },
    };
    const t = run([tf(0, square(10), { id: 'c1', properties })]);
    const [f] = pbfFeatures(t.pbf as Uint8Array);
    expect(f.properties).toEqual({
      id: 'c1', 'classification.name': 'Tumor: Positive', 'classification.names': '["Tumor","Positive"]', 'classification.color': '[200,0,0]',
      'measurements.Cell: Area': 52.5, 'measurements.Nucleus: Area': 20, 'deep.a.b.c': true,
    });
    expect(jsonOf(t).features[0].properties).toEqual(properties);
  });

  it('deduplicates keys and values in first-seen order across features', () => {
    const t = run([tf(0, square(10), { properties: { a: 1, b: 'x' } }), tf(1, square(40), { properties: { b: 'x', c: 1, d: '1' } })]);
    const [l] = pbfLayers(t.pbf as Uint8Array);
    expect(l.keys).toEqual(['a', 'b', 'c', 'd']);
    expect(l.values).toEqual([1, 'x', '1']);
  });

  it('numbers a key list once for every feature given that very list, beside keys numbered one by one, and anew after reset', () => {
    const d = new PbfDictionary();
    const list = ['measurements.Cell: Area', 'b', 'a'];
    expect(d.key('a')).toBe(0);
    const ids = d.keysOf(list);
    expect(ids).toEqual([1, 2, 0]);
    expect(d.keysOf(list)).toBe(ids);
    expect(d.keysOf([...list])).toEqual(ids);
    expect(d.keys).toEqual(['a', 'measurements.Cell: Area', 'b']);
    d.reset();
    expect(d.keysOf(list)).toEqual([0, 1, 2]);
  });

  it('numbers numeric values by value across thousands of them, merges -0 with 0, and starts over on reset', () => {
    const d = new PbfDictionary();
    // More distinct numbers than the table's first size, each asked for twice, with their text and booleans between.
    const numbers = Array.from({ length: 5000 }, (_, i) => (i % 2 === 0 ? i * 0.25 : -i * 1e9 - 0.5));
    const first = numbers.map((v) => d.value(v));
    expect(d.value('0.25')).toBe(5000);
    expect(d.value(true)).toBe(5001);
    expect(numbers.map((v) => d.value(v))).toEqual(first);
    expect(first).toEqual(numbers.map((_, i) => i));
    expect(d.value(-0)).toBe(d.value(0));
    expect(d.values.slice(0, 3)).toEqual([0, -1000000000.5, 0.5]);
    d.reset();
    expect(d.values).toEqual([]);
    expect(d.value(-1000000000.5)).toBe(0);
    expect(d.value(0)).toBe(1);
    expect(d.value(0.5)).toBe(2);
    expect(d.value(true)).toBe(3);
  });

  it('writes version 2, extent 4096, layers in spec order, and skips empty layers', () => {
    const onlyNuclei = run([tf(0, square(10), {}, 1)]);
    expect(pbfLayers(onlyNuclei.pbf as Uint8Array).map((l) => [l.name, l.version, l.extent])).toEqual([['nuclei', 2, 4096]]);
    const both = run([tf(0, square(10), {}, 1), tf(1, square(40), {}, 0)]);
    expect(pbfLayers(both.pbf as Uint8Array).map((l) => l.name)).toEqual(['cells', 'nuclei']);
  });

  it('writes no PBF for a tile of meshes only, but still the JSON tile', () => {
    const t = run([tf(0, { type: 'TIN', coordinates: [[[[10, 10, 0], [20, 10, 0], [10, 20, 1], [10, 10, 0]]]] }, { id: 1 })]);
    expect(t.pbf).toBeUndefined();
    expect(jsonOf(t).features).toHaveLength(1);
    expect(t.stats.notInPbf).toBe(1);
  });

  it('writes polygon rings with ClosePath and no repeated first position', () => {
    const t = run([tf(0, { type: 'Polygon', coordinates: [[[0, 0], [16, 0], [16, 16], [0, 0]]] })]);
    let geometry: number[] = [];
    new PbfReader(t.pbf as Uint8Array).readFields((tag, _: unknown, pbf) => {
      if (tag !== 3) return;
      pbf.readMessage((lt, __: unknown, lp) => {
        if (lt !== 2) return;
        lp.readMessage((ft, ___: unknown, fp) => { if (ft === 4) geometry = fp.readPackedVarint(); }, null);
      }, null);
    }, null);
    // MoveTo(1) 0,0; LineTo(2) +256,0 0,+256; ClosePath(1).
    expect(geometry).toEqual([9, 0, 0, 18, 512, 0, 0, 512, 15]);
  });
});
