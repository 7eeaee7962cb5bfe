// Tests of the model helpers: bbox and centroid over inline 3D coordinates, vocabulary resolution.
import { describe, expect, it } from 'vitest';
import { bbox, centroid } from '../../src/model/measure.js';
import { resolveVocabularies } from '../../src/model/vocabulary.js';
import type { Geometry } from '../../src/model/geometry.js';

describe('bbox and centroid', () => {
  it('cover 2D and 3D positions of every geometry kind', () => {
    const poly: Geometry = { type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 2], [0, 2], [0, 0]]] };
    expect(bbox(poly)).toEqual([0, 0, 0, 4, 2, 0]);
    expect(centroid(poly)).toEqual([2, 1, 0]);
    const tin: Geometry = { type: 'TIN', coordinates: [[[[0, 0, 1], [3, 0, 1], [0, 3, 4], [0, 0, 1]]]] };
    expect(bbox(tin)).toEqual([0, 0, 1, 3, 3, 4]);
    expect(centroid(tin)).toEqual([1, 1, 2]);
    const gc: Geometry = { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [-1, 5] }, poly] };
    expect(bbox(gc)).toEqual([-1, 0, 0, 4, 5, 0]);
  });

  it('yield null for a mesh held only by tiles, empty coordinates and null geometry', () => {
    expect(bbox({ type: 'PolyhedralSurface', tiles: ['a/b'] })).toBeNull();
    expect(centroid({ type: 'TIN', tiles: ['t1'] })).toBeNull();
    expect(bbox({ type: 'MultiPoint', coordinates: [] })).toBeNull();
    expect(bbox(null)).toBeNull();
    expect(bbox({ type: 'GeometryCollection', geometries: [] })).toBeNull();
  });
});

describe('resolveVocabularies', () => {
  const term = (uri: string) => ({ terms: { a: { uri } } });
  it('merges per property name, the feature winning', () => {
    expect(resolveVocabularies({ cls: term('f') }, { cls: term('c'), other: term('o') })).toEqual({ cls: term('f'), other: term('o') });
  });
  it('takes the collection when the feature has none, and a feature URI over everything', () => {
    expect(resolveVocabularies(undefined, { cls: term('c') })).toEqual({ cls: term('c') });
    expect(resolveVocabularies('https://example.org/v.json', { cls: term('c') })).toBe('https://example.org/v.json');
  });
});
