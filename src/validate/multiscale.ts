// Multiscale validation (spec 2.2, 7.5, 7.6, 8): axes, coordinate transformations, and the invertible matrix.
import { AXIS_TYPES, AXIS_UNITS } from '../model/multiscale.js';
import { pointerToken, shown, type Issue } from './issue.js';
import { report } from './rules.js';
import { checkOptionalString, isObject, type JsonObject } from './util.js';

const AXIS_TYPE_SET: ReadonlySet<unknown> = new Set<unknown>(AXIS_TYPES);
const AXIS_UNIT_SET: ReadonlySet<unknown> = new Set<unknown>(AXIS_UNITS);

/**
 * A pivot this small, relative to its row's largest entry, counts as zero. Rows are scaled to a largest entry of 1
 * before elimination, so a matrix mixing nanometres and metres is judged by its shape, not by its units.
 */
const SINGULAR_TOLERANCE = 1e-12;

/** The largest matrix whose determinant is computed: 5 axes, homogeneous. Bigger ones are already shape errors. */
const MAX_MATRIX = 6;

function checkAxis(axis: unknown, path: string, names: Set<string>, out: Issue[]): void {
  if (!isObject(axis)) {
    report(out, 'axis-not-object', path, `axis must be an object with a name, found ${shown(axis)}`);
    return;
  }
  const name = axis.name;
  if (typeof name !== 'string') {
    if (name === undefined) report(out, 'axis-name-invalid', path, `axis must have a string name, found none in ${shown(axis)}`);
    else report(out, 'axis-name-invalid', `${path}/name`, `axis name must be a string, found ${shown(name)}`);
  } else if (names.has(name)) {
    report(out, 'axis-name-duplicate', `${path}/name`, `axis names must be unique, found ${shown(name)} again`);
  } else {
    names.add(name);
  }
  const type = axis.type;
  if (type !== undefined && !AXIS_TYPE_SET.has(type)) {
    report(out, 'axis-type-invalid', `${path}/type`, `axis type must be one of ${AXIS_TYPES.join(', ')}, found ${shown(type)}`);
  }
  const unit = axis.unit;
  if (unit !== undefined && !AXIS_UNIT_SET.has(unit)) {
    report(out, 'axis-unit-invalid', `${path}/unit`, `axis unit must be one of ${AXIS_UNITS.join(', ')}, found ${shown(unit)}`);
  }
  checkOptionalString(axis, 'description', path, out);
}

function finiteNumbers(v: readonly unknown[]): boolean {
  for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i])) return false;
  return true;
}

/** `scale` or `translation`: one finite number per axis (`axes` < 0 when the axis count is unknown). */
function checkVector(t: JsonObject, name: 'scale' | 'translation', path: string, axes: number, out: Issue[]): void {
  const v = t[name];
  if (!Array.isArray(v) || !finiteNumbers(v)) {
    report(out, 'transformation-vector-invalid', v === undefined ? path : `${path}/${name}`,
      `${name} transformation must have ${name}: an array of numbers, one per axis, found ${v === undefined ? 'none' : shown(v)}`);
    return;
  }
  if (axes >= 0 && v.length !== axes) {
    report(out, name === 'scale' ? 'scale-length' : 'translation-length', `${path}/${name}`,
      `${name} must have one number per axis (${axes}), found ${shown(v)} (${v.length})`);
  }
}

function checkTransformations(list: unknown, path: string, axes: number, out: Issue[]): void {
  if (!Array.isArray(list)) {
    report(out, 'transformations-not-array', path, `coordinateTransformations must be an array, found ${shown(list)}`);
    return;
  }
  for (let i = 0; i < list.length; i++) {
    const t: unknown = list[i];
    const tp = `${path}/${i}`;
    if (!isObject(t)) {
      report(out, 'transformation-not-object', tp, `coordinate transformation must be an object with a type, found ${shown(t)}`);
      continue;
    }
    switch (t.type) {
      case 'identity': {
        const extra = Object.keys(t).filter((k) => k !== 'type');
        if (extra.length > 0) {
          report(out, 'identity-extra-member', `${tp}/${pointerToken(extra[0])}`,
            `identity transformation must have no member but type, found ${extra.map((k) => JSON.stringify(k)).join(', ')}`);
        }
        break;
      }
      case 'scale':
        checkVector(t, 'scale', tp, axes, out);
        break;
      case 'translation':
        checkVector(t, 'translation', tp, axes, out);
        break;
      default:
        report(out, 'transformation-type-unknown', t.type === undefined ? tp : `${tp}/type`,
          `transformation type must be identity, scale or translation, found ${t.type === undefined ? 'no type' : shown(t.type)}`);
    }
  }
}

/**
 * Determinant of the leading size×size block of `rows` after scaling each row to a largest entry of 1, by Gaussian
 * elimination with partial pivoting; 0 when a pivot falls below SINGULAR_TOLERANCE, i.e. when the matrix is singular
 * relative to its own magnitude.
 */
