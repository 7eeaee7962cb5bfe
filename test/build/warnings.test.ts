// Warnings of a build about inputs it builds but that will not look as their authors expect (ids, shadowed and mixed
// fields, plane fields), and about a memory budget its workers would pass.
import { describe, expect, it } from 'vitest';
import { buildPyramid, planShardedBuild } from '../../src/build/pipeline.js';
import { manyPlanesWarning } from '../../src/build/option-fields.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import type { FeatureSource } from '../../src/io/source.js';
import type { Feature } from '../../src/model/feature.js';
import { DataError, UsageError } from '../../src/report/errors.js';
import { decodePbf, sinkJson as json, tmpDir } from '../helpers/pyramid.js';
import path from 'node:path';
import fs from 'node:fs';
import { maskSource } from '../../src/io/mask-source.js';
import { littleEndianTiff } from '../helpers/tiff.js';

const OPTS = { imageSize: '2048,2048', unitSize: 256, workers: 1 } as const;

describe('build warnings', () => {
  it('warns of a layer where some features have an integer id and some not: a sequence number may be another\'s id', async () => {
    const point = (id: unknown, x: number) => ({ type: 'Feature', ...(id === undefined ? {} : { id }), properties: {}, geometry: { type: 'Point', coordinates: [x, 10] } });
    const warnings: [string, unknown][] = [];
    const text = JSON.stringify({ type: 'FeatureCollection', features: [point(1, 10), point(undefined, 20), point('c2', 30)] });
    await buildPyramid([{ source: memorySource('cells.json', text) }], OPTS, { sink: new MemorySink(), onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([['layer cells: 1 feature(s) have an integer id and 2 do not; those get their input sequence number as PBF id, which may be another feature\'s id (MVT ids should be unique in a layer): give every feature an id, or none', { event: 'mixed-ids', layer: 'cells', withId: 1, without: 2 }]]);
    // All with ids, or none: nothing to say.
    warnings.length = 0;
    await buildPyramid([{ source: memorySource('cells.json', JSON.stringify({ type: 'FeatureCollection', features: [point(undefined, 10), point('c2', 30)] })) }], OPTS, { sink: new MemorySink(), onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([]);
  });

  it('warns of inputs whose collection members differ from the first\'s, which the pyramid keeps for every layer', async () => {
    const scale = (s: number) => ({ axes: [{ name: 'x', type: 'space', unit: 'micrometer' }, { name: 'y', type: 'space', unit: 'micrometer' }], coordinateTransformations: [{ type: 'scale', scale: [s, s] }] });
    const doc = (s: number, image: string) => JSON.stringify({ type: 'FeatureCollection', multiscale: scale(s), properties: { image }, features: [{ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [10, 10] } }] });
    const warnings: [string, unknown][] = [];
    const sink = new MemorySink();
    const inputs = [['a.json', doc(0.25, 'a.tif')], ['b.json', doc(0.5, 'b.tif')], ['c.json', doc(0.25, 'a.tif')]].map(([name, text]) => ({ source: memorySource(name, text) }));
    await buildPyramid(inputs, { ...OPTS, maxZoom: 1 }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([
      ["1 input(s) (b.json) have other multiscale than a.json, and the pyramid keeps a.json's for every layer: their features are described with another pixel size or terms: build such inputs into pyramids of their own",
        { event: 'collection-members-differ', member: 'multiscale', files: 1, first: 'b.json', keptFrom: 'a.json' }],
      ["1 input(s) (b.json) have other properties than a.json, and the pyramid keeps a.json's for every layer: JSON tiles head every feature with them",
        { event: 'collection-members-differ', member: 'properties', files: 1, first: 'b.json', keptFrom: 'a.json' }],
    ]);
    // Members written in another key order are the same members.
    warnings.length = 0;
    const reordered = JSON.stringify({ type: 'FeatureCollection', multiscale: { coordinateTransformations: scale(0.25).coordinateTransformations, axes: scale(0.25).axes.map(({ unit, type, name }) => ({ unit, type, name })) }, properties: { image: 'a.tif' }, features: [] });
    await buildPyramid([{ source: memorySource('a.json', doc(0.25, 'a.tif')) }, { source: memorySource('r.json', reordered) }], { ...OPTS, maxZoom: 1 }, { sink: new MemorySink(), onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([]);
    expect(json(sink, 'tileset.json').multiscale).toEqual(scale(0.25));
  });

  it('warns of a field of booleans among numbers or strings (1 and true), declared a String', async () => {
    const warnings: [string, unknown][] = [];
    const point = (v: unknown, x: number) => ({ type: 'Feature', properties: { bn: v }, geometry: { type: 'Point', coordinates: [x, 10] } });
    const text = JSON.stringify({ type: 'FeatureCollection', features: [point(1, 10), point(true, 20), point(0, 30)] });
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 1 }, { sink: new MemorySink(), onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([['layer cells: field "bn" holds 2 number(s), 1 bool(s): it is declared a String, and PBF tiles keep each value\'s own type; give it values of one type', { event: 'mixed-field', layer: 'cells', field: 'bn', numbers: 2, bools: 1, strings: 0 }]]);
  });

  it('warns of a field of arrays among numbers or booleans, which PBF tiles carry as strings beside them', async () => {
    const warnings: [string, unknown][] = [];
    const point = (props: Record<string, unknown>, x: number) => ({ type: 'Feature', properties: props, geometry: { type: 'Point', coordinates: [x, 10] } });
    const text = JSON.stringify({ type: 'FeatureCollection', features: [point({ n: 1, b: true }, 10), point({ n: [1, 2], b: ['x'] }, 20), point({ n: 3, b: false }, 30)] });
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 1 }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([
      ['layer cells: field "n" holds 2 number(s), 1 array(s): it is declared a String, with no range (a viewer cannot colour it on a scale); write missing values as null to keep it a Number', { event: 'mixed-field', layer: 'cells', field: 'n', numbers: 2, strings: 0, arrays: 1 }],
      ['layer cells: field "b" holds 2 bool(s), 1 array(s): it is declared a String, and PBF tiles keep each value\'s own type; give it values of one type', { event: 'mixed-field', layer: 'cells', field: 'b', numbers: 0, bools: 2, strings: 0, arrays: 1 }],
    ]);
    // The tiles hold what the descriptor says: numbers and a JSON text in one field, described as mixed.
    const layer = (json(sink, 'tileset.json').vector_layers as { fields: Record<string, string>; fielddescriptions: Record<string, string> }[])[0];
    expect(layer.fields).toEqual({ b: 'String', n: 'String' });
    expect(layer.fielddescriptions.n).toBe('mixed value types (number, array); PBF tiles keep each value\'s own type, arrays as JSON-encoded strings');
    expect(decodePbf(sink.files.get('1/0/0.pbf') as Uint8Array, 2048, 1, 0, 0).map((f) => f.properties.n)).toEqual([1, '[1,2]', 3]);
  });

  it('says how many QuPath objects are on every channel (plane c -1) where others name a channel, and that each channel holds them', async () => {
    const warnings: [string, unknown][] = [];
    const object = (c: number, x: number) => ({ type: 'Feature', properties: { objectType: 'detection' }, geometry: { type: 'Point', coordinates: [x, 10], plane: { c, z: 0, t: 0 } } });
    const text = JSON.stringify({ type: 'FeatureCollection', features: [object(-1, 10), object(-1, 20), object(1, 30)] });
    const sink = new MemorySink();
    const report = await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 1 }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([['2 QuPath object(s) are on every channel (plane c -1, or no plane: QuPath\'s default) while others name a channel: each is in the tiles of every channel (c 1) at its own t and z, with the same id, properties and geometry', { event: 'every-channel', features: 2, channels: [1] }]]);
    expect(report.features.everyChannel).toEqual({ features: 2, channels: [1] });
    // The one channel named is the pyramid's only one: no plane of channel 0 is made for them.
    expect(json(sink, 'tileset.json').bounds).toEqual([0, 1, 0, 0, 0, 0, 1, 0, 2048, 2048]);
    expect(decodePbf(sink.files.get('1/1/0/0.pbf') as Uint8Array, 2048, 1, 0, 0).map((f) => f.rings[0][0][0])).toEqual([10, 20, 30]);
    // A QuPath object without a plane is on QuPath's default plane (c -1) too; a feature of no QuPath export is not.
    warnings.length = 0;
    const planeless = { type: 'Feature', properties: { objectType: 'annotation' }, geometry: { type: 'Point', coordinates: [40, 10] } };
    const plain = { type: 'Feature', properties: { name: 'roi' }, geometry: { type: 'Point', coordinates: [50, 10] } };
    const withPlain = JSON.stringify({ type: 'FeatureCollection', features: [object(-1, 10), planeless, plain, object(1, 30), object(0, 60)] });
    const mixed = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.json', withPlain) }], { ...OPTS, maxZoom: 1 }, { sink: mixed, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings.map(([, d]) => d)).toEqual([{ event: 'every-channel', features: 2, channels: [0, 1] }]);
    const xs = (c: number) => decodePbf(mixed.files.get(`1/${c}/0/0.pbf`) as Uint8Array, 2048, 1, 0, 0).map((f) => f.rings[0][0][0]);
    expect([xs(0), xs(1)]).toEqual([[10, 40, 50, 60], [10, 40, 30]]);
    // All on every channel: one plane, nothing to say, nothing in the report.
    warnings.length = 0;
    const one = await buildPyramid([{ source: memorySource('cells.json', JSON.stringify({ type: 'FeatureCollection', features: [object(-1, 10)] })) }], { ...OPTS, maxZoom: 1 }, { sink: new MemorySink(), onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([]);
    expect(one.features.everyChannel).toBeUndefined();
    expect(one.world).toMatchObject({ dims: [], planes: 1 });
  });

  it('refuses multiscale axes that list y before x (positions [y, x], which it would transpose), whether they come before or after the features', async () => {
    const axes = [{ name: 'y', type: 'space', unit: 'micrometer' }, { name: 'x', type: 'space', unit: 'micrometer' }];
    const feature = { type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [10, 300] } };
    for (const text of [
      JSON.stringify({ type: 'FeatureCollection', multiscale: { axes }, features: [feature] }),
      JSON.stringify({ type: 'FeatureCollection', features: [feature], multiscale: { axes } }),
    ]) {
      const sink = new MemorySink();
      const err = await buildPyramid([{ source: memorySource('yx.json', text) }], { ...OPTS, maxZoom: 1 }, { sink }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DataError);
      expect((err as DataError).exitCode).toBe(1);
      expect((err as Error).message).toBe('yx.json: its multiscale axes list y before x (y, x), so its positions are in that order; the build reads x, y first and would transpose the slide: list the axes with x before y, and swap each position\'s x and y numbers');
      expect(sink.files.size).toBe(0);
    }
    // A second input's axes count too, though the pyramid keeps the first's.
    const xy = JSON.stringify({ type: 'FeatureCollection', multiscale: { axes: [...axes].reverse() }, features: [feature] });
    const second = await buildPyramid([{ source: memorySource('xy.json', xy) }, { source: memorySource('yx.json', JSON.stringify({ type: 'FeatureCollection', multiscale: { axes }, features: [feature] })) }], { ...OPTS, maxZoom: 1 }, { sink: new MemorySink() }).catch((e: unknown) => e);
    expect((second as Error).message).toMatch(/^yx\.json: its multiscale axes list y before x/);
    // OME's five axes (t, c, z, y, x) cannot each be a number of a position: they say nothing of its order.
    const ome = ['t', 'c', 'z', 'y', 'x'].map((name) => ({ name }));
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('ome.json', JSON.stringify({ type: 'FeatureCollection', multiscale: { axes: ome }, features: [feature] })) }], { ...OPTS, maxZoom: 1 }, { sink });
    expect(sink.files.has('tileset.json')).toBe(true);
  });

  it('refuses --layer-by on a field of more than 256 values (a measurement): a layer is for a class (exit 2, nothing written)', async () => {
    const features = Array.from({ length: 300 }, (_, i) => ({ type: 'Feature', properties: { area: 100 + i, cls: i % 3 ? 'a' : 'b' }, geometry: { type: 'Point', coordinates: [i, 10] } }));
    const text = JSON.stringify({ type: 'FeatureCollection', features });
    const sink = new MemorySink();
    const err = await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 1, layerBy: 'area' }, { sink }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe('--layer-by area makes 300 layers ("100", "101", "102", …), more than 256: a layer is for a class of features (classification.name, objectType, featureClass), not for each value of a measurement or an id');
    expect(sink.files.size).toBe(0);
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 1, layerBy: 'cls' }, { sink });
    expect((json(sink, 'tileset.json').vector_layers as { id: string }[]).map((l) => l.id).sort()).toEqual(['a', 'b']);
  });

  it('warns of a property that a member of its name hides in PBF tiles (a UUID id beside properties.id)', async () => {
    const warnings: [string, unknown][] = [];
    const text = JSON.stringify({ type: 'FeatureCollection', features: [
      { type: 'Feature', id: 'a1b2-uuid', properties: { id: 42, label: 'x' }, geometry: { type: 'Point', coordinates: [10, 10] } },
      { type: 'Feature', id: 'c3', parentId: 'member', properties: { parentId: 'own' }, geometry: { type: 'Point', coordinates: [20, 10] } },
      // An integer id is the PBF id, not a tag: the property keeps its name.
      { type: 'Feature', id: 7, properties: { id: 43 }, geometry: { type: 'Point', coordinates: [30, 10] } },
    ] });
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 1 }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings.filter(([, d]) => (d as { event: string }).event === 'property-shadowed')).toEqual(['id', 'parentId'].map((field) => [
      `layer cells: 1 feature(s) have a property "${field}" beside their own ${field} member; PBF tiles carry the member under that name, so the property is in JSON tiles only: rename the property to keep it in PBF`,
      { event: 'property-shadowed', layer: 'cells', field, features: 1 },
    ]));
    const pbf = decodePbf(sink.files.get('0/0/0.pbf') as Uint8Array, 2048, 0, 0, 0);
    expect(pbf.map((f) => [f.id, f.properties.id, f.properties.parentId])).toEqual([[0, 'a1b2-uuid', undefined], [1, 'c3', 'member'], [7, 43, undefined]]);
  });

  it('warns of a field of numbers with a few strings ("NA" for a missing value), which is declared a String', async () => {
    const warnings: [string, unknown][] = [];
    const point = (area: unknown, x: number) => ({ type: 'Feature', id: x, properties: { measurements: { Area: area }, note: x > 10 ? 'b' : 1 }, geometry: { type: 'Point', coordinates: [x, 10] } });
    const text = JSON.stringify({ type: 'FeatureCollection', features: [point(12.5, 10), point('NA', 20), point(14, 30), point(null, 40)] });
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 1 }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([
      ['layer cells: field "measurements.Area" holds 2 number(s) and 1 string(s) such as "NA": it is declared a String, with no range (a viewer cannot colour it on a scale); write missing values as null to keep it a Number', { event: 'mixed-field', layer: 'cells', field: 'measurements.Area', numbers: 2, strings: 1 }],
      ['layer cells: field "note" holds 1 number(s) and 3 string(s) such as "b": it is declared a String, with no range (a viewer cannot colour it on a scale); write missing values as null to keep it a Number', { event: 'mixed-field', layer: 'cells', field: 'note', numbers: 1, strings: 3 }],
    ]);
    expect((json(sink, 'tileset.json') as { vector_layers: Array<{ fields: Record<string, string> }> }).vector_layers[0].fields['measurements.Area']).toBe('String');
  });

  it('warns of features without the --plane-field that others have: they are put on plane 0', async () => {
    const warnings: [string, unknown][] = [];
    const point = (channel: number | undefined, x: number) => ({ type: 'Feature', id: x, properties: channel === undefined ? {} : { channel }, geometry: { type: 'Point', coordinates: [x, 10] } });
    const text = JSON.stringify({ type: 'FeatureCollection', features: [point(1, 10), point(undefined, 20), point(0, 30)] });
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 1, planeField: 'c=channel' }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([['1 of 3 valid feature(s) have no field "channel" (--plane-field c=channel): they are put on c=0, with the features whose c is 0', { event: 'plane-field-lacking', dim: 'c', field: 'channel', features: 1, of: 3 }]]);
    expect(decodePbf(sink.files.get('0/0/0/0.pbf') as Uint8Array, 2048, 0, 0, 0).map((f) => f.id)).toEqual([20, 30]);
    // A QuPath object without the field, on every channel by QuPath's plane (c -1, or none), is on every channel.
    warnings.length = 0;
    const annotation = (x: number, plane?: unknown) => ({ type: 'Feature', id: x, properties: { objectType: 'annotation' }, geometry: { type: 'Point', coordinates: [x, 10], ...(plane ? { plane } : {}) } });
    const qupath = JSON.stringify({ type: 'FeatureCollection', features: [point(1, 10), annotation(40), annotation(50, { c: -1, z: 0, t: 0 }), point(2, 30)] });
    const every = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.json', qupath) }], { ...OPTS, maxZoom: 1, planeField: 'c=channel' }, { sink: every, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings.map(([, d]) => d)).toEqual([{ event: 'every-channel', features: 2, channels: [1, 2] }]);
    for (const c of [1, 2]) expect(decodePbf(every.files.get(`0/${c}/0/0.pbf`) as Uint8Array, 2048, 0, 0, 0).map((f) => f.id)).toEqual(c === 1 ? [10, 40, 50] : [40, 50, 30]);
  });

  it('warns of a --plane-field of a plane per feature (a label given as z), and of one of more than 1,000 planes', async () => {
    const warnings: [string, unknown][] = [];
    const point = (label: number) => ({ type: 'Feature', id: label, properties: { label, slice: label % 3 }, geometry: { type: 'Point', coordinates: [label, 10] } });
    const text = JSON.stringify({ type: 'FeatureCollection', features: Array.from({ length: 101 }, (_, i) => point(i + 1)) });
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 0, format: 'pbf', planeField: 'z=label' }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([['--plane-field z=label makes 101 z planes (1, 2, 3, …, 101) for 101 valid feature(s): each plane is a pyramid of its own, with tiles at every zoom; is "label" a z slice index? (a class is for --layer-by; a label or an id needs no option: it stays a property)',
      { event: 'plane-field-many', dim: 'z', field: 'label', planes: 101, features: 101 }]]);
    expect(decodePbf(sink.files.get('0/101/0/0.pbf') as Uint8Array, 2048, 0, 0, 0).map((f) => f.id)).toEqual([101]);
    // A field of a few slices is what --plane-field is for: nothing to say.
    warnings.length = 0;
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 0, format: 'pbf', planeField: 'z=slice' }, { sink: new MemorySink(), onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([]);
    // Many features a plane, but more than 1,000 planes (a long time series) is warned of too; 100 planes of one feature each is not.
    const planes = (n: number, d: 't' | 'z' = 't') => Array.from({ length: n }, (_, i) => ({ t: 0, c: 0, z: 0, [d]: i }));
    expect(manyPlanesWarning({ planeFields: { t: 'frame' } }, planes(1001), 50_000)?.[1]).toEqual({ event: 'plane-field-many', dim: 't', field: 'frame', planes: 1001, features: 50_000 });
    expect(manyPlanesWarning({ planeFields: { t: 'frame' } }, planes(1000), 50_000)).toBeUndefined();
    expect(manyPlanesWarning({ planeFields: { t: 'frame' } }, planes(100), 100)).toBeUndefined();
    expect(manyPlanesWarning({ planeFields: { t: 'frame', z: 'slice' } }, planes(101, 'z'), 101)?.[1]).toEqual({ event: 'plane-field-many', dim: 'z', field: 'slice', planes: 101, features: 101 });
  });

  it('warns of features without the --layer-by field that others have: they are in their input\'s layer', async () => {
    const warnings: [string, unknown][] = [];
    const point = (cls: unknown, x: number) => ({ type: 'Feature', id: x, properties: cls === undefined ? {} : { cls }, geometry: { type: 'Point', coordinates: [x, 10] } });
    const text = JSON.stringify({ type: 'FeatureCollection', features: [point('tumor', 10), point(undefined, 20), point(null, 30), point('', 40)] });
    const sink = new MemorySink();
    // Two inputs, each lacking features in a layer of its own; a file without one lacking is not named.
    const other = JSON.stringify({ type: 'FeatureCollection', features: [point('stroma', 50), point(undefined, 60)] });
    const whole = JSON.stringify({ type: 'FeatureCollection', features: [point('stroma', 70)] });
    await buildPyramid([{ source: memorySource('cells.json', text) }, { source: memorySource('more.json', other) }, { source: memorySource('whole.json', whole) }], { ...OPTS, maxZoom: 1, layerBy: 'cls' }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([
      ['layer cells: 3 of 7 valid feature(s) have no value of field "cls" (--layer-by cls): they are in layer cells, named after their input, beside the layers of the field\'s values', { event: 'layer-by-lacking', layer: 'cells', field: 'cls', features: 3, of: 7 }],
      ['layer more: 1 of 7 valid feature(s) have no value of field "cls" (--layer-by cls): they are in layer more, named after their input, beside the layers of the field\'s values', { event: 'layer-by-lacking', layer: 'more', field: 'cls', features: 1, of: 7 }],
    ]);
    expect((json(sink, 'tileset.json') as { vector_layers: { id: string }[] }).vector_layers.map((l) => l.id)).toEqual(['cells', 'more', 'stroma', 'tumor']);
  });

  it('warns of a --layer-by value that is the layer named after an input whose features lack the field: one layer holds both', async () => {
    const warnings: [string, unknown][] = [];
    const point = (cls: unknown, x: number) => ({ type: 'Feature', id: x, properties: cls === undefined ? {} : { cls }, geometry: { type: 'Point', coordinates: [x, 10] } });
    const cells = JSON.stringify({ type: 'FeatureCollection', features: [point('cells', 10), point(undefined, 20), point('tumor', 30), point('cells', 40)] });
    const more = JSON.stringify({ type: 'FeatureCollection', features: [point('more', 50)] });
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.json', cells) }, { source: memorySource('more.json', more) }], { ...OPTS, maxZoom: 1, layerBy: 'cls' }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([
      ['layer cells: 1 of 5 valid feature(s) have no value of field "cls" (--layer-by cls): they are in layer cells, named after their input, beside the layers of the field\'s values', { event: 'layer-by-lacking', layer: 'cells', field: 'cls', features: 1, of: 5 }],
      ['layer cells: 2 feature(s) whose field "cls" is "cells" (--layer-by cls) and the 1 without a value there from cells.json, whose layer is named after it, are one layer, cells: rename the input file or that value to keep them apart', { event: 'layer-by-shared', layer: 'cells', field: 'cls', byValue: 2, lacking: 1, file: 'cells.json' }],
    ]);
    expect((json(sink, 'tileset.json') as { vector_layers: { id: string }[] }).vector_layers.map((l) => l.id)).toEqual(['cells', 'more', 'tumor']);
    const layers = decodePbf(sink.files.get('1/0/0.pbf') as Uint8Array, 2048, 1, 0, 0);
    expect(layers.filter((f) => f.layer === 'cells').map((f) => f.id)).toEqual([10, 20, 40]);
  });

  it('warns of input features in layer nucleus beside the nuclei --nucleus-features makes', async () => {
    const square = (x: number) => [[x, 0], [x + 10, 0], [x + 10, 10], [x, 10], [x, 0]];
    const nucleus = (x: number) => [[x + 3, 3], [x + 7, 3], [x + 7, 7], [x + 3, 7], [x + 3, 3]];
    const cell = (cls: string, x: number) => ({ type: 'Feature', id: x, properties: { cls }, geometry: { type: 'Polygon', coordinates: [square(x)] }, nucleusGeometry: { type: 'Polygon', coordinates: [nucleus(x)] } });
    const text = JSON.stringify({ type: 'FeatureCollection', features: [cell('tumor', 10), cell('nucleus', 40), cell('nucleus', 70)] });
    const warnings: [string, unknown][] = [];
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.json', text) }], { ...OPTS, maxZoom: 1, layerBy: 'cls', nucleusFeatures: true }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([
      ['layer nucleus: 2 input feature(s) are in layer nucleus (--layer-by cls, --layer or an input\'s name), with the nuclei --nucleus-features makes: one layer holds both; name that layer otherwise to keep them apart', { event: 'layer-nucleus-shared', layer: 'nucleus', features: 2 }],
    ]);
    const layers = decodePbf(sink.files.get('1/0/0.pbf') as Uint8Array, 2048, 1, 0, 0);
    expect(layers.filter((f) => f.layer === 'nucleus').length).toBe(5);
    // Without such input features, nothing is said.
    warnings.length = 0;
    await buildPyramid([{ source: memorySource('cells.json', JSON.stringify({ type: 'FeatureCollection', features: [cell('tumor', 10)] })) }], { ...OPTS, maxZoom: 1, layerBy: 'cls', nucleusFeatures: true }, { sink: new MemorySink(), onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings).toEqual([]);
  });

  it('warns of a label mask of another size than the image: its labels stay at its own pixels (a downsampled export covers a corner)', async () => {
    const square: Feature = { type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]] } };
    const mask = (width: number, height: number): FeatureSource => ({ name: 'labels.tif', features: async function* () { await Promise.resolve(); yield [square]; }, imageSize: () => ({ width, height }) });
    const warnings: [string, unknown][] = [];
    const build = async (m: FeatureSource, imageSize: string) => { await buildPyramid([{ source: m }], { imageSize, maxZoom: 1, workers: 1 }, { sink: new MemorySink(), onWarning: (w, d) => warnings.push([w, d]) }); };
    await build(mask(500, 375), '2000,1500');
    await build(mask(600, 400), '500,500');
    await build(mask(2000, 1500), '2000,1500');
    expect(warnings).toEqual([
      ["labels.tif: the label mask is 500 × 375 px and the image 2000 × 1500 px (--image or --image-size): its labels are placed at the mask's own pixels, not scaled, over the image's top-left 500 × 375 px; made at downsample 4? write the mask at the image's size (QuPath's label export: downsample 1)",
        { event: 'mask-size', file: 'labels.tif', mask: [500, 375], image: [2000, 1500], downsample: 4 }],
      ["labels.tif: the label mask is 600 × 400 px and the image 500 × 500 px (--image or --image-size): its labels are placed at the mask's own pixels, not scaled, those beyond the image not placed; write the mask at the image's size (QuPath's label export: downsample 1)",
        { event: 'mask-size', file: 'labels.tif', mask: [600, 400], image: [500, 500] }],
    ]);
  });

  it('warns of a traced label in a thousand pieces or more (a binary or class mask): one feature for all its pieces', async () => {
    const pieces = (n: number): Feature => ({ type: 'Feature', id: 255, properties: { label: 255 }, geometry: { type: 'MultiPolygon', coordinates: Array.from({ length: n }, (_, k) => {
      const x = 4 * (k % 40), y = 4 * Math.floor(k / 40);
      return [[[x, y], [x + 2, y], [x + 2, y + 2], [x, y + 2], [x, y]]];
    }) } });
    const mask = (...features: Feature[]): FeatureSource => ({ name: 'binary.png', features: async function* () { await Promise.resolve(); yield features; }, imageSize: () => ({ width: 160, height: 160 }) });
    const warnings: [string, unknown][] = [];
    const build = async (m: FeatureSource) => { await buildPyramid([{ source: m }], { maxZoom: 1, workers: 1 }, { sink: new MemorySink(), onWarning: (w, d) => warnings.push([w, d]) }); };
    await build(mask(pieces(999)));
    expect(warnings).toEqual([]);
    await build(mask(pieces(1600), { ...pieces(1000), id: 7, properties: { label: 7 } }));
    expect(warnings).toEqual([[
      'binary.png: label 255 is in 1,600 pieces, one feature of 6,400 vertices, and 1 other label(s) in 1,000 or more: a binary or class mask? It is one feature: one id and one hover card for all its pieces; build with --mask-features piece for a feature per piece (its label kept as a property)',
      { event: 'mask-pieces', file: 'binary.png', label: 255, polygons: 1600, vertices: 6400, others: 1 },
    ]]);
  });
});

