// Unit tests of validateMultiscale: axes, both transformation forms, vector lengths, matrix shape and invertibility.
import { describe, expect, it } from 'vitest';
import { validateMultiscale } from '../../src/validate/index.js';
import { scaledDeterminant } from '../../src/validate/multiscale.js';
import { codes, expectOne } from './helpers.js';

const xy = [{ name: 'x', type: 'space', unit: 'micrometer' }, { name: 'y', type: 'space', unit: 'micrometer' }];
const ms = (extra: Record<string, unknown> = {}) => ({ axes: xy, ...extra });

describe('valid multiscale objects', () => {
  it('axes only, 2 to 5 axes, every type and unit', () => {
    expect(validateMultiscale(ms())).toEqual([]);
    expect(validateMultiscale({ axes: [{ name: 't', type: 'time' }, { name: 'c', type: 'channel' }, { name: 'z', unit: 'nanometer' }, { name: 'y', unit: 'pixel' }, { name: 'x', description: 'columns' }] })).toEqual([]);
  });
  it('coordinate transformations', () => {
    expect(validateMultiscale(ms({ coordinateTransformations: [{ type: 'identity' }, { type: 'scale', scale: [0.5, 0.5] }, { type: 'translation', translation: [10, -3] }] }))).toEqual([]);
  });
  it('linear and homogeneous matrices, including badly scaled but invertible ones', () => {
    expect(validateMultiscale(ms({ transformationMatrix: [[0, -1], [1, 0]] }))).toEqual([]);
    expect(validateMultiscale(ms({ transformationMatrix: [[0.5, 0, 100], [0, 0.5, 200], [0, 0, 1]] }))).toEqual([]);
    expect(validateMultiscale(ms({ transformationMatrix: [[1e-9, 0], [0, 1e9]] }))).toEqual([]);
    expect(validateMultiscale(ms({ transformationMatrix: [[1e-10, 0, 1e6], [0, 1e-10, 1e6], [0, 0, 1]] }))).toEqual([]);
  });
});

