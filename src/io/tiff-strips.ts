// Rows of a strip TIFF read straight from the strips that hold them: libvips decodes a strip TIFF from its first row
// down to the last row asked for, so each band of a mask read in bands cost more than the one above it.
import { NATIVE_LE } from '../bytes.js';
import { open, type FileHandle } from 'node:fs/promises';
import { inflateSync } from 'node:zlib';
import { ImageError } from '../report/errors.js';
import { LzwDecoder, packBitsDecode } from './tiff-codecs.js';
import { tiffPage, type TagValue } from './tiff-header.js';

const TAG = {
  width: 256, height: 257, bits: 258, compression: 259, photometric: 262, fillOrder: 266, offsets: 273, samples: 277,
  rowsPerStrip: 278, counts: 279, planar: 284, predictor: 317, tileWidth: 322, tileOffsets: 324, sampleFormat: 339,
} as const;

/** Compressions read here: none, LZW, Deflate (both codes), PackBits. */
const READ = new Set([1, 5, 8, 32946, 32773]);
/** Compressions whose strips a predictor applies to. */
const PREDICTED = new Set([5, 8, 32946]);

/**
 * libvips' name of a sample type (sharp's `depth`) by bits and SampleFormat (1 unsigned, 2 signed, 3 float); 64-bit
 * samples, which libvips does not read, by names of their own.
 */
const DEPTH: Readonly<Record<string, string>> = {
  '8/1': 'uchar', '8/2': 'char', '16/1': 'ushort', '16/2': 'short', '32/1': 'uint', '32/2': 'int', '32/3': 'float',
  '64/1': 'uint64', '64/2': 'int64', '64/3': 'double',
};

/**
 * A compressed strip is decoded whole; one that decodes to more than this is left to libvips, so that a band does not
 * hold a strip many bands long.
 */
const MAX_DECODED_STRIP = 64 << 20;

/** Compressed strips are read from the file this many bytes at a time at most (a run of strips stored one after another). */
const READ_RUN = 8 << 20;

interface Layout {
  width: number;
  height: number;
  /** Bytes a sample takes: 1, 2, 4 or 8. */
  bytes: number;
  rowsPerStrip: number;
  offsets: number[];
  counts: number[];
  compression: number;
  predictor: number;
  /** Whether the samples are stored in the other byte order than this machine's. */
  swap: boolean;
}

/** Rows [top, top + count) of the mask, samples in this machine's byte order, as libvips gives them raw. */
export type StripRows = (top: number, count: number) => Promise<Buffer>;

/**
 * A reader of the rows of page `page` of a strip TIFF of one sample per pixel, 8, 16, 32 or 64-bit, uncompressed,
 * Deflate, LZW or PackBits, predictor none or horizontal, either byte order, whose samples libvips calls `depth`;
 * undefined for any other TIFF (tiled, planar, floating-point predictor, JPEG…), which libvips reads.
 */
export async function stripReader(path: string, page: number, depth: string): Promise<StripRows | undefined> {
  const layout = stripLayout(path, page, depth);
  if (layout === undefined || !(await modernLzw(path, layout))) return undefined;
  return (top, count) => readRows(path, layout, top, count);
}

/** The sample type of page `page` of a TIFF as `stripReader` names it (`DEPTH`), undefined for another file. */
export function stripDepth(path: string, page: number): string | undefined {
  const tags = tiffPage(path, Object.values(TAG), page)?.tags;
  const one = (tag: number) => { const v = tags?.get(tag); return Array.isArray(v) && v.length > 0 ? v[0] : 1; };
  return tags && DEPTH[`${one(TAG.bits)}/${one(TAG.sampleFormat)}`];
}

