// Validation issues: a stable code, a severity, a JSON Pointer into the document, and a message naming the value found.

export type Severity = 'error' | 'warning';

export interface Issue {
  /** Stable, kebab-case rule code (for example `tin-open-triangle`); the same code always means the same rule. */
  code: string;
  severity: Severity;
  /** RFC 6901 JSON Pointer to the offending value, relative to the validated document ('' is the root). */
  path: string;
  message: string;
}

/** Escapes one reference token of a JSON Pointer (RFC 6901). */
export function pointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A short rendering of a found value for messages: JSON, cut to a readable length. */
export function shown(value: unknown): string {
  let s: string;
  try {
    s = value === undefined ? 'undefined' : JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

export function hasErrors(issues: readonly Issue[]): boolean {
  return issues.some((i) => i.severity === 'error');
}
