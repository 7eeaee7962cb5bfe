// The events the JSON splitter reads out of an input: features, a collection's other members, whole documents, arrays.
import { repeatedName, type RepeatedName } from './json-names.js';
import { setOwn } from '../model/own.js';
import { pointerToken } from '../validate/issue.js';

/**
 * One element of a top-level `features` array or of a top-level array, or one record of an NDJSON / GeoJSON Text
 * Sequence input.
 */
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
  /** The strings of its text, member names among them, where the splitter counted them (`repeatedName`). */
  readonly strings?: number;
}

const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const utf8Encoder = new TextEncoder();

/**
 * A feature whose text or bytes is made from the other only when asked for: the build hands the bytes to its
 * workers, so the reading thread never decodes them.
 */
export class SplitFeature implements FeatureEvent {
  readonly kind = 'feature';
  constructor(
    readonly index: number, readonly line: number, readonly column: number, readonly file: string,
    private raw: Uint8Array | undefined, private decoded: string | undefined, readonly strings?: number,
  ) {}

  get text(): string { return (this.decoded ??= utf8Decoder.decode(this.raw)); }
  get bytes(): Uint8Array { return (this.raw ??= utf8Encoder.encode(this.decoded)); }
}

/** Every top-level member but `features` of an object whose `features` were streamed, once, after the last feature. */
export interface MembersEvent {
  kind: 'members';
  members: Record<string, unknown>;
  /**
   * Per member whose text or name holds U+FFFD, for readers to tell invalid UTF-8 (`DocumentEvent.replaced`): its
   * name, text and bytes (when its text holds U+FFFD), and its name's text and bytes, quotes included (when it does).
   */
  replaced?: MemberRead[];
  /** Member names the object gives twice, or a member's value does in an object of its own: the last is kept. */
  repeated?: RepeatedName[];
}

/** A top-level member as the splitter holds it until its object closes: its text, where, and names given before it. */
export interface HeldMember {
  text: string; line: number; column: number; bytes?: Uint8Array; nameRead?: MemberRead['nameRead'];
  /** When the object gave this name before: how many times in all, and the first value's text. */
  earlier?: { count: number; first: string };
}

/** A member held as `held`, its name given before (`before`, its last value) or not. */
export function heldAgain(before: HeldMember | undefined, held: HeldMember): HeldMember {
  return before === undefined ? held : { ...held, earlier: { count: (before.earlier?.count ?? 1) + 1, first: before.earlier?.first ?? before.text } };
}

/**
 * The members event of a streamed collection's held members, each parsed by `parse`: with the members whose text
 * holds U+FFFD, and the names repeated (a member given again, names its value repeats, pointers from the top).
 */
export function membersEvent(held: ReadonlyMap<string, HeldMember>, parse: (m: HeldMember, key: string) => unknown): MembersEvent {
  const members: Record<string, unknown> = {};
  const replaced: MemberRead[] = [];
  const repeated: RepeatedName[] = [];
  for (const [key, m] of held) {
    const value = parse(m, key);
    setOwn(members, key, value);
    if (m.bytes || m.nameRead) replaced.push({ name: key, text: m.text, bytes: m.bytes, nameRead: m.nameRead });
    const pointer = `/${pointerToken(key)}`;
    if (m.earlier) repeated.push({ pointer, name: key, count: m.earlier.count, first: m.earlier.first.trim(), last: m.text.trim(), others: [] });
    const inner = repeatedName(m.text, value);
    if (inner) repeated.push({ ...inner, pointer: pointer + inner.pointer, others: inner.others.map((o) => pointer + o) });
  }
  return { kind: 'members', members, ...(replaced.length > 0 && { replaced }), ...(repeated.length > 0 && { repeated }) };
}

/** A member of `MembersEvent.replaced`. */
export interface MemberRead { name: string; text: string; bytes?: Uint8Array; nameRead?: { text: string; bytes: Uint8Array } }

/** A copy of the bytes `text` was decoded from when it holds U+FFFD (invalid UTF-8 decoded?), for readers to tell which. */
export function replacedBytes(text: string, bytes: Uint8Array): Uint8Array | undefined {
  return text.includes('\uFFFD') ? bytes.slice() : undefined;
}

/** The single top-level value of a file that is not a streamed FeatureCollection (a descriptor, a bare Feature...). */
export interface DocumentEvent {
  kind: 'document';
  index: number;
  line: number;
  column: number;
  value: unknown;
  /**
   * The text and bytes the value was read from, only when the text holds U+FFFD: what decoding makes of invalid
   * UTF-8 (a Latin-1 export), which readers report (`checkUtf8`) as they do for features.
   */
  replaced?: { text: string; bytes: Uint8Array };
  /** The first member name the value gives twice in one object (the last is kept). */
  repeated?: RepeatedName;
}

/**
 * A top-level JSON array, before its elements (which follow as feature events, like NDJSON records). It is no
 * data-model document, but what QuPath and per-patch exporters write: the build reads it, `validate` says what it is.
 */
export interface ArrayEvent {
  kind: 'array';
  line: number;
  column: number;
}

export type ReadEvent = FeatureEvent | MembersEvent | DocumentEvent | ArrayEvent;

/** How much of one value the splitter may hold: a value passing `bytes` ends the read, `why` saying what set it. */
export interface ValueLimit { bytes: number; why: string }
