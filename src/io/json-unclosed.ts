// A value never closed (the input ends inside it, or it outgrows the value limit): its syntax error, however far in.
import { ReadError } from '../report/errors.js';
import { controlInStringMessage, faultError, faultOf, jsonPathOf, UNTERMINATED } from './json-errors.js';
import { describeByte } from './json-value.js';

/**
 * How many bytes of a value never closed JSON.parse reads, for its exact words about any fault there: more than most
 * features take, and a bound on the time and memory it costs (a gzip bomb of `[`, whose MiB V8 takes 0.3 s to parse).
 */
const UNCLOSED_WINDOW = 1 << 20;
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** The bytes held of a value never closed, in the pieces they came in. */
export interface HeldBytes {
  head(max: number): Uint8Array;
  readonly length: number;
  readonly parts: readonly Uint8Array[];
}

/**
 * The first syntax error in a value never closed, whose bytes so far `held` holds (from `line`/`column`): the input
 * ends inside it (`ended`), or it grows past the value limit. Its first MiB is parsed; past it, one pass over the
 * bytes follows its strings. A string never closed is named where it opens, and one whose closing quote is missing
 * (it then ends at the next string's opening quote, and the rest reads inside out) where the quoting goes wrong after
 * it, not at the end of the input or the limit. `what` goes first (`feature 3: `); null when nothing is wrong before
 * the bytes end.
 */
export function unclosedValueError(file: string, held: HeldBytes, ended: boolean, line: number, column: number, what = '', pointer = ''): ReadError | null {
  const text = utf8.decode(held.head(UNCLOSED_WINDOW));
  const complete = ended && held.length <= UNCLOSED_WINDOW;
  let e: unknown;
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    e = err;
  }
  const found = faultOf(text, e);
  // Running out of bytes is what the caller says already; and in a part, so is a fault the cut makes (a string,
  // number or escape cut short).
  const cut = complete ? found.position >= text.length : found.position >= text.length - 16 || found.message.startsWith('unterminated string');
  if (!cut) return faultError(file, text, line, column, found, e, pointer, what);
  if (held.length <= UNCLOSED_WINDOW) return null;
  const far = quotingFault(held.parts, ended, line, column);
  if (far === null) return null;
  const path = jsonPathOf(far.keys, pointer);
  return new ReadError(file, far.line, far.column, `${what}${far.message}${path === null ? '' : ` (${path})`}`);
}

/** A fault found by `quotingFault`: where, what, and the keys reached there (as `jsonKeysAt` gives them). */
interface FarFault { line: number; column: number; message: string; keys: (string | number)[] | null }

/** Nesting deeper than this is no annotation (a gzip bomb of `[`): the pass gives up there, naming nothing. */
const MAX_DEPTH = 1 << 16;
/** The bytes inside a string that change nothing unless something is pending: all but quotes, backslashes and line ends. */
const PLAIN_IN_STRING = Uint8Array.from({ length: 256 }, (_, b) => (b === 0x22 || b === 0x5c || b === 0x0a || b === 0x0d ? 0 : 1));
/** The first byte from `i` on inside a string that is not plain (`part.length` if none): a loop V8 compiles apart. */
function plainEnd(part: Uint8Array, i: number): number {
  const n = part.length;
  while (i < n && PLAIN_IN_STRING[part[i]] === 1) i++;
  return i;
}

/** Bytes of a member name kept for the JSON path: a name the quoting turned inside out may run for megabytes. */
const KEY_SHOWN = 64;

/**
 * One pass over the bytes of a value from its start, in bounded memory: its strings, brackets and member names, as
 * `jsonKeysAt` walks them, trusting what lies between. It finds a string the bytes end inside (with `ended`: never
 * closed, named where it opens), a line end inside a string (named there when a quote follows it, as JSON.parse
 * names it; else where the string opens), and a string followed by what no string can be followed by, where the
 * quoting went wrong: the string before it then opens where its closing quote is missing, and that place is named too.
 */
