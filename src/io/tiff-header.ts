// What a TIFF's header says about one of its images that sharp does not: which page is the whole image (the largest),
// its compression, photometric, bit depth, extra samples, how many pages of its size there are (a z-stack), each of
// which can spoil labels read without a word; and any of its tags whole (resolution and ImageDescription, where a
// pixel size is stated).
import fs from 'node:fs';

/** TIFF Compression values (tag 259) that lose information: old-style and new-style JPEG, lossy JPEG of DNG. */
const LOSSY: ReadonlyMap<number, string> = new Map([[6, 'JPEG (old-style)'], [7, 'JPEG'], [34892, 'lossy JPEG']]);
/** Names of the other TIFF Compression values that tools writing label masks use (tifffile, bfconvert, GDAL). */
const COMPRESSION: ReadonlyMap<number, string> = new Map([
  [1, 'no compression'], [5, 'LZW'], [8, 'Deflate'], [32946, 'Deflate'], [32773, 'PackBits'], [34887, 'LERC'],
  [34925, 'LZMA'], [34926, 'ZSTD'], [50000, 'ZSTD'], [34927, 'WebP'], [50001, 'WebP'], [50002, 'JPEG XL'],
  [52546, 'JPEG XL'], [33003, 'JPEG 2000'], [33005, 'JPEG 2000'], [34712, 'JPEG 2000'],
]);
const TAG = { width: 256, height: 257, bits: 258, compression: 259, photometric: 262, samples: 277, extraSamples: 338 } as const;
/** Pages followed at most: a z-stack is counted, a file whose directories loop is not followed for ever. */
const MAX_PAGES = 4096;

export interface TiffFacts {
  width: number;
  height: number;
  /** The name of a lossy compression, else undefined. */
  lossy?: string;
  /** The name of the compression (tag 259), or its number when it has none here; undefined when the tag is absent. */
  compression?: string;
  /** PhotometricInterpretation: 0 WhiteIsZero, 1 BlackIsZero, 3 palette… */
  photometric?: number;
  bitsPerSample?: number;
  samplesPerPixel: number;
  /** ExtraSamples of the first image: 0 unspecified, 1 associated alpha, 2 unassociated alpha. */
  extraSamples: number[];
  /** Pages of the first page's size, the first included (a z-stack, a time series, channels saved as pages). */
  samePages: number;
}

/**
 * The facts of page `page` of a TIFF (classic or BigTIFF, either byte order), or undefined when its header cannot be
 * read.
 */
export function tiffFacts(path: string, page = 0): TiffFacts | undefined {
  return withFile(path, (read) => readFacts(read, page));
}

/**
 * The page of a TIFF that holds the image whole: its largest, the first of those as large. A pyramid stores it first,
 * but a Leica SCN or Ventana BIF slide puts a small overview or label picture first: read as the slide, its page 0
 * made a world of 1,616 px where the slide is 80,000. 0 for another file, or one whose header cannot be read.
 */
export function fullPage(path: string): number {
  return withFile(path, (read) => {
    const tiff = openTiff(read);
    let best = 0, bestPixels = -1, page = 0;
    const seen = new Set<number>();
    for (let at = tiff?.firstOffset ?? 0; tiff && at > 0 && page < MAX_PAGES && !seen.has(at); page++) {
      seen.add(at);
      const d = tiff.directory(at);
      if (d === undefined) break;
      const pixels = (d.tags.get(TAG.width)?.[0] ?? 0) * (d.tags.get(TAG.height)?.[0] ?? 0);
      if (pixels > bestPixels) { best = page; bestPixels = pixels; }
      at = d.next;
    }
    return best;
  });
}

/** A tag's values as stored: numbers (a RATIONAL's as numerator and denominator, in turn), or an ASCII tag's text. */
export type TagValue = number[] | string;

/** An ASCII value is read up to this length: an OME-XML header names the first image's pixels near its start. */
const MAX_TEXT = 4 << 20;

