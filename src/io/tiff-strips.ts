// Rows of a strip TIFF read straight from the strips that hold them: libvips decodes a strip TIFF from its first row
// down to the last row asked for, so each band of a mask read in bands cost more than the one above it.
import { open, type FileHandle } from 'node:fs/promises';
import { ImageError } from '../report/errors.js';
import { LzwDecoder } from './tiff-codecs.js';
import { decodeSegment, MAX_DECODED_SEGMENT, READ_RUN, readFully, segmentPage, segmentRows, TAG, undoCoding, type SampleCoding, type StripRows } from './tiff-segments.js';

interface Layout extends SampleCoding {
  width: number;
  height: number;
  rowsPerStrip: number;
  offsets: number[];
  counts: number[];
}

export type { StripRows } from './tiff-segments.js';

/**
 * A reader of the rows of page `page` of a strip TIFF of one sample per pixel, 8, 16, 32 or 64-bit, uncompressed,
 * Deflate, LZW or PackBits, predictor none, horizontal or (of floats) floating-point, either byte order, whose samples
 * libvips calls `depth`; undefined for any other TIFF (tiled, planar, JPEG…), which libvips reads.
 */
export async function stripReader(path: string, page: number, depth: string): Promise<StripRows | undefined> {
  return segmentRows(path, stripLayout(path, page, depth), readRows);
}

function stripLayout(path: string, page: number, depth: string): Layout | undefined {
  const found = segmentPage(path, page, depth);
  if (found === undefined || found.tiled) return undefined;
  const { width, height, coding, one, all } = found;
  // libtiff's default of one strip for the whole image.
  const rowsPerStrip = Math.min(one(TAG.rowsPerStrip, height) ?? height, height);
  const offsets = all(TAG.stripOffsets), counts = all(TAG.stripCounts);
  const strips = rowsPerStrip > 0 ? Math.ceil(height / rowsPerStrip) : 0;
  if (strips === 0 || offsets === undefined || counts === undefined || offsets.length < strips || counts.length < strips) return undefined;
  if (coding.compression !== 1 && rowsPerStrip * width * coding.bytes > MAX_DECODED_SEGMENT) return undefined;
  return { width, height, rowsPerStrip, offsets, counts, ...coding };
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
  undoCoding(out, 0, count, width, layout);
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
      const decoded = decodeSegment(path, layout.compression, src, into, layout.rowsPerStrip * rowBytes, lzw, stripName(layout, k));
      if (decoded.length < need) throw new ImageError(path, `${stripName(layout, k)} decodes to ${decoded.length} bytes, and its rows to row ${to - 1} take ${need} (cut short or damaged?)`);
      if (decoded.buffer !== out.buffer) out.set(decoded.subarray((from - s0) * rowBytes, need), (from - top) * rowBytes);
    }
  }
}
