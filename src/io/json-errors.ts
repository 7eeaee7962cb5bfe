// Where JSON input is wrong: a JSON.parse failure as a ReadError in our words at its absolute position, found by a second, small parser.
import { ReadError } from '../report/errors.js';
import { pointerOf } from '../validate/issue.js';
import { describeChar, notAName, notAValue } from './json-words.js';

/**
 * Turns a JSON.parse failure on `text` (which starts at `line`/`column` of `file`) into a ReadError at the absolute
 * position, saying what was found there. V8 names the position ("at position N") for most errors but not for
 * "Unexpected token" or the end of input, so a small locator finds it then. `pointer`: where `text` lies in its
 * document (a collection member's value), so that the path named is the document's.
 */
export function jsonSyntaxError(file: string, text: string, line: number, column: number, e: unknown, pointer = ''): ReadError {
  return faultError(file, text, line, column, faultOf(text, e), e, pointer);
}

/** The fault JSON.parse failed with (`e`) on `text`: where and what, in the reader's words. */
export function faultOf(text: string, e: unknown): JsonFault {
  const v8 = e instanceof Error ? e.message : String(e);
  const m = /\bat position (\d+)/.exec(v8);
  // A non-finite number where V8 stopped (QuPath before 0.5) gets the scanner's message, which says where it comes
  // from; V8 names the position past a minus sign ("-Infinity"), and none for a bare NaN or Infinity.
  const p = m && !/^(?:NaN|Infinity)/.test(text.slice(Number(m[1]), Number(m[1]) + 8)) ? Math.min(Number(m[1]), text.length) : -1;
  // V8's words (which change from one Node version to the next) reach the user only in its "Expected ..." messages:
  // one without a mapping here gets the scanner's words, and V8's only if the scanner finds nothing wrong.
  return (p >= 0 ? fromV8(text, p, v8) : null) ?? locateJsonError(text)
    ?? { position: p >= 0 ? p : text.length, message: v8.replace(/\s*(?:in|after) JSON at position \d+/, '').replace(/\s*\(line \d+ column \d+\)/, '') };
}

/** `found` as a ReadError at its absolute place, with the JSON path reached there; `what` goes first (`feature 3: `). */
export function faultError(file: string, text: string, line: number, column: number, found: JsonFault, e: unknown, pointer: string, what = ''): ReadError {
  const position = Math.min(found.position, text.length);
  let message = found.message;
  const where = jsonPathAt(text, position, pointer);
  if (where !== null) message += ` (${where})`;
  const at = positionToLineColumn(text, position, line, column);
  // A value opened on an earlier line that a line then opens anew: a line of NDJSON short of its closing bracket, which
  // the fault's own line (a whole feature) cannot show.
  if (at.line > line && at.column === 1 && text[position] === '{' && /^Expected ',' or/.test(message)) message += unclosedLine(line, at.line);
  return new ReadError(file, at.line, at.column, what + message, { cause: e });
}

/** What a value opened at line `opened` and opened anew at the start of line `line` says of its end. */
export function unclosedLine(opened: number, line: number): string {
  return `; the value opens at line ${opened}: is a closing '}' or ']' missing at the end of line ${line - 1}?`;
}