/**
 * The values of the `wanted` tags of page `page` of a TIFF, all of them (a RATIONAL's two numbers, an ImageDescription's
 * text), or undefined for a file that is no TIFF or whose header cannot be read.
 */
export function tiffTags(path: string, wanted: readonly number[], page = 0): Map<number, TagValue> | undefined {
  return tiffPage(path, wanted, page)?.tags;
}

/** The `wanted` tags of a page (`tiffTags`) with the file's byte order, which its samples are stored in. */
export function tiffPage(path: string, wanted: readonly number[], page = 0): { littleEndian: boolean; tags: Map<number, TagValue> } | undefined {
  return withFile(path, (read) => {
    const tiff = openTiff(read);
    const first = tiff && pageDirectory(tiff, page);
    if (tiff === undefined || first === undefined) return undefined;
    const tags = new Map<number, TagValue>();
    for (const tag of wanted) {
      const entry = first.entries.get(tag);
      const value = entry === undefined ? undefined : tiff.values(entry);
      if (value !== undefined) tags.set(tag, value);
    }
    return { littleEndian: tiff.littleEndian, tags };
  });
}

function withFile<T>(path: string, use: (read: Read) => T): T {
  const fd = fs.openSync(path, 'r');
  try {
    return use((at, length) => {
      const b = Buffer.alloc(length);
      return b.subarray(0, fs.readSync(fd, b, 0, length, at));
    });
  } finally {
    fs.closeSync(fd);
  }
}

type Read = (at: number, length: number) => Buffer;

/** Whether `head` starts as a TIFF does: `II` with 42 (or 43, BigTIFF) little-endian, or `MM` with it big-endian. */
export function isTiffHead(head: Uint8Array): boolean {
  return (head[0] === 0x49 && head[1] === 0x49 && (head[2] === 42 || head[2] === 43) && head[3] === 0)
    || (head[0] === 0x4d && head[1] === 0x4d && head[2] === 0 && (head[3] === 42 || head[3] === 43));
}

/** A directory entry: its type, count, and the file offset of its values (in the entry when they fit, else pointed at). */
interface Entry { type: number; count: number; at: number }

/** Bytes per value of the TIFF types read here: BYTE, ASCII, SHORT, LONG, RATIONAL, LONG8 (BigTIFF). */
const TYPE_BYTES: Partial<Record<number, number>> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 16: 8 };

interface Tiff {
  firstOffset: number;
  littleEndian: boolean;
  /** One directory: its tags' first values (and all of ExtraSamples when they fit the entry), its entries, the next offset. */
  directory(at: number): { tags: Map<number, number[]>; entries: Map<number, Entry>; next: number } | undefined;
  /** All of an entry's values, or undefined for a type not read here or values past the file's end. */
  values(entry: Entry): TagValue | undefined;
}

