// Where JSON input is wrong: a JSON.parse failure as a ReadError at its absolute position, found by a second, small parser.
import { ReadError } from '../report/errors.js';
import { pointerOf } from '../validate/issue.js';

/**
 * Turns a JSON.parse failure on `text` (which starts at `line`/`column` of `file`) into a ReadError at the absolute
 * position. V8 names the position ("at position N") for most errors but not for "Unexpected token" or the end of
 * input, so a small locator finds it then. `pointer`: where `text` lies in its document (a collection member's
 * value), so that the path named is the document's.
 */
export function jsonSyntaxError(file: string, text: string, line: number, column: number, e: unknown, pointer = ''): ReadError {
  const v8 = e instanceof Error ? e.message : String(e);
  const m = /\bat position (\d+)/.exec(v8);
  let position: number;
  let message: string;
  // A non-finite number where V8 stopped (QuPath before 0.5) gets the scanner's message, which says where it comes
  // from; V8 names the position past a minus sign ("-Infinity"), and none for a bare NaN or Infinity.
  if (m && !/^(?:NaN|Infinity)/.test(text.slice(Number(m[1]), Number(m[1]) + 8))) {
    position = Number(m[1]);
    message = v8
      .replace(/\s*in JSON at position \d+/, '')
      .replace(/\s*\(line \d+ column \d+\)/, '');
  } else {
    const found = locateJsonError(text);
    position = found ? found.position : text.length;
    message = found ? found.message : v8;
  }
  position = Math.min(position, text.length);
  // V8's "Expected ..." says what it wanted, not what it found.
  if (/^Expected\b/.test(message)) message += `, found ${describeChar(text[position])}`;
  const where = jsonPathAt(text, position, pointer);
  if (where !== null) message += ` (${where})`;
  const at = positionToLineColumn(text, position, line, column);
  return new ReadError(file, at.line, at.column, message, { cause: e });
}

/**
 * `jsonKeysAt` as messages say it, after `prefix` (where `s` lies in its document): "JSON path /a/1", or "JSON path
 * (top level)"; null outside any array or object without a prefix.
 */
export function jsonPathAt(s: string, position: number, prefix = ''): string | null {
  const keys = jsonKeysAt(s, position);
  if (keys === null && prefix === '') return null;
  const pointer = pointerOf(prefix, keys ?? []);
  return `JSON path ${pointer === '' ? '(top level)' : pointer}`;
}

/**
 * Where `position` lies, as the member names and element indexes (from the start of `text`: a feature's text gives
 * the feature's own, as validation issues name them) of the member or element reached there, or of the object when
 * a member name is due or being read (with `intoKey`, the member's whose name is read there); null outside any
 * array or object. A light walk that trusts the text before `position`, which is where the first error lies.
 */
export function jsonKeysAt(s: string, position: number, intoKey = false): (string | number)[] | null {
  const frames: { key: string | number; array: boolean; expectKey: boolean }[] = [];
  for (let i = 0; i < position; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      while (j < s.length && s.charCodeAt(j) !== 0x22) j += s.charCodeAt(j) === 0x5c ? 2 : 1;
      const top = frames[frames.length - 1];
      // Inside a member name: the object's pointer, or with `intoKey` the member's (the name read whole).
      if (j >= position && !(intoKey && top?.expectKey)) break;
      if (top !== undefined && top.expectKey) {
        try { top.key = JSON.parse(s.slice(i, j + 1)) as string; } catch { top.key = s.slice(i + 1, j); }
        top.expectKey = false;
        if (j >= position) break;
      }
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      frames.push({ key: c === 0x5b ? 0 : '', array: c === 0x5b, expectKey: c === 0x7b });
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
    } else if (c === 0x2c) {
      const top = frames[frames.length - 1];
      if (top === undefined) continue;
      if (top.array) top.key = (top.key as number) + 1;
      else top.expectKey = true;
    }
  }
  if (frames.length === 0) return null;
  if (frames[frames.length - 1].expectKey) frames.pop();
  return frames.map((f) => f.key);
}

