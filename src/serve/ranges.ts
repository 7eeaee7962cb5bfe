// HTTP byte ranges, validators and content codings for `serve` (RFC 9110): pure functions of header values and file stats.
import { createHash } from 'node:crypto';

/** Bytes `start..end` of a file, both included. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * What a `Range` header asks of a file of `size` bytes: undefined for the whole file (no header, or a unit other
 * than bytes, which a server must ignore), `'unsatisfiable'` for 416 (a malformed byte-range set, or none of its
 * ranges starting inside the file), else one range. Several ranges are answered as the one range spanning them
 * (RFC 9110 allows coalescing; map clients ask for one at a time), an end past the file is cut to its last byte.
 */
export function byteRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const eq = header.indexOf('=');
  if (eq < 0 || header.slice(0, eq).trim().toLowerCase() !== 'bytes') return undefined;
  let start = Infinity, end = -1;
  for (const spec of header.slice(eq + 1).split(',')) {
    // A list may hold empty elements (RFC 9110 section 5.6.1).
    if (spec.trim() === '') continue;
    const m = /^\s*(\d*)-(\d*)\s*$/.exec(spec);
    if (!m || (m[1] === '' && m[2] === '')) return 'unsatisfiable';
    let first: number, last: number;
    if (m[1] === '') {
      // A suffix: the last n bytes.
      const n = Number(m[2]);
      if (n === 0) continue;
      [first, last] = [Math.max(0, size - n), size - 1];
    } else {
      first = Number(m[1]);
      if (m[2] !== '' && Number(m[2]) < first) return 'unsatisfiable';
      // A range starting past the end is left out, whatever its end: the others may still be served.
      if (first >= size) continue;
      last = Math.min(m[2] === '' ? size - 1 : Number(m[2]), size - 1);
    }
    start = Math.min(start, first);
    end = Math.max(end, last);
  }
  return end < 0 ? 'unsatisfiable' : { start, end };
}

export interface Validators {
  /** A strong entity tag: changes when the file is replaced or rewritten. */
  etag: string;
  /** The modification time as HTTP gives it: whole seconds. */
  lastModified: string;
  /** The modification time to the millisecond. */
  modifiedMs: number;
}

/**
 * Whether the Last-Modified date is a strong validator `now` (RFC 9110 section 8.8.2.2): only once a second has
 * passed since the change. Within that second the file may change again and keep its date, so the date is not sent,
 * and a date a request carries is held against the exact time instead.
 */
export const dateIsStrong = (v: Validators, now: number): boolean => now - v.modifiedMs >= 1000;

/** ETag and Last-Modified of a file: size, modification time and inode, so a rebuilt archive never passes for the old one. */
export function validators(stats: { size: number; mtimeMs: number; ino: number; mtime: Date }): Validators {
  const hex = (n: number) => Math.floor(n).toString(16);
  return { etag: `"${hex(stats.size)}-${hex(stats.mtimeMs)}-${hex(stats.ino)}"`, lastModified: stats.mtime.toUTCString(), modifiedMs: stats.mtimeMs };
}

/** Validators of bytes made on request (a tile read out of an archive): a strong tag of their content, and the archive's time. */
export function contentValidators(bytes: Uint8Array, modified: Date): Validators {
  return { etag: `"${createHash('sha1').update(bytes).digest('base64url')}"`, lastModified: modified.toUTCString(), modifiedMs: modified.getTime() };
}

/**
 * Whether an `If-Range` precondition holds, so the range may be sent (else the whole file is): absent, or the same
 * strong entity tag. A weak tag never matches, nor does a date (RFC 9110 section 13.1.5): a date is a strong validator
 * only when the response that gave it came a second after the change, which the server cannot tell; a file replaced
 * twice within one second keeps its Last-Modified, and a range of the new one would be spliced into the old.
 */
export function ifRangeHolds(header: string | undefined, v: Validators): boolean {
  if (header === undefined) return true;
  return header.trim() === v.etag;
}

/** Whether a list of entity tags (`If-Match`, `If-None-Match`) holds `etag`: `*`, or the tag itself (weakly, the W/ aside). */
function tagListHas(header: string, etag: string, weak: boolean): boolean {
  if (header.trim() === '*') return true;
  const strip = (t: string) => (weak ? t.replace(/^W\//, '') : t);
  return (header.match(/(W\/)?"[^"]*"/g) ?? []).some((t) => strip(t) === strip(etag) && (weak || !t.startsWith('W/')));
}

/**
 * Whether `header` is a date at or after the last modification (in whole seconds once the date is strong, else to the
 * millisecond); false for no date.
 */
const notBefore = (header: string | undefined, v: Validators, now: number) => {
  const d = header === undefined ? NaN : Date.parse(header);
  return !Number.isNaN(d) && (dateIsStrong(v, now) ? Date.parse(v.lastModified) : v.modifiedMs) <= d;
};

/** Request headers the answer depends on. */
export interface ConditionalHeaders {
  range?: string;
  ifRange?: string;
  ifMatch?: string;
  ifNoneMatch?: string;
  ifModifiedSince?: string;
  ifUnmodifiedSince?: string;
}

/** How a representation is answered: whole, one range of it, or a status without its body. */
export type Answer = { status: 200 } | { status: 206; range: ByteRange } | { status: 304 | 412 | 416 };

/**
 * The answer to a GET or HEAD of a representation of `size` bytes with validators `v`, by the order of RFC 9110
 * section 13.2.2: `If-Match` (else `If-Unmodified-Since`) failing is 412; `If-None-Match` matching (else
 * `If-Modified-Since` not before the last modification, as of `now`) is 304, so a client revalidating gets no body again; then
 * the range of a GET (206 or 416) when `If-Range` holds, else the whole.
 */
export function answerFor(method: string, h: ConditionalHeaders, v: Validators, size: number, now: number): Answer {
  if (h.ifMatch !== undefined ? !tagListHas(h.ifMatch, v.etag, false) : h.ifUnmodifiedSince !== undefined && !Number.isNaN(Date.parse(h.ifUnmodifiedSince)) && !notBefore(h.ifUnmodifiedSince, v, now)) {
    return { status: 412 };
  }
  if (h.ifNoneMatch !== undefined ? tagListHas(h.ifNoneMatch, v.etag, true) : notBefore(h.ifModifiedSince, v, now)) return { status: 304 };
  const range = method === 'GET' && ifRangeHolds(h.ifRange, v) ? byteRange(h.range, size) : undefined;
  if (range === undefined) return { status: 200 };
  return range === 'unsatisfiable' ? { status: 416 } : { status: 206, range };
}

/**
 * Whether an `Accept-Encoding` header takes gzip: named (or `x-gzip`), or `*` when gzip is not named, with a
 * non-zero weight. No header: no (a client that says nothing gets plain bytes).
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  let named: number | undefined, any: number | undefined;
  for (const item of header.split(',')) {
    const [coding, ...params] = item.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => /^q\s*=/.test(p));
    const weight = q === undefined ? 1 : Number(q.slice(q.indexOf('=') + 1).trim());
    if (coding === 'gzip' || coding === 'x-gzip') named = Math.max(named ?? 0, weight || 0);
    else if (coding === '*') any = weight || 0;
  }
  return (named ?? any ?? 0) > 0;
}
