// A TIFF's segments (strips or tiles) read from the file and decoded, and what the writer did to their samples undone:
// shared by the strip reader (tiff-strips.ts) and the tile reader (tiff-tiles.ts).
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { inflateSync } from 'node:zlib';
import { NATIVE_LE } from '../bytes.js';
import { ImageError } from '../report/errors.js';
import { LzwDecoder, packBitsDecode } from './tiff-codecs.js';
import { tiffPage, type TagValue } from './tiff-header.js';

/** The tags of a page read for its strips or tiles. */
export const TAG = {
  width: 256, height: 257, bits: 258, compression: 259, photometric: 262, fillOrder: 266, stripOffsets: 273, samples: 277,
  rowsPerStrip: 278, stripCounts: 279, planar: 284, predictor: 317, tileWidth: 322, tileLength: 323, tileOffsets: 324,
  tileCounts: 325, sampleFormat: 339,
} as const;

/**
 * libvips' name of a sample type (sharp's `depth`) by bits and SampleFormat (1 unsigned, 2 signed, 3 float); 64-bit
 * samples, which libvips does not read, by names of their own.
 */
const DEPTH: Readonly<Record<string, string>> = {
  '8/1': 'uchar', '8/2': 'char', '16/1': 'ushort', '16/2': 'short', '32/1': 'uint', '32/2': 'int', '32/3': 'float',
  '64/1': 'uint64', '64/2': 'int64', '64/3': 'double',
};

/** Compressions read here: none, LZW, Deflate (both codes), PackBits. */
export const READ_COMPRESSIONS = new Set([1, 5, 8, 32946, 32773]);

/**
 * A compressed segment is decoded whole; one that decodes to more than this is not read here (left to libvips, or
 * refused), so that a band does not hold a segment many bands long.
 */
export const MAX_DECODED_SEGMENT = 64 << 20;

/** Compressed segments are read from the file this many bytes at a time at most (a run of them stored one after another). */
export const READ_RUN = 8 << 20;

/** The sample type of page `page` of a TIFF as the readers of strips and tiles name it (`DEPTH`), undefined for another file. */
export function sampleDepth(path: string, page: number): string | undefined {
  const tags = tiffPage(path, Object.values(TAG), page)?.tags;
  const one = (tag: number) => { const v = tags?.get(tag); return Array.isArray(v) && v.length > 0 ? v[0] : 1; };
  return tags && DEPTH[`${one(TAG.bits)}/${one(TAG.sampleFormat)}`];
}

/** A page whose samples are read here, its tags at hand. */
export interface SegmentPage {
  width: number;
  height: number;
  coding: SampleCoding;
  /** Whether the page is tiled (it has TileWidth or TileOffsets). */
  tiled: boolean;
  /** A tag's first value, `otherwise` when it is absent. */
  one(tag: number, otherwise?: number): number | undefined;
  /** All of a tag's values. */
  all(tag: number): number[] | undefined;
}

/**
 * Page `page` of a TIFF when its samples are read here: one grey sample a pixel (BlackIsZero), in the order its bits
 * are written, of the type libvips calls `depth`, stored as `readableCoding` says; undefined for any other page.
 */
