// A strip or tiled TIFF writer for tests of src/io/tiff-strips.ts and tiff-tiles.ts: strips of any height or tiles of any
// size, uncompressed, LZW, Deflate or PackBits, predictor 1, 2 or (of floats) 3, either byte order, 8/16/32/64-bit
// samples (sharp writes none of these but 8-bit LZW and Deflate).
import { deflateSync } from 'node:zlib';

export type Samples = Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | BigUint64Array | BigInt64Array | Float64Array;

export interface StripTiff {
  width: number;
  height: number;
  rowsPerStrip: number;
  /** TIFF Compression: 1 none, 5 LZW, 8 Deflate, 32773 PackBits. */
  compression: 1 | 5 | 8 | 32773;
  predictor?: 1 | 2 | 3;
  bigEndian?: boolean;
  /** Tiles of this width and height instead of strips (`rowsPerStrip` unused), those at the right and bottom padded with 0. */
  tile?: [number, number];
}

/** The samples' bits and SampleFormat (1 unsigned, 2 signed, 3 float). */
function kind(s: Samples): [bits: number, format: number] {
  const bits = s.BYTES_PER_ELEMENT * 8;
  return [bits, s instanceof Float32Array || s instanceof Float64Array ? 3 : s instanceof Int8Array || s instanceof Int16Array || s instanceof Int32Array || s instanceof BigInt64Array ? 2 : 1];
}

/** A one-page TIFF of `samples`, its directory first and its strips or tiles after it in order. */
export function stripTiff(samples: Samples, o: StripTiff): Buffer {
  const [bits, format] = kind(samples);
  const bytes = bits / 8, le = !o.bigEndian;
  const segments = o.tile === undefined ? strips(samples, o, bytes) : tiles(samples, o, o.tile, bytes);
  const [segmentWidth] = o.tile ?? [o.width];
  const encoded = segments.map((raw) => encode(stored(raw, segmentWidth, bytes, o.predictor ?? 1, le), o.compression, segmentWidth * bytes));
  const layout: Array<[number, 3 | 4, number[]]> = o.tile === undefined
    ? [[273, 4, encoded.map(() => 0)], [277, 3, [1]], [278, 4, [o.rowsPerStrip]], [279, 4, encoded.map((s) => s.length)]]
    : [[277, 3, [1]], [322, 4, [o.tile[0]]], [323, 4, [o.tile[1]]], [324, 4, encoded.map(() => 0)], [325, 4, encoded.map((s) => s.length)]];
  const entries: Array<[number, 3 | 4, number[]]> = [
    [256, 4, [o.width]], [257, 4, [o.height]], [258, 3, [bits]], [259, 3, [o.compression]], [262, 3, [1]], ...layout,
    ...(o.predictor !== undefined && o.predictor !== 1 ? [[317, 3, [o.predictor]] as [number, 3, number[]]] : []), [339, 3, [format]],
  ];
  const ifdBytes = 2 + entries.length * 12 + 4;
  const arrays = entries.filter(([, , v]) => v.length > 1).reduce((n, [, , v]) => n + 4 * v.length, 0);
  let data = 8 + ifdBytes + arrays;
  const offsets = encoded.map((s) => { const at = data; data += s.length; return at; });
  const offsetsEntry = entries.find(([tag]) => tag === 273 || tag === 324);
  if (offsetsEntry) offsetsEntry[2] = offsets;
  const head = Buffer.alloc(8 + ifdBytes + arrays);
  const u16 = (v: number, at: number) => (le ? head.writeUInt16LE(v, at) : head.writeUInt16BE(v, at));
  const u32 = (v: number, at: number) => (le ? head.writeUInt32LE(v, at) : head.writeUInt32BE(v, at));
  head.write(le ? 'II' : 'MM', 0, 'latin1');
  u16(42, 2);
  u32(8, 4);
  u16(entries.length, 8);
  let outside = 8 + ifdBytes;
  entries.forEach(([tag, type, values], i) => {
    const e = 10 + i * 12;
    u16(tag, e); u16(type, e + 2); u32(values.length, e + 4);
    if (values.length === 1) { if (type === 3) u16(values[0], e + 8); else u32(values[0], e + 8); return; }
    u32(outside, e + 8);
    for (const v of values) { u32(v, outside); outside += 4; }
  });
  return Buffer.concat([head, ...encoded]);
}

/** The samples of each strip, in the machine's byte order. */
function strips(samples: Samples, o: StripTiff, bytes: number): Buffer[] {
  const rowBytes = o.width * bytes, out: Buffer[] = [];
  for (let top = 0; top < o.height; top += o.rowsPerStrip) {
    const rows = Math.min(o.rowsPerStrip, o.height - top);
    out.push(Buffer.from(samples.buffer, samples.byteOffset + top * rowBytes, rows * rowBytes));
  }
  return out;
}

/** The samples of each tile, rows of tiles from the top, each from the left, padded with 0 past the image. */
function tiles(samples: Samples, o: StripTiff, [tw, th]: [number, number], bytes: number): Buffer[] {
  const all = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength), out: Buffer[] = [];
  for (let y0 = 0; y0 < o.height; y0 += th) {
    for (let x0 = 0; x0 < o.width; x0 += tw) {
      const tile = Buffer.alloc(tw * th * bytes);
      for (let y = y0; y < Math.min(y0 + th, o.height); y++) {
        all.copy(tile, (y - y0) * tw * bytes, (y * o.width + x0) * bytes, (y * o.width + Math.min(x0 + tw, o.width)) * bytes);
      }
      out.push(tile);
    }
  }
  return out;
}

