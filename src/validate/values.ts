// Values that JSON text can spell but tiles cannot carry: numbers beyond float64 (1e400) and lone UTF-16 surrogates.
import { setOwn } from '../model/own.js';
import { pointerOf, pointerToken, repeatedToo, shown, type Issue } from './issue.js';
import { report } from './rules.js';
import { jsonKeysAt } from '../io/json-errors.js';
import type { MemberRead } from '../io/json-events.js';
import type { RepeatedName } from '../io/json-names.js';

/** A UTF-16 code unit of a surrogate pair standing alone (with the `u` flag a well-formed pair is one code point). */
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether the string holds a lone surrogate, which no UTF-8 text (PBF strings) can hold. */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}

/** The string with U+FFFD for each lone surrogate, as UTF-8 text writes it. */
const fixed = (s: string) => s.replace(/\p{Cs}/gu, '\uFFFD');

type Container = Record<string, unknown> | unknown[];

function own(obj: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

const NOT_FINITE = 1, LONE_SURROGATE_FOUND = 2;

/** Which of the two problems lie under `root` (a bit each): a walk without paths, as nearly every feature has none. */
function problems(root: Record<string, unknown>, skip: ReadonlySet<string>): number {
  let found = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) found |= NOT_FINITE;
    } else if (typeof value === 'string') {
      if (hasLoneSurrogate(value)) found |= LONE_SURROGATE_FOUND;
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push(value[i]);
    } else if (value !== null && typeof value === 'object') {
      const obj = value as Record<string, unknown>;
      for (const key in obj) {
        if (!own(obj, key) || (value === root && skip.has(key))) continue;
        if (hasLoneSurrogate(key)) found |= LONE_SURROGATE_FOUND;
        stack.push(obj[key]);
      }
    }
  }
  return found;
}

/**
 * Reports the first non-finite number (`value-not-finite`) and the first lone surrogate in a string or a member
 * name (`string-lone-surrogate`; where U+FFFD makes names one, if it does, there) under the object `root`, but not
 * under its members named in `skip` (geometry, bbox and ids have rules of their own): each once, since a feature is
 * counted once per rule, the first in the order of the text (a name before its value). Walks keep their own stack,
 * so no nesting depth can overflow the call stack.
 */
export function checkValues(root: Record<string, unknown>, path: string, skip: ReadonlySet<string>, out: Issue[]): void {
  const found = problems(root, skip);
  if (found === 0) return;
  let finite = (found & NOT_FINITE) === 0, wellFormed = (found & LONE_SURROGATE_FOUND) === 0;
  // Names made one lose a value, which matters more than where the first surrogate is: the issue is where they are.
  const merged = wellFormed ? undefined : mergedNames(root, path, skip, hasLoneSurrogate, fixed);
  const stack: { value: unknown; path: string; name?: string }[] = [{ value: root, path }];
  while (stack.length > 0 && (!finite || !wellFormed)) {
    const { value, path: at, name } = stack.pop() as { value: unknown; path: string; name?: string };
    if (!wellFormed && name !== undefined && hasLoneSurrogate(name)) {
      wellFormed = true;
      report(out, 'string-lone-surrogate', merged?.path ?? at, `the member name ${shown(name)} holds a lone UTF-16 surrogate; tiles write U+FFFD for it${mergedClause(merged)}`);
    }
    if (typeof value === 'number') {
      if (!finite && !Number.isFinite(value)) {
        finite = true;
        report(out, 'value-not-finite', at, `a number beyond what JSON numbers hold (±1.8e308) reads as ${shown(value)}; tiles cannot carry it`);
      }
    } else if (typeof value === 'string') {
      if (!wellFormed && hasLoneSurrogate(value)) {
        wellFormed = true;
        report(out, 'string-lone-surrogate', merged?.path ?? at, `the string ${shown(value)} holds a lone UTF-16 surrogate; tiles write U+FFFD for it${mergedClause(merged)}`);
      }
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${at}/${i}` });
    } else if (value !== null && typeof value === 'object') {
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i];
        if (value === root && skip.has(key)) continue;
        stack.push({ value: obj[key], path: `${at}/${pointerToken(key)}`, name: key });
      }
    }
  }
}

/** Member names that become one (`mergedNames`): where, what they become, how many. */
interface MergedNames { path: string; name: string; count: number }

/**
 * The first object under `root` (but its members named in `skip`) where `rename` makes two or more member names one
 * name, which tiles give the last one's value (as JSON readers give a name written twice): the path of that member
 * (the names renamed), the name and how many; undefined when none do. Only an object with a name `touched` (one
 * `rename` changes) can hold such names: the others cost no renaming.
 */
function mergedNames(root: unknown, path: string, skip: ReadonlySet<string>, touched: (name: string) => boolean, rename: (name: string) => string): MergedNames | undefined {
  const stack: { value: unknown; path: string }[] = [{ value: root, path }];
  while (stack.length > 0) {
    const { value, path: at } = stack.pop() as { value: unknown; path: string };
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${at}/${i}` });
      continue;
    }
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj).filter((k) => !(value === root && skip.has(k)));
    const names = keys.some(touched) ? keys.map(rename) : keys;
    if (names !== keys) {
      const counts = new Map<string, number>();
      for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
      for (const [name, count] of counts) if (count > 1) return { path: `${at}/${pointerToken(name)}`, name, count };
    }
    for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: obj[keys[i]], path: `${at}/${pointerToken(names[i])}` });
  }
  return undefined;
}

