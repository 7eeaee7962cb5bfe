// Rows of a greyscale PNG decoded forward from its image data, where the decoder stopped: libvips decodes a PNG from its first row for every band.
import { NATIVE_LE } from '../bytes.js';
import { Readable, pipeline } from 'node:stream';
import { createInflate, type Inflate } from 'node:zlib';
import { ImageError } from '../report/errors.js';
import { PngChunks } from './png-chunks.js';
import type { StripRows } from './tiff-strips.js';

/** libvips' name of the sample type (sharp's `depth`) of a greyscale PNG by its bit depth. */
const DEPTH: Readonly<Record<number, string>> = { 8: 'uchar', 16: 'ushort' };

/**
 * The last rows of each read kept, up to this many bytes (one row at least), for the next read to start in: a band of
 * pieces starts at the last row of the band before it (`pieceBands`), a band of labels after it. Rows above them are
 * decoded again from the first row. A tail of 32 MiB, copied at each read and freed at the next, raised the peak of a
 * 20,000² px 16-bit PNG's reading by 90 MB (in glibc's heap: with its mmap threshold fixed the gap closed too).
 */
const TAIL_BYTES = 1 << 20;

/**
 * A reader of the rows of a non-interlaced greyscale PNG of 8 or 16-bit samples with no tRNS chunk, samples in this
 * machine's byte order, as libvips gives them raw; undefined for any other PNG (palette, colour, alpha, 1, 2 or 4-bit,
 * Adam7, a transparent grey), or one whose chunks before its image data do not read, which libvips reads. Rows asked
 * for below the last read decode on from where it stopped, so that a mask read in bands is decoded once.
 */
export async function pngReader(path: string, depth: string): Promise<StripRows | undefined> {
  let header;
  try {
    header = await new PngChunks(path).header();
  } catch (err) {
    if (err instanceof ImageError) return undefined;
    throw err;
  }
  const { width, height, bitDepth, colourType, interlace, transparency } = header;
  if (colourType !== 0 || interlace !== 0 || transparency || DEPTH[bitDepth] !== depth || width === 0 || height === 0) return undefined;
  const decoder = new PngDecoder(path, width, height, bitDepth / 8);
  // One read at a time: each goes on from where the one before stopped.
  let queue: Promise<unknown> = Promise.resolve();
  return (top, count) => {
    const read = queue.then(() => decoder.rows(top, count));
    queue = read.catch(() => undefined);
    return read;
  };
}

/** The image data of a PNG inflated, from its first IDAT chunk. */
function inflated(path: string): Inflate {
  const data = async function* () {
    const chunks = new PngChunks(path);
    await chunks.header();
    yield* chunks.imageData();
  };
  const inflate = createInflate({ chunkSize: 1 << 20 });
  // An error of either (a chunk's CRC, the deflate data) ends the inflated stream with it, which the reader reports.
  // One piece of the file read ahead, not 16 (up to 64 MiB).
  pipeline(Readable.from(data(), { highWaterMark: 1 }), inflate, () => undefined);
  return inflate;
}

/** The decoder's place in the image data: the next row to decode, and the row above it unfiltered (zeros above the first). */
class PngDecoder {
  private readonly rowBytes: number;
  private next = 0;
  private above: Uint8Array;
  private stream: { inflate: Inflate; pieces: AsyncIterator<Buffer> } | undefined;
  /** The inflated piece being read, and where in it the next row starts. */
  private piece: Buffer = Buffer.alloc(0);
  private at = 0;
  /** A filtered row put together across pieces. */
  private readonly line: Uint8Array;
  /** The last rows of the last read, as stored (big-endian 16-bit samples). */
  private tail: { top: number; data: Uint8Array } | undefined;

  constructor(private readonly path: string, width: number, private readonly height: number, private readonly bytes: number) {
    this.rowBytes = width * bytes;
    this.above = new Uint8Array(this.rowBytes);
    this.line = new Uint8Array(this.rowBytes + 1);
  }

  /** Rows [top, top + count), in a buffer of their own (offset 0: typed views of 16-bit samples fit it). */
  async rows(top: number, count: number): Promise<Buffer> {
    const { rowBytes } = this;
    const out = Buffer.from(new ArrayBuffer(count * rowBytes));
    let y = top;
    const tail = this.tail;
    if (tail !== undefined && top >= tail.top && top < tail.top + tail.data.length / rowBytes) {
      const from = (top - tail.top) * rowBytes;
      const kept = tail.data.subarray(from, from + count * rowBytes);
      out.set(kept);
      y += kept.length / rowBytes;
    }
    if (y < top + count) {
      await this.decode(out, top, y, count);
      // Kept as they end where the decoder stands (a read within them leaves them so).
      const keep = Math.min(count, Math.max(1, Math.floor(TAIL_BYTES / rowBytes)));
      this.tail = { top: top + count - keep, data: Uint8Array.from(out.subarray((count - keep) * rowBytes)) };
    }
    if (this.bytes === 2 && NATIVE_LE) out.swap16();
    return out;
  }

