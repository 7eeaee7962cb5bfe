// A strip TIFF's rows read from its strips (src/io/tiff-strips.ts) are those libvips gives, band by band, and a damaged strip is named.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { maskSource } from '../../src/io/mask-source.js';
import { openLabelMask } from '../../src/io/mask.js';
import { MemorySink } from '../../src/io/sink.js';
import { LzwDecoder } from '../../src/io/tiff-codecs.js';
import { stripReader } from '../../src/io/tiff-strips.js';
import { ImageError } from '../../src/report/errors.js';
import { mulberry32 } from '../../src/random.js';
import { withoutReport } from '../helpers/pyramid.js';
import { lzwEncode, stripTiff, type Samples, type StripTiff } from '../helpers/strip-tiff.js';

const W = 300, H = 200;

/** Cells of random labels (up to `max`) on a background of 0, and runs of one label long enough for LZW's longest strings. */
function labels(seed: number, max: number): number[] {
  const rnd = mulberry32(seed);
  const out = new Array<number>(W * H).fill(0);
  for (let k = 0; k < 150; k++) {
    const L = 1 + Math.floor(rnd() * max), cx = rnd() * W, cy = rnd() * H, r = 2 + rnd() * 12;
    for (let y = Math.max(0, Math.floor(cy - r)); y < Math.min(H, cy + r); y++) {
      for (let x = Math.max(0, Math.floor(cx - r)); x < Math.min(W, cx + r); x++) if (Math.hypot(x - cx, y - cy) < r) out[y * W + x] = L;
    }
  }
  out.fill(max, 150 * W, 160 * W);
  return out;
}

/** `count` discs of random labels up to `max`, radius 2–22 px, on a background of 0, later ones over earlier. */
function discs(seed: number, width: number, height: number, count: number, max: number): Uint32Array {
  const rnd = mulberry32(seed);
  const data = new Uint32Array(width * height);
  for (let k = 0; k < count; k++) {
    const L = 1 + Math.floor(rnd() * max), cx = rnd() * width, cy = rnd() * height, r = 2 + rnd() * 20;
    for (let y = Math.max(0, Math.floor(cy - r)); y < Math.min(height, cy + r); y++) {
      for (let x = Math.max(0, Math.floor(cx - r)); x < Math.min(width, cx + r); x++) if (Math.hypot(x - cx, y - cy) < r) data[y * width + x] = L;
    }
  }
  return data;
}

/** Bands read of each mask: all of it, the first and last rows, bands across strip boundaries, one row. */
const BANDS: Array<[number, number]> = [[0, H], [0, 1], [3, 17], [H - 5, 5], [50, 100], [99, 1], [140, 60]];

/** The rows of every band read from the strips, and through libvips: the same typed array kind, byte for byte. */
async function expectSameRows(path: string, what: string): Promise<void> {
  const direct = await openLabelMask(path), libvips = await openLabelMask(path, false);
  for (const [top, n] of BANDS) {
    const a = await direct.rows(top, n), b = await libvips.rows(top, n);
    expect(a.constructor, `${what}, rows ${top}+${n}`).toBe(b.constructor);
    expect(Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength)), `${what}, rows ${top}+${n}`).toBe(true);
  }
}

const VARIANTS: Array<[string, Pick<StripTiff, 'compression' | 'predictor'>]> = [
  ['uncompressed', { compression: 1 }], ['LZW', { compression: 5 }], ['LZW, predictor 2', { compression: 5, predictor: 2 }],
  ['Deflate', { compression: 8 }], ['Deflate, predictor 2', { compression: 8, predictor: 2 }], ['PackBits', { compression: 32773 }],
];

