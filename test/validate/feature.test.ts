// Unit tests of Feature and FeatureCollection validation: members, Image features, StitchingVector, streaming.
import { describe, expect, it } from 'vitest';
import {
  CollectionValidator, validateCollectionMembers, validateDocument, validateFeature, type Issue,
} from '../../src/validate/index.js';
import { codes, expectOne, expectSome } from './helpers.js';

const cell = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]];
const feature = (extra: Record<string, unknown> = {}) => ({
  type: 'Feature', id: 1, geometry: { type: 'Polygon', coordinates: [cell] }, properties: { label: 1 }, ...extra,
});
const rect = (x0: number, y0: number, x1: number, y1: number) => [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]];
const image = (props: Record<string, unknown> = {}, geometry: unknown = { type: 'Polygon', coordinates: [rect(0, 0, 100, 50)] }) => ({
  type: 'Feature', geometry, properties: { type: 'Image', URI: 'a.tif', ...props },
});

describe('validateFeature: valid features', () => {
  it('accepts the members of spec 2.1', () => {
    expect(validateFeature(feature({
      id: 'c-1', ref: 'zarr://store/1', parentId: 7, featureClass: 'cell',
      vocabularies: { cellType: { terms: { T: { uri: 'http://x/T' } } } },
      bbox: [0, 0, 10, 10],
      multiscale: { axes: [{ name: 'x' }, { name: 'y' }] },
    }))).toEqual([]);
  });
  it('accepts null geometry, no properties, null properties, integer ids', () => {
    expect(validateFeature({ type: 'Feature', geometry: null })).toEqual([]);
    expect(validateFeature({ type: 'Feature', geometry: null, properties: null, id: -3, ref: 0, parentId: 'p' })).toEqual([]);
  });
  it('accepts Image features, rectangles drawn in either direction, with a correction', () => {
    expect(validateFeature(image())).toEqual([]);
    expect(validateFeature(image({ correction: [0.5, -2] }, { type: 'Polygon', coordinates: [[[0, 0], [0, 50], [100, 50], [100, 0], [0, 0]]] }))).toEqual([]);
    expect(validateFeature(image({}, { type: 'Polygon', coordinates: [[[10, 10, 0], [10, 60, 0], [110, 60, 0], [110, 10, 0], [10, 10, 0]]] }))).toEqual([]);
  });
});

