// Validation issues: a stable code, a severity, a JSON Pointer into the document, and a message naming the value found.
import { withCode } from '../report/coded.js';

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
  if (typeof token === 'number') return String(token);
  // Most tokens need no escaping: skip the two regex passes for them.
  if (token.indexOf('~') < 0 && token.indexOf('/') < 0) return token;
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The JSON pointer of `keys` (member names and element indexes) under `base`. */
export function pointerOf(base: string, keys: readonly (string | number)[]): string {
  return base + keys.map((k) => `/${pointerToken(k)}`).join('');
}

const SHOWN_MAX = 60;

/**
 * An issue's JSON pointer as messages show it: the document itself (pointer "") as "(top level)", since "/" is the
 * pointer of a member named ""; a control character (a newline would end the line) and a lone surrogate (which
 * UTF-8 output writes as U+FFFD, like a byte that is no UTF-8) as their JSON escapes, so the name reads as written.
 */
export function shownPath(path: string): string {
  if (path === '') return '(top level)';
  return path.replace(/\p{Cc}|\p{Cs}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `/pointer: message [code]`, as an issue reads where its place is said before it (a file, a tile). */
export function issueText(is: Issue): string {
  return withCode(`${shownPath(is.path)}: ${is.message}`, is.code);
}

/** The clause a repeat warning ends with, naming the other names repeated (three of them, then how many more). */
export function repeatedToo(others: readonly string[]): string {
  if (others.length === 0) return '';
  const more = others.length > 3 ? `, and ${others.length - 3} more` : '';
  return `; repeated too: ${others.slice(0, 3).join(', ')}${more}`;
}

/**
 * A short rendering of a found value for messages: JSON, cut to a readable length.
 * Rendering stops as soon as the text is long enough to be cut, so a huge or deeply nested value costs no more
 * than a small one and can never overflow the stack (each nesting level adds at least one character).
 */
export function shown(value: unknown): string {
  if (value === undefined) return 'undefined';
  const parts: string[] = [];
  const state = { length: 0 };
  render(value, parts, state);
  const s = parts.join('');
  return s.length > SHOWN_MAX ? `${s.slice(0, SHOWN_MAX - 3)}...` : s;
}

function emit(text: string, parts: string[], state: { length: number }): boolean {
  parts.push(text);
  state.length += text.length;
  return state.length <= SHOWN_MAX;
}

/** Appends JSON-like text for `value`; returns false once enough text exists to be cut. */
function render(value: unknown, parts: string[], state: { length: number }): boolean {
  switch (typeof value) {
    case 'string':
      // Cut before quoting so a megabyte string is not escaped in full just to show 60 characters of it.
      return emit(JSON.stringify(value.length > SHOWN_MAX ? value.slice(0, SHOWN_MAX + 1) : value), parts, state);
    case 'number':
      // JSON would print NaN and Infinity as null, which hides the actual problem.
      return emit(Number.isFinite(value) ? JSON.stringify(value) : String(value), parts, state);
    case 'boolean':
      return emit(value ? 'true' : 'false', parts, state);
    case 'bigint':
      return emit(`${value.toString()}n`, parts, state);
    case 'undefined':
      return emit('null', parts, state);
    case 'symbol':
    case 'function':
      return emit(typeof value, parts, state);
    default:
      break;
  }
  if (value === null) return emit('null', parts, state);
  if (Array.isArray(value)) {
    if (!emit('[', parts, state)) return false;
    for (let i = 0; i < value.length; i++) {
      if (i > 0 && !emit(',', parts, state)) return false;
      if (!render(value[i], parts, state)) return false;
    }
    return emit(']', parts, state);
  }
  const obj = value as Record<string, unknown>;
  if (!emit('{', parts, state)) return false;
  let first = true;
  for (const key in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
    const v = obj[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (!first && !emit(',', parts, state)) return false;
    first = false;
    if (!emit(`${JSON.stringify(key.length > SHOWN_MAX ? key.slice(0, SHOWN_MAX + 1) : key)}:`, parts, state)) return false;
    if (!render(v, parts, state)) return false;
  }
  return emit('}', parts, state);
}

export function hasErrors(issues: readonly Issue[]): boolean {
  return issues.some((i) => i.severity === 'error');
}
