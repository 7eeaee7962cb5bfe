// Member names a JSON text gives twice in one object, which JSON.parse resolves silently to the last one's value.
import { pointerToken } from '../validate/issue.js';

/** The first member name a text repeats in one object: where (its JSON pointer), how often, both values' texts. */
export interface RepeatedName {
  pointer: string;
  name: string;
  count: number;
  /** JSON texts of the first value and of the last, the one JSON.parse keeps. */
  first: string;
  last: string;
  /** Pointers of the other names repeated in the text, in this object or another. */
  others: string[];
}

/**
 * Member names and strings of a parsed value, `coordinates` members and arrays that open with a number not entered:
 * never more than its text holds, and fewer only where that text repeats a name in an object (JSON.parse keeps one
 * of them) or where a skipped array holds strings. A count of the text's own (`stringsIn`, or the splitter's) that is
 * larger says to look for repeated names; one that is equal, that there are none.
 */
export function namesAndStrings(value: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') { count++; continue; }
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      if (v.length > 0 && typeof v[0] !== 'number') for (let i = 0; i < v.length; i++) stack.push(v[i]);
      continue;
    }
    for (const k in v) {
      count++;
      if (k !== 'coordinates') stack.push((v as Record<string, unknown>)[k]);
    }
  }
  return count;
}

/** The strings of a JSON text, member names among them. Without a backslash, two quotes a string: counted by indexOf. */
export function stringsIn(text: string): number {
  let n = 0;
  if (text.indexOf('\\') < 0) {
    for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) n++;
    return n >> 1;
  }
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) !== 0x22) continue;
    n++;
    for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
  }
  return n;
}

/**
 * The first name `text` (valid JSON, `value` its parse) repeats in one object, or undefined. `strings` is the
 * text's count of strings when its reader made one (the splitter does, for nothing): the text is scanned only when
 * the parse holds fewer.
 */
export function repeatedName(text: string, value: unknown, strings?: number): RepeatedName | undefined {
  if (namesAndStrings(value) === (strings ?? stringsIn(text))) return undefined;
  return firstRepeated(text);
}

interface Seen { count: number; first: [number, number]; last: [number, number] }
interface Frame { names: Map<string, Seen> | null; pointer: string; index: number; key: string; start: number }

/** Scans a valid JSON text for names repeated in one object: the first found (by its second occurrence), and how many others. */
export function firstRepeated(text: string): RepeatedName | undefined {
  const stack: Frame[] = [];
  let found: { frame: Frame; name: string; seen: Seen } | undefined;
  const others: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x22) {
      let j = i + 1;
      for (; text.charCodeAt(j) !== 0x22; j++) if (text.charCodeAt(j) === 0x5c) j++;
      if (top?.names && top.start < 0) top.key = JSON.parse(text.slice(i, j + 1)) as string;
      i = j;
    } else if (c === 0x3a) {
      top.start = i + 1;
    } else if (c === 0x7b || c === 0x5b) {
      const pointer = top === undefined ? '' : `${top.pointer}/${top.names ? pointerToken(top.key) : top.index}`;
      stack.push({ names: c === 0x7b ? new Map() : null, pointer, index: 0, key: '', start: -1 });
    } else if (c === 0x2c || c === 0x7d || c === 0x5d) {
      // A name with U+FFFD may be two that invalid UTF-8 made one: `text-invalid-utf8` says so (values.ts mergedNames).
      if (top.names && top.start >= 0 && !top.key.includes('\uFFFD')) {
        const span: [number, number] = [top.start, i];
        const seen = top.names.get(top.key);
        if (seen === undefined) top.names.set(top.key, { count: 1, first: span, last: span });
        else {
          seen.count++;
          seen.last = span;
          if (seen.count === 2) { if (found === undefined) found = { frame: top, name: top.key, seen }; else others.push(`${top.pointer}/${pointerToken(top.key)}`); }
        }
      }
      if (top.names) top.start = -1;
      if (c === 0x2c) top.index++;
      else stack.pop();
    }
  }
  if (found === undefined) return undefined;
  const { frame, name, seen } = found;
  const at = (s: [number, number]) => text.slice(s[0], s[1]).trim();
  return { pointer: `${frame.pointer}/${pointerToken(name)}`, name, count: seen.count, first: at(seen.first), last: at(seen.last), others };
}