export function segmentPage(path: string, page: number, depth: string): SegmentPage | undefined {
  const found = tiffPage(path, Object.values(TAG), page);
  if (found === undefined) return undefined;
  const { tags } = found;
  const one = (tag: number, otherwise?: number): number | undefined => {
    const v: TagValue | undefined = tags.get(tag);
    return Array.isArray(v) && v.length > 0 ? v[0] : otherwise;
  };
  const all = (tag: number): number[] | undefined => { const v = tags.get(tag); return Array.isArray(v) ? v : undefined; };
  const width = one(TAG.width) ?? 0, height = one(TAG.height) ?? 0, bits = one(TAG.bits, 1) ?? 1, format = one(TAG.sampleFormat, 1) ?? 1;
  const compression = one(TAG.compression, 1) ?? 1, predictor = one(TAG.predictor, 1) ?? 1;
  const plain = one(TAG.samples, 1) === 1 && one(TAG.planar, 1) === 1 && one(TAG.photometric) === 1 && one(TAG.fillOrder, 1) === 1;
  if (!plain || width <= 0 || height <= 0 || !readableCoding(compression, predictor, bits, format) || DEPTH[`${bits}/${format}`] !== depth) return undefined;
  const coding = { compression, predictor, bytes: bits / 8, swap: found.littleEndian !== NATIVE_LE && bits > 8 };
  return { width, height, coding, tiled: tags.has(TAG.tileWidth) || tags.has(TAG.tileOffsets), one, all };
}

/** How the samples of a segment are stored. */
export interface SampleCoding {
  compression: number;
  /** TIFF Predictor: 1 none, 2 horizontal differencing, 3 floating point. */
  predictor: number;
  /** Bytes a sample takes: 1, 2, 4 or 8. */
  bytes: number;
  /** Whether the samples are stored in the other byte order than this machine's. */
  swap: boolean;
}

/**
 * Whether a segment stored so is read here: a compression of READ_COMPRESSIONS; no predictor, horizontal differencing,
 * or the floating-point one for floats of 32 or 64 bits (what tifffile writes of floats with `predictor=True`).
 */
function readableCoding(compression: number, predictor: number, bits: number, sampleFormat: number): boolean {
  if (!READ_COMPRESSIONS.has(compression)) return false;
  return predictor === 1 || predictor === 2 || (predictor === 3 && sampleFormat === 3 && (bits === 32 || bits === 64));
}

/** Reads `length` bytes at file offset `at` into `out` at `to`; a file that ends first is cut short. */
export async function readFully(file: FileHandle, path: string, out: Uint8Array, to: number, length: number, at: number, what: string): Promise<void> {
  for (let done = 0; done < length;) {
    // One read gives at most 2 GiB.
    const { bytesRead } = await file.read(out, to + done, Math.min(length - done, 1 << 30), at + done);
    if (bytesRead === 0) throw new ImageError(path, `the file ends at byte ${at + done}, inside the bytes of ${what}, which end at byte ${at + length} (cut short?)`);
    done += bytesRead;
  }
}

/** Rows [top, top + count) of the mask, samples in this machine's byte order, as libvips gives them raw. */
export type StripRows = (top: number, count: number) => Promise<Buffer>;

/**
 * The rows of a page whose segments (strips or tiles) `layout` places, read with `read`: undefined without a layout,
 * or where its segments are in the LZW of before 1991, which libvips reads.
 */
export async function segmentRows<L extends SampleCoding & { offsets: number[] }>(path: string, layout: L | undefined, read: (path: string, layout: L, top: number, count: number) => Promise<Buffer>): Promise<StripRows | undefined> {
  if (layout === undefined || (layout.compression === 5 && !(await modernLzw(path, layout.offsets[0])))) return undefined;
  return (top, count) => read(path, layout, top, count);
}

/** Whether an LZW segment starting at `at` starts as LZW has since 1991 (a clear code, most significant bit first). */
async function modernLzw(path: string, at: number): Promise<boolean> {
  const head = Buffer.alloc(2);
  const file = await open(path, 'r');
  try {
    await file.read(head, 0, 2, at);
  } finally {
    await file.close();
  }
  // libtiff tells the old variant so: its first byte holds the low 8 bits of the clear code, 256.
  return !(head[0] === 0 && (head[1] & 1) === 1);
}

/**
 * A segment's first `into.length` bytes decoded (or as many as it holds), in `into` or, for Deflate, a buffer of its
 * own of `size` bytes at first; `what` names the segment when it cannot be decoded.
 */