  /** Decodes rows [y, top + count) into `out` (which starts at row `top`); after a failure, the next read starts over. */
  private async decode(out: Buffer, top: number, from: number, count: number): Promise<void> {
    const { rowBytes } = this;
    let y = from;
    try {
      if (y < this.next) this.restart();
      // Rows between the last read and this one, decoded and let go.
      const scratch = [new Uint8Array(rowBytes), new Uint8Array(rowBytes)];
      for (let k = 0; this.next < y; k ^= 1) await this.decodeRow(scratch[k]);
      for (; y < top + count; y++) await this.decodeRow(out.subarray((y - top) * rowBytes, (y - top + 1) * rowBytes));
      // Its own copy: `out` goes to the caller.
      this.above = Uint8Array.from(this.above);
    } catch (err) {
      this.restart();
      this.tail = undefined;
      throw err;
    }
  }

  /** Starts over at the first row, the image data read again. */
  private restart(): void {
    this.stream?.inflate.destroy();
    this.stream = undefined;
    this.next = 0;
    this.above = new Uint8Array(this.rowBytes);
    this.piece = Buffer.alloc(0);
    this.at = 0;
  }

  /** Decodes row `next` into `into`, which becomes the row above the next. */
  private async decodeRow(into: Uint8Array): Promise<void> {
    const line = await this.filteredLine();
    const filter = line[0];
    if (filter > 4) throw new ImageError(this.path, `row ${this.next} has filter type ${filter}, which PNG does not define (damaged?)`);
    unfilter(filter, line.subarray(1), this.above, into, this.bytes);
    this.above = into;
    this.next++;
  }

  /** The next row's filter type byte and filtered bytes, inflated on as needed. */
  private async filteredLine(): Promise<Uint8Array> {
    const need = this.rowBytes + 1;
    if (this.piece.length - this.at >= need) {
      this.at += need;
      return this.piece.subarray(this.at - need, this.at);
    }
    for (let filled = 0; filled < need;) {
      if (this.at === this.piece.length) {
        this.piece = await this.nextPiece();
        this.at = 0;
      }
      const n = Math.min(need - filled, this.piece.length - this.at);
      this.line.set(this.piece.subarray(this.at, this.at + n), filled);
      filled += n;
      this.at += n;
    }
    return this.line;
  }

  private async nextPiece(): Promise<Buffer> {
    if (this.stream === undefined) {
      const inflate = inflated(this.path);
      this.stream = { inflate, pieces: inflate[Symbol.asyncIterator]() };
    }
    let got: IteratorResult<Buffer>;
    try {
      got = await this.stream.pieces.next();
    } catch (err) {
      if (err instanceof ImageError) throw err;
      throw new ImageError(this.path, `its image data cannot be inflated (row ${this.next} of ${this.height}): ${err instanceof Error ? err.message : String(err)} (cut short or damaged?)`);
    }
    if (got.done === true) throw new ImageError(this.path, `its image data ends at row ${this.next} of ${this.height} (cut short?)`);
    return got.value;
  }
}

/**
 * Undoes a row's filter (PNG specification §9.2): each byte was stored less a prediction from the byte a pixel to its
 * left (a), the byte above (b) and the byte above that one's left (c), zeros off the image; `bpp` bytes a pixel.
 * Sums wrap modulo 256 as the Uint8Array stores them.
 */
function unfilter(filter: number, src: Uint8Array, above: Uint8Array, out: Uint8Array, bpp: number): void {
  const n = src.length;
  // The first pixel's bytes have no left neighbour (a = c = 0), the rest go without that test.
  const first = Math.min(bpp, n);
  switch (filter) {
    case 0:
      out.set(src);
      break;
    case 1:
      for (let i = 0; i < first; i++) out[i] = src[i];
      for (let i = first; i < n; i++) out[i] = src[i] + out[i - bpp];
      break;
    case 2:
      for (let i = 0; i < n; i++) out[i] = src[i] + above[i];
      break;
    case 3:
      for (let i = 0; i < first; i++) out[i] = src[i] + (above[i] >> 1);
      for (let i = first; i < n; i++) out[i] = src[i] + ((out[i - bpp] + above[i]) >> 1);
      break;
    default:
      // Paeth with a = c = 0 predicts b.
      for (let i = 0; i < first; i++) out[i] = src[i] + above[i];
      for (let i = first; i < n; i++) {
        const a = out[i - bpp], b = above[i], c = above[i - bpp];
        const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - c - c);
        out[i] = src[i] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
      }
  }
}
