// Decoders of the TIFF strip compressions that label masks are written with and node:zlib lacks: LZW and PackBits.

/** LZW codes: clear the table, end of information; the first code of the table's own strings. */
const CLEAR = 256, EOI = 257, FIRST = 258;
/** Codes are 9 to 12 bits wide: a table holds at most 4,096 strings. */
const TABLE = 4096;

/**
 * A decoder of TIFF LZW strips, owning its table (one per reader of a band, reused strip after strip): the table's
 * strings by where they were first written to the output, and their lengths. Each is an earlier string and the byte
 * after it, so it lies in the output whole, and is copied from there rather than followed link by link.
 */
export class LzwDecoder {
  private readonly start = new Int32Array(TABLE);
  private readonly length = new Int32Array(TABLE);

  /**
   * Decodes a strip (codes most significant bit first, widths growing one code early as libtiff writes them) into
   * `out`, up to `out.length` bytes; gives how many it wrote, fewer when the codes end first (a strip cut short). A
   * code the table does not hold yet throws: the strip is damaged. The pre-1991 variant (least significant bit first)
   * is not read here.
   */
  decode(src: Uint8Array, out: Uint8Array): number {
    const { start, length } = this;
    const need = out.length, end = src.length;
    let i = 0, bits = 0, held = 0, o = 0, width = 9, next = FIRST, prev = -1, prevAt = 0, prevLength = 0;
    while (o < need) {
      while (held < width && i < end) { bits = (bits << 8) | src[i++]; held += 8; }
      if (held < width) break;
      held -= width;
      const code = (bits >>> held) & ((1 << width) - 1);
      bits &= (1 << held) - 1;
      if (code === EOI) break;
      if (code === CLEAR) { width = 9; next = FIRST; prev = -1; continue; }
      let from: number, n: number;
      if (code < 256) { from = -1; n = 1; }
      else if (code < next && code >= FIRST) { from = start[code]; n = length[code]; }
      // A code one past the table is the string being made: the previous string and its own first byte.
      else if (code === next && prev >= 0) { from = prevAt; n = prevLength + 1; }
      else throw new Error(`LZW code ${code} is not in the table (${next - FIRST} strings)`);
      const at = o, stop = Math.min(o + n, need);
      if (from < 0) out[o++] = code;
      // A long string at once; a short one, or the string being made (which overlaps its own copy by its last byte),
      // byte by byte, forward.
      else if (n >= 32 && from + n <= at) { out.copyWithin(o, from, from + stop - o); o = stop; }
      else for (let k = from; o < stop; k++, o++) out[o] = out[k];
      if (prev >= 0 && next < TABLE) { start[next] = prevAt; length[next] = prevLength + 1; next++; }
      prev = code; prevAt = at; prevLength = n;
      // The decoder's table is one entry behind the encoder's, which widens its codes as its table reaches 2^width.
      if (next >= (1 << width) - 1 && width < 12) width++;
    }
    return o;
  }
}

/** Decodes a PackBits strip into `out`, up to `out.length` bytes; gives how many it wrote (fewer for a strip cut short). */
export function packBitsDecode(src: Uint8Array, out: Uint8Array): number {
  const need = out.length;
  let i = 0, o = 0;
  while (o < need && i < src.length) {
    const n = src[i++];
    if (n < 128) {
      // n + 1 bytes as they are.
      const end = Math.min(i + n + 1, src.length, i + need - o);
      out.set(src.subarray(i, end), o);
      o += end - i;
      i += n + 1;
    } else if (n > 128 && i < src.length) {
      // The next byte 257 - n times; 128 is no operation.
      const end = Math.min(o + 257 - n, need);
      out.fill(src[i++], o, end);
      o = end;
    }
  }
  return o;
}