/** Files given as JSON that are something else, by the bytes they start with: what they are and what to do. */
const FOREIGN: readonly [number[], string][] = [
  [[0x50, 0x4b], 'the input is a ZIP archive (PK), not JSON: unzip it and give the files it holds'],
  [[0x42, 0x5a, 0x68], 'the input is bzip2-compressed (BZh), not JSON: decompress it (gzip is read as it is)'],
  [[0x28, 0xb5, 0x2f, 0xfd], 'the input is zstd-compressed (28 B5 2F FD), not JSON: decompress it (gzip is read as it is)'],
  [[0xfd, 0x37, 0x7a, 0x58, 0x5a], 'the input is xz-compressed (FD 37 7A 58 5A), not JSON: decompress it (gzip is read as it is)'],
  [[0x3c], "the input starts with '<': it is an HTML or XML page, not JSON (a web page saved in place of a download?)"],
  [[...Buffer.from('version https://git-lfs')], 'the input is a Git LFS pointer, not the file it stands for: fetch the file (git lfs pull)'],
  // QuPath's project data: users take it for where the annotations are, which QuPath exports as GeoJSON.
  [[0xac, 0xed], "the input is Java serialised data (AC ED), such as QuPath's .qpdata, not JSON: export the objects from QuPath as GeoJSON (File > Export objects as GeoJSON)"],
  // A pyramid given where annotations go: `validate slide.pmtiles` to check a build, or an output taken for an input.
  [[...Buffer.from('PMTiles')], 'the input is a PMTiles archive (a tile pyramid, such as build -o slide.pmtiles writes), not annotations: check it with verify, read it with inspect'],
  [[...Buffer.from('SQLite format 3\0')], 'the input is an SQLite database (such as an MBTiles pyramid), not JSON: export its annotations as GeoJSON'],
];

/**
 * What the input is when its first bytes, from `chunk[i]`, say it is no UTF-8 JSON: UTF-16 (its byte order mark), a
 * JPEG image, an archive, another compression than gzip, a web page...; null for anything else (or a signature the
 * chunk holds only part of: a source's chunks hold them whole, only a test's may end sooner).
 */
export function foreignStart(chunk: Uint8Array, i: number): string | null {
  const b = chunk[i];
  const known = FOREIGN.find(([sig]) => i + sig.length <= chunk.length && sig.every((v, k) => chunk[i + k] === v));
  if (known) return known[1];
  if (b !== 0xff && b !== 0xfe) return null;
  // The byte after, when this chunk holds it (a source's chunks do; only a test's may end here).
  const pair = i + 1 < chunk.length ? (b << 8) | chunk[i + 1] : b === 0xff ? 0xfffe : 0xfeff;
  if (pair === 0xfffe || pair === 0xfeff) {
    return `the input starts with a UTF-16 byte order mark (${b === 0xff ? 'FF FE' : 'FE FF'}): JSON is read as UTF-8; save the file as UTF-8 (Windows PowerShell 5 writes UTF-16 with >)`;
  }
  return pair === 0xffd8 ? 'the input is a JPEG image (FF D8), not JSON: a label mask is read from a lossless TIFF or PNG, whose JPEG artefacts would not be labels' : null;
}

/**
 * What a UTF-8 byte order mark at `chunk[i]`, past the input's first bytes, is: the mark of a file joined after
 * another (Windows tools start each file with one); null for other bytes. A chunk that ends inside the mark is taken
 * at its word: a source's chunks are 1 MiB, and the place named is right either way.
 */
export function strayBom(chunk: Uint8Array, i: number): string | null {
  const BOM = [0xef, 0xbb, 0xbf];
  if (!BOM.every((v, k) => i + k >= chunk.length || chunk[i + k] === v)) return null;
  return 'a UTF-8 byte order mark (EF BB BF) inside the input, which only its first bytes may hold: files joined (cat a.ndjson b.ndjson) that each start with one? give each file as an input of its own, or remove the marks';
}

/**
 * What follows a whole FeatureCollection or top-level array (`what`): another value is a second document, from files
 * joined (`cat a.json b.json`) or a collection per line; anything else is said as the byte it is (`described`).
 */
export function afterDocument(b: number, what: string, described: string): string {
  if (b !== 0x7b && b !== 0x5b) return `unexpected ${described} after the end of the ${what}`;
  return `a second JSON value starts here, after the end of the ${what}: a file holds one (files joined, as cat a.json b.json does?); give each file as an input of its own, or write one feature per line (NDJSON)`;
}

/**
 * V8's message about `s` (Node 20's texts), with the position `p` it names, in this reader's words, saying what
 * was found there; null for a message it does not know.
 */
