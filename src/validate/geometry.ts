// Geometry validation (spec 2.1, 7.1-7.3, 8): types, coordinate shapes, positions, rings, meshes, bbox.
import { GEOMETRY_TYPES } from '../model/geometry.js';
import { shown, type Issue } from './issue.js';
import { report } from './rules.js';
import { isObject, allStrings, type JsonObject } from './util.js';

const TYPE_LIST = GEOMETRY_TYPES.join(', ');

// Bits returned by the coordinate walkers, so that mixed 2D/3D input is noticed without any per-position state.
const D2 = 1;
const D3 = 2;
const MIXED = D2 | D3;

/**
 * Path of a nested coordinate value: the geometry's path, `/coordinates`, then up to three array indexes
 * (-1 means absent). Paths are only built when something is reported, which keeps the valid path free of strings.
 */
function at(geometryPath: string, a: number, b: number, c: number): string {
  let p = `${geometryPath}/coordinates`;
  if (a >= 0) p += `/${a}`;
  if (b >= 0) p += `/${b}`;
  if (c >= 0) p += `/${c}`;
  return p;
}

/** Checks one position; returns its dimension bit, or 0 when it is not a valid position. */
function position(p: unknown, out: Issue[], gp: string, a: number, b: number, c: number): number {
  if (!Array.isArray(p)) {
    report(out, 'position-not-array', at(gp, a, b, c), `position must be an array of 2 or 3 numbers, found ${shown(p)}`);
    return 0;
  }
  const n = p.length;
  if (n !== 2 && n !== 3) {
    report(out, 'position-length', at(gp, a, b, c), `position must have 2 or 3 numbers, found ${shown(p)} (${n})`);
    return 0;
  }
  if (Number.isFinite(p[0]) && Number.isFinite(p[1]) && (n === 2 || Number.isFinite(p[2]))) return n === 2 ? D2 : D3;
  for (let i = 0; i < n; i++) {
    if (p[i] === Infinity || p[i] === -Infinity) {
      // Only JSON text beyond ±1.8e308 (1e400) reads as ±Infinity: the rule of such numbers anywhere.
      report(out, 'value-not-finite', `${at(gp, a, b, c)}/${i}`,
        `a coordinate beyond what JSON numbers hold (±1.8e308, such as 1e400) reads as ${shown(p[i])} in ${shown(p)}; tiles cannot carry it`);
      break;
    }
    if (!Number.isFinite(p[i])) {
      report(out, 'position-not-number', `${at(gp, a, b, c)}/${i}`,
        `position entries must be finite numbers, found ${shown(p[i])} in ${shown(p)}`);
      break;
    }
  }
  return 0;
}

function samePosition(p: readonly unknown[], q: readonly unknown[]): boolean {
  if (p.length !== q.length) return false;
  for (let i = 0; i < p.length; i++) if (p[i] !== q[i]) return false;
  return true;
}

/** A LineString coordinate array: empty (GeoJSON's empty geometry) or 2 or more positions. */
function line(c: unknown, out: Issue[], gp: string, a: number): number {
  if (!Array.isArray(c)) {
    report(out, 'coordinates-not-array', at(gp, a, -1, -1), `LineString coordinates must be an array of positions, found ${shown(c)}`);
    return 0;
  }
  const n = c.length;
  if (n === 1) report(out, 'linestring-too-short', at(gp, a, -1, -1), `LineString must have 2 or more positions, found ${shown(c)} (1)`);
  let mask = 0;
  for (let i = 0; i < n; i++) mask |= position(c[i], out, gp, a, i, -1);
  return mask;
}

/**
 * A linear ring at coordinates/a/b (a = -1 for a Polygon's own rings). TIN rings have their own count rule: exactly 4,
 * and 3 is reported as an open triangle rather than as a short ring, since that is the usual mistake.
 */
