// The assign stage: a feature's plane and layer, and the field statistics the descriptor's vector_layers come from.
import { describe, expect, it } from 'vitest';
import type { Feature } from '../../src/model/feature.js';
import { assignPlane, describeFields, ENUM_CAP, ENUM_STRING_MAX, layerOf, mergeStats, observeFeature, type LayerStats, type PlaneRule } from '../../src/stages/assign.js';
import { EVERY_CHANNEL } from '../../src/stages/unit-key.js';

const at = (coordinates: number[][], properties: Record<string, unknown> | null = null): Feature =>
  ({ type: 'Feature', properties, geometry: { type: 'LineString', coordinates: coordinates as [number, number][] } });
const none: PlaneRule = { fixed: {}, fields: {} };

describe('assignPlane', () => {
  it('reads plane properties, leaving dimensions without a value at 0 and out of the path', () => {
    const rule: PlaneRule = { fixed: {}, fields: { t: 'frame', c: 'channel' } };
    expect(assignPlane(at([[0, 0], [1, 1]], { frame: 3, channel: 1 }), rule, '/features/0')).toEqual({ plane: { t: 3, c: 1, z: 0 }, dims: ['t', 'c'] });
    expect(assignPlane(at([[0, 0], [1, 1]], { frame: 2 }), rule, '')).toEqual({ plane: { t: 2, c: 0, z: 0 }, dims: ['t'], lacking: ['c'] });
    expect(assignPlane(at([[0, 0], [1, 1]]), rule, '')).toEqual({ plane: { t: 0, c: 0, z: 0 }, dims: [], lacking: ['t', 'c'] });
  });

  it('lets the input\'s fixed plane win over properties', () => {
    const rule: PlaneRule = { fixed: { c: 4 }, fields: { c: 'channel' } };
    expect(assignPlane(at([[0, 0], [1, 1]], { channel: 1 }), rule, '')).toEqual({ plane: { t: 0, c: 4, z: 0 }, dims: ['c'] });
  });

  it('takes z from a third coordinate shared by every position, not from mixed ones or meshes', () => {
    expect(assignPlane(at([[0, 0, 2], [1, 1, 2]]), none, '')).toEqual({ plane: { t: 0, c: 0, z: 2 }, dims: ['z'] });
    expect(assignPlane(at([[0, 0, 2], [1, 1, 3]]), none, '')).toEqual({ plane: { t: 0, c: 0, z: 0 }, dims: [] });
    expect(assignPlane(at([[0, 0, 2], [1, 1]]), none, '')).toEqual({ plane: { t: 0, c: 0, z: 0 }, dims: [] });
    const collection: Feature = { type: 'Feature', properties: null, geometry: { type: 'GeometryCollection', geometries: [
      { type: 'Point', coordinates: [1, 1, 5] }, { type: 'LineString', coordinates: [[0, 0, 5], [2, 2, 5]] },
    ] } };
    expect(assignPlane(collection, none, '')).toEqual({ plane: { t: 0, c: 0, z: 5 }, dims: ['z'] });
    const tin: Feature = { type: 'Feature', properties: null, geometry: { type: 'TIN', coordinates: [[[[0, 0, 1], [1, 0, 1], [0, 1, 1], [0, 0, 1]]]] } };
    expect(assignPlane(tin, none, '')).toEqual({ plane: { t: 0, c: 0, z: 0 }, dims: [] });
    // A z property wins over the coordinates.
    expect(assignPlane(at([[0, 0, 2], [1, 1, 2]], { slice: 7 }), { fixed: {}, fields: { z: 'slice' } }, '')).toEqual({ plane: { t: 0, c: 0, z: 7 }, dims: ['z'] });
  });

  it('takes QuPath\'s geometry plane (z stacks, time series): z, t and c, but c -1 and the defaults, after named properties', () => {
    const roi = (plane: Record<string, number> | undefined, properties: Record<string, unknown> | null = null): Feature =>
      ({ type: 'Feature', properties, geometry: { type: 'Point', coordinates: [5, 5], ...(plane ? { plane } : {}) } as Feature['geometry'] });
    // On every channel: the every-channel plane of the store, which the plan spreads over the channels.
    expect(assignPlane(roi({ c: -1, z: 2, t: 0 }), none, '')).toEqual({ plane: { t: 0, c: EVERY_CHANNEL, z: 2 }, dims: ['z'], everyChannel: true });
    expect(assignPlane(roi({ c: 1, z: 0, t: 3 }), none, '')).toEqual({ plane: { t: 3, c: 1, z: 0 }, dims: ['t', 'c'] });
    expect(assignPlane(roi(undefined), none, '')).toEqual({ plane: { t: 0, c: 0, z: 0 }, dims: [] });
    expect(assignPlane(roi({ z: 2 }, { slice: 4 }), { fixed: {}, fields: { z: 'slice' } }, '')).toEqual({ plane: { t: 0, c: 0, z: 4 }, dims: ['z'] });
    expect(assignPlane(roi({ z: 1.5 }), none, '/features/3')).toEqual({ code: 'plane-value-invalid', severity: 'error', path: '/features/3/geometry/plane/z', message: 'plane z must be a non-negative integer, found 1.5' });
  });

  it('puts a QuPath object on every channel without the --plane-field c field, where another feature lacking it is on channel 0', () => {
    const rule: PlaneRule = { fixed: {}, fields: { c: 'channel', z: 'slice' } };
    const qupath = (plane?: Record<string, number>): Feature =>
      ({ type: 'Feature', properties: { objectType: 'annotation', slice: 1 }, geometry: { type: 'Point', coordinates: [5, 5], ...(plane ? { plane } : {}) } as Feature['geometry'] });
    expect(assignPlane(qupath(), rule, '')).toEqual({ plane: { t: 0, c: EVERY_CHANNEL, z: 1 }, dims: ['z'], everyChannel: true });
    expect(assignPlane(qupath({ c: -1, z: 0, t: 0 }), rule, '')).toEqual({ plane: { t: 0, c: EVERY_CHANNEL, z: 1 }, dims: ['z'], everyChannel: true });
    // QuPath's own channel does not stand in for the field: lacking, as a feature of another tool.
    expect(assignPlane(qupath({ c: 2, z: 0, t: 0 }), rule, '')).toEqual({ plane: { t: 0, c: 0, z: 1 }, dims: ['z'], lacking: ['c'] });
    expect(assignPlane(at([[0, 0], [1, 1]], { slice: 1 }), rule, '')).toEqual({ plane: { t: 0, c: 0, z: 1 }, dims: ['z'], lacking: ['c'] });
  });

  it('refuses a plane value that is not a non-negative integer, naming where it was and what it was', () => {
    const rule: PlaneRule = { fixed: {}, fields: { t: 'frame' } };
    for (const [v, shown] of [[-1, '-1'], [1.5, '1.5'], ['2', '"2"']] as const) {
      const r = assignPlane(at([[0, 0], [1, 1]], { frame: v }), rule, '/features/9');
      expect(r).toMatchObject({ code: 'plane-value-invalid', severity: 'error', path: '/features/9/properties/frame' });
      expect((r as { message: string }).message).toContain(`plane t must be a non-negative integer, found ${shown}`);
    }
    // 1e20 made plane c=1e20, and 1e20 + 1 fell into the same plane: past 2^53 a value is refused as a manifest's is.
    for (const v of [1e20, Number.MAX_SAFE_INTEGER + 1]) {
      expect(assignPlane(at([[0, 0], [1, 1]], { frame: v }), rule, '/features/9')).toEqual({ code: 'plane-value-invalid', severity: 'error', path: '/features/9/properties/frame',
        message: `plane t must be a non-negative integer, found ${String(v)}, beyond 9007199254740991, past which two values can be one number` });
    }
    expect(assignPlane(at([[0, 0], [1, 1]], { frame: Number.MAX_SAFE_INTEGER }), rule, '')).toEqual({ plane: { t: Number.MAX_SAFE_INTEGER, c: 0, z: 0 }, dims: ['t'] });
    // A z in other units (µm, an elevation) made every feature invalid: the message says how to leave it aside.
    expect(assignPlane(at([[0, 0, -1], [1, 1, -1]]), none, '/features/2')).toEqual({ code: 'plane-value-invalid', severity: 'error', path: '/features/2/geometry/coordinates',
      message: 'plane z must be a non-negative integer, found -1 (the third coordinate every position shares is taken as the z slice; fix the input\'s plane, --input z=0:FILE, to leave it aside)' });
  });
});

