// Streaming reader: splits FeatureCollections, NDJSON and GeoJSON Text Sequences of any size into one feature at a time.
import { basename } from 'node:path';
import { ReadError } from '../report/errors.js';
import { concatBytes, gunzipIfNeeded, type Source } from './source.js';

export { fileSource, memorySource, stdinSource, streamSource, type Source } from './source.js';

/** One element of a top-level `features` array, or one record of an NDJSON / GeoJSON Text Sequence input. */
export interface FeatureEvent {
  kind: 'feature';
  /** From 0, per file. */
  index: number;
  /** 1-based position of the element's first byte. */
  line: number;
  column: number;
  /** The element's exact JSON (decoded from `bytes` when first asked for). */
  readonly text: string;
  /** The element's exact UTF-8 bytes (a view into the source's chunk). */
  readonly bytes: Uint8Array;
  /** The source name, so `parseFeature` can say where a syntax error is. */
  file: string;
}

const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const utf8Encoder = new TextEncoder();

/**
 * A feature whose text or bytes is made from the other only when asked for: the build hands the bytes to its
 * workers, so the reading thread never decodes them.
 */
class SplitFeature implements FeatureEvent {
  readonly kind = 'feature';
  constructor(
    readonly index: number, readonly line: number, readonly column: number, readonly file: string,
    private raw: Uint8Array | undefined, private decoded: string | undefined,
  ) {}

  get text(): string { return (this.decoded ??= utf8Decoder.decode(this.raw)); }
  get bytes(): Uint8Array { return (this.raw ??= utf8Encoder.encode(this.decoded)); }
}

/** Every top-level member but `features` of an object whose `features` were streamed, once, after the last feature. */
export interface MembersEvent {
  kind: 'members';
  members: Record<string, unknown>;
}

/** The single top-level value of a file that is not a streamed FeatureCollection (a descriptor, a bare Feature...). */
export interface DocumentEvent {
  kind: 'document';
  index: number;
  line: number;
  column: number;
  value: unknown;
}

export type ReadEvent = FeatureEvent | MembersEvent | DocumentEvent;

/** Events of one source, in input order. Throws `ReadError` on syntax errors the splitter sees and on I/O errors. */
export async function* readDocuments(source: Source): AsyncGenerator<ReadEvent> {
  for await (const events of readEventBatches(source)) yield* events;
}

/**
 * The events of `readDocuments`, a chunk's worth at a time (one await per chunk rather than per feature, for a
 * consumer that handles events synchronously). Each array is valid until the next is asked for.
 */
export async function* readEventBatches(source: Source): AsyncGenerator<readonly ReadEvent[]> {
  const events: ReadEvent[] = [];
  const splitter = new Splitter(source.name, events);
  let chunks: AsyncIterable<Uint8Array>;
  try {
    // Built-in sources already decompress; this catches gzip from any other Source (a no-op on JSON bytes).
    chunks = gunzipIfNeeded(source.open());
  } catch (e) {
    throw ioError(source.name, e);
  }
  const it = chunks[Symbol.asyncIterator]();
  try {
    for (;;) {
      let r: IteratorResult<Uint8Array>;
      try {
        r = await it.next();
      } catch (e) {
        throw ioError(source.name, e);
      }
      if (r.done) break;
      let failure: unknown;
      try {
        splitter.push(r.value);
      } catch (e) {
        failure = e;
      }
      // Handing over a chunk's events before reading the next chunk keeps memory at one chunk's worth of features.
      // Events before a syntax error go out first, so what the consumer sees never depends on where chunks end.
      if (events.length > 0) yield events;
      events.length = 0;
      if (failure !== undefined) throw failure;
    }
    let failure: unknown;
    try {
      splitter.end();
    } catch (e) {
      failure = e;
    }
    if (events.length > 0) yield events;
    if (failure !== undefined) throw failure;
  } finally {
    // A consumer that stops early must not leave the file open.
    try {
      await it.return?.();
    } catch {
      // The source already failed; its error is the one being thrown.
    }
  }
}

