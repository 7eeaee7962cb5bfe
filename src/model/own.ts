// Records keyed by names from the data (fields, layers, values): only own members count, and `__proto__` stays data.

/** The record's own member `key`, or undefined: `constructor` or `toString` are no field of `{}`. */
export function own<T>(rec: Record<string, T>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(rec, key) ? rec[key] : undefined;
}

/** Sets the own member `key` (defineProperty, not assignment: a `__proto__` member must stay data, as JSON.parse keeps it). */
export function setOwn<T>(rec: Record<string, T>, key: string, value: T): T {
  Object.defineProperty(rec, key, { value, enumerable: true, writable: true, configurable: true });
  return value;
}

/** The record's own member `key`, made by `make` when it has none. */
export function ownOr<T>(rec: Record<string, T>, key: string, make: () => T): T {
  return own(rec, key) ?? setOwn(rec, key, make());
}