/** Line and byte column of UTF-16 offset `position` in `text`, which starts at `line`/`column`. */
function positionToLineColumn(text: string, position: number, line: number, column: number): { line: number; column: number } {
  let lastNewline = -1;
  let l = line;
  for (let k = text.indexOf('\n'); k >= 0 && k < position; k = text.indexOf('\n', k + 1)) {
    l++;
    lastNewline = k;
  }
  const bytes = Buffer.byteLength(text.slice(lastNewline + 1, position), 'utf8');
  return { line: l, column: lastNewline < 0 ? column + bytes : bytes + 1 };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function describeChar(c: string | undefined): string {
  if (c === undefined) return 'end of input';
  const code = c.codePointAt(0) ?? 0;
  return code < 0x20 || code === 0x7f ? `control character U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `'${c}'`;
}

/** Finds the first JSON syntax error in `s` (position as a UTF-16 offset), or null if `s` is valid JSON. */
export function locateJsonError(s: string): { position: number; message: string } | null {
  const n = s.length;
  const stack: number[] = []; // 0 array, 1 object
  type Expect = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'after';
  let expect: Expect = 'value';
  let i = 0;
  const string = (start: number): number | { position: number; message: string } => {
    let j = start + 1;
    for (;;) {
      if (j >= n) return { position: n, message: 'unterminated string' };
      const c = s.charCodeAt(j);
      if (c === 0x22) return j + 1;
      if (c < 0x20) return { position: j, message: `${describeChar(s[j])} in a string (escape it)` };
      if (c === 0x5c) {
        const e = s[j + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(s.slice(j + 2, j + 6))) return { position: j, message: 'bad \\u escape in a string' };
          j += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) return { position: j, message: 'bad escape in a string' };
        j += 2;
        continue;
      }
      j++;
    }
  };
  for (;;) {
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    if (i >= n) {
      return expect === 'after' && stack.length === 0 ? null : { position: n, message: 'unexpected end of input' };
    }
    const c = s[i];
    switch (expect) {
      case 'value':
      case 'value-or-close': {
        if (c === ']' && expect === 'value-or-close') {
          stack.pop();
          i++;
          expect = 'after';
        } else if (c === '{') {
          stack.push(1);
          i++;
          expect = 'key-or-close';
        } else if (c === '[') {
          stack.push(0);
          i++;
          expect = 'value-or-close';
        } else if (c === '"') {
          const r = string(i);
          if (typeof r !== 'number') return r;
          i = r;
          expect = 'after';
        } else if (/^-?(NaN|Infinity)/.test(s.slice(i, i + 9))) {
          // QuPath before 0.5 writes non-finite measurements so: the README's advice goes with the message.
          return { position: i, message: `${s.slice(i, i + 9).replace(/^(-?(?:NaN|Infinity))[^]*$/, '$1')} is not JSON, expected a value (QuPath before 0.5 writes it for a missing measurement: export again from QuPath 0.5 or later, or without measurements)` };
        } else if (c === '-' || (c >= '0' && c <= '9')) {
          NUMBER.lastIndex = i;
          const m = NUMBER.exec(s);
          if (!m) return { position: c === '-' ? i + 1 : i, message: 'malformed number' };
          i += m[0].length;
          expect = 'after';
        } else if (s.startsWith('true', i) || s.startsWith('null', i)) {
          i += 4;
          expect = 'after';
        } else if (s.startsWith('false', i)) {
          i += 5;
          expect = 'after';
        } else if (c === 't' || c === 'f' || c === 'n') {
          return { position: i, message: `invalid literal ${JSON.stringify(/^[A-Za-z]*/.exec(s.slice(i, i + 16))?.[0] ?? c)}, expected true, false or null` };
        } else {
          return { position: i, message: `unexpected ${describeChar(c)}, expected a value` };
        }
        break;
      }
      case 'key-or-close':
      case 'key': {
        if (c === '}' && expect === 'key-or-close') {
          stack.pop();
          i++;
          expect = 'after';
          break;
        }
        if (c !== '"') return { position: i, message: `unexpected ${describeChar(c)}, expected a double-quoted property name` };
        const r = string(i);
        if (typeof r !== 'number') return r;
        i = r;
        while (i < n && ' \t\r\n'.includes(s[i])) i++;
        if (s[i] !== ':') return { position: i, message: `unexpected ${describeChar(s[i])}, expected ':' after a property name` };
        i++;
        expect = 'value';
        break;
      }
      case 'after': {
        if (stack.length === 0) return { position: i, message: `unexpected ${describeChar(c)} after the JSON value` };
        const top = stack[stack.length - 1];
        if (c === ',') {
          i++;
          expect = top === 1 ? 'key' : 'value';
        } else if ((top === 1 && c === '}') || (top === 0 && c === ']')) {
          stack.pop();
          i++;
        } else {
          return { position: i, message: `unexpected ${describeChar(c)}, expected ',' or '${top === 1 ? '}' : ']'}'` };
        }
        break;
      }
    }
  }
}
