// The byte-level splitter of JSON input: events (json-events.ts) one feature at a time, never the whole file as one string.
import { ReadError, ValueTooLargeError } from '../report/errors.js';
import { afterDocument, foreignStart, jsonSyntaxError, strayBom, unclosedLine } from './json-errors.js';
import { unclosedValueError } from './json-unclosed.js';
import { pointerToken } from '../validate/issue.js';
import { heldAgain, membersEvent, replacedBytes, SplitFeature, type HeldMember, type MemberRead, type ReadEvent, type ValueLimit } from './json-events.js';
import { repeatedName } from './json-names.js';
import { Capture, Cursor, describeByte, isValueStart, isWhitespace, RS, ValueScanner } from './json-value.js';

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
  /** After the `[` of a streamed `features` (or of a top-level array): an element or `]`. */
  ArrOpen,
  ArrElementRequired,
  ArrElementIn,
  ArrNext,
}

/** The byte-level splitter: bytes in by `push`, events out into the array it was given; `end` at the end of input. */
export class Splitter {
  private state = S.Top;
  /** Where the input stands: read by `readEventBatches` too, to say how far a gzip stream got before it broke off. */
  readonly at = new Cursor();
  /** The value being scanned (element, member key or value, sequence record). */
  private readonly value: ValueScanner;
  /** The whole first top-level object, until its `features` start streaming. */
  private readonly whole = new Capture();
  /** Where the first top-level object or array starts. */
  private wholeLine = 0;
  private wholeColumn = 0;

  private valuesSeen = 0;
  /** Records are features: the input started with RS or holds more than one top-level value. */
  private sequence = false;
  private streaming = false;
  /** What streams: a top-level array's elements, rather than a FeatureCollection's `features`. */
  private bareArray = false;
  /** The first top-level value, held (its own bytes) until a second one makes the input a sequence, or the input ends. */
  private pending: { content: Uint8Array | string; line: number; column: number; bytes?: Uint8Array } | null = null;
  private featureIndex = 0;
  /**
   * Members of the first top-level object as their JSON text, parsed only when its `features` turn out to stream: a
   * single document (a bare Feature of a million vertices) is parsed once, whole, not member by member first.
   */
  private readonly members = new Map<string, HeldMember>();
  private key = '';
  private keyRead: MemberRead['nameRead'];
  private decoder = new TextDecoder('utf-8', { ignoreBOM: true });