export function decodeSegment(path: string, compression: number, src: Uint8Array, into: Uint8Array, size: number, lzw: LzwDecoder, what: string): Uint8Array {
  try {
    if (compression === 5) return into.subarray(0, lzw.decode(src, into));
    if (compression === 32773) return into.subarray(0, packBitsDecode(src, into));
    // In one buffer of the segment's size, not in chunks of 16 KiB joined into another: a band is thousands of them.
    return inflateSync(src, { chunkSize: Math.max(64, size) });
  } catch (err) {
    const name = compression === 5 ? 'LZW' : compression === 32773 ? 'PackBits' : 'Deflate';
    throw new ImageError(path, `${what} cannot be decoded as ${name}: ${err instanceof Error ? err.message : String(err)} (damaged?)`);
  }
}

/**
 * Turns rows of `width` samples as stored into samples in this machine's byte order: `rows` rows from byte `at` of
 * `b` (whose offset in its buffer is a multiple of 8). libtiff applies a predictor for LZW and Deflate only, and
 * ignores the tag beside other compressions.
 */
export function undoCoding(b: Uint8Array, at: number, rows: number, width: number, coding: SampleCoding): void {
  const { bytes } = coding;
  const predicted = coding.compression !== 1 && coding.compression !== 32773 ? coding.predictor : 1;
  const rowBytes = width * bytes;
  if (predicted === 3) {
    // The floating-point predictor stores bytes of its own order, which it gives back in this machine's.
    const scratch = new Uint8Array(rowBytes);
    for (let y = 0; y < rows; y++) undoFloatPredictor(b.subarray(at + y * rowBytes, at + (y + 1) * rowBytes), scratch, bytes);
    return;
  }
  if (coding.swap) swapBytes(Buffer.from(b.buffer, b.byteOffset + at, rows * rowBytes), bytes);
  if (predicted === 2) for (let y = 0; y < rows; y++) undoPredictor(b, at + y * rowBytes, width, bytes);
}

/** Turns samples of `bytes` bytes around: to this machine's byte order. */
function swapBytes(b: Buffer, bytes: number): void {
  if (bytes === 2) b.swap16();
  else if (bytes === 4) b.swap32();
  else if (bytes === 8) b.swap64();
}

/** Undoes horizontal differencing (predictor 2) on one row: each sample was stored less the one to its left, modulo its size. */
function undoPredictor(b: Uint8Array, at: number, width: number, bytes: number): void {
  if (bytes === 8) {
    const wide = new BigUint64Array(b.buffer, b.byteOffset + at, width);
    for (let x = 1; x < width; x++) wide[x] += wide[x - 1];
    return;
  }
  const row = bytes === 1 ? new Uint8Array(b.buffer, b.byteOffset + at, width)
    : bytes === 2 ? new Uint16Array(b.buffer, b.byteOffset + at, width) : new Uint32Array(b.buffer, b.byteOffset + at, width);
  // The typed array's own wrap-around is the modulo.
  for (let x = 1; x < width; x++) row[x] += row[x - 1];
}

/**
 * Undoes the floating-point predictor (Adobe's TIFF Technical Note 3) on one row: the row's bytes were differenced one
 * from the one before, after being laid out as planes, the most significant byte of every sample first, then the next
 * byte of every sample, and so on. Sums wrap modulo 256 as the Uint8Array stores them.
 */
function undoFloatPredictor(row: Uint8Array, scratch: Uint8Array, bytes: number): void {
  const n = row.length, width = n / bytes;
  scratch[0] = row[0];
  for (let i = 1; i < n; i++) scratch[i] = row[i] + scratch[i - 1];
  for (let plane = 0; plane < bytes; plane++) {
    // Plane 0 holds the most significant bytes: the last of a sample's bytes on a little-endian machine.
    const to = NATIVE_LE ? bytes - 1 - plane : plane, from = plane * width;
    for (let x = 0; x < width; x++) row[x * bytes + to] = scratch[from + x];
  }
}