function openTiff(read: Read): Tiff | undefined {
  const head = read(0, 16);
  if (head.length < 8 || !isTiffHead(head)) return undefined;
  const le = head[0] === 0x49;
  const big = (le ? head.readUInt16LE(2) : head.readUInt16BE(2)) === 43;
  const u16 = (b: Buffer, o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (b: Buffer, o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const u64 = (b: Buffer, o: number) => Number(le ? b.readBigUInt64LE(o) : b.readBigUInt64BE(o));
  const countBytes = big ? 8 : 2, entryBytes = big ? 20 : 12, offsetBytes = big ? 8 : 4;
  const directory: Tiff['directory'] = (at) => {
    const c = read(at, countBytes);
    if (c.length < countBytes) return undefined;
    const count = big ? u64(c, 0) : u16(c, 0);
    const b = read(at + countBytes, count * entryBytes + offsetBytes);
    if (b.length < count * entryBytes + offsetBytes) return undefined;
    const tags = new Map<number, number[]>();
    const entries = new Map<number, Entry>();
    for (let i = 0; i < count; i++) {
      const e = i * entryBytes;
      const type = u16(b, e + 2);
      const n = big ? u64(b, e + 4) : u32(b, e + 4);
      const field = e + (big ? 12 : 8);
      const size = type === 3 ? 2 : 4;
      // Values that fit the entry's value field (those read here always do, but for long ExtraSamples lists).
      const fit = Math.min(n, Math.floor((big ? 8 : 4) / size));
      const values: number[] = [];
      for (let k = 0; k < fit; k++) values.push(type === 3 ? u16(b, field + 2 * k) : u32(b, field + 4 * k));
      tags.set(u16(b, e), values);
      const inEntry = n * (TYPE_BYTES[type] ?? Infinity) <= offsetBytes;
      entries.set(u16(b, e), { type, count: n, at: inEntry ? at + countBytes + field : big ? u64(b, field) : u32(b, field) });
    }
    return { tags, entries, next: big ? u64(b, count * entryBytes) : u32(b, count * entryBytes) };
  };
  const values = ({ type, count, at }: Entry): TagValue | undefined => {
    const size = TYPE_BYTES[type];
    if (size === undefined) return undefined;
    const length = type === 2 ? Math.min(count, MAX_TEXT) : count * size;
    if (type !== 2 && length > MAX_TEXT) return undefined;
    const b = read(at, length);
    if (b.length < length && type !== 2) return undefined;
    // ASCII ends at its NUL (a file cut short keeps what it has: the first image's pixels are named early); OME-XML
    // is UTF-8 in it, its µ two bytes.
    if (type === 2) return b.subarray(0, b.indexOf(0) < 0 ? b.length : b.indexOf(0)).toString('utf8');
    const out: number[] = [];
    for (let o = 0; o < length; o += size) {
      if (type === 5) out.push(u32(b, o), u32(b, o + 4));
      else out.push(type === 1 ? b[o] : type === 3 ? u16(b, o) : type === 4 ? u32(b, o) : u64(b, o));
    }
    return out;
  };
  return { firstOffset: big ? u64(head, 8) : u32(head, 4), littleEndian: le, directory, values };
}

/** The directory of page `page` (0 the first), undefined past the last or where the chain breaks or loops. */
function pageDirectory(tiff: Tiff, page: number): ReturnType<Tiff['directory']> {
  const seen = new Set<number>();
  let d = tiff.directory(tiff.firstOffset);
  for (let i = 0; i < page && d !== undefined; i++) {
    if (d.next <= 0 || seen.has(d.next)) return undefined;
    seen.add(d.next);
    d = tiff.directory(d.next);
  }
  return d;
}

function readFacts(read: Read, page: number): TiffFacts | undefined {
  const tiff = openTiff(read);
  if (tiff === undefined) return undefined;
  const { directory } = tiff;
  const first = pageDirectory(tiff, page);
  if (first === undefined) return undefined;
  const one = (t: Map<number, number[]>, tag: number) => t.get(tag)?.[0];
  const size = (t: Map<number, number[]>) => `${one(t, TAG.width)}×${one(t, TAG.height)}`;
  // Pages of this page's size, itself included, wherever they lie in the chain.
  let samePages = 0;
  const seen = new Set<number>();
  for (let next = tiff.firstOffset; next > 0 && samePages < MAX_PAGES && !seen.has(next);) {
    seen.add(next);
    const d = directory(next);
    if (d === undefined) break;
    if (size(d.tags) === size(first.tags)) samePages++;
    next = d.next;
  }
  const t = first.tags;
  const compression = one(t, TAG.compression);
  return {
    width: one(t, TAG.width) ?? 0, height: one(t, TAG.height) ?? 0,
    lossy: compression === undefined ? undefined : LOSSY.get(compression),
    compression: compression === undefined ? undefined : LOSSY.get(compression) ?? COMPRESSION.get(compression) ?? `compression ${compression}`,
    photometric: one(t, TAG.photometric), bitsPerSample: one(t, TAG.bits), samplesPerPixel: one(t, TAG.samples) ?? 1,
    extraSamples: t.get(TAG.extraSamples) ?? [], samePages,
  };
}