function stripLayout(path: string, page: number, depth: string): Layout | undefined {
  const found = tiffPage(path, Object.values(TAG), page);
  if (found === undefined) return undefined;
  const { tags } = found;
  const one = (tag: number, otherwise?: number): number | undefined => {
    const v: TagValue | undefined = tags.get(tag);
    return Array.isArray(v) && v.length > 0 ? v[0] : otherwise;
  };
  const all = (tag: number): number[] | undefined => { const v = tags.get(tag); return Array.isArray(v) ? v : undefined; };
  const width = one(TAG.width) ?? 0, height = one(TAG.height) ?? 0, bits = one(TAG.bits, 1) ?? 1;
  const compression = one(TAG.compression, 1) ?? 1, predictor = one(TAG.predictor, 1) ?? 1;
  // libtiff's default of one strip for the whole image.
  const rowsPerStrip = Math.min(one(TAG.rowsPerStrip, height) ?? height, height);
  const offsets = all(TAG.offsets), counts = all(TAG.counts);
  const strips = rowsPerStrip > 0 ? Math.ceil(height / rowsPerStrip) : 0;
  const plain = tags.get(TAG.tileWidth) === undefined && tags.get(TAG.tileOffsets) === undefined && one(TAG.samples, 1) === 1
    && one(TAG.planar, 1) === 1 && one(TAG.photometric) === 1 && one(TAG.fillOrder, 1) === 1;
  if (!plain || !READ.has(compression) || (predictor !== 1 && predictor !== 2) || DEPTH[`${bits}/${one(TAG.sampleFormat, 1)}`] !== depth) return undefined;
  if (width <= 0 || strips === 0 || offsets === undefined || counts === undefined || offsets.length < strips || counts.length < strips) return undefined;
  if (compression !== 1 && rowsPerStrip * width * (bits / 8) > MAX_DECODED_STRIP) return undefined;
  return { width, height, bytes: bits / 8, rowsPerStrip, offsets, counts, compression, predictor, swap: found.littleEndian !== NATIVE_LE && bits > 8 };
}

/** Whether an LZW TIFF's first strip starts as LZW has since 1991 (a clear code, most significant bit first). */
async function modernLzw(path: string, layout: Layout): Promise<boolean> {
  if (layout.compression !== 5) return true;
  const head = Buffer.alloc(2);
  const file = await open(path, 'r');
  try {
    await file.read(head, 0, 2, layout.offsets[0]);
  } finally {
    await file.close();
  }
  // libtiff tells the old variant so: its first byte holds the low 8 bits of the clear code, 256.
  return !(head[0] === 0 && (head[1] & 1) === 1);
}

async function readRows(path: string, layout: Layout, top: number, count: number): Promise<Buffer> {
  const { width, rowsPerStrip, bytes } = layout;
  const rowBytes = width * bytes;
  // Its own memory, offset 0: typed views of any sample size fit it.
  const out = Buffer.from(new ArrayBuffer(count * rowBytes));
  const firstStrip = Math.floor(top / rowsPerStrip), lastStrip = Math.floor((top + count - 1) / rowsPerStrip);
  const file = await open(path, 'r');
  try {
    if (layout.compression === 1) await readPlain(file, path, layout, top, count, out, firstStrip, lastStrip);
    else await readCompressed(file, path, layout, top, count, out, firstStrip, lastStrip);
  } finally {
    await file.close();
  }
  if (layout.swap) swapBytes(out, bytes);
  // libtiff applies a predictor for LZW and Deflate only, and ignores the tag beside other compressions.
  if (layout.predictor === 2 && PREDICTED.has(layout.compression)) for (let y = 0; y < count; y++) undoPredictor(out, y * rowBytes, width, bytes);
  return out;
}

/** Rows of strip `k` within the band: the first, the one past the last. */
function stripRowsIn(layout: Layout, k: number, top: number, count: number): [number, number] {
  const s0 = k * layout.rowsPerStrip;
  return [Math.max(top, s0), Math.min(top + count, s0 + layout.rowsPerStrip, layout.height)];
}

function stripName(layout: Layout, k: number): string {
  const s0 = k * layout.rowsPerStrip;
  return `strip ${k} (rows ${s0}–${Math.min(s0 + layout.rowsPerStrip, layout.height) - 1})`;
}

/** Uncompressed strips: only the band's bytes of each (of one strip of the whole image, only the band), strips stored one after another read at once. */
async function readPlain(file: FileHandle, path: string, layout: Layout, top: number, count: number, out: Buffer, firstStrip: number, lastStrip: number): Promise<void> {
  const rowBytes = layout.width * layout.bytes;
  let run: { at: number; to: number; length: number } | undefined;
  const flush = async () => {
    if (run !== undefined) await readFully(file, path, out, run.to, run.length, run.at, `rows ${top + run.to / rowBytes}–${top + (run.to + run.length) / rowBytes - 1}`);
  };
  for (let k = firstStrip; k <= lastStrip; k++) {
    const [from, to] = stripRowsIn(layout, k, top, count);
    const within = (from - k * layout.rowsPerStrip) * rowBytes, length = (to - from) * rowBytes;
    if (within + length > layout.counts[k]) {
      throw new ImageError(path, `${stripName(layout, k)} holds ${layout.counts[k]} bytes, and its rows take ${(Math.min(layout.rowsPerStrip, layout.height - k * layout.rowsPerStrip)) * rowBytes} (damaged?)`);
    }
    const at = layout.offsets[k] + within, dest = (from - top) * rowBytes;
    if (run !== undefined && run.at + run.length === at && run.to + run.length === dest) { run.length += length; continue; }
    await flush();
    run = { at, to: dest, length };
  }
  await flush();
}