describe('validateFeature: errors', () => {
  it('feature-not-object', () => {
    expectOne(validateFeature(null), 'feature-not-object', '', 'feature must be an object, found null');
    expectOne(validateFeature([feature()], '/features/2'), 'feature-not-object', '/features/2', 'found [{"type":"Feature"');
  });
  it('feature-type-invalid', () => {
    expectOne(validateFeature({ ...feature(), type: 'feature' }), 'feature-type-invalid', '/type', 'Feature type must be "Feature", found "feature"');
    const { type: _t, ...untyped } = feature();
    expectOne(validateFeature(untyped, '/features/0'), 'feature-type-invalid', '/features/0', 'found no type');
  });
  it('feature-geometry-missing (spec 7.4)', () => {
    expectOne(validateFeature({ type: 'Feature', properties: {} }), 'feature-geometry-missing', '',
      'Feature must have a geometry member (a geometry object or null), found none');
  });
  it('geometry-not-object for a feature geometry', () => {
    expectOne(validateFeature(feature({ geometry: 'POINT (1 2)' })), 'geometry-not-object', '/geometry',
      'Feature geometry must be an object or null, found "POINT (1 2)"');
    expectOne(validateFeature(feature({ geometry: [] })), 'geometry-not-object', '/geometry', 'found []');
  });
  it('id-type, ref-type, parent-id-type', () => {
    expectOne(validateFeature(feature({ id: 1.5 })), 'id-type', '/id', 'id must be a string or an integer, found 1.5');
    expectOne(validateFeature(feature({ id: true })), 'id-type', '/id', 'found true');
    expectOne(validateFeature(feature({ id: null })), 'id-type', '/id', 'found null');
    expectOne(validateFeature(feature({ ref: { uri: 'x' } })), 'ref-type', '/ref', 'ref must be a string or an integer, found {"uri":"x"}');
    expectOne(validateFeature(feature({ parentId: [1] }), '/features/9'), 'parent-id-type', '/features/9/parentId',
      'parentId must be a string or an integer, found [1]');
  });
  it('feature-class-type', () => {
    expectOne(validateFeature(feature({ featureClass: 3 })), 'feature-class-type', '/featureClass', 'featureClass must be a string, found 3');
  });
  it('properties-type', () => {
    expectOne(validateFeature(feature({ properties: 'cell' })), 'properties-type', '/properties', 'properties must be an object or null, found "cell"');
    expectOne(validateFeature(feature({ properties: [1] })), 'properties-type', '/properties', 'found [1]');
  });
  it('image-uri-invalid', () => {
    expectOne(validateFeature(image({ URI: undefined })), 'image-uri-invalid', '/properties',
      'Image feature must have a string properties.URI, found none');
    expectOne(validateFeature(image({ URI: 5 })), 'image-uri-invalid', '/properties/URI', 'found 5');
  });
  it('image-geometry-not-polygon', () => {
    expectOne(validateFeature(image({}, { type: 'Point', coordinates: [1, 2] })), 'image-geometry-not-polygon', '/geometry',
      'Image feature geometry must be a Polygon (its pixel extent), found "Point"');
    expectOne(validateFeature(image({}, null)), 'image-geometry-not-polygon', '/geometry', 'found null');
  });
  it('image-not-rectangle', () => {
    const trapezoid = [[0, 0], [100, 0], [90, 50], [10, 50], [0, 0]];
    expectOne(validateFeature(image({}, { type: 'Polygon', coordinates: [trapezoid] })), 'image-not-rectangle', '/geometry/coordinates/0',
      'Image feature outer ring must be an axis-aligned rectangle of 5 positions, found [[0,0],[100,0],[90,50],[10,50],[0,0]]');
    const zeroWidth = [[0, 0], [0, 0], [0, 50], [0, 50], [0, 0]];
    expectOne(validateFeature(image({}, { type: 'Polygon', coordinates: [zeroWidth] })), 'image-not-rectangle', '/geometry/coordinates/0');
    const sixPositions = [[0, 0], [50, 0], [100, 0], [100, 50], [0, 50], [0, 0]];
    expectOne(validateFeature(image({}, { type: 'Polygon', coordinates: [sixPositions] })), 'image-not-rectangle', '/geometry/coordinates/0');
    expectOne(validateFeature(image({}, { type: 'Polygon', coordinates: [] })), 'image-not-rectangle', '/geometry/coordinates', 'found []');
  });
  it('a broken Image polygon is reported once, by the geometry rule', () => {
    expect(codes(validateFeature(image({}, { type: 'Polygon', coordinates: [[[0, 0], [100, 0], [100, 50], [0, 50]]] })))).toEqual(['ring-not-closed']);
  });
  it('image-correction-invalid', () => {
    expectOne(validateFeature(image({ correction: [1, 2, 3] })), 'image-correction-invalid', '/properties/correction',
      'Image feature properties.correction must be 2 numbers [x, y], found [1,2,3]');
    expectOne(validateFeature(image({ correction: { x: 1 } })), 'image-correction-invalid', '/properties/correction');
  });
  it('vocabularies, multiscale and bbox of a feature are validated with the feature path', () => {
    expectOne(validateFeature(feature({ vocabularies: 3 }), '/features/1'), 'vocabularies-type', '/features/1/vocabularies');
    expectOne(validateFeature(feature({ multiscale: { axes: [{ name: 'x' }] } }), '/features/1'), 'axes-count', '/features/1/multiscale/axes');
    expectOne(validateFeature(feature({ bbox: [1] })), 'bbox-length', '/bbox');
  });
});