export function scaledDeterminant(rows: readonly (readonly number[])[], size: number): number {
  const a = new Float64Array(size * size);
  for (let i = 0; i < size; i++) {
    let max = 0;
    for (let j = 0; j < size; j++) max = Math.max(max, Math.abs(rows[i][j]));
    if (max === 0) return 0;
    for (let j = 0; j < size; j++) a[i * size + j] = rows[i][j] / max;
  }
  let det = 1;
  for (let k = 0; k < size; k++) {
    let p = k;
    for (let i = k + 1; i < size; i++) if (Math.abs(a[i * size + k]) > Math.abs(a[p * size + k])) p = i;
    const pivot = a[p * size + k];
    if (!(Math.abs(pivot) > SINGULAR_TOLERANCE)) return 0;
    if (p !== k) {
      det = -det;
      for (let j = k; j < size; j++) {
        const tmp = a[k * size + j];
        a[k * size + j] = a[p * size + j];
        a[p * size + j] = tmp;
      }
    }
    det *= pivot;
    for (let i = k + 1; i < size; i++) {
      const f = a[i * size + k] / pivot;
      if (f === 0) continue;
      for (let j = k; j < size; j++) a[i * size + j] -= f * a[k * size + j];
    }
  }
  return det;
}

/** transformationMatrix: N×N linear or (N+1)×(N+1) homogeneous (last row 0 … 0 1), invertible (spec-decisions). */
function checkMatrix(m: unknown, path: string, axes: number, out: Issue[]): void {
  if (!Array.isArray(m)) {
    report(out, 'matrix-invalid', path, `transformationMatrix must be an array of rows of numbers, found ${shown(m)}`);
    return;
  }
  const rows = m.length;
  let cols = -1;
  let ok = true;
  for (let i = 0; i < rows; i++) {
    const row: unknown = m[i];
    if (!Array.isArray(row)) {
      report(out, 'matrix-invalid', `${path}/${i}`, `transformationMatrix row must be an array of numbers, found ${shown(row)}`);
      ok = false;
      continue;
    }
    if (cols < 0) cols = row.length;
    else if (row.length !== cols) {
      report(out, 'matrix-invalid', `${path}/${i}`,
        `transformationMatrix rows must all have ${cols} numbers, found ${shown(row)} (${row.length})`);
      ok = false;
      continue;
    }
    for (let j = 0; j < row.length; j++) {
      if (!Number.isFinite(row[j])) {
        report(out, 'matrix-invalid', `${path}/${i}/${j}`, `transformationMatrix entries must be finite numbers, found ${shown(row[j])}`);
        ok = false;
        break;
      }
    }
  }
  if (!ok) return;
  const grid = m as number[][];
  const found = `found ${rows}×${Math.max(cols, 0)}`;
  if (axes >= 0) {
    if (rows !== cols || (rows !== axes && rows !== axes + 1)) {
      report(out, 'matrix-shape', path, `transformationMatrix must be ${axes}×${axes} or ${axes + 1}×${axes + 1} for ${axes} axes, ${found}`);
      return;
    }
  } else if (rows !== cols || rows === 0) {
    report(out, 'matrix-shape', path, `transformationMatrix must be square, ${found}`);
    return;
  }
  let size = rows;
  if (axes >= 0 && rows === axes + 1) {
    const last = grid[axes];
    for (let j = 0; j <= axes; j++) {
      if (last[j] !== (j === axes ? 1 : 0)) {
        report(out, 'matrix-homogeneous-row', `${path}/${axes}`,
          `last row of a homogeneous ${rows}×${rows} transformationMatrix must be 0 … 0 1, found ${shown(last)}`);
        return;
      }
    }
    // With the last row 0 … 0 1 the determinant is that of the linear block.
    size = axes;
  }
  if (size > 0 && size <= MAX_MATRIX && scaledDeterminant(grid, size) === 0) {
    report(out, 'matrix-singular', path, `transformationMatrix must be invertible, found a singular matrix ${shown(m)}`);
  }
}

/** Internal entry: appends the issues of one multiscale object to `out`. */
export function checkMultiscale(value: unknown, path: string, out: Issue[]): void {
  if (!isObject(value)) {
    report(out, 'multiscale-not-object', path, `multiscale must be an object with axes, found ${shown(value)}`);
    return;
  }
  const axes = value.axes;
  let count = -1;
  if (axes === undefined) {
    report(out, 'axes-missing', path, 'multiscale must have axes (2 to 5 axis objects), found none');
  } else if (!Array.isArray(axes)) {
    report(out, 'axes-not-array', `${path}/axes`, `multiscale axes must be an array of 2 to 5 axis objects, found ${shown(axes)}`);
  } else {
    count = axes.length;
    if (count < 2 || count > 5) {
      report(out, 'axes-count', `${path}/axes`, `multiscale must have 2 to 5 axes, found ${shown(axes)} (${count})`);
    }
    const names = new Set<string>();
    for (let i = 0; i < count; i++) checkAxis(axes[i], `${path}/axes/${i}`, names, out);
  }
  const list = value.coordinateTransformations;
  const matrix = value.transformationMatrix;
  if (list !== undefined && matrix !== undefined) {
    report(out, 'transformations-both', path, 'multiscale must not have both coordinateTransformations and transformationMatrix, found both');
  }
  if (list !== undefined) checkTransformations(list, `${path}/coordinateTransformations`, count, out);
  if (matrix !== undefined) checkMatrix(matrix, `${path}/transformationMatrix`, count, out);
}

/** Validates one multiscale object wherever it appears (descriptor, collection, feature, JSON tile). */
export function validateMultiscale(value: unknown, path = ''): Issue[] {
  const out: Issue[] = [];
  checkMultiscale(value, path, out);
  return out;
}