describe('strip TIFFs read from their strips', () => {
  let dir = '';
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'mudm-strips-')); });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  it('gives the rows libvips gives, for each compression and predictor, strips of 1, 7 and all rows', async () => {
    const data = Uint32Array.from(labels(1, 2 ** 32 - 1));
    for (const [name, v] of VARIANTS) {
      for (const rowsPerStrip of [1, 7, H]) {
        const path = join(dir, `u32-${v.compression}-${v.predictor ?? 1}-${rowsPerStrip}.tif`);
        await writeFile(path, stripTiff(data, { width: W, height: H, rowsPerStrip, ...v }));
        // Read from the strips, not handed to libvips.
        expect(await stripReader(path, 0, 'uint')).toBeDefined();
        await expectSameRows(path, `${name}, ${rowsPerStrip} rows a strip`);
      }
    }
  });

  it('gives the rows libvips gives for 8, 16 and 32-bit, signed, unsigned and float samples, in either byte order', async () => {
    const rows = (s: Samples, depth: string) => ({ s, depth });
    const types = [
      rows(Uint8Array.from(labels(2, 255)), 'uchar'), rows(Int8Array.from(labels(3, 127)), 'char'),
      rows(Uint16Array.from(labels(4, 65535)), 'ushort'), rows(Int16Array.from(labels(5, 32767)), 'short'),
      rows(Int32Array.from(labels(6, 2 ** 31 - 1)), 'int'), rows(Float32Array.from(labels(7, 2 ** 24)), 'float'),
    ];
    for (const { s, depth } of types) {
      for (const bigEndian of [false, true]) {
        for (const [name, v] of [VARIANTS[0], VARIANTS[2], VARIANTS[4], VARIANTS[5]]) {
          const path = join(dir, `${depth}-${bigEndian ? 'be' : 'le'}-${v.compression}-${v.predictor ?? 1}.tif`);
          await writeFile(path, stripTiff(s, { width: W, height: H, rowsPerStrip: 7, bigEndian, ...v }));
          expect(await stripReader(path, 0, depth), path).toBeDefined();
          await expectSameRows(path, `${depth}, ${bigEndian ? 'big' : 'little'}-endian, ${name}`);
        }
      }
    }
  });

  it('reads 64-bit samples, which libvips does not: int64, uint64 and float64 labels as the same labels at 32 bits', async () => {
    const values = labels(13, 2 ** 32 - 1);
    const ref = join(dir, 'wide-ref.tif');
    await writeFile(ref, stripTiff(Uint32Array.from(values), { width: W, height: H, rowsPerStrip: 7, compression: 1 }));
    const expected = await openLabelMask(ref);
    const kinds: Array<[string, Samples]> = [
      ['int64', BigInt64Array.from(values, (v) => BigInt(v))], ['uint64', BigUint64Array.from(values, (v) => BigInt(v))], ['float64', Float64Array.from(values)],
    ];
    for (const [kind, s] of kinds) {
      for (const bigEndian of [false, true]) {
        // Every compression and predictor for int64, what differs by kind for the others.
        for (const [name, v] of kind === 'int64' ? VARIANTS : [VARIANTS[0], VARIANTS[4]]) {
          const path = join(dir, `${kind}-${bigEndian ? 'be' : 'le'}-${v.compression}-${v.predictor ?? 1}.tif`);
          await writeFile(path, stripTiff(s, { width: W, height: H, rowsPerStrip: 7, bigEndian, ...v }));
          const mask = await openLabelMask(path);
          expect(mask.bytesPerPixel, path).toBe(8);
          for (const [top, n] of BANDS) {
            const a = await mask.rows(top, n), b = await expected.rows(top, n);
            expect(a.constructor).toBe(b.constructor);
            expect(Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength)), `${kind}, ${bigEndian ? 'big' : 'little'}-endian, ${name}, rows ${top}+${n}`).toBe(true);
          }
        }
      }
    }
  });

  it('refuses a 64-bit label that does not fit 32 bits, naming its pixel, with exit 3', async () => {
    const values = labels(14, 5000);
    const cases: Array<[string, Samples, string]> = [
      ['negative int64', BigInt64Array.from(values, (v, i) => (i === 170 * W + 33 ? -4n : BigInt(v))), 'label value -4 at pixel (33, 170)'],
      ['uint64 past 2^32', BigUint64Array.from(values, (v, i) => (i === 181 * W + 7 ? 2n ** 33n + 7n : BigInt(v))), 'label value 8589934599 at pixel (7, 181)'],
      ['a fraction in float64', Float64Array.from(values, (v, i) => (i === 150 * W + 2 ? 2.5 : v)), 'label value 2.5 at pixel (2, 150)'],
    ];
    for (const [what, s, where] of cases) {
      const path = join(dir, `wide-bad-${s.constructor.name}.tif`);
      await writeFile(path, stripTiff(s, { width: W, height: H, rowsPerStrip: 7, compression: 8 }));
      const mask = await openLabelMask(path);
      expect((await mask.rows(0, 140)).length, what).toBe(140 * W);
      const err = await mask.rows(140, 60).catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(ImageError);
      expect([(err as ImageError).exitCode, (err as ImageError).message], what).toEqual([3, `${path}: ${where} is not a non-negative integer below 2^32`]);
    }
  });

  it('builds the same tiles from an int64 mask as from the same labels at 32 bits', async () => {
    const width = 260, height = 240;
    const data = discs(15, width, height, 50, 70_000);
    const build = async (sub: string, samples: Samples) => {
      const path = join(dir, sub, 'cells.tif');
      await mkdir(join(dir, sub), { recursive: true });
      await writeFile(path, stripTiff(samples, { width, height, rowsPerStrip: 5, compression: 8 }));
      const sink = new MemorySink();
      // Bands of 17 rows: the 64-bit rows read in bands too.
      await buildPyramid([{ source: maskSource(path, 17 * width * 8) }], { maxZoom: 2, workers: 1 }, { sink });
      return withoutReport(sink);
    };
    const narrow = await build('u32', data);
    expect(narrow.size).toBeGreaterThan(5);
    expect(await build('i64', BigInt64Array.from(data, (v) => BigInt(v)))).toEqual(narrow);
  });

  it('reads the LZW and Deflate strips libvips writes itself, and leaves a tiled TIFF to libvips', async () => {
    const grey = () => sharp(Uint8Array.from(labels(8, 255)), { raw: { width: W, height: H, channels: 1 } }).toColourspace('b-w');
    for (const [compression, predictor] of [['lzw', 'horizontal'], ['lzw', 'none'], ['deflate', 'horizontal']] as const) {
      const path = join(dir, `vips-${compression}-${predictor}.tif`);
      await grey().tiff({ compression, predictor }).toFile(path);
      expect(await stripReader(path, 0, 'uchar'), path).toBeDefined();
      await expectSameRows(path, `libvips' ${compression}, predictor ${predictor}`);
    }
    const tiled = join(dir, 'tiled.tif');
    await grey().tiff({ compression: 'lzw', tile: true, tileWidth: 64, tileHeight: 64 }).toFile(tiled);
    expect(await stripReader(tiled, 0, 'uchar')).toBeUndefined();
  });

  it('decodes the string an LZW code makes of itself (KwKwK) and a table filled and cleared', () => {
    // Runs make codes one past the table; 20,000 bytes of noise fill the table past 4,094 strings, which clears it.
    const rnd = mulberry32(9);
    const src = Uint8Array.from({ length: 40_000 }, (_, i) => (i < 10_000 ? 7 : i < 30_000 ? Math.floor(rnd() * 256) : (i >> 3) & 3));
    const out = new Uint8Array(src.length);
    expect(new LzwDecoder().decode(lzwEncode(src), out)).toBe(src.length);
    expect(Buffer.from(out).equals(Buffer.from(src))).toBe(true);
  });

  it('names the file and the strip of a strip cut short or damaged, with exit 3', async () => {
    const data = Uint32Array.from(labels(10, 1000));
    // File lengths: the message gives where the file ends and where the strip would.
    const cases: Array<[string, Pick<StripTiff, 'compression' | 'rowsPerStrip'>, (b: Buffer) => Buffer, number, (length: number) => string]> = [
      ['one uncompressed strip cut short', { compression: 1, rowsPerStrip: H }, (b) => b.subarray(0, b.length - 1000), 180,
        (n) => `the file ends at byte ${n - 1000}, inside the bytes of rows 180–199, which end at byte ${n} (cut short?)`],
      ['LZW strips cut short', { compression: 5, rowsPerStrip: 7 }, (b) => b.subarray(0, b.length - 10), 196,
        (n) => `the file ends at byte ${n - 10}, inside the bytes of strip 28 (rows 196–199), which end at byte ${n} (cut short?)`],
      ['a Deflate strip overwritten', { compression: 8, rowsPerStrip: 7 }, (b) => { const c = Buffer.from(b); c.fill(0x55, c.length - 40, c.length - 20); return c; }, 196,
        () => 'strip 28 (rows 196–199) cannot be decoded as Deflate: incorrect data check (damaged?)'],
    ];
    for (const [what, v, damage, top, reason] of cases) {
      const path = join(dir, `damaged-${v.compression}.tif`);
      const whole = stripTiff(data, { width: W, height: H, ...v });
      await writeFile(path, damage(whole));
      const mask = await openLabelMask(path);
      // The rows above the damage read.
      expect((await mask.rows(0, 7)).length, what).toBe(7 * W);
      const err = await mask.rows(top, H - top).catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(ImageError);
      expect([(err as ImageError).path, (err as ImageError).exitCode], what).toEqual([path, 3]);
      expect((err as ImageError).reason, what).toBe(reason(whole.length));
    }
  });

  it('refuses a negative label in a lower band naming its pixel, as libvips\' reading does', async () => {
    const data = Int32Array.from(labels(11, 5000));
    data[170 * W + 33] = -4;
    const path = join(dir, 'negative.tif');
    await writeFile(path, stripTiff(data, { width: W, height: H, rowsPerStrip: 7, compression: 5, predictor: 2 }));
    const message = `${path}: label value -4 at pixel (33, 170) is not a non-negative integer below 2^32`;
    await expect((await openLabelMask(path)).rows(140, 60)).rejects.toThrow(message);
    await expect((await openLabelMask(path, false)).rows(140, 60)).rejects.toThrow(message);
  });

  it('builds the same tiles from a strip mask read in bands from its strips as through libvips', async () => {
    const width = 300, height = 260;
    const data = discs(12, width, height, 60, 100_000);
    const path = join(dir, 'build.tif');
    await writeFile(path, stripTiff(data, { width, height, rowsPerStrip: 5, compression: 5, predictor: 2 }));
    const build = async (direct: boolean) => {
      const sink = new MemorySink();
      await buildPyramid([{ source: maskSource(path, 17 * width * 4, direct) }], { maxZoom: 2, workers: 1 }, { sink });
      return withoutReport(sink);
    };
    const libvips = await build(false);
    expect(libvips.size).toBeGreaterThan(5);
    expect(await build(true)).toEqual(libvips);
  });
});