/** JSON.parse of a feature event; a syntax error becomes a `ReadError` at its absolute line and column in the input. */
export function parseFeature(ev: FeatureEvent): unknown {
  try {
    return JSON.parse(ev.text);
  } catch (e) {
    throw jsonSyntaxError(ev.file, ev.text, ev.line, ev.column, e);
  }
}

const LAYER_EXTENSIONS = new Set(['.json', '.geojson', '.ndjson', '.geojsonl', '.geojsons', '.gz']);

/** Default vector layer id of an input: its file name without data extensions (`cells.geojson.gz` → `cells`); stdin → `features`. */
export function layerNameFor(path: string): string {
  if (path === '-' || path === '') return 'features';
  let name = basename(path);
  for (;;) {
    const dot = name.lastIndexOf('.');
    if (dot <= 0 || !LAYER_EXTENSIONS.has(name.slice(dot).toLowerCase())) break;
    name = name.slice(0, dot);
  }
  return name || 'features';
}

function ioError(file: string, e: unknown): ReadError {
  if (e instanceof ReadError) return e;
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err?.code === 'string' ? err.code : undefined;
  const text = typeof err?.message === 'string' ? err.message : String(e);
  const message =
    code === 'ENOENT' ? 'no such file'
    : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
    : code === 'EISDIR' ? 'is a directory, not a file'
    : code?.startsWith('Z_') ? `not a valid gzip stream (${text})`
    : `cannot read: ${text}`;
  return new ReadError(file, 0, 0, message, { cause: e });
}

// ---------------------------------------------------------------------------------------------------------------
// Error positions inside a value that JSON.parse rejected.

/**
 * Turns a JSON.parse failure on `text` (which starts at `line`/`column` of `file`) into a ReadError at the absolute
 * position. V8 names the position ("at position N") for most errors but not for "Unexpected token" or the end of
 * input, so a small locator finds it then.
 */