describe('multiscale errors', () => {
  it('multiscale-not-object', () => {
    expectOne(validateMultiscale('um', '/multiscale'), 'multiscale-not-object', '/multiscale', 'multiscale must be an object with axes, found "um"');
    expectOne(validateMultiscale([xy]), 'multiscale-not-object', '');
  });
  it('axes-missing, axes-not-array, axes-count (spec 7.5, 8)', () => {
    expectOne(validateMultiscale({}, '/m'), 'axes-missing', '/m', 'multiscale must have axes (2 to 5 axis objects), found none');
    expectOne(validateMultiscale({ axes: 'xy' }, '/m'), 'axes-not-array', '/m/axes', 'found "xy"');
    expectOne(validateMultiscale({ axes: [{ name: 'x' }] }, '/m'), 'axes-count', '/m/axes', 'multiscale must have 2 to 5 axes, found [{"name":"x"}] (1)');
    expectOne(validateMultiscale({ axes: 'abcdef'.split('').map((name) => ({ name })) }), 'axes-count', '/axes', '(6)');
    expectOne(validateMultiscale({ axes: [] }), 'axes-count', '/axes', 'found [] (0)');
  });
  it('axis-not-object, axis-name-invalid, axis-name-duplicate', () => {
    expectOne(validateMultiscale({ axes: ['x', { name: 'y' }] }), 'axis-not-object', '/axes/0', 'axis must be an object with a name, found "x"');
    expectOne(validateMultiscale({ axes: [{ unit: 'pixel' }, { name: 'y' }] }), 'axis-name-invalid', '/axes/0',
      'axis must have a string name, found none in {"unit":"pixel"}');
    expectOne(validateMultiscale({ axes: [{ name: 1 }, { name: 'y' }] }), 'axis-name-invalid', '/axes/0/name', 'axis name must be a string, found 1');
    expectOne(validateMultiscale({ axes: [{ name: 'x' }, { name: 'y' }, { name: 'x' }] }), 'axis-name-duplicate', '/axes/2/name',
      'axis names must be unique, found "x" again');
  });
  it('axis-type-invalid and axis-unit-invalid (spec 7.6)', () => {
    expectOne(validateMultiscale({ axes: [{ name: 'x', type: 'Space' }, { name: 'y' }] }), 'axis-type-invalid', '/axes/0/type',
      'axis type must be one of space, time, channel, found "Space"');
    const unit = expectOne(validateMultiscale({ axes: [{ name: 'x' }, { name: 'y', unit: 'um' }] }), 'axis-unit-invalid', '/axes/1/unit', 'found "um"');
    expect(unit.message).toContain('micrometer');
    expectOne(validateMultiscale({ axes: [{ name: 'x', unit: 5 }, { name: 'y' }] }), 'axis-unit-invalid', '/axes/0/unit', 'found 5');
    expectOne(validateMultiscale({ axes: [{ name: 'x', description: 5 }, { name: 'y' }] }), 'member-not-string', '/axes/0/description',
      'description must be a string, found 5');
  });
  it('transformations-both (spec 7.5)', () => {
    expectOne(validateMultiscale(ms({ coordinateTransformations: [], transformationMatrix: [[1, 0], [0, 1]] }), '/multiscale'),
      'transformations-both', '/multiscale', 'multiscale must not have both coordinateTransformations and transformationMatrix, found both');
  });
  it('transformations-not-array, transformation-not-object, transformation-type-unknown', () => {
    expectOne(validateMultiscale(ms({ coordinateTransformations: { type: 'identity' } })), 'transformations-not-array', '/coordinateTransformations',
      'coordinateTransformations must be an array, found {"type":"identity"}');
    expectOne(validateMultiscale(ms({ coordinateTransformations: [{ type: 'identity' }, 'scale'] })), 'transformation-not-object',
      '/coordinateTransformations/1', 'coordinate transformation must be an object with a type, found "scale"');
    expectOne(validateMultiscale(ms({ coordinateTransformations: [{ type: 'affine', affine: [] }] })), 'transformation-type-unknown',
      '/coordinateTransformations/0/type', 'transformation type must be identity, scale or translation, found "affine"');
    expectOne(validateMultiscale(ms({ coordinateTransformations: [{ scale: [1, 1] }] })), 'transformation-type-unknown',
      '/coordinateTransformations/0', 'found no type');
  });
  it('identity-extra-member (spec 7.5)', () => {
    expectOne(validateMultiscale(ms({ coordinateTransformations: [{ type: 'identity', scale: [1, 1], note: 'x' }] })), 'identity-extra-member',
      '/coordinateTransformations/0/scale', 'identity transformation must have no member but type, found "scale", "note"');
  });
  it('transformation-vector-invalid', () => {
    expectOne(validateMultiscale(ms({ coordinateTransformations: [{ type: 'scale' }] })), 'transformation-vector-invalid',
      '/coordinateTransformations/0', 'scale transformation must have scale: an array of numbers, one per axis, found none');
    expectOne(validateMultiscale(ms({ coordinateTransformations: [{ type: 'translation', translation: [1, '2'] }] })), 'transformation-vector-invalid',
      '/coordinateTransformations/0/translation', 'found [1,"2"]');
  });
  it('scale-length and translation-length (spec 7.5)', () => {
    expectOne(validateMultiscale(ms({ coordinateTransformations: [{ type: 'scale', scale: [0.5] }] })), 'scale-length',
      '/coordinateTransformations/0/scale', 'scale must have one number per axis (2), found [0.5] (1)');
    expectOne(validateMultiscale(ms({ coordinateTransformations: [{ type: 'translation', translation: [1, 2, 3] }] })), 'translation-length',
      '/coordinateTransformations/0/translation', 'translation must have one number per axis (2), found [1,2,3] (3)');
    // With no usable axes the length cannot be judged: only the missing axes are reported.
    expect(codes(validateMultiscale({ coordinateTransformations: [{ type: 'scale', scale: [1] }] }))).toEqual(['axes-missing']);
  });
  it('matrix-invalid', () => {
    expectOne(validateMultiscale(ms({ transformationMatrix: 'I' })), 'matrix-invalid', '/transformationMatrix',
      'transformationMatrix must be an array of rows of numbers, found "I"');
    expectOne(validateMultiscale(ms({ transformationMatrix: [[1, 0], 5] })), 'matrix-invalid', '/transformationMatrix/1',
      'transformationMatrix row must be an array of numbers, found 5');
    expectOne(validateMultiscale(ms({ transformationMatrix: [[1, 0], [0, 1, 0]] })), 'matrix-invalid', '/transformationMatrix/1',
      'transformationMatrix rows must all have 2 numbers, found [0,1,0] (3)');
    expectOne(validateMultiscale(ms({ transformationMatrix: [[1, 0], [0, null]] })), 'matrix-invalid', '/transformationMatrix/1/1',
      'transformationMatrix entries must be finite numbers, found null');
  });
  it('matrix-shape', () => {
    expectOne(validateMultiscale(ms({ transformationMatrix: [[1, 0, 0], [0, 1, 0]] })), 'matrix-shape', '/transformationMatrix',
      'transformationMatrix must be 2×2 or 3×3 for 2 axes, found 2×3');
    expectOne(validateMultiscale(ms({ transformationMatrix: [[1]] })), 'matrix-shape', '/transformationMatrix', 'found 1×1');
    expectOne(validateMultiscale(ms({ transformationMatrix: [] })), 'matrix-shape', '/transformationMatrix', 'found 0×0');
    expectOne(validateMultiscale(ms({ transformationMatrix: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]] })), 'matrix-shape',
      '/transformationMatrix', 'found 4×4');
    expect(codes(validateMultiscale({ axes: 'xy', transformationMatrix: [[1, 2, 3]] }))).toEqual(['axes-not-array', 'matrix-shape']);
  });
  it('matrix-homogeneous-row', () => {
    expectOne(validateMultiscale(ms({ transformationMatrix: [[1, 0, 5], [0, 1, 5], [0, 1, 1]] })), 'matrix-homogeneous-row',
      '/transformationMatrix/2', 'last row of a homogeneous 3×3 transformationMatrix must be 0 … 0 1, found [0,1,1]');
  });
  it('matrix-singular (spec 7.5)', () => {
    expectOne(validateMultiscale(ms({ transformationMatrix: [[1, 2], [2, 4]] })), 'matrix-singular', '/transformationMatrix',
      'transformationMatrix must be invertible, found a singular matrix [[1,2],[2,4]]');
    expectOne(validateMultiscale(ms({ transformationMatrix: [[0, 0], [0, 1]] })), 'matrix-singular', '/transformationMatrix');
    expectOne(validateMultiscale(ms({ transformationMatrix: [[1, 1], [1, 1 + 1e-15]] })), 'matrix-singular', '/transformationMatrix');
    expectOne(validateMultiscale(ms({ transformationMatrix: [[0, 0, 5], [0, 2, 5], [0, 0, 1]] })), 'matrix-singular', '/transformationMatrix');
    const three = { axes: [{ name: 'x' }, { name: 'y' }, { name: 'z' }] };
    expectOne(validateMultiscale({ ...three, transformationMatrix: [[1, 2, 3], [4, 5, 6], [7, 8, 9]] }), 'matrix-singular', '/transformationMatrix');
    expect(validateMultiscale({ ...three, transformationMatrix: [[2, 0, 0], [0, 3, 0], [0, 0, 4]] })).toEqual([]);
  });
});

describe('scaledDeterminant', () => {
  it('computes determinants of row-scaled matrices, with partial pivoting', () => {
    expect(scaledDeterminant([[1, 0], [0, 1]], 2)).toBe(1);
    expect(scaledDeterminant([[0, 1], [1, 0]], 2)).toBe(-1);
    expect(scaledDeterminant([[2, 0], [0, 4]], 2)).toBe(1);
    expect(scaledDeterminant([[1, 2], [3, 4]], 2)).toBeCloseTo(-2 / 8, 12);
  });
  it('uses only the leading block when asked, and reports singular as 0', () => {
    expect(scaledDeterminant([[1, 0, 9], [0, 1, 9], [0, 0, 1]], 2)).toBe(1);
    expect(scaledDeterminant([[1, 2], [2, 4]], 2)).toBe(0);
    expect(scaledDeterminant([[0, 0], [1, 1]], 2)).toBe(0);
    expect(scaledDeterminant([[1e-300, 0], [0, 1e300]], 2)).toBe(1);
  });
});
