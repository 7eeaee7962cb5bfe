// The compression of a TIFF's first image, read from its header: sharp does not say, and a lossy one spoils labels.
import fs from 'node:fs';

/** TIFF Compression values (tag 259) that lose information: old-style and new-style JPEG, lossy JPEG of DNG. */
const LOSSY: ReadonlyMap<number, string> = new Map([[6, 'JPEG (old-style)'], [7, 'JPEG'], [34892, 'lossy JPEG']]);

/** Bytes read from the start of the file: the header and, in files as writers lay them out, the first directory. */
const HEAD_BYTES = 65536;

/**
 * The name of the lossy compression of the first image of a TIFF (classic or BigTIFF), or undefined when it is
 * lossless, absent, or its directory lies beyond the bytes read (then the decoder's word stands).
 */
export function lossyTiffCompression(path: string): string | undefined {
  const fd = fs.openSync(path, 'r');
  let b: Buffer;
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    b = buf.subarray(0, fs.readSync(fd, buf, 0, HEAD_BYTES, 0));
  } finally {
    fs.closeSync(fd);
  }
  if (b.length < 16) return undefined;
  const le = b[0] === 0x49 && b[1] === 0x49;
  if (!le && !(b[0] === 0x4d && b[1] === 0x4d)) return undefined;
  const u16 = (o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const big = u16(2) === 43;
  const ifd = big ? Number(le ? b.readBigUInt64LE(8) : b.readBigUInt64BE(8)) : u32(4);
  const countBytes = big ? 8 : 2, entryBytes = big ? 20 : 12;
  if (ifd + countBytes > b.length) return undefined;
  const count = big ? Number(le ? b.readBigUInt64LE(ifd) : b.readBigUInt64BE(ifd)) : u16(ifd);
  for (let i = 0; i < count; i++) {
    const e = ifd + countBytes + i * entryBytes;
    if (e + entryBytes > b.length) return undefined;
    if (u16(e) !== 259) continue;
    // The value sits at the start of the entry's value field, in either layout: a SHORT, or (some writers) a LONG.
    const at = e + (big ? 12 : 8);
    return LOSSY.get(u16(e + 2) === 4 ? u32(at) : u16(at));
  }
  return undefined;
}
