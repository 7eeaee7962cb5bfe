// A tiled TIFF's rows read from its tiles (src/io/tiff-tiles.ts) are those libvips gives, 64-bit tiled masks read as
// their 32-bit labels, and a damaged tile or a label past 32 bits is named.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLabelMask } from '../../src/io/mask.js';
import { stripReader } from '../../src/io/tiff-strips.js';
import { tileReader } from '../../src/io/tiff-tiles.js';
import { ImageError } from '../../src/report/errors.js';
import { mulberry32 } from '../../src/random.js';
import { stripTiff, type Samples, type StripTiff } from '../helpers/strip-tiff.js';

const W = 150, H = 100;

/** Discs of random labels up to `max` on 0, and a run of one label across rows 60–69 (LZW's longest strings). */
function labels(seed: number, max: number): number[] {
  const rnd = mulberry32(seed);
  const out = new Array<number>(W * H).fill(0);
  for (let k = 0; k < 60; k++) {
    const L = 1 + Math.floor(rnd() * max), cx = rnd() * W, cy = rnd() * H, r = 2 + rnd() * 10;
    for (let y = Math.max(0, Math.floor(cy - r)); y < Math.min(H, cy + r); y++) {
      for (let x = Math.max(0, Math.floor(cx - r)); x < Math.min(W, cx + r); x++) if (Math.hypot(x - cx, y - cy) < r) out[y * W + x] = L;
    }
  }
  out.fill(max, 60 * W, 70 * W);
  return out;
}

/** Reads: all rows, the first, the last, bands starting and ending inside rows of tiles, one row. */
const BANDS: Array<[number, number]> = [[0, H], [0, 1], [3, 17], [H - 5, 5], [31, 40], [47, 1], [70, 30]];

/** Tiles: 16 × 16 (padded at the right and bottom), 32 × 48, one tile larger than the image. */
const TILES: Array<[number, number]> = [[16, 16], [32, 48], [160, 112]];

const VARIANTS: Array<[string, Pick<StripTiff, 'compression' | 'predictor'>]> = [
  ['uncompressed', { compression: 1 }], ['LZW', { compression: 5 }], ['LZW, predictor 2', { compression: 5, predictor: 2 }],
  ['Deflate', { compression: 8 }], ['Deflate, predictor 2', { compression: 8, predictor: 2 }], ['PackBits', { compression: 32773 }],
];

const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** Rows as read, as the labels libvips' rows turn into: floats into 32-bit integers, other samples as they are. */
const asLabels = (rows: Buffer | undefined, depth: string) => (rows === undefined || depth !== 'float' ? rows : bytesOf(Uint32Array.from(new Float32Array(rows.buffer, rows.byteOffset, rows.length / 4))));