/** What a message reported at `MergedNames.path` adds for the member names made one there: nothing when there are none. */
function mergedClause(m: MergedNames | undefined): string {
  return m ? `; here ${m.count} member names become ${shown(m.name)}, and tiles keep the last one's value` : '';
}

/**
 * Replaces, in place, every lone surrogate in the strings and member names under the object `root` (but its
 * members named in `skip`) by U+FFFD, as UTF-8 text writes them, so JSON and PBF tiles say the same. Iterative, like
 * `checkValues`.
 */
export function replaceLoneSurrogates(root: Record<string, unknown>, skip: ReadonlySet<string>): void {
  const stack: Container[] = [root];
  while (stack.length > 0) {
    const c = stack.pop() as Container;
    if (Array.isArray(c)) {
      for (let i = 0; i < c.length; i++) {
        const v = c[i];
        if (typeof v === 'string') { if (hasLoneSurrogate(v)) c[i] = fixed(v); } else if (v !== null && typeof v === 'object') stack.push(v as Container);
      }
      continue;
    }
    const keys = Object.keys(c).filter((k) => !(c === root && skip.has(k)));
    // A renamed member goes back in its place: every member after it is taken out and put back in order. Values are
    // read first, so of names made one the last one's value is kept, as JSON readers keep a name written twice.
    const renamed = keys.findIndex(hasLoneSurrogate);
    const values = keys.map((k) => c[k]);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      let v = values[i];
      if (typeof v === 'string' && hasLoneSurrogate(v)) v = fixed(v);
      else if (v !== null && typeof v === 'object') stack.push(v as Container);
      if (renamed >= 0 && i >= renamed) {
        delete c[key];
        setOwn(c, fixed(key), v);
      } else if (v !== c[key]) setOwn(c, key, v);
    }
  }
}

/**
 * Reports `text-invalid-utf8` when decoding `bytes[start, end)` into `text` replaced invalid UTF-8: the text holds
 * more U+FFFD than the bytes spell (EF BF BD). Nearly every text has none, which one `indexOf` tells. The issue
 * names the bytes of the first invalid sequence, and, given the parsed value, the string or member name holding it;
 * where U+FFFD makes member names one, the issue is there and says so. With `name`, the text is that member name's,
 * quotes included, and `path` the member's.
 */