describe('a mask whose labels restart in each tile it was segmented in', () => {
  /** 1,600² px, 8 bits, in tiles of 400 px of 16 round cells each (radius 5, 100 px apart), numbered from 1 in each tile or across the mask. */
  const mask = (afresh: boolean): string => {
    const W = 1600, data = new Uint8Array(W * W);
    for (let t = 0; t < 16; t++) {
      for (let k = 0; k < 16; k++) {
        const cx = (t % 4) * 400 + (k % 4) * 100 + 50, cy = Math.floor(t / 4) * 400 + Math.floor(k / 4) * 100 + 50;
        for (let y = cy - 5; y <= cy + 5; y++) for (let x = cx - 5; x <= cx + 5; x++) if ((x - cx) ** 2 + (y - cy) ** 2 <= 25) data[y * W + x] = afresh ? k + 1 : (t * 16 + k) % 255 + 1;
      }
    }
    const file = path.join(tmpDir('scattered'), `${afresh ? 'tiled' : 'relabelled'}.tif`);
    fs.writeFileSync(file, littleEndianTiff([[256, 4, W], [257, 4, W], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, W], [279, 4, W * W], [339, 3, 1]], data));
    return file;
  };
  const build = async (file: string) => {
    const warnings: [string, unknown][] = [];
    const sink = new MemorySink();
    await buildPyramid([{ source: maskSource(file) }], { maxZoom: 2, workers: 1, maskFeatures: 'label' }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    return { warnings, sink };
  };

  it('warns that its labels lie in pieces far apart, each label one feature of all its pieces (--mask-features label)', async () => {
    const { warnings, sink } = await build(mask(true));
    const file = path.join(path.dirname(String((warnings[0]?.[1] as { file?: string } | undefined)?.file)), 'tiled.tif');
    expect(warnings).toEqual([[
      `${file}: 16 of 16 labels are each in pieces far apart (label 1: 16 pieces across 1,211 × 1,211 px, 1,296 px in all): was the mask segmented tile by tile and numbered afresh in each? A label is one feature: one id and one hover card for all its pieces; build with --mask-features piece for a feature per piece (its label kept as a property), or number each object once across the mask (scikit-image: measure.label)`,
      { event: 'mask-scattered', file, labels: 16, of: 16, label: 1, pieces: 16, width: 1211, height: 1211, area: 1296, readAs: 'label' },
    ]]);
    // As it says: feature 1 of the finest tiles is the 16 cells numbered 1, one in each tile of the segmentation.
    const centres = new Set<string>();
    for (const [name, bytes] of sink.files) {
      const m = /^2\/(\d+)\/(\d+)\.pbf$/.exec(name);
      if (!m) continue;
      for (const f of decodePbf(bytes, 2048, 2, Number(m[1]), Number(m[2]))) {
        if (f.id !== 1) continue;
        for (const ring of f.rings) {
          const xs = ring.map((p) => p[0]), ys = ring.map((p) => p[1]);
          centres.add(`${Math.floor((Math.min(...xs) + Math.max(...xs)) / 2)},${Math.floor((Math.min(...ys) + Math.max(...ys)) / 2)}`);
        }
      }
    }
    expect([...centres].sort()).toEqual(Array.from({ length: 16 }, (_, t) => `${(t % 4) * 400 + 50},${Math.floor(t / 4) * 400 + 50}`).sort());
  });

  it('says nothing of the same cells numbered once across the mask', async () => {
    const { warnings } = await build(mask(false));
    expect(warnings).toEqual([]);
  });
});

