// QuPath input and dotted fields, unit by unit: normalisation of 0.2-0.6 shapes, class colours, nuclei, field paths, statistics.
import { describe, expect, it } from 'vitest';
import type { Feature } from '../../src/model/feature.js';
import type { Issue } from '../../src/validate/issue.js';
import { fieldPath, fieldValue, forEachField } from '../../src/model/fields.js';
import { assignPlane, describeFields, layerOf, mergeStats, observeFeature, type LayerStats } from '../../src/stages/assign.js';
import { classColour, colourHex, normaliseQuPath, nucleusOf } from '../../src/stages/qupath.js';

const square = { type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]] } as const;
const feature = (extra: Record<string, unknown>) => ({ type: 'Feature', geometry: square, ...extra }) as Record<string, unknown>;

describe('normaliseQuPath', () => {
  it('leaves plain GeoJSON alone, even with QuPath-like member names', () => {
    const plain = feature({ id: 3, properties: { measurements: [{ name: 'a', value: 1 }], classification: { names: ['A', 'B'] }, object: 1 } });
    const before = JSON.stringify(plain);
    normaliseQuPath(plain);
    expect(JSON.stringify(plain)).toBe(before);
  });

  it('0.4+: adds the full name of a derived class, turns non-finite measurement strings into null', () => {
    const f = feature({
      id: 'u1',
      properties: { objectType: 'cell', classification: { names: ['Tumor', 'Positive'], color: [220, 60, 40] }, measurements: { 'Cell: Area': 50, 'Nucleus: Circularity': 'NaN', x: 'Infinity' } },
    });
    normaliseQuPath(f);
    expect(f).toEqual(feature({
      id: 'u1',
      properties: { objectType: 'cell', classification: { name: 'Tumor: Positive', names: ['Tumor', 'Positive'], color: [220, 60, 40] }, measurements: { 'Cell: Area': 50, 'Nucleus: Circularity': null, x: null } },
    }));
  });

  it('0.3: object_type becomes objectType in place; a list of {name, value} becomes an object', () => {
    const f = feature({ properties: { isLocked: false, object_type: 'detection', measurements: [{ name: 'Area', value: 2.5 }, { name: 'DAB: Mean', value: 0.1 }] } });
    normaliseQuPath(f);
    expect(Object.keys(f.properties as object)).toEqual(['isLocked', 'objectType', 'measurements']);
    expect(f.properties).toEqual({ isLocked: false, objectType: 'detection', measurements: { Area: 2.5, 'DAB: Mean': 0.1 } });
  });

  it('0.2: the type held in the id becomes objectType and the id goes; a derived class is named through parentClass', () => {
    const f = feature({
      id: 'PathCellObject',
      properties: { classification: { parentClass: { name: 'Tumor', colorRGB: -3670016 }, name: 'Negative', colorRGB: -9539876 } },
    });
    normaliseQuPath(f);
    expect(f.id).toBeUndefined();
    expect(f.properties).toEqual({ objectType: 'cell', classification: { parentClass: { name: 'Tumor', colorRGB: -3670016 }, name: 'Tumor: Negative', colorRGB: -9539876 } });
    const bare = feature({ id: 'PathAnnotationObject', properties: null });
    normaliseQuPath(bare);
    expect(bare.properties).toEqual({ objectType: 'annotation' });
  });

  it('keeps the first value of a name an old measurement list gives twice, as of two fields of one name, and says so', () => {
    const f = feature({ properties: { objectType: 'cell', measurements: [{ name: 'Area', value: 2.5 }, { name: 'DAB: Mean', value: 0.1 }, { name: 'Area', value: 'NaN' }, { name: 'DAB: Mean', value: 0.2 }, { name: '__proto__', value: 1 }] } });
    const found: Issue[] = [];
    normaliseQuPath(f, found);
    // A later "NaN" erased an earlier number; a name of the data's own stays a measurement, not the object's prototype.
    expect(f.properties).toEqual({ objectType: 'cell', measurements: JSON.parse('{"Area": 2.5, "DAB: Mean": 0.1, "__proto__": 1}') });
    expect(Object.keys((f.properties as { measurements: object }).measurements)).toEqual(['Area', 'DAB: Mean', '__proto__']);
    expect(found).toEqual([{ code: 'measurement-name-repeated', severity: 'warning', path: '/properties/measurements/2',
      message: 'measurement name "Area" is given 2 times in the list: tiles keep the first value, 2.5, not the last, "NaN"; repeated too: "DAB: Mean"' }]);
    const once: Issue[] = [];
    normaliseQuPath(feature({ properties: { objectType: 'cell', measurements: [{ name: 'Area', value: 2.5 }] } }), once);
    expect(once).toEqual([]);
  });

  it('keeps a measurement list that is not of {name, value} entries as it is', () => {
    const f = feature({ properties: { objectType: 'cell', measurements: [1, 2] } });
    normaliseQuPath(f);
    expect((f.properties as Record<string, unknown>).measurements).toEqual([1, 2]);
  });
});