function fromV8(s: string, p: number, v8: string): JsonFault | null {
  const what = v8.replace(/\s*in JSON at position \d+/, '').replace(/\s*\(line \d+ column \d+\)/, '');
  // "Expected ',' or ']' after array element": what it wanted, to which what it found is added.
  // Of a property name the scanner says more (a trailing comma, a name in single quotes or none), as hand-edited
  // JSON has them.
  if (/^Expected (?:double-quoted )?property name\b/.test(what)) return locateJsonError(s) ?? { position: p, message: `${what}, found ${describeChar(s[p])}` };
  if (/^Expected\b/.test(what)) return { position: p, message: `${what}, found ${describeChar(s[p])}` };
  // At the character after the backslash, or (\u) at the first that is no hex digit: the escape starts before.
  if (/^Bad escaped character/.test(what)) return escapeFault(s, s[p - 1] === '\\' ? p - 1 : p);
  if (/^Bad Unicode escape/.test(what)) return escapeFault(s, Math.max(0, s.lastIndexOf('\\u', p)));
  if (/^Bad control character/.test(what)) return controlInString(s, p);
  if (/^Unexpected non-whitespace character after JSON/.test(v8)) return { position: p, message: `unexpected ${describeChar(s[p])} after the JSON value` };
  // Numbers: read again from their first character, which the scanner's words then describe.
  if (/^(?:Unexpected number|No number after minus sign|Unterminated fractional number|Exponent part is missing a number)/.test(what)) {
    let start = p;
    while (start > 0 && /[-+.0-9eE]/.test(s[start - 1])) start--;
    const r = numberAt(s, start);
    return typeof r === 'number' ? null : r;
  }
  return null;
}

/**
 * `jsonKeysAt` as messages say it, after `prefix` (where `s` lies in its document): "JSON path /a/1", or "JSON path
 * (top level)"; null outside any array or object without a prefix.
 */
export function jsonPathAt(s: string, position: number, prefix = ''): string | null {
  return jsonPathOf(jsonKeysAt(s, position), prefix);
}

/** Keys reached (`jsonKeysAt`) as messages say them, after `prefix`; null outside any array or object without one. */
export function jsonPathOf(keys: readonly (string | number)[] | null, prefix = ''): string | null {
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

/**
 * Line and byte column of UTF-16 offset `position` in `text`, which starts at `line`/`column`. Lines break as the
 * splitter breaks them: at a LF, or at a CR not followed by one.
 */
function positionToLineColumn(text: string, position: number, line: number, column: number): { line: number; column: number } {
  let lastNewline = -1;
  let l = line;
  for (let k = 0; k < position; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(k + 1) !== 0x0a)) {
      l++;
      lastNewline = k;
    }
  }
  const bytes = Buffer.byteLength(text.slice(lastNewline + 1, position), 'utf8');
  return { line: l, column: lastNewline < 0 ? column + bytes : bytes + 1 };
}

/** A syntax error: where in the text (a UTF-16 offset), and what is wrong there. */
export interface JsonFault { position: number; message: string }

const ESCAPES = 'JSON knows \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; write a backslash as \\\\';

/** The escape whose backslash is `s[k]`, which JSON does not know (a Windows path's `\d`, a `\u` short of digits). */
function escapeFault(s: string, k: number): JsonFault {
  const c = s.codePointAt(k + 1);
  if (c === undefined) return { position: k, message: 'unexpected end of input after \'\\\' in a string' };
  if (c === 0x75) {
    let j = k + 2;
    while (j < k + 6 && /[0-9a-fA-F]/.test(s[j] ?? '')) j++;
    return { position: k, message: `invalid escape "${s.slice(k, j)}" in a string: \\u takes four hex digits, found ${describeChar(s[j])}` };
  }
  const shown = c < 0x20 || c === 0x7f ? `'\\' before ${describeChar(s[k + 1])}` : `"\\${String.fromCodePoint(c)}"`;
  return { position: k, message: `invalid escape ${shown} in a string (${ESCAPES})` };
}

/** The control characters JSON has a short escape for, with their names. */
const CONTROLS: Record<number, [string, string]> = {
  0x08: ['backspace', '\\b'], 0x09: ['tab', '\\t'], 0x0a: ['line feed', '\\n'], 0x0c: ['form feed', '\\f'], 0x0d: ['carriage return', '\\r'],
};