export function checkUtf8(text: string, bytes: Uint8Array, start: number, end: number, path: string, out: Issue[], value?: unknown, name?: string): void {
  let i = text.indexOf('\uFFFD');
  if (i < 0) return;
  let inText = 0;
  for (; i >= 0; i = text.indexOf('\uFFFD', i + 1)) inText++;
  let inBytes = 0;
  for (let j = start; j + 2 < end; j++) if (bytes[j] === 0xef && bytes[j + 1] === 0xbf && bytes[j + 2] === 0xbd) inBytes++;
  if (inText > inBytes) {
    // Where the first invalid byte lies (its JSON pointer in the text), and in the parsed value, when given, the name
    // or string read there: a genuine U+FFFD before it is not taken for it.
    const off = firstInvalidUtf8(bytes, start, end);
    const position = off < 0 ? -1 : utf8.decode(bytes.subarray(start, off)).length;
    const keys = (position < 0 ? null : jsonKeysAt(text, position)) ?? [];
    // In a member name: that name, read whole (one key more than where a value would be).
    const named = (position < 0 ? null : jsonKeysAt(text, position, true)) ?? [];
    const at = name !== undefined ? { path, text: name, name: true } : value === undefined ? undefined
      : named.length > keys.length ? { path: pointerOf(path, named), text: String(named[named.length - 1]), name: true }
        : replaced(valueAt(value, keys), pointerOf(path, keys));
    const first = off < 0 ? '' : `, the first (${sequenceShown(bytes, off, end)})${at ? ` in ${at.name ? 'the member name ' : ''}${shown(at.text)}` : ''}`;
    // As for lone surrogates, the issue is where names are made one, if any are.
    const merged = value === undefined ? undefined : mergedNames(escapedValue(bytes, start, end), path, NO_NAMES, isEscaped, readAs);
    report(out, 'text-invalid-utf8', merged?.path ?? at?.path ?? path, `${inText - inBytes} invalid UTF-8 byte sequence(s) in the text, each read as U+FFFD${first}${mergedClause(merged)} (a file saved in another encoding, such as Latin-1?)`);
  }
}

/**
 * `member-name-repeated` for names a text gives twice in one object (`repeatedName`), at their pointers under `path`:
 * JSON.parse keeps the last value without a word, so an export that writes `area` twice loses the first.
 */
export function checkRepeated(repeated: readonly RepeatedName[] | RepeatedName | undefined, path: string, out: Issue[]): void {
  const list: readonly RepeatedName[] = repeated === undefined ? [] : 'pointer' in repeated ? [repeated] : repeated;
  for (const r of list) {
    const value = (text: string) => shown(JSON.parse(text));
    const others = repeatedToo(r.others);
    report(out, 'member-name-repeated', path + r.pointer, `member name ${shown(r.name)} is given ${r.count} times in one object: tiles keep the last value, ${value(r.last)}, not the first, ${value(r.first)}${others}`);
  }
}

/** `checkUtf8` of each collection member's name and text read with U+FFFD (`MembersEvent.replaced`), at the member's path. */
export function checkMembersUtf8(replaced: readonly MemberRead[] | undefined, members: Record<string, unknown>, out: Issue[]): void {
  for (const m of replaced ?? []) {
    const path = `/${pointerToken(m.name)}`;
    if (m.nameRead) checkUtf8(m.nameRead.text, m.nameRead.bytes, 0, m.nameRead.bytes.length, path, out, undefined, m.name);
    if (m.bytes) checkUtf8(m.text, m.bytes, 0, m.bytes.length, path, out, Object.hasOwn(members, m.name) ? members[m.name] : undefined);
  }
}

const utf8 = new TextDecoder();
const encoder = new TextEncoder();
const NO_NAMES: ReadonlySet<string> = new Set();

/**
 * At `bytes[i]` (before `end`): the length of the valid UTF-8 sequence starting there, or minus the length of the
 * bytes a decoder reads there as one U+FFFD (a lead byte and the continuation bytes that fit it).
 */
