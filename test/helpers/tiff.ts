// A minimal little-endian, uncompressed, single-strip greyscale TIFF writer for tests (sharp only writes 8-bit TIFF,
// and no ImageDescription: OME-XML and ImageJ's calibration are written here), of one page or several.
import fs from 'node:fs';

/** An IFD entry: SHORT (3) or LONG (4) number, ASCII (2) text, or RATIONAL (5) numerator and denominator. */
export type TiffEntry = [tag: number, type: 3 | 4, value: number] | [tag: number, type: 2, value: string] | [tag: number, type: 5, value: [number, number]];

/**
 * `entries` are IFD entries, sorted by tag; the StripOffsets entry (273) is pointed at the strip, which holds `strip`
 * (possibly shorter than the header claims, for header-only tests). Text and rationals lie between the IFD and it.
 */
export function littleEndianTiff(entries: TiffEntry[], strip: Uint8Array): Buffer {
  return littleEndianPages([{ entries, strip }]);
}

/** A label mask of 8, 16 or 32 bits `width` wide written as an uncompressed single-strip TIFF to `file`; gives `file`. */
export function maskTiff(file: string, width: number, data: Uint8Array | Uint16Array | Uint32Array): string {
  const bits = 8 * data.BYTES_PER_ELEMENT, height = data.length / width;
  fs.writeFileSync(file, littleEndianTiff([[256, 4, width], [257, 4, height], [258, 3, bits], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, height], [279, 4, data.byteLength], [339, 3, 1]], new Uint8Array(data.buffer, data.byteOffset, data.byteLength)));
  return file;
}

/** Pages as `littleEndianTiff` writes one, each directory followed by its strip, linked in the order given. */
export function littleEndianPages(pages: Array<{ entries: TiffEntry[]; strip: Uint8Array }>): Buffer {
  const parts: Buffer[] = [Buffer.alloc(8)];
  parts[0].write('II', 0, 'latin1');
  parts[0].writeUInt16LE(42, 2);
  parts[0].writeUInt32LE(8, 4);
  let start = 8;
  pages.forEach(({ entries, strip }, p) => {
    const page = onePage(entries, strip, start, p === pages.length - 1);
    parts.push(page);
    start += page.length;
  });
  return Buffer.concat(parts);
}

/** One page laid out at file offset `start`: its IFD (pointing at the next page, right after it, unless `last`), text, strip. */
function onePage(entries: TiffEntry[], strip: Uint8Array, start: number, last: boolean): Buffer {
  const ifdEnd = 2 + entries.length * 12 + 4;
  const outside = entries.map(([, type, value]) => (type === 2 ? Buffer.from(`${value}\0`, 'utf8') : type === 5 ? Buffer.alloc(8) : undefined));
  const dataOffset = ifdEnd + outside.reduce((n, b) => n + (b !== undefined && b.length > 4 ? b.length : 0), 0);
  // The next directory starts on a word boundary, as TIFF asks.
  const buf = Buffer.alloc(dataOffset + strip.byteLength + ((dataOffset + strip.byteLength) % 2));
  buf.writeUInt16LE(entries.length, 0);
  let at = ifdEnd;
  entries.forEach(([tag, type, value], i) => {
    const o = 2 + i * 12;
    buf.writeUInt16LE(tag, o);
    buf.writeUInt16LE(type, o + 2);
    const extra = outside[i];
    if (extra !== undefined) {
      if (type === 5) { extra.writeUInt32LE(value[0], 0); extra.writeUInt32LE(value[1], 4); }
      buf.writeUInt32LE(type === 2 ? extra.length : 1, o + 4);
      // Text of 4 bytes or fewer is the entry's value itself, as TIFF has it.
      if (extra.length <= 4) { extra.copy(buf, o + 8); return; }
      buf.writeUInt32LE(start + at, o + 8);
      extra.copy(buf, at);
      at += extra.length;
      return;
    }
    buf.writeUInt32LE(1, o + 4);
    const v = tag === 273 ? start + dataOffset : (value as number);
    if (type === 3) buf.writeUInt16LE(v, o + 8); else buf.writeUInt32LE(v, o + 8);
  });
  buf.writeUInt32LE(last ? 0 : start + buf.length, 2 + entries.length * 12);
  Buffer.from(strip.buffer, strip.byteOffset, strip.byteLength).copy(buf, dataOffset);
  return buf;
}
