// Rows of a tiled TIFF read from the tiles that hold them, a tile at a time: the 64-bit masks tifffile writes tiled,
// which libvips does not read.
import { open, type FileHandle } from 'node:fs/promises';
import { ImageError } from '../report/errors.js';
import { LzwDecoder } from './tiff-codecs.js';
import { decodeSegment, MAX_DECODED_SEGMENT, READ_RUN, readFully, segmentPage, segmentRows, TAG, undoCoding, type SampleCoding, type StripRows } from './tiff-segments.js';

interface Layout extends SampleCoding {
  width: number;
  height: number;
  tileWidth: number;
  tileHeight: number;
  /** Tiles in a row of tiles. */
  across: number;
  offsets: number[];
  counts: number[];
}

/**
 * A reader of the rows of page `page` of a tiled TIFF, as `stripReader` reads strips: one sample per pixel, 8 to
 * 64-bit, uncompressed, Deflate, LZW or PackBits, any predictor of theirs, either byte order, BigTIFF too; undefined
 * for another TIFF. A read decodes the tiles of the rows of tiles it reaches, one tile at a time: a band of a mask
 * holds its own rows and one tile, whatever the mask's size.
 */
export async function tileReader(path: string, page: number, depth: string): Promise<StripRows | undefined> {
  return segmentRows(path, tileLayout(path, page, depth), readRows);
}

function tileLayout(path: string, page: number, depth: string): Layout | undefined {
  const found = segmentPage(path, page, depth);
  if (found === undefined || !found.tiled) return undefined;
  const { width, height, coding, one, all } = found;
  const tileWidth = one(TAG.tileWidth) ?? 0, tileHeight = one(TAG.tileLength) ?? 0;
  const offsets = all(TAG.tileOffsets), counts = all(TAG.tileCounts);
  if (tileWidth <= 0 || tileHeight <= 0 || offsets === undefined || counts === undefined) return undefined;
  const across = Math.ceil(width / tileWidth), tiles = across * Math.ceil(height / tileHeight);
  if (offsets.length < tiles || counts.length < tiles || tileWidth * tileHeight * coding.bytes > MAX_DECODED_SEGMENT) return undefined;
  return { width, height, tileWidth, tileHeight, across, offsets, counts, ...coding };
}

function tileName(layout: Layout, k: number): string {
  const x = (k % layout.across) * layout.tileWidth, y = Math.floor(k / layout.across) * layout.tileHeight;
  return `tile ${k} (from pixel (${x}, ${y}))`;
}

async function readRows(path: string, layout: Layout, top: number, count: number): Promise<Buffer> {
  const { width, tileHeight, bytes } = layout;
  // Its own memory, offset 0: typed views of any sample size fit it.
  const out = Buffer.from(new ArrayBuffer(count * width * bytes));
  // One tile's samples, as stored and then as read (offset 0 and its own memory: typed views of 8-byte samples fit).
  const tile = new Uint8Array(layout.tileWidth * tileHeight * bytes);
  const lzw = new LzwDecoder();
  const file = await open(path, 'r');
  try {
    for (let row = Math.floor(top / tileHeight); row * tileHeight < top + count; row++) {
      // Rows of this row of tiles within the read, counted from its first.
      const first = Math.max(top, row * tileHeight) - row * tileHeight;
      const end = Math.min(top + count, (row + 1) * tileHeight, layout.height) - row * tileHeight;
      // The tile's rows from `at` are rows [first, end) of it; they go to `out` from its row `row * tileHeight + first - top`.
      const place = (column: number, at: number) => placeTile(layout, tile, at, end - first, out, row * tileHeight + first - top, column);
      if (layout.compression === 1) await readPlainRow(file, path, layout, row, first, end, tile, place);
      else await readCompressedRow(file, path, layout, row, first, end, tile, lzw, place);
    }
  } finally {
    await file.close();
  }
  return out;
}

/**
 * `rows` rows of tile `column` of a row of tiles, stored in `tile` from its row `at`, into `out` from its row `to`:
 * turned into this machine's samples, and the part of each within the image's width.
 */
function placeTile(layout: Layout, tile: Uint8Array, at: number, rows: number, out: Buffer, to: number, column: number): void {
  const { tileWidth, width, bytes } = layout;
  const tileRowBytes = tileWidth * bytes;
  undoCoding(tile, at * tileRowBytes, rows, tileWidth, layout);
  // Tiles at the right edge are padded past the image's width.
  const x = column * tileWidth, length = Math.min(tileWidth, width - x) * bytes;
  for (let y = 0; y < rows; y++) {
    const from = (at + y) * tileRowBytes;
    out.set(tile.subarray(from, from + length), ((to + y) * width + x) * bytes);
  }
}

/** Uncompressed tiles: only the rows of each that the read needs. */
async function readPlainRow(file: FileHandle, path: string, layout: Layout, row: number, first: number, end: number, tile: Uint8Array, place: (column: number, at: number) => void): Promise<void> {
  const tileRowBytes = layout.tileWidth * layout.bytes;
  for (let column = 0; column < layout.across; column++) {
    const k = row * layout.across + column;
    if (end * tileRowBytes > layout.counts[k]) {
      throw new ImageError(path, `${tileName(layout, k)} holds ${layout.counts[k]} bytes, and its rows take ${layout.tileHeight * tileRowBytes} (damaged?)`);
    }
    await readFully(file, path, tile, 0, (end - first) * tileRowBytes, layout.offsets[k] + first * tileRowBytes, tileName(layout, k));
    place(column, 0);
  }
}

/** Compressed tiles, each decoded down to the read's last row in it, tiles stored one after another read together. */
async function readCompressedRow(file: FileHandle, path: string, layout: Layout, row: number, first: number, end: number, tile: Uint8Array, lzw: LzwDecoder, place: (column: number, at: number) => void): Promise<void> {
  const { offsets, counts, across } = layout;
  const tileRowBytes = layout.tileWidth * layout.bytes, need = end * tileRowBytes;
  const last = (row + 1) * across - 1;
  for (let k = row * across; k <= last;) {
    // A run of tiles whose bytes follow each other in the file, read at once.
    let stop = k + 1;
    while (stop <= last && offsets[stop] === offsets[stop - 1] + counts[stop - 1] && offsets[stop] + counts[stop] - offsets[k] <= READ_RUN) stop++;
    const start = offsets[k];
    const bytes = new Uint8Array(offsets[stop - 1] + counts[stop - 1] - start);
    await readFully(file, path, bytes, 0, bytes.length, start, stop - 1 > k ? `tiles ${k}–${stop - 1}` : tileName(layout, k));
    for (; k < stop; k++) {
      const src = bytes.subarray(offsets[k] - start, offsets[k] - start + counts[k]);
      const decoded = decodeSegment(path, layout.compression, src, tile.subarray(0, need), tile.length, lzw, tileName(layout, k));
      if (decoded.length < need) throw new ImageError(path, `${tileName(layout, k)} decodes to ${decoded.length} bytes, and its rows to row ${end - 1} take ${need} (cut short or damaged?)`);
      // Deflate's own buffer is copied into the tile's, where the samples are aligned.
      if (decoded.buffer !== tile.buffer) tile.set(decoded.subarray(0, need));
      place(k % across, first);
    }
  }
}