function sequenceAt(bytes: Uint8Array, i: number, end: number): number {
  const b = bytes[i];
  if (b < 0x80) return 1;
  const n = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0;
  if (n === 0) return -1;
  // The second byte's range is narrower after E0, ED, F0 and F4 (no overlong forms, surrogates or code points past U+10FFFF).
  const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80, hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
  for (let k = 1; k <= n; k++) {
    const c = i + k < end ? bytes[i + k] : -1;
    if (c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return -k;
  }
  return n + 1;
}

/** The offset of the first byte of `bytes[start, end)` that starts no valid UTF-8 sequence, or -1. */
function firstInvalidUtf8(bytes: Uint8Array, start: number, end: number): number {
  for (let i = start; i < end;) {
    const n = sequenceAt(bytes, i, end);
    if (n < 0) return i;
    i += n;
  }
  return -1;
}

/** The invalid sequence at `bytes[i]` as messages name it: "byte E9", "bytes F0 9F". */
function sequenceShown(bytes: Uint8Array, i: number, end: number): string {
  const hex = Array.from(bytes.subarray(i, i - sequenceAt(bytes, i, end)), (b) => b.toString(16).toUpperCase().padStart(2, '0'));
  return `${hex.length > 1 ? 'bytes' : 'byte'} ${hex.join(' ')}`;
}

/** A byte that is no UTF-8, as `escapedValue` keeps it: a lone surrogate of its own, U+DC80 to U+DCFF. */
const ESCAPED_BYTE = /[\uDC80-\uDCFF]/u;
const isEscaped = (name: string) => ESCAPED_BYTE.test(name);

/**
 * `bytes[start, end)` parsed with each byte that is no UTF-8 read as a lone surrogate of its own (as Python's
 * surrogateescape reads it) instead of U+FFFD, so that member names differing there stay apart; undefined if that
 * text does not parse. A name whose text escapes a lone surrogate of that range is read as such a byte too: a name
 * warned of anyway (`string-lone-surrogate`).
 */
function escapedValue(bytes: Uint8Array, start: number, end: number): unknown {
  let text = '', from = start;
  for (let i = start; i < end;) {
    const n = sequenceAt(bytes, i, end);
    if (n > 0) { i += n; continue; }
    text += utf8.decode(bytes.subarray(from, i)) + String.fromCharCode(0xdc00 + bytes[i]);
    from = ++i;
  }
  try {
    return JSON.parse(text + utf8.decode(bytes.subarray(from, end)));
  } catch {
    return undefined;
  }
}

/** A member name of `escapedValue` as decoding reads it: each invalid sequence of its escaped bytes a U+FFFD. */
function readAs(name: string): string {
  const raw: number[] = [];
  for (const c of name) {
    const u = c.codePointAt(0) as number;
    if (u >= 0xdc80 && u <= 0xdcff) raw.push(u - 0xdc00);
    else raw.push(...encoder.encode(c));
  }
  return utf8.decode(Uint8Array.from(raw));
}

/** The value `keys` name under `v`; undefined when they name nothing. */
function valueAt(v: unknown, keys: readonly (string | number)[]): unknown {
  for (const k of keys) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** The first member name or string under `path` holding U+FFFD, depth first; undefined when none does. */
function replaced(v: unknown, path: string): { path: string; text: string; name?: boolean } | undefined {
  if (typeof v === 'string') return v.includes('\uFFFD') ? { path, text: v } : undefined;
  if (v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) { const r = replaced(v[i], `${path}/${i}`); if (r) return r; }
    return undefined;
  }
  for (const [k, m] of Object.entries(v)) {
    const at = `${path}/${pointerToken(k)}`;
    if (k.includes('\uFFFD')) return { path: at, text: k, name: true };
    const r = replaced(m, at);
    if (r) return r;
  }
  return undefined;
}
