// HTTP byte ranges, validators and content codings for `serve` (RFC 9110): pure functions of header values and file stats.

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
  lastModified: string;
}

/** ETag and Last-Modified of a file: size, modification time and inode, so a rebuilt archive never passes for the old one. */
export function validators(stats: { size: number; mtimeMs: number; ino: number; mtime: Date }): Validators {
  const hex = (n: number) => Math.floor(n).toString(16);
  return { etag: `"${hex(stats.size)}-${hex(stats.mtimeMs)}-${hex(stats.ino)}"`, lastModified: stats.mtime.toUTCString() };
}

/**
 * Whether an `If-Range` precondition holds, so the range may be sent (else the whole file is): absent, the same
 * strong entity tag, or exactly the Last-Modified date. A weak tag never matches (RFC 9110 section 13.1.5).
 */
export function ifRangeHolds(header: string | undefined, v: Validators): boolean {
  if (header === undefined) return true;
  const h = header.trim();
  if (h.startsWith('"')) return h === v.etag;
  if (h.startsWith('W/')) return false;
  const date = Date.parse(h);
  return !Number.isNaN(date) && date === Date.parse(v.lastModified);
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
