// Property fields as PBF tiles, descriptors and options name them: nested objects flattened to dotted names.
import type { Properties } from './feature.js';

/** A JSON object: not null and not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Calls `visit` with every field of `props` in member order. A nested object's members are fields named
 * `parent.child` (at any depth; an empty object has none); strings, numbers, booleans, nulls and arrays are values.
 */
export function forEachField(props: Properties, visit: (name: string, value: unknown) => void, prefix = ''): void {
  for (const key of Object.keys(props)) {
    const v = props[key];
    if (isPlainObject(v)) forEachField(v, visit, `${prefix}${key}.`);
    else visit(prefix + key, v);
  }
}

/**
 * The members leading to the field `name` (as `forEachField` names it), or undefined when the feature has no such
 * field. A member of exactly that name comes first; else each dot, left to right, is tried as a step into a nested
 * object (member names may hold dots themselves).
 */
export function fieldPath(props: Properties | null | undefined, name: string): string[] | undefined {
  if (!props) return undefined;
  const own = (key: string) => Object.prototype.hasOwnProperty.call(props, key);
  if (own(name) && props[name] !== undefined && !isPlainObject(props[name])) return [name];
  for (let dot = name.indexOf('.'); dot > 0; dot = name.indexOf('.', dot + 1)) {
    const key = name.slice(0, dot);
    const inner = own(key) ? props[key] : undefined;
    if (!isPlainObject(inner)) continue;
    const rest = fieldPath(inner, name.slice(dot + 1));
    if (rest) return [key, ...rest];
  }
  return undefined;
}

/** The value of the field `name`, or undefined (see `fieldPath`). */
export function fieldValue(props: Properties | null | undefined, name: string): unknown {
  const keys = fieldPath(props, name);
  if (!keys) return undefined;
  let v: unknown = props;
  for (const k of keys) v = (v as Properties)[k];
  return v;
}