function ring(r: unknown, out: Issue[], gp: string, a: number, b: number, tin: boolean): number {
  if (!Array.isArray(r)) {
    report(out, 'coordinates-not-array', at(gp, a, b, -1), `linear ring must be an array of positions, found ${shown(r)}`);
    return 0;
  }
  const n = r.length;
  let mask = 0;
  for (let i = 0; i < n; i++) mask |= position(r[i], out, gp, a, b, i);
  if (tin) {
    if (n === 3) {
      report(out, 'tin-open-triangle', at(gp, a, b, -1),
        `TIN face ring must have 4 positions (3 vertices, then the first repeated), found an open triangle ${shown(r)} (3)`);
      return mask;
    }
    if (n !== 4) {
      report(out, 'tin-face-positions', at(gp, a, b, -1), `TIN face ring must have exactly 4 positions, found ${shown(r)} (${n})`);
      if (n < 4) return mask;
    }
  } else if (n < 4) {
    report(out, 'ring-too-short', at(gp, a, b, -1), `linear ring must have 4 or more positions, found ${shown(r)} (${n})`);
    return mask;
  }
  const first: unknown = r[0];
  const last: unknown = r[n - 1];
  if (Array.isArray(first) && Array.isArray(last) && !samePosition(first, last)) {
    report(out, 'ring-not-closed', at(gp, a, b, -1),
      `linear ring must be closed (last position equal to the first), found first ${shown(first)} and last ${shown(last)}`);
  }
  return mask;
}

/** A Polygon coordinate array at coordinates/a: rings, outer first. Empty means an empty polygon, as in GeoJSON. */
function polygon(c: unknown, out: Issue[], gp: string, a: number): number {
  if (!Array.isArray(c)) {
    report(out, 'coordinates-not-array', at(gp, a, -1, -1), `Polygon coordinates must be an array of linear rings, found ${shown(c)}`);
    return 0;
  }
  let mask = 0;
  for (let i = 0; i < c.length; i++) mask |= ring(c[i], out, gp, a, i, false);
  const outer = c.length > 1 ? ringBox(c[0]) : null;
  for (let i = 1; outer !== null && i < c.length; i++) {
    const b = ringBox(c[i]);
    if (b === null || (b[0] >= outer[0] && b[1] >= outer[1] && b[2] <= outer[2] && b[3] <= outer[3])) continue;
    report(out, 'hole-outside-exterior', at(gp, a, i, -1),
      `hole ${i} reaches beyond its polygon's exterior ring: its box ${shown(b)} is not within the exterior's ${shown(outer)}; renderers fill what lies outside, as if it were more polygon`);
  }
  return mask;
}

/** The box of a ring's x and y, or null when a position is not an array of finite numbers (reported elsewhere). */
function ringBox(r: unknown): [number, number, number, number] | null {
  if (!Array.isArray(r)) return null;
  const b: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const p of r) {
    if (!Array.isArray(p) || !Number.isFinite(p[0]) || !Number.isFinite(p[1])) return null;
    const x = p[0] as number, y = p[1] as number;
    if (x < b[0]) b[0] = x;
    if (y < b[1]) b[1] = y;
    if (x > b[2]) b[2] = x;
    if (y > b[3]) b[3] = y;
  }
  return b[0] <= b[2] ? b : null;
}

/** PolyhedralSurface and TIN: inline faces, or `tiles` naming the spatial tiles that hold them (spec 2.1 rule 4). */
function mesh(g: JsonObject, type: string, out: Issue[], gp: string): number {
  const tin = type === 'TIN';
  const tiles = g.tiles;
  if (tiles !== undefined && !(Array.isArray(tiles) && allStrings(tiles))) {
    report(out, 'mesh-tiles-invalid', `${gp}/tiles`, `${type} tiles must be an array of strings (spatial tile identifiers), found ${shown(tiles)}`);
  }
  const c = g.coordinates;
  if (c === undefined || (Array.isArray(c) && c.length === 0)) {
    // A present but malformed `tiles` was reported above: it still counts as the author's choice of a tiled mesh.
    if (tiles === undefined) {
      report(out, 'mesh-no-faces', gp,
        `${type} must have non-empty coordinates or tiles, found ${c === undefined ? 'no coordinates' : 'coordinates []'} and no tiles`);
    }
    return 0;
  }
  if (!Array.isArray(c)) {
    report(out, 'coordinates-not-array', at(gp, -1, -1, -1), `${type} coordinates must be an array of faces, found ${shown(c)}`);
    return 0;
  }
  let mask = 0;
  for (let i = 0; i < c.length; i++) {
    const face: unknown = c[i];
    if (!Array.isArray(face)) {
      report(out, 'coordinates-not-array', at(gp, i, -1, -1), `${type} face must be an array of linear rings, found ${shown(face)}`);
      continue;
    }
    if (tin) {
      if (face.length !== 1) {
        report(out, 'tin-face-rings', at(gp, i, -1, -1), `TIN face must have exactly one ring, found ${face.length} rings: ${shown(face)}`);
      }
    } else if (face.length === 0) {
      report(out, 'mesh-face-empty', at(gp, i, -1, -1), 'PolyhedralSurface face must have at least one ring, found []');
    }
    for (let j = 0; j < face.length; j++) mask |= ring(face[j], out, gp, i, j, tin);
  }
  if ((mask & D2) !== 0) {
    report(out, 'mesh-not-3d', at(gp, -1, -1, -1), `${type} faces should have 3D positions, found 2D positions`);
  }
  return mask;
}

