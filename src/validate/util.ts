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

/** JSON Pointer tokens down to the first value nested more than `limit` levels below `value`, or undefined. */
function tooDeep(value: object, limit: number): string[] | undefined {
  if (limit === 0) return [];
  // Children that are not arrays or objects cost no call: position arrays stay cheap.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const below = typeof v === 'object' && v !== null ? tooDeep(v, limit - 1) : undefined;
      if (below) return [String(i), ...below];
    }
    return undefined;
  }
  for (const k in value) {
    const v: unknown = (value as JsonObject)[k];
    const below = typeof v === 'object' && v !== null ? tooDeep(v, limit - 1) : undefined;
    if (below) return [pointerToken(k), ...below];
  }
  return undefined;
}

/**
 * Reports `nesting-too-deep` when `value` nests deeper than MAX_NESTING; true then, and the caller checks nothing
 * else (its other checks recurse too). The recursion here stops at the limit, so it is safe at any depth.
 */
export function checkNesting(value: unknown, path: string, out: Issue[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const tokens = tooDeep(value, MAX_NESTING);
  if (!tokens) return false;
  // The member holding the deep value names it well enough; its full pointer would be over a hundred tokens long.
  report(out, 'nesting-too-deep', `${path}/${tokens.slice(0, 2).join('/')}`,
    `arrays and objects nest more than ${MAX_NESTING} levels deep here; at most ${MAX_NESTING} are accepted`);
  return true;
}
