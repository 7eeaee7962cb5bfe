// A PNG file's chunks read in order (PNG specification, 3rd edition, §5): its header, and its image data checked against each chunk's CRC.
import { open } from 'node:fs/promises';
import * as zlib from 'node:zlib';
import { ImageError } from '../report/errors.js';

const SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);

/** The file is read this many bytes at a time, a chunk of image data handed on in pieces of at most this. */
const BLOCK = 4 << 20;

/** What IHDR says of the image, and whether a tRNS chunk comes before its data. */
export interface PngHeader {
  width: number;
  height: number;
  bitDepth: number;
  /** 0 grey, 2 colour, 3 palette, 4 grey and alpha, 6 colour and alpha. */
  colourType: number;
  interlace: number;
  transparency: boolean;
}

/** CRC-32 as the specification defines it (§5.5, polynomial 0xEDB88320), a byte at a time through a table. */
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

/** The CRC of `bytes` following ones whose CRC was `previous`, by the table. */
export function tableCrc(bytes: Uint8Array, previous = 0): number {
  let c = (previous ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** zlib's CRC-32 (Node 20.15 and later), the same function ten times as fast, else the table's. */
const crc32: (bytes: Uint8Array, previous?: number) => number = (zlib as { crc32?: (bytes: Uint8Array, previous?: number) => number }).crc32 ?? tableCrc;

/** Bytes of a file read forward a block at a time, opened for each block so that nothing stays open between reads. */
class FileBytes {
  private block = Buffer.alloc(0);
  private at = 0;
  /** Where the block starts in the file. */
  private start = 0;

  constructor(private readonly path: string) {}

  /** Where the next byte taken lies in the file. */
  get offset(): number { return this.start + this.at; }

  /** The next `n` bytes (at most BLOCK), a view valid until the next call; the file ending first is named with `what`. */
  async take(n: number, what: string): Promise<Buffer> {
    if (this.block.length - this.at < n) await this.refill(n, what);
    const out = this.block.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** Up to `n` bytes (at least one), as many as the block holds when it holds some. */
  async some(n: number, what: string): Promise<Buffer> {
    return this.take(Math.min(n, this.block.length - this.at > 0 ? this.block.length - this.at : BLOCK), what);
  }

  /** Whether the file holds no byte past those taken. */
  async atEnd(): Promise<boolean> {
    if (this.block.length > this.at) return false;
    const file = await open(this.path, 'r');
    try {
      return (await file.stat()).size <= this.offset;
    } finally {
      await file.close();
    }
  }

  private async refill(n: number, what: string): Promise<void> {
    const rest = this.block.subarray(this.at);
    const next = Buffer.alloc(Math.max(BLOCK, n));
    rest.copy(next);
    const start = this.start + this.at;
    let filled = rest.length;
    const file = await open(this.path, 'r');
    try {
      while (filled < next.length) {
        const { bytesRead } = await file.read(next, filled, next.length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
    } finally {
      await file.close();
    }
    if (filled < n) throw new ImageError(this.path, `the file ends at byte ${start + filled}, inside ${what} (cut short?)`);
    this.block = next.subarray(0, filled);
    this.start = start;
    this.at = 0;
  }
}

/** A chunk's length and type, read from its first 8 bytes, and where it starts. */
async function chunkHead(bytes: FileBytes): Promise<{ length: number; type: string; at: number }> {
  const at = bytes.offset;
  const head = await bytes.take(8, `the chunk that starts at byte ${at}`);
  return { length: head.readUInt32BE(0), type: head.toString('latin1', 4, 8), at };
}

/**
 * The chunks of a PNG file from its signature: `header` reads IHDR and the chunks up to the first IDAT, then
 * `imageData` gives the bytes of every IDAT chunk in order, each chunk's CRC checked where it ends (a chunk of more
 * than BLOCK bytes is handed on in pieces before its end is reached). Ancillary chunks are skipped unread, as a
 * decoder may; a critical chunk other than IHDR, PLTE, IDAT and IEND is refused.
 */
export class PngChunks {
  private readonly bytes: FileBytes;

  constructor(private readonly path: string) {
    this.bytes = new FileBytes(path);
  }

  private fail(why: string): never {
    throw new ImageError(this.path, why);
  }

  /** The header, the file read up to (not into) its first IDAT chunk. */
  async header(): Promise<PngHeader> {
    const sig = await this.bytes.take(8, 'the PNG signature');
    if (!sig.equals(SIGNATURE)) this.fail('this file does not start with the PNG signature');
    const ihdr = await this.whole(await chunkHead(this.bytes));
    if (ihdr.type !== 'IHDR' || ihdr.data.length !== 13) this.fail(`its first chunk is ${ihdr.type} of ${ihdr.data.length} bytes, where IHDR of 13 is due`);
    const d = ihdr.data;
    const header: PngHeader = { width: d.readUInt32BE(0), height: d.readUInt32BE(4), bitDepth: d[8], colourType: d[9], interlace: d[12], transparency: false };
    for (;;) {
      const at = this.bytes.offset;
      const head = await chunkHead(this.bytes);
      if (head.type === 'IDAT') {
        this.pending = head;
        return header;
      }
      if (head.type === 'tRNS') header.transparency = true;
      if (head.type === 'IEND') this.fail(`it ends (IEND at byte ${at}) before any image data (IDAT)`);
      await this.skip(head);
    }
  }

  /** The IDAT chunk whose head `header` read. */
  private pending: { length: number; type: string; at: number } | undefined;

  /** The bytes of the IDAT chunks in order, until the first other chunk. */
  async *imageData(): AsyncGenerator<Buffer, void, undefined> {
    let head = this.pending ?? this.fail('its image data was asked for before its header was read');
    while (head.type === 'IDAT') {
      let crc = crc32(Buffer.from('IDAT', 'latin1'));
      const what = `chunk IDAT at byte ${head.at} (${head.length} bytes)`;
      for (let left = head.length; left > 0;) {
        const piece = await this.bytes.some(left, what);
        crc = crc32(piece, crc);
        left -= piece.length;
        // Copied: the view is the reader's block, which the next read replaces while zlib may still hold it.
        yield Buffer.from(piece);
      }
      const stored = (await this.bytes.take(4, `the CRC of ${what}`)).readUInt32BE(0);
      if (stored !== crc) this.fail(`${what} fails its CRC check (damaged?)`);
      // A file that ends after its image data, without IEND, has given all of it: the inflated stream says whether it is whole.
      if (await this.bytes.atEnd()) return;
      head = await chunkHead(this.bytes);
    }
    if (/^[A-Z]/.test(head.type) && head.type !== 'IEND') this.fail(`critical chunk ${head.type} at byte ${head.at} follows the image data, and is not read`);
  }

  /** A whole chunk of at most BLOCK bytes, its CRC checked. */
  private async whole(head: { length: number; type: string; at: number }): Promise<{ type: string; data: Buffer }> {
    const what = `chunk ${head.type} at byte ${head.at}`;
    if (head.length > BLOCK) this.fail(`${what} is ${head.length} bytes long (damaged?)`);
    const all = await this.bytes.take(head.length + 4, what);
    const data = Buffer.from(all.subarray(0, head.length));
    // The CRC covers the chunk's type and data.
    const crc = crc32(data, crc32(Buffer.from(head.type, 'latin1')));
    if (all.readUInt32BE(head.length) !== crc) this.fail(`${what} fails its CRC check (damaged?)`);
    return { type: head.type, data };
  }

  /** Passes over a chunk before the image data; a critical one other than PLTE is refused. */
  private async skip(head: { length: number; type: string; at: number }): Promise<void> {
    if (/^[A-Z]/.test(head.type) && head.type !== 'PLTE') this.fail(`critical chunk ${head.type} at byte ${head.at} is not read`);
    for (let left = head.length + 4; left > 0;) left -= (await this.bytes.some(left, `chunk ${head.type} at byte ${head.at}`)).length;
  }
}
