// Small guards shared by the validators: plain-object test, integer-or-string ids, optional string members.
import { pointerToken, shown, type Issue } from './issue.js';
import { report } from './rules.js';

export type JsonObject = Record<string, unknown>;

/** A JSON object: not null and not an array (arrays are objects to `typeof`). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isStringOrInteger(value: unknown): boolean {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
}

/** Own-key test: a name taken from the data must never find something on Object.prototype. */
export function hasOwn(obj: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** Reports `member-not-string` when an optional member specified as a string holds anything else. */
export function checkOptionalString(obj: JsonObject, name: string, path: string, out: Issue[]): void {
  const v = obj[name];
  if (v !== undefined && typeof v !== 'string') {
    report(out, 'member-not-string', `${path}/${name}`, `${name} must be a string, found ${shown(v)}`);
  }
}

/** Whether every entry of an array is a string. */
export function allStrings(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) if (typeof values[i] !== 'string') return false;
  return true;
}

/**
 * Deepest nesting of arrays and objects a document or feature may have: far beyond any annotation (a MultiPolygon
 * position is 6 levels down a feature), far below what the recursive encoders (JSON.stringify) can take in a worker.
 */
export const MAX_NESTING = 128;

/**
 * JSON Pointer tokens down to the first value nested more than `limit` levels below `value`, or undefined; the
 * members `skip` names are not walked. The recursion stops at the limit, so it is safe at any depth.
 */
function tooDeep(value: object, limit: number, skip?: (key: string) => boolean): string[] | undefined {
  if (limit === 0) return [];
  // Children that are not arrays or objects cost no call.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const below = typeof v === 'object' && v !== null ? tooDeep(v, limit - 1) : undefined;
      if (below) return [String(i), ...below];
    }
    return undefined;
  }
  for (const k in value) {
    if (skip?.(k)) continue;
    const v: unknown = (value as JsonObject)[k];
    const below = typeof v === 'object' && v !== null ? tooDeep(v, limit - 1) : undefined;
    if (below) return [pointerToken(k), ...below];
  }
  return undefined;
}

/**
 * tooDeep for a geometry. Coordinates are left to checkGeometry, whose walk has a fixed depth per type (deeper
 * arrays make the geometry invalid), so a feature's many positions cost nothing here; GeometryCollection members
 * are walked with a stack.
 */
function geometryTooDeep(root: object, limit: number): string[] | undefined {
  // Most geometries are not collections: no stack for them.
  if (!isCollection(root)) return tooDeep(root, limit, isCoordinates);
  const stack: { g: object; limit: number; at: string[] }[] = [{ g: root, limit, at: [] }];
  while (stack.length > 0) {
    const { g, limit: left, at } = stack.pop() as { g: object; limit: number; at: string[] };
    if (left <= 0) return at;
    const members = isCollection(g) ? g.geometries : undefined;
    const below = tooDeep(g, left, members ? isGeometries : isCoordinates);
    if (below) return [...at, ...below];
    members?.forEach((m, i) => {
      if (typeof m === 'object' && m !== null) stack.push({ g: m, limit: left - 2, at: [...at, 'geometries', String(i)] });
    });
  }
  return undefined;
}

function isCollection(g: object): g is { geometries: unknown[] } {
  return isObject(g) && g.type === 'GeometryCollection' && Array.isArray(g.geometries);
}
const isCoordinates = (k: string): boolean => k === 'coordinates';
const isGeometries = (k: string): boolean => k === 'geometries';
const isGeometry = (k: string): boolean => k === 'geometry';
const isFeatures = (k: string): boolean => k === 'features';

/** What a value is to checkNesting: which members other checks bound, so that the walk can skip them. */
export type NestingKind = 'feature' | 'geometry' | 'collection' | 'other';

/**
 * Reports `nesting-too-deep` when `value` nests deeper than MAX_NESTING; true then, and the caller checks nothing
 * else (its other checks may recurse). A collection's features are checked one by one, as features.
 */
export function checkNesting(value: unknown, kind: NestingKind, path: string, out: Issue[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  let tokens: string[] | undefined;
  if (kind === 'geometry') tokens = geometryTooDeep(value, MAX_NESTING);
  else if (kind === 'collection') tokens = tooDeep(value, MAX_NESTING, isFeatures);
  else if (kind === 'other') tokens = tooDeep(value, MAX_NESTING);
  else {
    const g = (value as JsonObject).geometry;
    tokens = tooDeep(value, MAX_NESTING, isGeometry);
    if (!tokens && typeof g === 'object' && g !== null) {
      const below = geometryTooDeep(g, MAX_NESTING - 1);
      if (below) tokens = ['geometry', ...below];
    }
  }
  if (!tokens) return false;
  // The member holding the deep value names it well enough; its full pointer would be over a hundred tokens long.
  report(out, 'nesting-too-deep', `${path}/${tokens.slice(0, 2).join('/')}`,
    `arrays and objects nest more than ${MAX_NESTING} levels deep here; at most ${MAX_NESTING} are accepted`);
  return true;
}
