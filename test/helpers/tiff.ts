// A minimal little-endian, uncompressed, single-strip greyscale TIFF writer for tests (sharp only writes 8-bit TIFF).

export type TiffEntry = [tag: number, type: 3 | 4, value: number];

/**
 * `entries` are IFD entries (type 3 SHORT, 4 LONG), sorted by tag; the StripOffsets entry (273) is pointed at the
 * strip, which holds `strip` (possibly shorter than the header claims, for header-only tests).
 */
export function littleEndianTiff(entries: TiffEntry[], strip: Uint8Array): Buffer {
  const dataOffset = 8 + 2 + entries.length * 12 + 4;
  const buf = Buffer.alloc(dataOffset + strip.byteLength);
  buf.write('II', 0, 'latin1');
  buf.writeUInt16LE(42, 2);
  buf.writeUInt32LE(8, 4);
  buf.writeUInt16LE(entries.length, 8);
  entries.forEach(([tag, type, value], i) => {
    const o = 10 + i * 12;
    buf.writeUInt16LE(tag, o);
    buf.writeUInt16LE(type, o + 2);
    buf.writeUInt32LE(1, o + 4);
    const v = tag === 273 ? dataOffset : value;
    if (type === 3) buf.writeUInt16LE(v, o + 8); else buf.writeUInt32LE(v, o + 8);
  });
  Buffer.from(strip.buffer, strip.byteOffset, strip.byteLength).copy(buf, dataOffset);
  return buf;
}