/** bbox of any data-model object: 4 or 6 numbers, minimums first. */
export function checkBBox(b: unknown, path: string, out: Issue[]): void {
  if (!Array.isArray(b) || (b.length !== 4 && b.length !== 6)) {
    report(out, 'bbox-length', path,
      `bbox must be an array of 4 or 6 numbers, found ${shown(b)}${Array.isArray(b) ? ` (${b.length})` : ''}`);
    return;
  }
  let ok = true;
  for (let i = 0; i < b.length; i++) {
    if (!Number.isFinite(b[i])) {
      report(out, 'bbox-not-number', `${path}/${i}`, `bbox entries must be finite numbers, found ${shown(b[i])}`);
      ok = false;
    }
  }
  if (!ok) return;
  const half = b.length / 2;
  for (let i = 0; i < half; i++) {
    if ((b[i] as number) > (b[i + half] as number)) {
      report(out, 'bbox-inverted', path, `bbox minimum ${shown(b[i])} is above its maximum ${shown(b[i + half])}, found ${shown(b)}`);
      return;
    }
  }
}

/** Members every geometry may carry, checked the same way for collections and simple geometries. */
function common(g: JsonObject, gp: string, out: Issue[]): void {
  if (g.bbox !== undefined) checkBBox(g.bbox, `${gp}/bbox`, out);
  if (g.radius !== undefined) {
    report(out, 'geometry-radius', `${gp}/radius`,
      `radius belongs in the feature's properties, not in the geometry (it is dropped), found ${shown(g.radius)}`);
  }
}

/** Every geometry type but GeometryCollection. */
function simple(g: JsonObject, gp: string, out: Issue[]): void {
  if (g.bbox !== undefined || g.radius !== undefined) common(g, gp, out);
  const type = g.type;
  const c = g.coordinates;
  let mask = 0;
  switch (type) {
    case 'Point':
    case 'MultiPoint':
    case 'LineString':
    case 'MultiLineString':
    case 'Polygon':
    case 'MultiPolygon':
      if (c === undefined) {
        report(out, 'coordinates-missing', gp, `${type} must have coordinates, found none`);
        return;
      }
      break;
    case 'PolyhedralSurface':
    case 'TIN':
      mask = mesh(g, type, out, gp);
      break;
    default:
      report(out, 'geometry-type-unknown', type === undefined ? gp : `${gp}/type`,
        `geometry type must be one of ${TYPE_LIST}, found ${type === undefined ? 'no type' : shown(type)}`);
      return;
  }
  const before = out.length;
  switch (type) {
    case 'Point':
      // `[]` is GeoJSON's empty Point.
      if (!(Array.isArray(c) && c.length === 0)) mask = position(c, out, gp, -1, -1, -1);
      break;
    case 'LineString':
      mask = line(c, out, gp, -1);
      break;
    case 'Polygon':
      mask = polygon(c, out, gp, -1);
      break;
    case 'MultiPoint':
    case 'MultiLineString':
    case 'MultiPolygon':
      if (!Array.isArray(c)) {
        report(out, 'coordinates-not-array', at(gp, -1, -1, -1), `${type} coordinates must be an array, found ${shown(c)}`);
        return;
      }
      for (let i = 0; i < c.length; i++) {
        if (type === 'MultiPoint') mask |= position(c[i], out, gp, i, -1, -1);
        else if (type === 'MultiLineString') mask |= line(c[i], out, gp, i);
        else mask |= polygon(c[i], out, gp, i);
      }
      break;
    default:
      break;
  }
  // Nested a level too deep or too shallow (a Polygon's ring given as its coordinates): one issue, not one per number.
  // Looked at only once something is wrong: a load that met arrays of arrays and of numbers alike made V8 turn every
  // valid position into an array of boxed numbers.
  if (out.length > before) {
    const depth = depthProblem(c, DEPTH[type as string], type as string);
    if (depth !== undefined) {
      out.length = before;
      report(out, 'coordinates-depth', at(gp, -1, -1, -1), depth);
      return;
    }
  }
  if (mask === MIXED) {
    const [two, three] = [2, 3].map((n) => firstOfLength(c, n, at(gp, -1, -1, -1)));
    report(out, 'position-mixed-dimensions', at(gp, -1, -1, -1), `positions of one ${type as string} should all be 2D or all 3D, found ${shown(two?.value)} at ${two?.path} and ${shown(three?.value)} at ${three?.path}`);
  }
}