describe('class colours', () => {
  it('reads [r, g, b], [r, g, b, a], packed ARGB integers and #rrggbb; rejects the rest', () => {
    expect(colourHex([200, 0, 0])).toBe('#c80000');
    expect(colourHex([1, 2, 3, 128])).toBe('#010203');
    expect(colourHex(-3670016)).toBe('#c80000');
    expect(colourHex(0x00ff00)).toBe('#00ff00');
    expect(colourHex('#A0B1C2')).toBe('#a0b1c2');
    for (const bad of [[256, 0, 0], [1, 2], [1.5, 2, 3], 'red', null, undefined, {}]) expect(colourHex(bad)).toBeUndefined();
  });

  it('gives the class name and colour of a classified feature', () => {
    expect(classColour({ classification: { name: 'Stroma', color: [150, 200, 150] } })).toEqual({ value: 'Stroma', colour: '#96c896' });
    expect(classColour({ classification: { name: 'Tumor', colorRGB: -3670016 } })).toEqual({ value: 'Tumor', colour: '#c80000' });
    expect(classColour({ classification: { name: 'Tumor' } })).toBeUndefined();
    expect(classColour({ classification: 'Tumor' })).toBeUndefined();
    expect(classColour(null)).toBeUndefined();
  });
});

describe('nucleusOf', () => {
  it('makes the nucleus a feature: its geometry, parentId the cell id, the cell class, objectType nucleus', () => {
    const nucleusGeometry = { type: 'Polygon', coordinates: [[[1, 1], [2, 1], [2, 2], [1, 1]]] };
    const cell = feature({ id: 'c1', nucleusGeometry, properties: { objectType: 'cell', classification: { name: 'Tumor' }, measurements: { a: 1 } } }) as unknown as Feature;
    expect(nucleusOf(cell)).toEqual({ type: 'Feature', geometry: nucleusGeometry, parentId: 'c1', properties: { objectType: 'nucleus', classification: { name: 'Tumor' } } });
    expect(nucleusOf(feature({ properties: {} }) as unknown as Feature)).toBeUndefined();
    expect(nucleusOf(feature({ nucleusGeometry: null, properties: {} }) as unknown as Feature)).toBeUndefined();
  });
});

describe('dotted fields', () => {
  const props = { a: { b: { c: 1 }, 'x.y': 2, list: [1, { z: 1 }] }, 'a.b': 'flat', e: {}, n: null };

  it('forEachField flattens objects at any depth, keeps arrays and nulls as values', () => {
    const seen: [string, unknown][] = [];
    forEachField(props, (name, v) => seen.push([name, v]));
    expect(seen).toEqual([['a.b.c', 1], ['a.x.y', 2], ['a.list', [1, { z: 1 }]], ['a.b', 'flat'], ['n', null]]);
  });

  it('fieldPath finds exact names first, then steps into objects at each dot', () => {
    expect(fieldPath(props, 'a.b')).toEqual(['a.b']);
    expect(fieldPath(props, 'a.b.c')).toEqual(['a', 'b', 'c']);
    expect(fieldPath(props, 'a.x.y')).toEqual(['a', 'x.y']);
    expect(fieldPath(props, 'n')).toEqual(['n']);
    expect(fieldValue(props, 'a.list')).toEqual([1, { z: 1 }]);
    for (const missing of ['a', 'e', 'a.c', 'a.b.c.d', 'toString', 'a.list.z']) expect(fieldPath(props, missing), missing).toBeUndefined();
    expect(fieldValue(null, 'a')).toBeUndefined();
  });

  it('--layer-by and --plane-field take dotted names; arrays name layers by their JSON', () => {
    const f = { type: 'Feature', geometry: null, featureClass: 'cell', properties: { classification: { name: 'Tumor' }, pos: { c: 2 }, tags: ['a'] } } as Feature;
    expect(layerOf(f, 'in', 'classification.name')).toBe('Tumor');
    expect(layerOf(f, 'in', 'featureClass')).toBe('cell');
    expect(layerOf(f, 'in', 'tags')).toBe('["a"]');
    expect(layerOf(f, 'in', 'classification')).toBe('in');
    expect(layerOf(f, 'in', 'constructor')).toBe('in');
    expect(assignPlane(f, { fixed: {}, fields: { c: 'pos.c' } }, '')).toEqual({ plane: { t: 0, c: 2, z: 0 }, dims: ['c'] });
    const bad = { ...f, properties: { pos: { c: 'two' } } } as Feature;
    expect(assignPlane(bad, { fixed: {}, fields: { c: 'pos.c' } }, '/features/0')).toMatchObject({ code: 'plane-value-invalid', path: '/features/0/properties/pos/c' });
  });
});

describe('field statistics', () => {
  it('declares dotted fields with ranges and enums, arrays as String, and the class colours as fieldcolors', () => {
    const a: LayerStats = {}, b: LayerStats = {};
    const cell = (name: string, color: number[], area: number) => ({
      type: 'Feature', geometry: null, properties: { classification: { name, color }, measurements: { 'Cell: Area': area }, tags: [1] },
    }) as Feature;
    observeFeature(a, 'cells', cell('Tumor', [200, 0, 0], 10));
    observeFeature(a, 'cells', cell('Tumor', [0, 0, 0], 30)); // a second colour for a class: the first seen wins
    observeFeature(b, 'cells', cell('Stroma', [150, 200, 150], 5));
    mergeStats(a, b);
    const d = describeFields(a.cells);
    expect(d.fields).toEqual({ 'classification.color': 'String', 'classification.name': 'String', 'measurements.Cell: Area': 'Number', tags: 'String' });
    expect(d.fieldranges).toEqual({ 'measurements.Cell: Area': [5, 30] });
    expect(d.fieldenums).toEqual({ 'classification.name': ['Stroma', 'Tumor'] });
    expect(d.fieldcolors).toEqual({ 'classification.name': { Stroma: '#96c896', Tumor: '#c80000' } });
    expect(d.fielddescriptions).toEqual({ 'classification.color': 'arrays are JSON-encoded strings in PBF tiles', tags: 'arrays are JSON-encoded strings in PBF tiles' });
  });
});
