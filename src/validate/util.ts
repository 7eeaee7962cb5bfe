// Small guards shared by the validators: plain-object test, integer-or-string ids, optional string members.
import { shown, type Issue } from './issue.js';
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