/**
 * A strip's or tile's samples as stored: less the sample to the left (predictor 2), in the file's byte order; or as
 * byte planes, most significant first, each byte less the one before it in its row (predictor 3, floats).
 */
function stored(raw: Buffer, width: number, bytes: number, p: 1 | 2 | 3, le: boolean): Buffer {
  if (p === 3) return storedFloat(raw, width, bytes);
  const predictor = p === 2;
  if (bytes === 8) return storedWide(raw, width, predictor, le);
  const n = raw.length / bytes;
  const get = (i: number) => (bytes === 1 ? raw[i] : bytes === 2 ? raw.readUInt16LE(2 * i) : raw.readUInt32LE(4 * i));
  const mod = 2 ** (8 * bytes);
  const out = Buffer.alloc(raw.length);
  for (let i = 0; i < n; i++) {
    const v = predictor && i % width !== 0 ? (get(i) - get(i - 1) + mod) % mod : get(i);
    if (bytes === 1) out[i] = v;
    else if (bytes === 2) { if (le) out.writeUInt16LE(v, 2 * i); else out.writeUInt16BE(v, 2 * i); }
    else if (le) out.writeUInt32LE(v, 4 * i); else out.writeUInt32BE(v, 4 * i);
  }
  return out;
}

/** `stored` of floats under the floating-point predictor (TIFF Technical Note 3), whatever the file's byte order. */
function storedFloat(raw: Buffer, width: number, bytes: number): Buffer {
  const out = Buffer.alloc(raw.length), rowBytes = width * bytes;
  for (let r = 0; r < raw.length; r += rowBytes) {
    for (let x = 0; x < width; x++) {
      // The samples are little-endian here: byte `bytes - 1 - plane` is plane `plane`'s.
      for (let plane = 0; plane < bytes; plane++) out[r + plane * width + x] = raw[r + x * bytes + bytes - 1 - plane];
    }
    for (let i = rowBytes - 1; i > 0; i--) out[r + i] = (out[r + i] - out[r + i - 1]) & 255;
  }
  return out;
}

/** `stored` of 64-bit samples, their differences modulo 2^64. */
function storedWide(raw: Buffer, width: number, predictor: boolean, le: boolean): Buffer {
  const out = Buffer.alloc(raw.length);
  for (let i = 0; i < raw.length / 8; i++) {
    const v = raw.readBigUInt64LE(8 * i);
    const d = predictor && i % width !== 0 ? BigInt.asUintN(64, v - raw.readBigUInt64LE(8 * i - 8)) : v;
    if (le) out.writeBigUInt64LE(d, 8 * i); else out.writeBigUInt64BE(d, 8 * i);
  }
  return out;
}

function encode(b: Buffer, compression: StripTiff['compression'], rowBytes: number): Buffer {
  if (compression === 8) return deflateSync(b);
  if (compression === 5) return lzwEncode(b);
  // PackBits packs each row apart, as TIFF asks (libtiff decodes a strip of one row at a time).
  if (compression === 32773) return Buffer.concat(Array.from({ length: b.length / rowBytes }, (_, y) => packBits(b.subarray(y * rowBytes, (y + 1) * rowBytes))));
  return b;
}

/** TIFF LZW as libtiff writes it: a clear code first, codes widening as the table reaches 511, 1023, 2047, cleared at 4094. */
export function lzwEncode(src: Uint8Array): Buffer {
  const out: number[] = [];
  let acc = 0, held = 0, width = 9;
  const put = (code: number) => {
    acc = (acc << width) | code;
    held += width;
    while (held >= 8) { out.push((acc >>> (held - 8)) & 255); held -= 8; }
    acc &= (1 << held) - 1;
  };
  let table = new Map<number, number>(), next = 258;
  put(256);
  let w = src.length > 0 ? src[0] : -1;
  const grow = () => { if (next > (1 << width) - 1 && width < 12) width++; };
  for (let i = 1; i < src.length; i++) {
    const key = w * 256 + src[i];
    const known = table.get(key);
    if (known !== undefined) { w = known; continue; }
    put(w);
    table.set(key, next++);
    if (next === 4094) { put(256); table = new Map(); next = 258; width = 9; } else grow();
    w = src[i];
  }
  if (w >= 0) { put(w); next++; grow(); }
  put(257);
  if (held > 0) out.push((acc << (8 - held)) & 255);
  return Buffer.from(out);
}

/** PackBits: runs of 2 to 128 equal bytes as a count and the byte, other bytes as literals of up to 128. */
export function packBits(src: Uint8Array): Buffer {
  const out: number[] = [];
  for (let i = 0; i < src.length;) {
    let run = 1;
    while (i + run < src.length && run < 128 && src[i + run] === src[i]) run++;
    if (run >= 2) { out.push(257 - run, src[i]); i += run; continue; }
    let lit = 1;
    while (i + lit < src.length && lit < 128 && src[i + lit] !== src[i + lit + 1]) lit++;
    out.push(lit - 1, ...src.subarray(i, i + lit));
    i += lit;
  }
  return Buffer.from(out);
}