  constructor(
    private readonly file: string,
    private readonly out: ReadEvent[],
    private readonly limit: ValueLimit = { bytes: Infinity, why: '' },
  ) {
    this.value = new ValueScanner(file, this.at);
  }

  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    this.at.enter(chunk);
    while (i < n) {
      switch (this.state) {
        case S.ArrElementIn: {
          const end = this.value.scan(chunk, i);
          if (end < 0) {
            i = n;
            break;
          }
          this.emitFeature(this.value.bytes.finish(chunk, end), this.value.line, this.value.column, this.value.strings);
          this.state = S.ArrNext;
          i = end;
          break;
        }
        case S.ArrNext:
        case S.ArrOpen:
        case S.ArrElementRequired: {
          const b = chunk[i];
          if (isWhitespace(b)) {
            if (b === 0x0a || b === 0x0d) this.at.lineEnd(chunk, i);
            i++;
          } else if (this.state === S.ArrNext) {
            if (b === 0x2c) this.state = S.ArrElementRequired;
            else if (b === 0x5d) this.state = this.bareArray ? S.Top : S.ObjNext;
            else this.fail(i, `unexpected ${describeByte(b)} after feature ${this.featureIndex - 1}, expected ',' or ']'`);
            i++;
          } else if (b === 0x5d && this.state === S.ArrOpen) {
            this.state = this.bareArray ? S.Top : S.ObjNext;
            i++;
          } else if (isValueStart(b)) {
            this.value.begin(chunk, i, this.featureIndex);
            this.state = S.ArrElementIn;
            if (!this.value.scalar) i++;
          } else {
            this.fail(i, b === 0x5d ? `unexpected ']' after ',' (trailing comma after feature ${this.featureIndex - 1})` : `unexpected ${describeByte(b)}, expected feature ${this.featureIndex}`);
          }
          break;
        }
        case S.Top:
          i = this.top(chunk, i);
          break;
        case S.Bom: {
          // Only EF BB BF: anything else after EF is not UTF-8 JSON.
          const expected = this.at.abs + i === 1 ? 0xbb : 0xbf;
          if (chunk[i] !== expected) this.fail(i, `unexpected ${describeByte(chunk[i])} in a byte order mark`);
          i++;
          if (expected === 0xbf) {
            this.at.lineStart = 3;
            this.state = S.Top;
          }
          break;
        }
        case S.TopValue: {
          const end = this.value.scan(chunk, i);
          if (end < 0) {
            i = n;
            break;
          }
          this.topValue(this.value.bytes.finish(chunk, end));
          this.state = S.Top;
          i = end;
          break;
        }
        case S.ObjValueIn: {
          const end = this.value.scan(chunk, i);
          if (end < 0) {
            i = n;
            break;
          }
          const bytes = this.value.bytes.finish(chunk, end);
          const text = this.decoder.decode(bytes);
          this.members.set(this.key, heldAgain(this.members.get(this.key), { text, line: this.value.line, column: this.value.column, bytes: replacedBytes(text, bytes), nameRead: this.keyRead }));
          this.state = S.ObjNext;
          i = end;
          break;
        }
        case S.ObjKey: {
          const end = this.value.scan(chunk, i);
          if (end < 0) {
            i = n;
            break;
          }
          const bytes = this.value.bytes.finish(chunk, end), text = this.decoder.decode(bytes);
          this.key = this.parse(text, this.value.line, this.value.column) as string;
          this.keyRead = text.includes('\uFFFD') ? { text, bytes: bytes.slice() } : undefined;
          this.state = S.ObjColon;
          i = end;
          break;
        }
        default:
          i = this.objectPunctuation(chunk, i);
      }
    }
    this.value.bytes.carry(chunk);
    this.whole.carry(chunk);
    this.at.abs += n;
    this.checkOpen(false);
  }

  /**
   * The value left open (the first top-level object held whole, or the value scanned) when the input ends inside it
   * (`ended`), or once it passes the limit (checked per chunk, so it is never held whole): a syntax error in it is
   * thrown where it lies (a string never closed where it opens, or where the quoting goes wrong after it, rather than
   * at the end), else, past the limit, that it is too large.
   */
  private checkOpen(ended: boolean): void {
    const whole = this.whole.active;
    const held = whole ? this.whole : this.value.bytes;
    if (!held.active || (!ended && held.length <= this.limit.bytes)) return;
    const feature = !whole && (this.state === S.ArrElementIn || (this.state === S.TopValue && this.sequence));
    const [line, column] = whole ? [this.wholeLine, this.wholeColumn] : [this.value.line, this.value.column];
    const pointer = !whole && this.state === S.ObjValueIn ? `/${pointerToken(this.key)}` : '';
    const e = unclosedValueError(this.file, held, ended, line, column, feature ? `feature ${this.featureIndex}: ` : '', pointer);
    if (e !== null) throw e;
    if (ended) return;
    const what = whole ? 'the top-level object' : feature ? `feature ${this.featureIndex}`
      : this.state === S.TopValue ? 'the top-level value' : `member ${JSON.stringify(this.key)} of the top-level object`;
    throw new ValueTooLargeError(this.file, line, column, what, this.limit.bytes, this.limit.why);
  }

  /** A top-level value read whole: a record of a sequence, or the first value, held until it is known which. */
  private topValue(bytes: Uint8Array): void {
    if (this.sequence) this.emitFeature(bytes, this.value.line, this.value.column, this.value.strings);
    // Its own copy: the view would point into a chunk the source may reuse.
    else this.pending = { content: bytes.slice(), line: this.value.line, column: this.value.column };
  }

  end(): void {
    switch (this.state) {
      case S.Top:
        break;
      case S.TopValue:
      case S.ArrElementIn:
        if (this.value.scalar) {
          // A number or literal ends with the input (`42` alone, a last NDJSON line `null`).
          const bytes = this.value.bytes.finish(new Uint8Array(0), 0);
          if (this.state === S.TopValue) {
            this.topValue(bytes);
            break;
          }
        }
        this.checkOpen(true);
        this.failAtEnd(`unexpected end of input: the value that starts at line ${this.value.line}, column ${this.value.column}${this.state === S.ArrElementIn || this.sequence ? ` (feature ${this.featureIndex})` : ''} is not closed`);
        break;
      default:
        this.checkOpen(true);
        this.failAtEnd(this.streaming ? `unexpected end of input inside the ${this.streamed()} that starts at line ${this.wholeLine}, column ${this.wholeColumn}`
          : `unexpected end of input: the object that starts at line ${this.wholeLine}, column ${this.wholeColumn} is not closed`);
    }
    if (this.pending) {
      const p = this.pending;
      this.pending = null;
      const text = typeof p.content === 'string' ? p.content : this.decoder.decode(p.content);
      const bytes = p.bytes ?? (typeof p.content === 'string' ? undefined : p.content);
      const replaced = bytes !== undefined && text.includes('\uFFFD') ? { text, bytes } : undefined;
      const value = this.parse(text, p.line, p.column);
      this.out.push({ kind: 'document', index: 0, line: p.line, column: p.column, value, replaced, repeated: repeatedName(text, value) });
    } else if (this.valuesSeen === 0 && !this.sequence) {
      throw new ReadError(this.file, this.at.line, this.at.abs - this.at.lineStart + 1, 'no JSON value: the input is empty');
    }
  }

  /** Between top-level values: whitespace, RS, a byte order mark at offset 0, or the start of a value. */
  private top(chunk: Uint8Array, i: number): number {
    const b = chunk[i];
    if (isWhitespace(b)) {
      if (b === 0x0a || b === 0x0d) this.at.lineEnd(chunk, i);
      return i + 1;
    }
    if (b === 0xef && this.at.abs + i === 0) {
      this.state = S.Bom;
      return i + 1;
    }
    if (this.streaming) this.fail(i, strayBom(chunk, i) ?? afterDocument(b, this.streamed(), describeByte(b)));
    if (b === RS) {
      this.startSequence();
      return i + 1;
    }
    const foreign = this.at.abs + i === 0 ? foreignStart(chunk, i) : null;
    if (foreign !== null) this.fail(i, foreign);
    if (!isValueStart(b)) this.fail(i, strayBom(chunk, i) ?? `unexpected ${describeByte(b)}, expected a JSON value`);
    if (this.valuesSeen > 0) this.startSequence();
    this.valuesSeen++;
    if (!this.sequence && b === 0x5b) {
      // A first value that is an array: its elements stream as features, one at a time, like a sequence's records.
      this.streaming = true;
      this.bareArray = true;
      this.wholeLine = this.at.line;
      this.wholeColumn = this.at.column(i);
      this.out.push({ kind: 'array', line: this.wholeLine, column: this.wholeColumn });
      this.state = S.ArrOpen;
      return i + 1;
    }
    if (!this.sequence && b === 0x7b) {
      // The first object may be a FeatureCollection whose `features` must stream: parse it member by member, and keep
      // its bytes in case it turns out to be a single document after all.
      this.whole.begin(i);
      this.wholeLine = this.at.line;
      this.wholeColumn = this.at.column(i);
      this.members.clear();
      this.state = S.ObjOpen;
      return i + 1;
    }
    this.value.begin(chunk, i, this.sequence ? this.featureIndex : -1);
    this.state = S.TopValue;
    return this.value.scalar ? i : i + 1;
  }

  /** Whitespace, `:`, `,`, `}` and value starts around the members of the first top-level object. */
  private objectPunctuation(chunk: Uint8Array, i: number): number {
    const b = chunk[i];
    if (isWhitespace(b)) {
      if (b === 0x0a || b === 0x0d) this.at.lineEnd(chunk, i);
      return i + 1;
    }
    switch (this.state) {
      case S.ObjOpen:
      case S.ObjKeyRequired:
        if (b === 0x22) {
          this.value.begin(chunk, i);
          this.state = S.ObjKey;
          return i + 1;
        }
        if (b === 0x7d && this.state === S.ObjOpen) return this.closeObject(chunk, i);
        return this.fail(i, b === 0x7d ? "unexpected '}' after ',' (trailing comma)" : `unexpected ${describeByte(b)}, expected a double-quoted property name`);
      case S.ObjColon:
        if (b !== 0x3a) this.fail(i, `unexpected ${describeByte(b)}, expected ':' after the property name`);
        this.state = S.ObjValue;
        return i + 1;
      case S.ObjValue:
        if (!isValueStart(b)) this.fail(i, `unexpected ${describeByte(b)}, expected a value`);
        // Read as it comes, a second `features` would add its features to the first's; JSON.parse keeps the last alone.
        if (this.key === 'features' && this.streaming) this.fail(i, 'a second member "features" in the FeatureCollection: JSON readers keep one of the two, not the same one; keep one');
        if (this.key === 'features' && b === 0x5b && this.mayStream()) {
          this.streaming = true;
          this.whole.drop();
          this.state = S.ArrOpen;
          return i + 1;
        }
        this.value.begin(chunk, i, -1, `/${pointerToken(this.key)}`);
        this.state = S.ObjValueIn;
        return this.value.scalar ? i : i + 1;
      case S.ObjNext:
        if (b === 0x2c) {
          this.state = S.ObjKeyRequired;
          return i + 1;
        }
        if (b === 0x7d) return this.closeObject(chunk, i);
        // A first line of NDJSON short of its closing bracket, the next line's feature then read as its member.
        return this.fail(i, `unexpected ${describeByte(b)}, expected ',' or '}'${b === 0x7b && this.at.column(i) === 1 && this.at.line > this.wholeLine ? unclosedLine(this.wholeLine, this.at.line) : ''}`);
      default:
        return this.fail(i, 'internal reader error: unknown state');
    }
  }

  /** What is streaming, as messages name it. */
  private streamed(): string {
    return this.bareArray ? 'top-level array' : 'FeatureCollection';
  }

  /**
   * Stream `features` unless members seen so far say this is not a FeatureCollection: another type, or `tilejson`
   * without a type (a descriptor; beside `"type": "FeatureCollection"` it is a foreign member).
   */
  private mayStream(): boolean {
    const type = this.members.get('type');
    return type === undefined ? !this.members.has('tilejson') : this.parse(type.text, type.line, type.column, '/type') === 'FeatureCollection';
  }

  private closeObject(chunk: Uint8Array, i: number): number {
    if (this.streaming) {
      this.out.push(membersEvent(this.members, (m, key) => this.parse(m.text, m.line, m.column, `/${pointerToken(key)}`)));
    } else {
      // Not a streamed collection: the whole object is one document, parsed at the end of the input.
      const bytes = this.whole.finish(chunk, i + 1);
      const text = this.decoder.decode(bytes);
      this.pending = { content: text, line: this.wholeLine, column: this.wholeColumn, bytes: replacedBytes(text, bytes) };
    }
    this.members.clear();
    // Back to the top level, where `streaming` now lets only whitespace through.
    this.state = S.Top;
    return i + 1;
  }

  /** More than one top-level value, or RS: every record is a feature, including a first value held back as a document. */
  private startSequence(): void {
    if (this.sequence) return;
    this.sequence = this.value.records = true;
    if (this.pending) {
      const p = this.pending;
      this.pending = null;
      this.emitFeature(p.bytes ?? p.content, p.line, p.column);
    }
  }

  private emitFeature(content: string | Uint8Array, line: number, column: number, strings?: number): void {
    const text = typeof content === 'string' ? content : undefined;
    const bytes = typeof content === 'string' ? undefined : content;
    this.out.push(new SplitFeature(this.featureIndex++, line, column, this.file, bytes, text, strings));
  }

  /** `pointer`: where the value lies in the document (a member's `/name`), for the path a syntax error names. */
  private parse(text: string, line: number, column: number, pointer = ''): unknown {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw jsonSyntaxError(this.file, text, line, column, e, pointer);
    }
  }

  private fail(i: number, message: string): never {
    // A first value held back that does not parse is the fault: a bracket of the wrong kind (`[1,2]]`) ended it early
    // by the scan's count, and what came after was taken for a stray byte.
    const p = this.pending;
    if (p !== null) this.parse(typeof p.content === 'string' ? p.content : this.decoder.decode(p.content), p.line, p.column);
    // A NUL among the first bytes: UTF-16 without a byte order mark (every ASCII character followed or led by 0).
    const utf16 = this.at.abs + i < 4 && message.includes('U+0000') ? ' (the input looks like UTF-16: save it as UTF-8)' : '';
    throw new ReadError(this.file, this.at.line, this.at.column(i), message + utf16);
  }

  private failAtEnd(message: string): never {
    throw new ReadError(this.file, this.at.line, this.at.abs - this.at.lineStart + 1, message);
  }
}