describe('a memory budget the workers would pass', () => {
  const MIB = 1024 ** 2;
  const text = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [10, 10] } }] });
  const build = async (options: Record<string, unknown>) => {
    const warnings: [string, unknown][] = [];
    const report = await buildPyramid([{ source: memorySource('cells.json', text) }], { imageSize: '2048,2048', maxZoom: 1, ...options }, { sink: new MemorySink(), onWarning: (m, d) => warnings.push([m, d]) });
    return { workers: report.run.workers, warnings };
  };

  it('is warned of before the build, naming the budget its workers need; by default they are as many as the budget carries', async () => {
    expect(await build({ memoryBudget: '256M', workers: 2 })).toEqual({
      workers: 2,
      warnings: [['--memory-budget 256M is below what a build with 2 workers may need, about 550 MiB: Node and 2 workers took up to about 385 MiB on a whole slide (less on a small input), with records up to 3/10 of the budget on top; give --memory-budget 550M or more, or fewer --workers (1 needs about 393 MiB)',
        { event: 'memory-budget', budget: 256 * MIB, workers: 2, needed: 550 * MIB, carried: 0 }]],
    });
    // Not given, the workers are as many as the budget carries, one at the least: here one, which still needs more.
    expect(await build({ memoryBudget: '256M' })).toEqual({
      workers: 1,
      warnings: [['--memory-budget 256M is below what a build with 1 worker may need, about 393 MiB: Node and 1 worker took up to about 275 MiB on a whole slide (less on a small input), with records up to 3/10 of the budget on top; give --memory-budget 393M or more',
        { event: 'memory-budget', budget: 256 * MIB, workers: 1, needed: Math.ceil(275 * MIB * 10 / 7), carried: 0 }]],
    });
    expect((await build({ memoryBudget: '768M', workers: 4 })).warnings.map(([m]) => m)).toEqual([
      '--memory-budget 768M is below what a build with 4 workers may need, about 865 MiB: Node and 4 workers took up to about 605 MiB on a whole slide (less on a small input), with records up to 3/10 of the budget on top; give --memory-budget 865M or more, or fewer --workers (768M carries 3)',
    ]);
    expect(await build({ memoryBudget: '550M', workers: 2 })).toEqual({ workers: 2, warnings: [] });
  });

  it('is warned of by plan too, which runs workers to parse', async () => {
    const warnings: string[] = [];
    await planShardedBuild([{ source: memorySource('cells.json', text) }], { out: path.join(tmpDir('mudm-plan-budget'), 'out'), imageSize: '2048,2048', memoryBudget: 256 * MIB, workers: 2 }, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([expect.stringMatching(/^--memory-budget 256M is below what a build with 2 workers may need, about 550 MiB: /)]);
  });
});