export function jsonSyntaxError(file: string, text: string, line: number, column: number, e: unknown): ReadError {
  const v8 = e instanceof Error ? e.message : String(e);
  const m = /\bat position (\d+)/.exec(v8);
  let position: number;
  let message: string;
  if (m) {
    position = Number(m[1]);
    message = v8
      .replace(/\s*in JSON at position \d+/, '')
      .replace(/\s*\(line \d+ column \d+\)/, '');
  } else {
    const found = locateJsonError(text);
    position = found ? found.position : text.length;
    message = found ? found.message : v8;
  }
  const at = positionToLineColumn(text, Math.min(position, text.length), line, column);
  return new ReadError(file, at.line, at.column, message, { cause: e });
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
          return { position: i, message: 'invalid literal, expected true, false or null' };
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

// ---------------------------------------------------------------------------------------------------------------
// The byte-level splitter.

const enum S {
  /** Between top-level values. */
  Top,
  /** Inside a UTF-8 byte order mark at the very start. */
  Bom,
  /** Scanning a top-level value kept whole (a sequence record, or a first value that is not an object). */
  TopValue,
  /** After the `{` of the first top-level object: a key or `}`. */
  ObjOpen,
  ObjKey,
  ObjColon,
  /** After `:`: the start of a member value. */
  ObjValue,
  ObjValueIn,
  /** After a member: `,` or `}`. */
  ObjNext,
  /** After `,`: a key. */
  ObjKeyRequired,
  /** After the `[` of a streamed `features`: an element or `]`. */
  ArrOpen,
  ArrElementRequired,
  ArrElementIn,
  ArrNext,
}

/** Bytes of one value that may span chunks: the tails of earlier chunks plus where it starts in the current one. */
class Capture {
  active = false;
  start = 0;
  parts: Uint8Array[] = [];
  length = 0;

  begin(at: number): void {
    this.active = true;
    this.start = at;
    this.parts.length = 0;
    this.length = 0;
  }

  /** At the end of a chunk: keep a copy of the tail (sources may reuse their buffers). */
  carry(chunk: Uint8Array): void {
    if (!this.active) return;
    const tail = chunk.slice(this.start);
    this.parts.push(tail);
    this.length += tail.length;
    this.start = 0;
  }

  finish(chunk: Uint8Array, end: number): Uint8Array {
    this.active = false;
    // A plain view, not chunk.subarray(): on a Buffer that goes through Buffer's species machinery, per feature.
    if (this.parts.length === 0) return new Uint8Array(chunk.buffer, chunk.byteOffset + this.start, end - this.start);
    const last = new Uint8Array(chunk.buffer, chunk.byteOffset, end);
    const out = concatBytes([...this.parts, last], this.length + last.length);
    this.parts.length = 0;
    this.length = 0;
    return out;
  }

  drop(): void {
    this.active = false;
    this.parts.length = 0;
    this.length = 0;
  }
}

function isValueStart(b: number): boolean {
  return b === 0x7b || b === 0x5b || b === 0x22 || b === 0x2d || (b >= 0x30 && b <= 0x39) || b === 0x74 || b === 0x66 || b === 0x6e;
}

function isWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** Bytes that end a number or literal. */
function isScalarEnd(b: number): boolean {
  return isWhitespace(b) || b === 0x2c || b === 0x5d || b === 0x7d || b === 0x5b || b === 0x7b || b === 0x22 || b === 0x3a || b === 0x1e;
}

function describeByte(b: number): string {
  if (b >= 0x21 && b < 0x7f) return `'${String.fromCharCode(b)}'`;
  if (b === 0x1e) return 'record separator (0x1E)';
  if (b >= 0x80) return `byte 0x${b.toString(16).toUpperCase()}`;
  return `control character U+${b.toString(16).toUpperCase().padStart(4, '0')}`;
}

const RS = 0x1e;

class Splitter {
  private state = S.Top;
  /** Absolute offset of the current chunk's first byte. */
  private abs = 0;
  private line = 1;
  /** Absolute offset of the first byte of the current line (columns are offsets from it). */
  private lineStart = 0;

  // Scanner state of the value in progress.
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;
  private valueLine = 0;
  private valueColumn = 0;

  /** Bytes of the value being scanned (element, member key or value, sequence record). */
  private readonly value = new Capture();
  /** The whole first top-level object, until its `features` start streaming. */
  private readonly whole = new Capture();
  private wholeLine = 0;
  private wholeColumn = 0;

  private valuesSeen = 0;
  /** Records are features: the input started with RS or holds more than one top-level value. */
  private sequence = false;
  private streaming = false;
  private pending: { text: string; line: number; column: number } | null = null;
  private featureIndex = 0;
  private members: Record<string, unknown> = {};
  private key = '';
  private decoder = new TextDecoder('utf-8', { ignoreBOM: true });

  constructor(
    private readonly file: string,
    private readonly out: ReadEvent[],
  ) {}

  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      switch (this.state) {
        case S.ArrElementIn: {
          const end = this.scan(chunk, i);
          if (end < 0) {
            i = n;
            break;
          }
          this.emitFeature(this.value.finish(chunk, end), this.valueLine, this.valueColumn);
          this.state = S.ArrNext;
          i = end;
          break;
        }
        case S.ArrNext:
        case S.ArrOpen:
        case S.ArrElementRequired: {
          const b = chunk[i];
          if (isWhitespace(b)) {
            if (b === 0x0a) this.newline(i);
            i++;
          } else if (this.state === S.ArrNext) {
            if (b === 0x2c) this.state = S.ArrElementRequired;
            else if (b === 0x5d) this.state = S.ObjNext;
            else this.fail(i, `unexpected ${describeByte(b)} after a feature, expected ',' or ']'`);
            i++;
          } else if (b === 0x5d && this.state === S.ArrOpen) {
            this.state = S.ObjNext;
            i++;
          } else if (isValueStart(b)) {
            this.beginValue(chunk, i);
            this.state = S.ArrElementIn;
            if (!this.scalar) i++;
          } else {
            this.fail(i, b === 0x5d ? "unexpected ']' after ',' (trailing comma)" : `unexpected ${describeByte(b)}, expected a feature`);
          }
          break;
        }
        case S.Top:
          i = this.top(chunk, i);
          break;
        case S.Bom: {
          // Only EF BB BF: anything else after EF is not UTF-8 JSON.
          const expected = this.abs + i === 1 ? 0xbb : 0xbf;
          if (chunk[i] !== expected) this.fail(i, `unexpected ${describeByte(chunk[i])} in a byte order mark`);
          i++;
          if (expected === 0xbf) {
            this.lineStart = 3;
            this.state = S.Top;
          }
          break;
        }
        case S.TopValue: {
          const end = this.scan(chunk, i);
          if (end < 0) {
            i = n;
            break;
          }
          const text = this.decoder.decode(this.value.finish(chunk, end));
          if (this.sequence) this.emitFeature(text, this.valueLine, this.valueColumn);
          else this.pending = { text, line: this.valueLine, column: this.valueColumn };
          this.state = S.Top;
          i = end;
          break;
        }
        case S.ObjValueIn: {
          const end = this.scan(chunk, i);
          if (end < 0) {
            i = n;
            break;
          }
          const text = this.decoder.decode(this.value.finish(chunk, end));
          this.setMember(this.key, this.parse(text, this.valueLine, this.valueColumn));
          this.state = S.ObjNext;
          i = end;
          break;
        }
        case S.ObjKey: {
          const end = this.scan(chunk, i);
          if (end < 0) {
            i = n;
            break;
          }
          this.key = this.parse(this.decoder.decode(this.value.finish(chunk, end)), this.valueLine, this.valueColumn) as string;
          this.state = S.ObjColon;
          i = end;
          break;
        }
        default:
          i = this.objectPunctuation(chunk, i);
      }
    }
    this.value.carry(chunk);
    this.whole.carry(chunk);
    this.abs += n;
  }

  end(): void {
    switch (this.state) {
      case S.Top:
        break;
      case S.TopValue:
      case S.ArrElementIn:
        if (this.scalar) {
          // A number or literal ends with the input (`42` alone, a last NDJSON line `null`).
          const empty = new Uint8Array(0);
          const text = this.decoder.decode(this.value.finish(empty, 0));
          if (this.state === S.TopValue) {
            if (this.sequence) this.emitFeature(text, this.valueLine, this.valueColumn);
            else this.pending = { text, line: this.valueLine, column: this.valueColumn };
            break;
          }
        }
        this.failAtEnd(`unexpected end of input: the value that starts at line ${this.valueLine}, column ${this.valueColumn} is not closed`);
        break;
      default:
        this.failAtEnd(
          this.streaming
            ? `unexpected end of input inside the FeatureCollection that starts at line ${this.wholeLine}, column ${this.wholeColumn}`
            : `unexpected end of input: the object that starts at line ${this.wholeLine}, column ${this.wholeColumn} is not closed`,
        );
    }
    if (this.pending) {
      const p = this.pending;
      this.pending = null;
      this.out.push({ kind: 'document', index: 0, line: p.line, column: p.column, value: this.parse(p.text, p.line, p.column) });
    } else if (this.valuesSeen === 0 && !this.sequence) {
      throw new ReadError(this.file, this.line, this.abs - this.lineStart + 1, 'no JSON value: the input is empty');
    }
  }

  /** Between top-level values: whitespace, RS, a byte order mark at offset 0, or the start of a value. */
  private top(chunk: Uint8Array, i: number): number {
    const b = chunk[i];
    if (isWhitespace(b)) {
      if (b === 0x0a) this.newline(i);
      return i + 1;
    }
    if (b === 0xef && this.abs + i === 0) {
      this.state = S.Bom;
      return i + 1;
    }
    if (this.streaming) this.fail(i, `unexpected ${describeByte(b)} after the end of the FeatureCollection`);
    if (b === RS) {
      this.startSequence();
      return i + 1;
    }
    if (!isValueStart(b)) this.fail(i, `unexpected ${describeByte(b)}, expected a JSON value`);
    if (this.valuesSeen > 0) this.startSequence();
    this.valuesSeen++;
    if (!this.sequence && b === 0x7b) {
      // The first object may be a FeatureCollection whose `features` must stream: parse it member by member, and keep
      // its bytes in case it turns out to be a single document after all.
      this.whole.begin(i);
      this.wholeLine = this.line;
      this.wholeColumn = this.column(i);
      this.members = {};
      this.state = S.ObjOpen;
      return i + 1;
    }
    this.beginValue(chunk, i);
    this.state = S.TopValue;
    return this.scalar ? i : i + 1;
  }

  /** Whitespace, `:`, `,`, `}` and value starts around the members of the first top-level object. */
  private objectPunctuation(chunk: Uint8Array, i: number): number {
    const b = chunk[i];
    if (isWhitespace(b)) {
      if (b === 0x0a) this.newline(i);
      return i + 1;
    }
    switch (this.state) {
      case S.ObjOpen:
      case S.ObjKeyRequired:
        if (b === 0x22) {
          this.beginValue(chunk, i);
          this.state = S.ObjKey;
          return i + 1;
        }
        if (b === 0x7d && this.state === S.ObjOpen) return this.closeObject(chunk, i);
        return this.fail(
          i,
          b === 0x7d ? "unexpected '}' after ',' (trailing comma)" : `unexpected ${describeByte(b)}, expected a double-quoted property name`,
        );
      case S.ObjColon:
        if (b !== 0x3a) this.fail(i, `unexpected ${describeByte(b)}, expected ':' after the property name`);
        this.state = S.ObjValue;
        return i + 1;
      case S.ObjValue:
        if (!isValueStart(b)) this.fail(i, `unexpected ${describeByte(b)}, expected a value`);
        if (this.key === 'features' && b === 0x5b && this.mayStream()) {
          this.streaming = true;
          this.whole.drop();
          this.state = S.ArrOpen;
          return i + 1;
        }
        this.beginValue(chunk, i);
        this.state = S.ObjValueIn;
        return this.scalar ? i : i + 1;
      case S.ObjNext:
        if (b === 0x2c) {
          this.state = S.ObjKeyRequired;
          return i + 1;
        }
        if (b === 0x7d) return this.closeObject(chunk, i);
        return this.fail(i, `unexpected ${describeByte(b)}, expected ',' or '}'`);
      default:
        return this.fail(i, 'internal reader error: unknown state');
    }
  }

  /** Stream `features` unless members seen so far say this is not a FeatureCollection. */
  private mayStream(): boolean {
    const type = this.members.type;
    return (type === undefined || type === 'FeatureCollection') && !('tilejson' in this.members);
  }

  private closeObject(chunk: Uint8Array, i: number): number {
    if (this.streaming) {
      this.out.push({ kind: 'members', members: this.members });
      this.members = {};
      // Back to the top level, where `streaming` now lets only whitespace through.
      this.state = S.Top;
    } else {
      const text = this.decoder.decode(this.whole.finish(chunk, i + 1));
      this.pending = { text, line: this.wholeLine, column: this.wholeColumn };
      this.members = {};
      this.state = S.Top;
    }
    return i + 1;
  }

  private setMember(key: string, value: unknown): void {
    // defineProperty, not assignment: a `__proto__` member must stay data, as JSON.parse would keep it.
    Object.defineProperty(this.members, key, { value, enumerable: true, writable: true, configurable: true });
  }

  /** More than one top-level value, or RS: every record is a feature, including a first value held back as a document. */
  private startSequence(): void {
    if (this.sequence) return;
    this.sequence = true;
    if (this.pending) {
      const p = this.pending;
      this.pending = null;
      this.emitFeature(p.text, p.line, p.column);
    }
  }

  private emitFeature(content: string | Uint8Array, line: number, column: number): void {
    const text = typeof content === 'string' ? content : undefined;
    const bytes = typeof content === 'string' ? undefined : content;
    this.out.push(new SplitFeature(this.featureIndex++, line, column, this.file, bytes, text));
  }

  private beginValue(chunk: Uint8Array, i: number): void {
    const b = chunk[i];
    this.value.begin(i);
    this.valueLine = this.line;
    this.valueColumn = this.column(i);
    this.scalar = !(b === 0x7b || b === 0x5b || b === 0x22);
    this.inString = b === 0x22;
    this.depth = b === 0x22 ? 0 : 1;
    this.escaped = false;
  }

  /**
   * Advances through the value in progress from `i` (the byte after its first one, or its first for scalars).
   * Returns the offset just past its end, or -1 when the chunk ran out first. Only strings and bracket depth are
   * tracked: what lies between is checked by JSON.parse of the value, whose errors `parseFeature` maps back here.
   */
  private scan(chunk: Uint8Array, i: number): number {
    // The length read here, not passed in: a bound V8 can see is the array's own lets it drop the bounds checks.
    const n = chunk.length;
    if (this.scalar) {
      while (i < n && !isScalarEnd(chunk[i])) i++;
      return i < n ? i : -1;
    }
    // Locals, not fields, in the loop that sees every byte of every feature.
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    let line = this.line;
    let lineStart = this.lineStart;
    const abs = this.abs;
    let end = -1;
    let rs = -1;
    // Two tight loops (inside and outside strings) rather than one with a state test per byte; outside strings the
    // common bytes (digits, '.', ',', '-') fall through two comparisons. Measured 1.4x faster than a switch.
    outer: while (i < n) {
      if (inString) {
        for (; i < n; i++) {
          const b = chunk[i];
          if (escaped) {
            escaped = false;
          } else if (b === 0x22) {
            inString = false;
            i++;
            if (depth === 0) {
              end = i;
              break outer;
            }
            continue outer;
          } else if (b === 0x5c) {
            escaped = true;
            continue;
          }
          if (b === 0x0a) {
            line++;
            lineStart = abs + i + 1;
          }
        }
        break;
      }
      for (; i < n; i++) {
        const b = chunk[i];
        if (b >= 0x5b) {
          if (b === 0x5b || b === 0x7b) {
            depth++;
          } else if (b === 0x5d || b === 0x7d) {
            if (--depth === 0) {
              end = i + 1;
              break outer;
            }
          }
        } else if (b <= 0x22) {
          if (b === 0x22) {
            inString = true;
            i++;
            continue outer;
          }
          if (b === 0x0a) {
            line++;
            lineStart = abs + i + 1;
          } else if (b === RS) {
            rs = i;
            break outer;
          }
        }
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    this.line = line;
    this.lineStart = lineStart;
    // Failing here rather than inside the loop keeps calls out of the loop body, which V8 compiles tighter.
    if (rs >= 0) {
      this.fail(rs, `unexpected record separator (0x1E) inside the value that starts at line ${this.valueLine}, column ${this.valueColumn} (truncated record?)`);
    }
    return end;
  }

  private parse(text: string, line: number, column: number): unknown {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw jsonSyntaxError(this.file, text, line, column, e);
    }
  }

  private newline(i: number): void {
    this.line++;
    this.lineStart = this.abs + i + 1;
  }

  private column(i: number): number {
    return this.abs + i - this.lineStart + 1;
  }

  private fail(i: number, message: string): never {
    throw new ReadError(this.file, this.line, this.column(i), message);
  }

  private failAtEnd(message: string): never {
    throw new ReadError(this.file, this.line, this.abs - this.lineStart + 1, message);
  }
}