/** Array levels from the coordinates down to a number: 1 for a Point's position. */
const DEPTH: Readonly<Record<string, number>> = { Point: 1, MultiPoint: 2, LineString: 2, MultiLineString: 3, Polygon: 3, MultiPolygon: 4 };

/**
 * What is wrong with how deep the coordinates nest, judged on their first numbers (empty arrays say nothing), or
 * undefined when they nest as deep as the type says.
 */
function depthProblem(c: unknown, want: number | undefined, type: string): string | undefined {
  let depth = 0;
  let v = c;
  while (Array.isArray(v) && v.length > 0) { depth++; v = v[0]; }
  if (want === undefined || typeof v !== 'number' || depth === want || depth === 0) return undefined;
  const what = depth < want ? `${want - depth} level(s) too shallow` : `${depth - want} level(s) too deep`;
  return `${type} coordinates must nest ${want} array level(s) down to a number, found ${depth} (${what}), starting ${shown(Array.isArray(c) ? c[0] : c)}`;
}

/** The first position of `n` numbers under a coordinates value, with its path, depth first. */
function firstOfLength(c: unknown, n: number, path: string): { value: unknown; path: string } | undefined {
  if (!Array.isArray(c)) return undefined;
  if (c.length > 0 && typeof c[0] === 'number') return c.length === n ? { value: c, path } : undefined;
  for (let i = 0; i < c.length; i++) {
    const found = firstOfLength(c[i], n, `${path}/${i}`);
    if (found) return found;
  }
  return undefined;
}

interface Pending {
  value: unknown;
  path: string;
}

/**
 * A GeometryCollection. Members are walked with an explicit stack, in document order, so that any nesting depth
 * is validated without recursion and can never overflow the call stack.
 */
function collection(root: JsonObject, rootPath: string, out: Issue[]): void {
  const stack: Pending[] = [{ value: root, path: rootPath }];
  let first = true;
  while (stack.length > 0) {
    const item = stack.pop() as Pending;
    const g = item.value;
    const gp = item.path;
    if (!isObject(g)) {
      report(out, 'geometry-not-object', gp, `GeometryCollection member must be a geometry object, found ${shown(g)}`);
      continue;
    }
    if (g.type !== 'GeometryCollection') {
      simple(g, gp, out);
      continue;
    }
    if (!first) {
      report(out, 'geometry-collection-nested', gp, 'GeometryCollection should not nest another GeometryCollection, found one');
    }
    first = false;
    common(g, gp, out);
    const members = g.geometries;
    if (members === undefined) {
      report(out, 'geometries-missing', gp, 'GeometryCollection must have geometries (an array, may be empty), found none');
      continue;
    }
    if (!Array.isArray(members)) {
      report(out, 'geometries-not-array', `${gp}/geometries`, `GeometryCollection geometries must be an array, found ${shown(members)}`);
      continue;
    }
    for (let i = members.length - 1; i >= 0; i--) stack.push({ value: members[i], path: `${gp}/geometries/${i}` });
  }
}

/** Internal entry: appends the issues of one geometry (never null here) to `out`. */
export function checkGeometry(value: unknown, path: string, out: Issue[]): void {
  if (!isObject(value)) {
    report(out, 'geometry-not-object', path, `geometry must be an object, found ${shown(value)}`);
    return;
  }
  if (value.type === 'GeometryCollection') collection(value, path, out);
  else simple(value, path, out);
}

/** Validates one geometry object; `path` is its JSON Pointer inside the enclosing document. */
export function validateGeometry(value: unknown, path = ''): Issue[] {
  const out: Issue[] = [];
  checkGeometry(value, path, out);
  return out;
}
