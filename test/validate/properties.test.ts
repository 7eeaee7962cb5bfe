// Property tests: the validator never throws on any JSON, accepts every generated valid geometry, and rejects bad positions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CollectionValidator, validateCollectionMembers, validateDescriptor, validateDocument, validateFeature, validateGeometry,
  validateMultiscale, validateVocabularies,
} from '../../src/validate/index.js';
import { errors } from './helpers.js';

const RUNS = { numRuns: 300 };

/** Every public entry point, on one value; none may throw. */
function validateEverywhere(value: unknown): void {
  validateDocument(value);
  validateFeature(value, '/f');
  validateGeometry(value, '/g');
  validateMultiscale(value, '/m');
  validateVocabularies(value, '/v');
  validateVocabularies(value, '/v', false);
  validateDescriptor(value);
  validateCollectionMembers(value as Record<string, unknown>);
  const v = new CollectionValidator();
  v.feature(value, 0);
  v.end(value as Record<string, unknown>);
}

// Member names the validators read, plus names that are dangerous in JavaScript objects.
const MEMBER_NAMES = [
  'type', 'geometry', 'properties', 'id', 'ref', 'parentId', 'featureClass', 'vocabularies', 'multiscale', 'bbox', 'coordinates',
  'geometries', 'tiles', 'radius', 'features', 'provenance', 'axes', 'coordinateTransformations', 'transformationMatrix', 'name',
  'unit', 'scale', 'translation', 'terms', 'uri', 'URI', 'correction', 'tilejson', 'vector_layers', 'fields', 'fieldranges',
  'fieldenums', 'fielddescriptions', 'bounds', 'center', 'minzoom', 'maxzoom', 'assets', 'role', 'href', 'scale_factor',
  '__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype',
];
const TYPE_NAMES = ['Feature', 'FeatureCollection', 'Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon',
  'PolyhedralSurface', 'TIN', 'GeometryCollection', 'Image', 'StitchingVector', 'identity', 'scale', 'translation', 'String'];

/**
 * JSON text of an object with the given members, parsed back: this is how `__proto__` becomes an own data member,
 * exactly as it does when the pipeline parses a file.
 */
