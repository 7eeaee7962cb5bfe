// The field names gathered for a --fields name no feature has: those the descriptor and forEachField give, bounded.
import { describe, expect, it } from 'vitest';
import { forEachField } from '../../src/model/fields.js';
import type { Feature } from '../../src/model/feature.js';
import { FieldNames } from '../../src/stages/field-names.js';

const feature = (over: Partial<Feature>): Feature => ({ type: 'Feature', geometry: { type: 'Point', coordinates: [1, 2] }, properties: null, ...over });

describe('FieldNames', () => {
  it('names fields as forEachField does, members carried as tags by their names, each once', () => {
    const props = { objectType: 'cell', classification: { name: 'Tumor', color: [1, 2, 3] }, measurements: { 'Cell: Area': 1, inner: { 'a.b': 2 } }, empty: {}, 'x.y': null };
    const names = new FieldNames(100);
    names.add(feature({ id: 'c1', featureClass: 'cell', properties: props }));
    names.add(feature({ id: 7, parentId: 3, properties: { objectType: 'cell' } }));
    const walked: string[] = [];
    forEachField(props, (n) => walked.push(n));
    expect(names.names().sort()).toEqual([...walked, 'id', 'featureClass', 'parentId'].sort());
  });

  it('keeps a name that is a field in one feature and an object in another, as both', () => {
    const names = new FieldNames(100);
    names.add(feature({ properties: { a: 1 } }));
    names.add(feature({ properties: { a: { b: 2 } } }));
    expect(names.names()).toEqual(['a', 'a.b']);
  });

  it('holds at most the number of names it is given', () => {
    const names = new FieldNames(3);
    names.add(feature({ properties: { a: 1, b: { c: 2, d: 3 }, e: 4 }, featureClass: 'x' }));
    // Full, it holds no object met after either (its tree's root: a, b).
    names.add(feature({ properties: { f: { g: 5 }, b: { h: 6 } } }));
    expect([names.names(), (names as unknown as { root: Map<string, unknown> }).root.size]).toEqual([['a', 'b.c', 'b.d'], 2]);
  });
});