function quotingFault(parts: readonly Uint8Array[], ended: boolean, line0: number, column0: number): FarFault | null {
  // The open arrays and objects, one level each: typed arrays, as a coordinate array opens and closes one per position.
  let depth = 0;
  const isArray = new Uint8Array(MAX_DEPTH);
  const expectKey = new Uint8Array(MAX_DEPTH);
  const index = new Float64Array(MAX_DEPTH);
  const names: string[] = [];
  let line = line0;
  // Offset (in the value) of the current line's first byte: the first line starts `column0 - 1` bytes before it.
  let lineStart = 1 - column0;
  // A CR that ends a part counted as a line break: a LF starting the next one (its CR LF) takes it back.
  let endedWithCR = false;
  let inString = false;
  let escaped = false;
  let isKey = false;
  let key: number[] = [];
  let opened = { line: 0, column: 0 };
  /** A line end in the current string: a fault there if a quote follows, else the string is never closed. */
  let lineEnd: { line: number; column: number; code: number } | null = null;
  /** Just after a string: what must follow it (`:` after a member name), or null. */
  let closed: 'key' | 'value' | null = null;
  let base = 0;
  for (const part of parts) {
    const n = part.length;
    if (n === 0) continue;
    if (endedWithCR && part[0] === 0x0a) line--;
    endedWithCR = part[n - 1] === 0x0d;
    for (let i = 0; i < n; i++) {
      // Between strings with nothing pending, the brackets and commas are all there is to follow: a loop of their own.
      if (!inString && closed === null) {
        for (; i < n; i++) {
          const b = part[i];
          if (b === 0x2c) {
            if (depth > 0) {
              if (isArray[depth - 1] === 1) index[depth - 1]++;
              else expectKey[depth - 1] = 1;
            }
          } else if (b === 0x5b || b === 0x7b) {
            if (depth === MAX_DEPTH) return null;
            isArray[depth] = b === 0x5b ? 1 : 0;
            expectKey[depth] = b === 0x7b ? 1 : 0;
            index[depth] = 0;
            names[depth++] = '';
          } else if (b === 0x5d || b === 0x7d) {
            if (depth > 0) depth--;
          } else if (b === 0x0a || (b === 0x0d && (i + 1 === n || part[i + 1] !== 0x0a))) {
            line++;
            lineStart = base + i + 1;
          } else if (b === 0x22) {
            break;
          }
        }
        if (i === n) break;
      } else if (inString && !escaped && !(isKey && key.length <= KEY_SHOWN + 2)) {
        i = plainEnd(part, i);
        if (i === n) break;
      }
      const b = part[i];
      const o = base + i;
      if (inString) {
        if (lineEnd !== null && b === 0x22) return { ...lineEnd, message: controlInStringMessage(lineEnd.code), keys: keysOf(depth, isArray, expectKey, index, names) };
        if (isKey && key.length <= KEY_SHOWN + 2) key.push(b);
        if (escaped) {
          escaped = false;
        } else if (b === 0x22) {
          inString = false;
          closed = isKey ? 'key' : 'value';
          if (isKey) {
            names[depth - 1] = keyText(key);
            expectKey[depth - 1] = 0;
            isKey = false;
          }
        } else if (b === 0x5c) {
          escaped = true;
        } else if ((b === 0x0a || b === 0x0d) && lineEnd === null) {
          lineEnd = { line, column: o - lineStart + 1, code: b };
        }
      } else if (b === 0x22 && closed === null) {
        inString = true;
        isKey = depth > 0 && expectKey[depth - 1] === 1;
        key = [b];
        lineEnd = null;
        opened = { line, column: o - lineStart + 1 };
      } else if (closed !== null && b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) {
        const container = depth === 0 ? '' : isArray[depth - 1] === 1 ? ']' : '}';
        const expected = closed === 'key' ? ':' : container === '' ? '' : `,${container}`;
        if (!expected.includes(String.fromCharCode(b))) {
          return { line, column: o - lineStart + 1, message: afterString(b, closed, container, opened), keys: keysOf(depth, isArray, expectKey, index, names) };
        }
        closed = null;
        // The byte itself (`,` or a closing bracket) is the loop's to take.
        i--;
        continue;
      }
      // Lines break as the splitter breaks them: at a LF, or at a CR not followed by one.
      if (b === 0x0a || (b === 0x0d && (i + 1 === n || part[i + 1] !== 0x0a))) {
        line++;
        lineStart = o + 1;
      }
    }
    base += n;
  }
  // Bytes that end inside a string: a string never closed when the input ended there, else only a cut.
  return inString && ended ? { ...opened, message: UNTERMINATED, keys: keysOf(depth, isArray, expectKey, index, names) } : null;
}

/** The keys reached at `depth`, as `jsonKeysAt` gives them: those of the open levels, less a name that is due. */
function keysOf(depth: number, isArray: Uint8Array, expectKey: Uint8Array, index: Float64Array, names: string[]): (string | number)[] | null {
  if (depth === 0) return null;
  const keys = Array.from({ length: depth }, (_, d) => (isArray[d] === 1 ? index[d] : names[d]));
  if (expectKey[depth - 1] === 1) keys.pop();
  return keys;
}

/** What follows a string where nothing may (`b`), in the scanner's words, with where that string opens. */
function afterString(b: number, closed: 'key' | 'value', container: string, opened: { line: number; column: number }): string {
  const found = describeByte(b);
  const words = closed === 'key' ? `unexpected ${found}, expected ':' after a property name`
    : container === '' ? `unexpected ${found} after the JSON value` : `unexpected ${found}, expected ',' or '${container}'`;
  return `${words}: the string before it opens at line ${opened.line}, column ${opened.column}; is its closing quote missing?`;
}

/** A member name from its bytes, quotes included (past KEY_SHOWN + 2, its first KEY_SHOWN characters and '…'). */
function keyText(bytes: number[]): string {
  const raw = Uint8Array.from(bytes);
  if (bytes.length > KEY_SHOWN + 2) return `${utf8.decode(raw.subarray(1, KEY_SHOWN + 1))}…`;
  try {
    return JSON.parse(utf8.decode(raw)) as string;
  } catch {
    return utf8.decode(raw.subarray(1, -1));
  }
}