describe('tiled TIFFs read from their tiles', () => {
  let dir = '';
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'mudm-tiles-')); });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  it('gives the rows libvips gives, for 8, 16 and 32-bit samples, each compression and predictor, either byte order and tile size', async () => {
    const types: Array<[Samples, string]> = [
      [Uint8Array.from(labels(1, 255)), 'uchar'], [Uint16Array.from(labels(2, 65535)), 'ushort'], [Uint32Array.from(labels(3, 2 ** 32 - 1)), 'uint'],
      [Float32Array.from(labels(4, 2 ** 24)), 'float'],
    ];
    for (const [s, depth] of types) {
      const variants = s instanceof Float32Array ? [...VARIANTS, ['Deflate, floating-point predictor', { compression: 8, predictor: 3 }] as const] : VARIANTS;
      for (const [name, v] of variants) {
        for (const [bigEndian, tile] of [[false, TILES[0]], [true, TILES[1]], [depth === 'ushort', TILES[2]]] as const) {
          const what = `${depth}, ${name}, ${bigEndian ? 'big' : 'little'}-endian, tiles of ${tile.join(' × ')}`;
          const path = join(dir, `${depth}-${v.compression}-${v.predictor ?? 1}-${tile[0]}-${bigEndian ? 'be' : 'le'}.tif`);
          await writeFile(path, stripTiff(s, { width: W, height: H, rowsPerStrip: H, bigEndian, tile, ...v }));
          const tiles = await tileReader(path, 0, depth), libvips = await openLabelMask(path, false);
          expect(tiles, what).toBeDefined();
          for (const [top, n] of BANDS) expect(asLabels(await tiles?.(top, n), depth)?.equals(bytesOf(await libvips.rows(top, n))), `${what}, rows ${top}+${n}`).toBe(true);
        }
      }
    }
  });

  it('reads the floating-point predictor of strips as libvips does', async () => {
    const path = join(dir, 'float-strips.tif');
    await writeFile(path, stripTiff(Float32Array.from(labels(5, 2 ** 24)), { width: W, height: H, rowsPerStrip: 7, bigEndian: true, compression: 8, predictor: 3 }));
    const strips = await stripReader(path, 0, 'float'), libvips = await openLabelMask(path, false);
    expect(strips).toBeDefined();
    for (const [top, n] of BANDS) expect(asLabels(await strips?.(top, n), 'float')?.equals(bytesOf(await libvips.rows(top, n))), `rows ${top}+${n}`).toBe(true);
  });

  it('reads tiled int64, uint64 and float64 labels, which libvips does not, as the same labels at 32 bits', async () => {
    const values = labels(6, 2 ** 32 - 1);
    const ref = join(dir, 'wide-ref.tif');
    await writeFile(ref, stripTiff(Uint32Array.from(values), { width: W, height: H, rowsPerStrip: 7, compression: 1 }));
    const expected = await openLabelMask(ref);
    const kinds: Array<[string, Samples, Array<[string, Pick<StripTiff, 'compression' | 'predictor'>]>]> = [
      ['int64', BigInt64Array.from(values, (v) => BigInt(v)), VARIANTS],
      ['uint64', BigUint64Array.from(values, (v) => BigInt(v)), [VARIANTS[0], VARIANTS[4]]],
      ['float64', Float64Array.from(values), [VARIANTS[0], VARIANTS[3], ['Deflate, floating-point predictor', { compression: 8, predictor: 3 }], ['LZW, floating-point predictor', { compression: 5, predictor: 3 }]]],
    ];
    for (const [kind, s, variants] of kinds) {
      for (const [name, v] of variants) {
        for (const [bigEndian, tile] of [[false, TILES[0]], [true, TILES[1]]] as const) {
          const what = `${kind}, ${name}, ${bigEndian ? 'big' : 'little'}-endian, tiles of ${tile.join(' × ')}`;
          const path = join(dir, `${kind}-${v.compression}-${v.predictor ?? 1}-${tile[0]}-${bigEndian ? 'be' : 'le'}.tif`);
          await writeFile(path, stripTiff(s, { width: W, height: H, rowsPerStrip: H, bigEndian, tile, ...v }));
          const mask = await openLabelMask(path);
          expect(mask.bytesPerPixel, what).toBe(8);
          for (const [top, n] of BANDS) expect(bytesOf(await mask.rows(top, n)).equals(bytesOf(await expected.rows(top, n))), `${what}, rows ${top}+${n}`).toBe(true);
        }
      }
    }
  });

  it('refuses a tiled 64-bit label that does not fit 32 bits, naming its pixel, with exit 3, and reads the rows above it', async () => {
    const values = labels(7, 5000);
    const cases: Array<[string, Samples, string]> = [
      ['negative int64', BigInt64Array.from(values, (v, i) => (i === 81 * W + 133 ? -4n : BigInt(v))), 'label value -4 at pixel (133, 81)'],
      ['uint64 past 2^32', BigUint64Array.from(values, (v, i) => (i === 90 * W + 7 ? 2n ** 33n + 7n : BigInt(v))), 'label value 8589934599 at pixel (7, 90)'],
      ['a fraction in float64', Float64Array.from(values, (v, i) => (i === 99 * W + 149 ? 2.5 : v)), 'label value 2.5 at pixel (149, 99)'],
    ];
    for (const [what, s, where] of cases) {
      const path = join(dir, `wide-bad-${s.constructor.name}.tif`);
      await writeFile(path, stripTiff(s, { width: W, height: H, rowsPerStrip: H, compression: 8, tile: [32, 32] }));
      const mask = await openLabelMask(path);
      expect((await mask.rows(0, 80)).length, what).toBe(80 * W);
      const err = await mask.rows(80, 20).catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(ImageError);
      expect([(err as ImageError).exitCode, (err as ImageError).message], what).toEqual([3, `${path}: ${where} is not a non-negative integer below 2^32`]);
    }
  });

  it('names the file and the tile of a tile cut short or damaged, with exit 3, and reads the rows of tiles above it', async () => {
    const data = BigInt64Array.from(labels(8, 1000), (v) => BigInt(v));
    // 5 × 4 tiles of 32 × 32: the last, tile 19, holds rows 96–99 of the image.
    const cases: Array<[string, StripTiff['compression'], (b: Buffer) => Buffer, (length: number) => string]> = [
      // Of an uncompressed tile only the rows read are: the 4 rows of the image of its 32 (1,024 of its 8,192 bytes).
      ['an uncompressed tile cut short', 1, (b) => b.subarray(0, b.length - 8000),
        (n) => `the file ends at byte ${n - 8000}, inside the bytes of tile 19 (from pixel (128, 96)), which end at byte ${n - 8192 + 1024} (cut short?)`],
      ['a Deflate tile overwritten', 8, (b) => { const c = Buffer.from(b); c.fill(0x55, c.length - 30, c.length - 10); return c; },
        () => 'tile 19 (from pixel (128, 96)) cannot be decoded as Deflate: incorrect header check (damaged?)'],
      ['an LZW tile cut short', 5, (b) => b.subarray(0, b.length - 10),
        (n) => `the file ends at byte ${n - 10}, inside the bytes of tiles 15–19, which end at byte ${n} (cut short?)`],
    ];
    for (const [what, compression, damage, reason] of cases) {
      const path = join(dir, `damaged-${compression}.tif`);
      const whole = stripTiff(data, { width: W, height: H, rowsPerStrip: H, compression, tile: [32, 32] });
      await writeFile(path, damage(whole));
      const mask = await openLabelMask(path);
      // Tiles are read by the row of tiles a read reaches: the three rows of tiles above the damage read.
      expect((await mask.rows(0, 96)).length, what).toBe(96 * W);
      const err = await mask.rows(90, 10).catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(ImageError);
      expect([(err as ImageError).path, (err as ImageError).exitCode], what).toEqual([path, 3]);
      expect((err as ImageError).reason, what).toBe(reason(whole.length));
    }
  });
});
