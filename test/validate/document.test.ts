// Unit tests of validateDocument's dispatch and of the issue helpers (pointerToken, shown, hasErrors).
import { describe, expect, it } from 'vitest';
import { hasErrors, pointerToken, shown, validateDocument } from '../../src/validate/index.js';
import { validateSource } from '../../src/validate/files.js';
import { memorySource } from '../../src/io/source.js';
import { codes, expectOne } from './helpers.js';

describe('validateDocument dispatch', () => {
  it('descriptor by tilejson, or by tiles/vector_layers without a type', () => {
    expect(codes(validateDocument({ tilejson: '3.0.0', tiles: [], vector_layers: [] }))).toEqual(['tiles-invalid']);
    expect(codes(validateDocument({ tiles: ['a'], vector_layers: [] }))).toEqual(['tilejson-missing']);
  });
  it('a data-model type wins over tilejson, a foreign member there (spec 1.1): streamed or whole, the features are checked', async () => {
    expect(validateDocument({ type: 'Feature', geometry: null, tilejson: '3.0.0' })).toEqual([]);
    expect(validateDocument({ type: 'FeatureCollection', features: [], tilejson: '3.0.0' })).toEqual([]);
    expect(codes(validateDocument({ type: 'Point', coordinates: [1], tilejson: '3.0.0' }))).toEqual(['position-length']);
    const text = '{"tilejson":"3.0.0","tiles":["t"],"vector_layers":[],"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[5]}}]}';
    const r = await validateSource(memorySource('x.json', Buffer.from(text)));
    expect([r.kind, r.features, r.invalidFeatures, r.valid]).toEqual(['collection', 1, 1, false]);
    expect((await validateSource(memorySource('d.json', Buffer.from('{"tilejson":"3.0.0","tiles":["t"],"vector_layers":[]}')))).kind).toBe('descriptor');
  });
  it('data-model objects by type', () => {
    expect(codes(validateDocument({ type: 'FeatureCollection', features: [{ type: 'Feature' }] }))).toEqual(['feature-geometry-missing']);
    expect(codes(validateDocument({ type: 'Feature', geometry: null, id: 1.5 }))).toEqual(['id-type']);
    expect(codes(validateDocument({ type: 'TIN' }))).toEqual(['mesh-no-faces']);
    expect(codes(validateDocument({ type: 'GeometryCollection' }))).toEqual(['geometries-missing']);
  });
  it('mistyped documents are judged by their members', () => {
    expect(codes(validateDocument({ type: 'Featurecollection', features: [] }))).toEqual(['collection-type-invalid']);
    expect(codes(validateDocument({ features: [] }))).toEqual(['collection-type-invalid']);
    expect(codes(validateDocument({ type: 'feature', geometry: null }))).toEqual(['feature-type-invalid']);
    expect(codes(validateDocument({ type: 'polygon', coordinates: [] }))).toEqual(['geometry-type-unknown']);
  });
  it('document-not-object and document-type-unknown', () => {
    expectOne(validateDocument(null), 'document-not-object', '', 'document must be a JSON object, found null');
    expectOne(validateDocument([]), 'document-array', '', 'build accepts it');
    expect(codes(validateDocument([{ type: 'Feature', geometry: null }, { type: 'Feature' }]))).toEqual(['document-array', 'feature-geometry-missing']);
    expect(validateDocument([{ type: 'Feature' }])[1].path).toBe('/0');
    expectOne(validateDocument({ type: 'Image' }), 'document-type-unknown', '/type', 'found "Image"');
    expectOne(validateDocument({}), 'document-type-unknown', '', 'found no type');
  });
  it('a tile with multiscale is checked as a collection', () => {
    expectOne(validateDocument({ type: 'FeatureCollection', features: [], multiscale: { axes: [{ name: 'x' }, { name: 'x' }] } }),
      'axis-name-duplicate', '/multiscale/axes/1/name');
  });
});

describe('issue helpers', () => {
  it('pointerToken escapes ~ and / (RFC 6901)', () => {
    expect(pointerToken('a/b~c')).toBe('a~1b~0c');
    expect(pointerToken('~/')).toBe('~0~1');
    expect(pointerToken('plain')).toBe('plain');
    expect(pointerToken(3)).toBe('3');
  });
  it('shown renders JSON and cuts it at 60 characters', () => {
    for (const v of [1, 'a"b', null, true, [1, [2, { a: 'x' }]], { 'k"': [] }, -0.5, 1e21]) expect(shown(v)).toBe(JSON.stringify(v));
    expect(shown(undefined)).toBe('undefined');
    expect(shown(NaN)).toBe('NaN');
    expect(shown(-Infinity)).toBe('-Infinity');
    const long = Array.from({ length: 100 }, (_, i) => i);
    expect(shown(long)).toBe(`${JSON.stringify(long).slice(0, 57)}...`);
    expect(shown('x'.repeat(1_000_000))).toBe(`"${'x'.repeat(56)}...`);
    expect(shown({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(shown(10n)).toBe('10n');
  });
  it('shown stays short and never throws on deep or hostile values', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(shown(deep)).toBe(`${'['.repeat(57)}...`);
    expect(shown({ toString: 1, valueOf: 2 })).toBe('{"toString":1,"valueOf":2}');
    expect(shown(JSON.parse('{"__proto__": [1]}'))).toBe('{"__proto__":[1]}');
    expect(shown(Object.create(null))).toBe('{}');
  });
  it('hasErrors ignores warnings', () => {
    expect(hasErrors(validateDocument({ type: 'Point', coordinates: [1, 2], radius: 3 }))).toBe(false);
    expect(hasErrors(validateDocument({ type: 'Point', coordinates: [1] }))).toBe(true);
  });
});