function objectFromEntries(entries: ReadonlyArray<readonly [string, unknown]>): unknown {
  return JSON.parse(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`);
}

/** Objects shaped like data-model documents: known member names and types, random values, nested a few levels. */
const shaped: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(...TYPE_NAMES),
    fc.array(tie('node'), { maxLength: 5 }),
    fc.array(fc.tuple(fc.constantFrom(...MEMBER_NAMES), tie('node')), { maxLength: 8 }).map(objectFromEntries),
    fc.record({ type: fc.constantFrom(...TYPE_NAMES), coordinates: tie('node'), geometries: tie('node') }, { requiredKeys: ['type'] }),
  ),
})).node;

const featureLike = fc.record({
  type: fc.oneof(fc.constant('Feature'), fc.jsonValue({ maxDepth: 1 })),
  geometry: fc.oneof(shaped, fc.constant(null)),
  properties: fc.oneof(shaped, fc.record({ type: fc.constantFrom('Image', 'Cell'), URI: fc.jsonValue({ maxDepth: 1 }), correction: shaped }, { requiredKeys: [] })),
  id: fc.jsonValue({ maxDepth: 1 }),
  ref: fc.jsonValue({ maxDepth: 1 }),
  parentId: fc.jsonValue({ maxDepth: 1 }),
  featureClass: fc.jsonValue({ maxDepth: 1 }),
  vocabularies: shaped,
  multiscale: shaped,
  bbox: shaped,
}, { requiredKeys: [] });

describe('never throws', () => {
  it('on arbitrary JSON values', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => { validateEverywhere(value); }), { numRuns: 500 });
  });
  it('on objects shaped like documents, with hostile member names', () => {
    fc.assert(fc.property(shaped, (value) => { validateEverywhere(value); }), { numRuns: 1000 });
  });
  it('on feature-like objects with random members', () => {
    fc.assert(fc.property(featureLike, (value) => {
      validateEverywhere(value);
      validateEverywhere({ type: 'FeatureCollection', features: [value, value], properties: { type: 'StitchingVector' } });
    }), { numRuns: 1000 });
  });
  it('on values JSON cannot hold', () => {
    for (const v of [undefined, NaN, Infinity, 10n, Symbol('s'), () => 1, new Date(0), Object.create(null), new Map()]) validateEverywhere(v);
  });
});

// Valid geometry generators: finite coordinates, every ring closed and long enough, meshes 3D.
const coord = fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true });
const pos2 = fc.tuple(coord, coord);
const pos3 = fc.tuple(coord, coord, coord);
const closedRing = (pos: fc.Arbitrary<number[]>, minVertices: number, maxVertices: number) =>
  fc.array(pos, { minLength: minVertices, maxLength: maxVertices }).map((vs) => [...vs, [...vs[0]]]);
const polygonOf = (pos: fc.Arbitrary<number[]>) => fc.array(closedRing(pos, 3, 8), { minLength: 1, maxLength: 3 });
const anyPos = fc.oneof(pos2, pos3);

function simpleGeometry(pos: fc.Arbitrary<number[]>): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof(
    pos.map((c) => ({ type: 'Point', coordinates: c })),
    fc.array(pos, { maxLength: 6 }).map((c) => ({ type: 'MultiPoint', coordinates: c })),
    fc.array(pos, { minLength: 2, maxLength: 8 }).map((c) => ({ type: 'LineString', coordinates: c })),
    fc.array(fc.array(pos, { minLength: 2, maxLength: 6 }), { maxLength: 4 }).map((c) => ({ type: 'MultiLineString', coordinates: c })),
    polygonOf(pos).map((c) => ({ type: 'Polygon', coordinates: c })),
    fc.array(polygonOf(pos), { minLength: 1, maxLength: 3 }).map((c) => ({ type: 'MultiPolygon', coordinates: c })),
  );
}
const tiles = fc.array(fc.string(), { maxLength: 4 });
const mesh = fc.oneof(
  fc.array(polygonOf(pos3), { minLength: 1, maxLength: 5 }).map((c) => ({ type: 'PolyhedralSurface', coordinates: c })),
  fc.array(closedRing(pos3, 3, 3).map((r) => [r]), { minLength: 1, maxLength: 8 }).map((c) => ({ type: 'TIN', coordinates: c })),
  fc.tuple(fc.constantFrom('PolyhedralSurface', 'TIN'), tiles, fc.boolean()).map(([type, t, empty]) => (empty ? { type, tiles: t, coordinates: [] } : { type, tiles: t })),
);
const dimensionally = <T>(f: (pos: fc.Arbitrary<number[]>) => fc.Arbitrary<T>) => fc.oneof(f(pos2), f(pos3));
const validGeometry: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  dimensionally(simpleGeometry),
  mesh,
  fc.array(fc.oneof(dimensionally(simpleGeometry), mesh), { maxLength: 4 }).map((g) => ({ type: 'GeometryCollection', geometries: g })),
);

describe('valid geometries', () => {
  it('validate with no error, bare and inside a feature', () => {
    fc.assert(fc.property(validGeometry, (g) => {
      expect(errors(validateGeometry(g, ''))).toEqual([]);
      expect(errors(validateFeature({ type: 'Feature', geometry: g, properties: null }))).toEqual([]);
    }), RUNS);
  });
  it('validate with no warning either, as they are neither mixed nor nested (but for random holes beyond their exteriors)', () => {
    fc.assert(fc.property(dimensionally(simpleGeometry), (g) => {
      expect(validateGeometry(g, '').filter((i) => i.code !== 'hole-outside-exterior')).toEqual([]);
    }), RUNS);
  });
});

describe('bad positions', () => {
  const badPosition = fc.oneof(fc.tuple(coord), fc.tuple(coord, coord, coord, coord));
  it('a position of 1 or 4 numbers anywhere always gives a position-length error at its path', () => {
    fc.assert(fc.property(dimensionally(simpleGeometry), badPosition, fc.nat(), (g, bad, pick) => {
      // Replace one position (chosen by `pick`) with the bad one, remembering its JSON Pointer.
      const slots: Array<{ parent: unknown[]; index: number; path: string }> = [];
      const walk = (node: unknown, path: string, parent: unknown[] | null, index: number) => {
        if (!Array.isArray(node)) return;
        if (node.length > 0 && typeof node[0] === 'number') {
          if (parent) slots.push({ parent, index, path });
          return;
        }
        node.forEach((child, i) => walk(child, `${path}/${i}`, node, i));
      };
      const holder = [g.coordinates];
      walk(g.coordinates, '/coordinates', holder, 0);
      fc.pre(slots.length > 0);
      const slot = slots[pick % slots.length];
      slot.parent[slot.index] = bad;
      if (slot.parent === holder) g.coordinates = bad;
      const issues = validateGeometry(g, '');
      expect(errors(issues).length).toBeGreaterThan(0);
      expect(issues.some((i) => i.code === 'position-length' && i.path === slot.path && i.severity === 'error')).toBe(true);
    }), RUNS);
  });
  it('a Point of 1 or 4 numbers is an error, in any feature', () => {
    fc.assert(fc.property(badPosition, anyPos, (bad, good) => {
      expect(validateGeometry({ type: 'Point', coordinates: good }, '')).toEqual([]);
      expect(errors(validateFeature({ type: 'Feature', geometry: { type: 'Point', coordinates: bad } })).map((i) => i.code)).toEqual(['position-length']);
    }), RUNS);
  });
});