/**
 * A control character as it stands, unescaped, in a string at `s[j]`; a line end with no quote anywhere after it is
 * in a string never closed, said where that opens.
 */
function controlInString(s: string, j: number): JsonFault {
  const code = s.charCodeAt(j);
  if ((code === 0x0a || code === 0x0d) && s.indexOf('"', j) < 0) return unterminated(openingQuote(s, j));
  return { position: j, message: controlInStringMessage(code) };
}

/** What a control character `code` standing unescaped in a string is said to be. */
export function controlInStringMessage(code: number): string {
  const hex = code.toString(16).toUpperCase().padStart(4, '0');
  const [name, escape] = CONTROLS[code] ?? [undefined, `\\u${hex}`];
  // A line end in a string is more often a string never closed than a line break meant to be in it.
  const unclosed = code === 0x0a || code === 0x0d ? ' (or is the string\'s closing quote missing?)' : '';
  return `unescaped control character U+${hex}${name ? ` (${name})` : ''} in a string: write it as ${escape}${unclosed}`;
}

/** What a string never closed is said to be, at its opening quote. */
export const UNTERMINATED = 'unterminated string: the string that opens here has no closing \'"\'';

const unterminated = (start: number): JsonFault => ({ position: start, message: UNTERMINATED });

/** The opening quote of the string `s[j]` lies in: the last quote before it that no backslash escapes. */
function openingQuote(s: string, j: number): number {
  for (let k = j - 1; k >= 0; k--) {
    if (s.charCodeAt(k) !== 0x22) continue;
    let backslashes = 0;
    while (s.charCodeAt(k - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return k;
  }
  return j;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/**
 * The number starting at `s[i]` ('-' or a digit): the offset past its end, or what is wrong with it, shown from its
 * start up to the fault.
 */
function numberAt(s: string, i: number): number | JsonFault {
  let j = i;
  const fault = (why: string, shownTo = j): JsonFault => ({ position: j, message: `invalid number "${s.slice(i, shownTo)}": ${why}` });
  if (s[j] === '-') j++;
  if (!isDigit(s[j])) return fault(`a digit must follow '-', found ${describeChar(s[j])}`);
  if (s[j] === '0' && isDigit(s[j + 1])) {
    let end = ++j;
    while (isDigit(s[end])) end++;
    return fault('JSON numbers have no leading zeros', end);
  }
  while (isDigit(s[j])) j++;
  if (s[j] === '.') {
    j++;
    if (!isDigit(s[j])) return fault(`a digit must follow the decimal point, found ${describeChar(s[j])}`);
    while (isDigit(s[j])) j++;
  }
  if (s[j] === 'e' || s[j] === 'E') {
    const mark = s[j++];
    if (s[j] === '+' || s[j] === '-') j++;
    if (!isDigit(s[j])) return fault(`a digit must follow the exponent's '${mark}', found ${describeChar(s[j])}`);
    while (isDigit(s[j])) j++;
  }
  return j;
}

/** Finds the first JSON syntax error in `s` (position as a UTF-16 offset), or null if `s` is valid JSON. */
export function locateJsonError(s: string): JsonFault | null {
  const n = s.length;
  const stack: number[] = []; // 0 array, 1 object
  type Expect = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'after';
  let expect: Expect = 'value';
  let i = 0;
  const string = (start: number): number | JsonFault => {
    let j = start + 1;
    for (;;) {
      if (j >= n) return unterminated(start);
      const c = s.charCodeAt(j);
      if (c === 0x22) return j + 1;
      if (c < 0x20) return controlInString(s, j);
      if (c === 0x5c) {
        const e = s[j + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(s.slice(j + 2, j + 6))) return escapeFault(s, j);
          j += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) return escapeFault(s, j);
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
          const r = numberAt(s, i);
          if (typeof r !== 'number') return r;
          i = r;
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
          return { position: i, message: notAValue(c, expect === 'value' && stack[stack.length - 1] === 0) };
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
        if (c !== '"') return { position: i, message: notAName(s, i, expect === 'key') };
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