describe('layerOf', () => {
  const f: Feature = { type: 'Feature', featureClass: 'cell', properties: { kind: 7, empty: '', gone: null }, geometry: null };

  it('is the input\'s layer, or the value of --layer-by: a member first, else a property, as text', () => {
    expect(layerOf(f, 'cells', undefined)).toBe('cells');
    expect(layerOf(f, 'cells', 'featureClass')).toBe('cell');
    expect(layerOf(f, 'cells', 'kind')).toBe('7');
  });

  it('falls back to the input\'s layer when the field is missing, null or empty', () => {
    for (const by of ['missing', 'gone', 'empty', 'parentId']) expect(layerOf(f, 'cells', by)).toBe('cells');
  });
});

describe('field statistics', () => {
  const features: Feature[] = [
    { type: 'Feature', id: 'a', featureClass: 'cell', parentId: 9, properties: { area: 10, ok: true, cls: 'tumor', mixed: 1, tags: ['x'], nothing: null }, geometry: null },
    { type: 'Feature', id: 2, featureClass: 'cell', properties: { area: -2.5, ok: false, cls: 'stroma', mixed: 'one' }, geometry: null },
    { type: 'Feature', featureClass: 'nucleus', properties: { area: 30, cls: 'tumor' }, geometry: null },
  ];

  it('declares numbers with their range, booleans, strings with their sorted values, mixed and arrays as strings', () => {
    const stats: LayerStats = {};
    for (const f of features) observeFeature(stats, 'cells', f);
    expect(describeFields(stats.cells)).toEqual({
      fields: { area: 'Number', cls: 'String', featureClass: 'String', id: 'String', mixed: 'String', ok: 'Bool', parentId: 'Number', tags: 'String' },
      fieldranges: { area: [-2.5, 30], parentId: [9, 9] },
      // Identifiers (id, parentId, ref) name features: their values are no enums a legend would offer.
      fieldenums: { cls: ['stroma', 'tumor'], featureClass: ['cell', 'nucleus'] },
      fielddescriptions: {
        mixed: 'mixed value types (number, string); PBF tiles keep each value\'s own type',
        tags: 'arrays are JSON-encoded strings in PBF tiles',
      },
    });
  });

  it('says a field of arrays beside numbers or booleans is mixed, as its PBF values are; arrays beside strings are strings', () => {
    const stats: LayerStats = {};
    const values: Record<string, unknown[]> = { num: [5, ['a']], bool: [true, [1, 2]], str: ['x', ['y']] };
    for (const [name, both] of Object.entries(values)) {
      for (const v of both) observeFeature(stats, 'l', { type: 'Feature', properties: { [name]: v }, geometry: null });
    }
    expect(describeFields(stats.l)).toEqual({
      fields: { bool: 'String', num: 'String', str: 'String' },
      fielddescriptions: {
        bool: 'mixed value types (bool, array); PBF tiles keep each value\'s own type, arrays as JSON-encoded strings',
        num: 'mixed value types (number, array); PBF tiles keep each value\'s own type, arrays as JSON-encoded strings',
        str: 'arrays are JSON-encoded strings in PBF tiles',
      },
    });
  });

  it('enumerates up to ENUM_CAP distinct strings, and stops past it', () => {
    const stats: LayerStats = {};
    for (let i = 0; i < ENUM_CAP; i++) observeFeature(stats, 'l', { type: 'Feature', properties: { name: `n${i}` }, geometry: null });
    expect(describeFields(stats.l).fieldenums?.name).toHaveLength(ENUM_CAP);
    observeFeature(stats, 'l', { type: 'Feature', properties: { name: 'one more' }, geometry: null });
    expect(describeFields(stats.l)).toEqual({ fields: { name: 'String' } });
  });

  it('a string over ENUM_STRING_MAX makes its field not enumerable, in one batch or merged from several', () => {
    const long = 'A'.repeat(ENUM_STRING_MAX + 44);
    const batches = [long, 'short'].map((name) => { const s: LayerStats = {}; observeFeature(s, 'l', { type: 'Feature', properties: { name }, geometry: null }); return s; });
    const merged: LayerStats = {};
    for (const b of batches) mergeStats(merged, b);
    const whole: LayerStats = {};
    for (const name of [long, 'short']) observeFeature(whole, 'l', { type: 'Feature', properties: { name }, geometry: null });
    for (const stats of [merged, whole, batches[0]]) expect(describeFields(stats.l)).toEqual({ fields: { name: 'String' } });
  });

  it('counts of two fields of one dotted name the first, which the tiles carry', () => {
    const stats: LayerStats = {};
    observeFeature(stats, 'l', { type: 'Feature', properties: { 'a.b': 'x', a: { b: 'y' } }, geometry: null });
    expect(describeFields(stats.l)).toEqual({ fields: { 'a.b': 'String' }, fieldenums: { 'a.b': ['x'] } });
    // A null is no tag: the tiles carry the other form, and so is it counted.
    const nulls: LayerStats = {};
    observeFeature(nulls, 'l', { type: 'Feature', properties: { 'a.b': null, a: { b: 5 }, m: { x: null }, 'm.x': 'y' }, geometry: null });
    expect(describeFields(nulls.l).fields).toEqual({ 'a.b': 'Number', 'm.x': 'String' });
  });

  it('gives the same statistics whatever the batches and the order they are merged in', () => {
    const whole: LayerStats = {};
    for (const f of features) observeFeature(whole, 'cells', f);
    const batches = features.map((f) => { const s: LayerStats = {}; observeFeature(s, 'cells', f); return s; });
    for (const order of [[0, 1, 2], [2, 1, 0], [1, 2, 0]]) {
      const merged: LayerStats = {};
      for (const i of order) mergeStats(merged, batches[i]);
      expect(describeFields(merged.cells)).toEqual(describeFields(whole.cells));
    }
  });
});
