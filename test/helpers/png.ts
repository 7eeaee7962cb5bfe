// A greyscale PNG writer for tests of src/io/png-rows.ts: 8 or 16-bit, each row's filter chosen, image data in chunks of any size, extra chunks before it.
import { deflateSync } from 'node:zlib';

export interface GreyPng {
  width: number;
  height: number;
  bits: 8 | 16;
  /** The filter type of each row (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth); all None when not given. */
  filter?: (y: number) => number;
  /** IDAT chunks of at most this many bytes (the whole stream in one when not given). */
  idatBytes?: number;
  /** Chunks put between IHDR and the image data, as [type, data]. */
  before?: Array<[string, Buffer]>;
}

/** CRC-32 of PNG chunks (polynomial 0xEDB88320), bit by bit: tests write little. */
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const v of bytes) {
    c ^= v;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

export function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** What filter `f` predicts for byte i of a row from its left (a), above (b) and above-left (c) bytes. */
function predict(f: number, a: number, b: number, c: number): number {
  if (f === 1) return a;
  if (f === 2) return b;
  if (f === 3) return (a + b) >> 1;
  if (f === 4) {
    const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
  }
  return 0;
}

/** A PNG of `labels` (row-major, `width` a row), each row stored under its filter. */
export function greyPng(labels: ArrayLike<number>, o: GreyPng): Buffer {
  const bpp = o.bits / 8, rowBytes = o.width * bpp;
  const raw = Buffer.alloc(o.height * rowBytes);
  for (let i = 0; i < o.width * o.height; i++) {
    if (bpp === 2) raw.writeUInt16BE(labels[i], 2 * i);
    else raw[i] = labels[i];
  }
  const lines = Buffer.alloc(o.height * (rowBytes + 1));
  for (let y = 0; y < o.height; y++) {
    const f = o.filter?.(y) ?? 0, at = y * rowBytes, to = y * (rowBytes + 1);
    lines[to] = f;
    for (let i = 0; i < rowBytes; i++) {
      const a = i >= bpp ? raw[at + i - bpp] : 0, b = y > 0 ? raw[at - rowBytes + i] : 0, c = y > 0 && i >= bpp ? raw[at - rowBytes + i - bpp] : 0;
      lines[to + 1 + i] = (raw[at + i] - predict(f, a, b, c)) & 0xff;
    }
  }
  const stream = deflateSync(lines);
  const step = o.idatBytes ?? stream.length;
  const idat: Buffer[] = [];
  for (let i = 0; i < stream.length; i += step) idat.push(pngChunk('IDAT', stream.subarray(i, i + step)));
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(o.width, 0);
  ihdr.writeUInt32BE(o.height, 4);
  ihdr[8] = o.bits;
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), pngChunk('IHDR', ihdr),
    ...(o.before ?? []).map(([type, data]) => pngChunk(type, data)), ...idat, pngChunk('IEND', Buffer.alloc(0)),
  ]);
}