describe('FeatureCollection', () => {
  it('features-missing, features-not-array (spec 7.4)', () => {
    expectOne(validateDocument({ type: 'FeatureCollection' }), 'features-missing', '',
      'FeatureCollection must have features (an array, may be empty), found none');
    expectOne(validateDocument({ type: 'FeatureCollection', features: {} }), 'features-not-array', '/features',
      'FeatureCollection features must be an array, found {}');
  });
  it('collection members: type, properties, id, provenance, vocabularies, multiscale, bbox', () => {
    expectOne(validateCollectionMembers({ type: 'Featurecollection' }), 'collection-type-invalid', '/type',
      'FeatureCollection type must be "FeatureCollection", found "Featurecollection"');
    expectOne(validateCollectionMembers({}), 'collection-type-invalid', '', 'found no type');
    expectOne(validateCollectionMembers({ type: 'FeatureCollection', properties: 1 }), 'properties-type', '/properties');
    expectOne(validateCollectionMembers({ type: 'FeatureCollection', id: 2.5 }), 'id-type', '/id');
    expectOne(validateCollectionMembers({ type: 'FeatureCollection', provenance: 'run-1' }), 'provenance-type', '/provenance',
      'provenance must be an object, found "run-1"');
    expectOne(validateCollectionMembers({ type: 'FeatureCollection', vocabularies: { a: { terms: { b: {} } } } }), 'term-uri-missing', '/vocabularies/a/terms/b');
    expectOne(validateCollectionMembers({ type: 'FeatureCollection', multiscale: {} }), 'axes-missing', '/multiscale');
    expectOne(validateCollectionMembers({ type: 'FeatureCollection', bbox: [0, 0, 1] }), 'bbox-length', '/bbox');
    expect(validateCollectionMembers({ type: 'FeatureCollection', provenance: { mudmId: 'x' }, properties: null, vocabularies: 'http://v' })).toEqual([]);
  });
  it('validateCollectionMembers never throws on a non-object', () => {
    expect(codes(validateCollectionMembers(null as unknown as Record<string, unknown>))).toEqual(['document-not-object']);
  });
  it('feature paths inside a collection', () => {
    const issues = validateDocument({ type: 'FeatureCollection', features: [feature(), feature({ id: 0.5 }), 7] });
    expect(issues.map((i) => [i.code, i.path])).toEqual([['id-type', '/features/1/id'], ['feature-not-object', '/features/2']]);
  });
});

describe('StitchingVector', () => {
  const members = { type: 'FeatureCollection', properties: { type: 'StitchingVector' } };

  it('accepts a collection of Image features', () => {
    expect(validateDocument({ ...members, features: [image(), image({ URI: 'b.tif' })] })).toEqual([]);
  });

  it('stitching-vector-not-image names what was found', () => {
    const issues = validateDocument({ ...members, features: [image(), feature(), { type: 'Feature', geometry: null }, feature({ properties: { type: 'Cell' } })] });
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['stitching-vector-not-image', '/features/1'], ['stitching-vector-not-image', '/features/2'], ['stitching-vector-not-image', '/features/3'],
    ]);
    expect(issues[0].message).toBe('every feature of a StitchingVector must be an Image feature (properties.type "Image"), found no properties.type');
    expect(issues[1].message).toContain('found no properties');
    expect(issues[2].message).toContain('found properties.type "Cell"');
  });

  it('works when properties come after features (streaming), keeping only a bounded list', () => {
    const v = new CollectionValidator();
    const all: Issue[] = [];
    for (let i = 0; i < 1000; i++) all.push(...v.feature(i % 2 === 0 ? image() : feature(), i));
    expect(all).toEqual([]);
    const end = v.end(members);
    expect(end).toHaveLength(101);
    expect(end.every((i) => i.code === 'stitching-vector-not-image')).toBe(true);
    expect(end[0].path).toBe('/features/1');
    expect(end[99].path).toBe('/features/199');
    expect(end[100]).toMatchObject({ path: '/features', message: 'every feature of a StitchingVector must be an Image feature, found 400 more that are not' });
    const kept = (v as unknown as { offenders: unknown[] }).offenders;
    expect(kept.length).toBe(100);
  });

  it('says nothing about non-Image features in an ordinary collection', () => {
    const v = new CollectionValidator();
    v.feature(feature(), 0);
    expect(v.end({ type: 'FeatureCollection', properties: { type: 'Tile' } })).toEqual([]);
  });

  it('streams issues with /features/N paths and appends to a given list', () => {
    const v = new CollectionValidator();
    const out: Issue[] = [];
    expect(v.feature(feature({ featureClass: 1 }), 41, out)).toBe(out);
    expectSome(out, 'feature-class-type', '/features/41/featureClass');
    v.end({ ...members, multiscale: 'x' }, out);
    expect(codes(out)).toEqual(['feature-class-type', 'multiscale-not-object', 'stitching-vector-not-image']);
  });
});