/** Reads `length` bytes at file offset `at` into `out` at `to`; a file that ends first is cut short. */
async function readFully(file: FileHandle, path: string, out: Uint8Array, to: number, length: number, at: number, what: string): Promise<void> {
  for (let done = 0; done < length;) {
    // One read gives at most 2 GiB.
    const { bytesRead } = await file.read(out, to + done, Math.min(length - done, 1 << 30), at + done);
    if (bytesRead === 0) throw new ImageError(path, `the file ends at byte ${at + done}, inside the bytes of ${what}, which end at byte ${at + length} (cut short?)`);
    done += bytesRead;
  }
}

/** Compressed strips: each decoded whole up to the band's last row, strips stored one after another read together. */
async function readCompressed(file: FileHandle, path: string, layout: Layout, top: number, count: number, out: Buffer, firstStrip: number, lastStrip: number): Promise<void> {
  const rowBytes = layout.width * layout.bytes;
  // Where LZW and PackBits strips above the band are decoded; zlib gives a buffer of its own.
  const strip = new Uint8Array(layout.compression === 5 || layout.compression === 32773 ? layout.rowsPerStrip * rowBytes : 0);
  const lzw = new LzwDecoder();
  for (let k = firstStrip; k <= lastStrip;) {
    // A run of strips whose bytes follow each other in the file, read at once.
    let end = k + 1;
    while (end <= lastStrip && layout.offsets[end] === layout.offsets[end - 1] + layout.counts[end - 1] && layout.offsets[end] + layout.counts[end] - layout.offsets[k] <= READ_RUN) end++;
    const start = layout.offsets[k];
    const bytes = new Uint8Array(layout.offsets[end - 1] + layout.counts[end - 1] - start);
    await readFully(file, path, bytes, 0, bytes.length, start, end - 1 > k ? `strips ${k}–${end - 1}` : stripName(layout, k));
    for (; k < end; k++) {
      const [from, to] = stripRowsIn(layout, k, top, count);
      const s0 = k * layout.rowsPerStrip;
      const need = (to - s0) * rowBytes;
      const src = bytes.subarray(layout.offsets[k] - start, layout.offsets[k] - start + layout.counts[k]);
      // A strip that starts in the band is decoded where its rows go; one above it, aside.
      const into = from === s0 ? out.subarray((from - top) * rowBytes, (to - top) * rowBytes) : strip.subarray(0, need);
      const decoded = decodeStrip(path, layout, k, src, into, lzw);
      if (decoded.length < need) throw new ImageError(path, `${stripName(layout, k)} decodes to ${decoded.length} bytes, and its rows to row ${to - 1} take ${need} (cut short or damaged?)`);
      if (decoded.buffer !== out.buffer) out.set(decoded.subarray((from - s0) * rowBytes, need), (from - top) * rowBytes);
    }
  }
}

/** A strip's first `into.length` bytes decoded (or as many as it holds), in `into` or a buffer of its own. */
function decodeStrip(path: string, layout: Layout, k: number, src: Uint8Array, into: Uint8Array, lzw: LzwDecoder): Uint8Array {
  try {
    if (layout.compression === 5) return into.subarray(0, lzw.decode(src, into));
    if (layout.compression === 32773) return into.subarray(0, packBitsDecode(src, into));
    // In one buffer of the strip's size, not in chunks of 16 KiB joined into another: a band is thousands of strips.
    return inflateSync(src, { chunkSize: Math.max(64, layout.rowsPerStrip * layout.width * layout.bytes) });
  } catch (err) {
    const name = layout.compression === 5 ? 'LZW' : layout.compression === 32773 ? 'PackBits' : 'Deflate';
    throw new ImageError(path, `${stripName(layout, k)} cannot be decoded as ${name}: ${err instanceof Error ? err.message : String(err)} (damaged?)`);
  }
}

/** Turns samples of `bytes` bytes around: to this machine's byte order. */
function swapBytes(b: Buffer, bytes: number): void {
  if (bytes === 2) b.swap16();
  else if (bytes === 4) b.swap32();
  else if (bytes === 8) b.swap64();
}

/** Undoes horizontal differencing (predictor 2) on one row: each sample was stored less the one to its left, modulo its size. */
function undoPredictor(b: Buffer, at: number, width: number, bytes: number): void {
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
