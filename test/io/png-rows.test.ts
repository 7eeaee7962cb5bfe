// A greyscale PNG's rows decoded from its image data (src/io/png-rows.ts) are those libvips gives, band by band, and a damaged PNG is named.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { maskSource } from '../../src/io/mask-source.js';
import { openLabelMask } from '../../src/io/mask.js';
import { tableCrc } from '../../src/io/png-chunks.js';
import { pngReader } from '../../src/io/png-rows.js';
import { MemorySink } from '../../src/io/sink.js';
import { ImageError } from '../../src/report/errors.js';
import { mulberry32 } from '../../src/random.js';
import { runCli } from '../e2e/helpers.js';
import { greyPng, pngChunk, type GreyPng } from '../helpers/png.js';
import { tmpDir, withoutReport } from '../helpers/pyramid.js';

const H = 203;

/** Cells of random labels up to `max` on a background of 0, and a band of noise: every byte value, every filter's case. */
function labels(seed: number, width: number, max: number): number[] {
  const rnd = mulberry32(seed);
  const out = new Array<number>(width * H).fill(0);
  for (let k = 0; k < 40 + width / 4; k++) {
    const L = 1 + Math.floor(rnd() * max), cx = rnd() * width, cy = rnd() * H, r = 1 + rnd() * 15;
    for (let y = Math.max(0, Math.floor(cy - r)); y < Math.min(H, cy + r); y++) {
      for (let x = Math.max(0, Math.floor(cx - r)); x < Math.min(width, cx + r); x++) if (Math.hypot(x - cx, y - cy) < r) out[y * width + x] = L;
    }
  }
  for (let i = 120 * width; i < 130 * width; i++) out[i] = Math.floor(rnd() * (max + 1));
  return out;
}

/**
 * Reads of one opened mask in order: bands of 1 row, then of 7, one overlapping the last (from the rows kept), one
 * above it (decoded again from the top), one skipping rows, the whole, the last row.
 */
const READS: Array<[number, number]> = [
  [0, 1], [1, 1], [2, 1], [3, 1], [4, 7], [11, 7], [18, 7], [25, 50], [60, 30], [5, 3], [8, 1], [150, H - 150], [0, H], [H - 1, 1], [H - 3, 3],
];

const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** Every read of READS from our reader equals the same rows of the mask libvips decodes whole, with the same typed array kind. */
async function expectSameRows(path: string, what: string): Promise<void> {
  const own = await openLabelMask(path), libvips = await openLabelMask(path, false);
  const whole = await libvips.rows(0, libvips.height);
  const row = whole.BYTES_PER_ELEMENT * libvips.width;
  for (const [top, n] of READS) {
    const a = await own.rows(top, n);
    expect(a.constructor, `${what}, rows ${top}+${n}`).toBe(whole.constructor);
    expect(bytesOf(a).equals(bytesOf(whole).subarray(top * row, (top + n) * row)), `${what}, rows ${top}+${n}`).toBe(true);
  }
  // And as libvips gives a band of its own.
  expect(bytesOf(await own.rows(40, 9)).equals(bytesOf(await libvips.rows(40, 9))), what).toBe(true);
}

/** The filters of each PNG written: each alone, one a row in turn, and one at random a row. */
const FILTERS: Array<[string, (y: number) => number]> = [
  ['None', () => 0], ['Sub', () => 1], ['Up', () => 2], ['Average', () => 3], ['Paeth', () => 4],
  ['each in turn', (y) => y % 5], ['at random', (y) => Math.floor(mulberry32(y + 1)() * 5)],
];

describe('greyscale PNG masks read from their image data', () => {
  let dir = '';
  beforeAll(() => { dir = tmpDir('png-rows'); });

  const write = (name: string, data: ArrayLike<number>, o: GreyPng) => {
    const path = join(dir, name);
    writeFileSync(path, greyPng(data, o));
    return path;
  };

  it('gives the rows libvips gives, 8 and 16-bit, under each filter type, odd widths and of 1 pixel, bands forward and back', async () => {
    for (const bits of [8, 16] as const) {
      for (const width of [1, 2, 3, 301]) {
        const data = labels(bits + width, width, bits === 8 ? 255 : 65535);
        for (const [name, filter] of FILTERS) {
          const path = write(`f-${bits}-${width}-${name}.png`, data, { width, height: H, bits, filter, idatBytes: 1000 });
          expect(await pngReader(path, bits === 8 ? 'uchar' : 'ushort'), path).toBeDefined();
          await expectSameRows(path, `${bits}-bit, ${width} px wide, filter ${name}`);
          // The labels written, whatever libvips makes of them.
          expect(Array.from(await (await openLabelMask(path)).rows(0, H)), path).toEqual(data);
        }
      }
    }
  });

  it('reads what libvips writes (its adaptive filters), image data in chunks of 1 byte, and skips chunks before it', async () => {
    const width = 257;
    const data8 = Uint8Array.from(labels(3, width, 255)), data16 = Uint16Array.from(labels(4, width, 65535));
    const raw = (d: Uint8Array | Uint16Array) => sharp(Buffer.from(d.buffer, d.byteOffset, d.byteLength), { raw: { width, height: H, channels: 1, ...(d instanceof Uint16Array ? { depth: 'ushort' as const } : {}) } });
    const vips8 = join(dir, 'vips-8.png'), vips16 = join(dir, 'vips-16.png');
    await raw(data8).toColourspace('b-w').png({ adaptiveFiltering: true }).toFile(vips8);
    await raw(data16).toColourspace('grey16').png({ adaptiveFiltering: true }).toFile(vips16);
    for (const [path, depth] of [[vips8, 'uchar'], [vips16, 'ushort']]) {
      expect(await pngReader(path, depth), path).toBeDefined();
      await expectSameRows(path, `libvips' ${depth}`);
    }
    const text: [string, Buffer] = ['tEXt', Buffer.from('Software\0test', 'latin1')];
    const phys: [string, Buffer] = ['pHYs', Buffer.from([0, 0, 0x0e, 0xc4, 0, 0, 0x0e, 0xc4, 1])];
    const bytewise = write('bytewise.png', data16, { width, height: H, bits: 16, filter: (y) => y % 5, idatBytes: 1, before: [text, phys] });
    expect(await pngReader(bytewise, 'ushort')).toBeDefined();
    await expectSameRows(bytewise, 'IDAT chunks of 1 byte after tEXt and pHYs');
    // Without its IEND chunk, all its rows are there.
    const endless = join(dir, 'no-iend.png');
    writeFileSync(endless, readFileSync(bytewise).subarray(0, -12));
    expect(Array.from(await (await openLabelMask(endless)).rows(0, H))).toEqual(Array.from(data16));
  });

  it('leaves to libvips a PNG of a palette, of Adam7 interlacing, of a transparent grey (tRNS) or of colour, and reads them as before', async () => {
    const width = 99;
    const data = Uint8Array.from(labels(5, width, 255));
    const img = () => sharp(Buffer.from(data), { raw: { width, height: H, channels: 1 } }).toColourspace('b-w');
    const interlaced = join(dir, 'adam7.png');
    await img().png({ progressive: true }).toFile(interlaced);
    const trns = write('trns.png', data, { width, height: H, bits: 8, filter: () => 4, before: [['tRNS', Buffer.from([0, 0])]] });
    const colour = join(dir, 'colour.png');
    await sharp(Buffer.from(Array.from(data).flatMap((v) => [v, v, 0])), { raw: { width, height: H, channels: 3 } }).png().toFile(colour);
    const palette = join(dir, 'palette.png');
    await img().png({ palette: true }).toFile(palette);
    for (const path of [interlaced, trns, colour, palette]) expect(await pngReader(path, 'uchar'), path).toBeUndefined();
    // Read through libvips: the same rows whether asked to read them directly or not.
    for (const path of [interlaced, trns]) await expectSameRows(path, path);
  });

  it('names the file and the damage of a PNG cut short or damaged (rows above where it is cut read), with exit 3 from the CLI', async () => {
    const width = 301;
    const data = labels(6, width, 65535);
    const options: GreyPng = { width, height: H, bits: 16, filter: (y) => y % 5, idatBytes: 4000 };
    const whole = greyPng(data, options);
    const idat = whole.indexOf('IDAT', 0, 'latin1') - 4;
    const lastIdat = whole.lastIndexOf('IDAT', undefined, 'latin1') - 4;
    const stream = zlib.deflateSync(Buffer.alloc(10));
    const wrong = Buffer.from(whole);
    // A byte of the last IDAT chunk's data changed, its CRC left (found once the decoder reads ahead to it: the test
    // reads from the top).
    wrong[lastIdat + 8 + 10] ^= 0x40;
    // Image data of ten bytes, valid deflate: the rows end in the first.
    const short = Buffer.concat([whole.subarray(0, idat), pngChunk('IDAT', stream), pngChunk('IEND', Buffer.alloc(0))]);
    // The deflate stream damaged where its checksum lies, every chunk's CRC right: zlib gives none of what it inflated
    // in the step that failed.
    const lines = Buffer.concat(Array.from({ length: H }, () => Buffer.alloc(1 + 2 * width)));
    const badStream = zlib.deflateSync(lines);
    badStream[badStream.length - 1] ^= 1;
    const unchecked = Buffer.concat([whole.subarray(0, idat), pngChunk('IDAT', badStream), pngChunk('IEND', Buffer.alloc(0))]);
    const cases: Array<[string, Buffer, number, string | RegExp]> = [
      ['cut short', whole.subarray(0, whole.length - 2000), 100, `the file ends at byte ${whole.length - 2000}, inside chunk IDAT at byte ${lastIdat} (${whole.readUInt32BE(lastIdat)} bytes) (cut short?)`],
      ['a byte changed', wrong, 0, `chunk IDAT at byte ${lastIdat} (${whole.readUInt32BE(lastIdat)} bytes) fails its CRC check (damaged?)`],
      ['image data too short', short, 0, `its image data ends at row 0 of ${H} (cut short?)`],
      // Where it is found depends on how far zlib got: the row is that of the rows it gave.
      ['deflate checksum wrong', unchecked, 0, new RegExp(`^its image data cannot be inflated \\(row \\d+ of ${H}\\): incorrect data check \\(cut short or damaged\\?\\)$`)],
    ];
    for (const [what, bytes, top, reason] of cases) {
      const path = join(dir, `damaged-${what.replaceAll(' ', '-')}.png`);
      writeFileSync(path, bytes);
      const mask = await openLabelMask(path);
      if (top > 0) expect((await mask.rows(0, 10)).length, what).toBe(10 * width);
      const err = await mask.rows(top, H - top).catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(ImageError);
      expect([(err as ImageError).path, (err as ImageError).exitCode], what).toEqual([path, 3]);
      expect((err as ImageError).reason, what).toMatch(reason);
      const cli = await runCli(['build', path, '-o', join(dir, `out-${what.replaceAll(' ', '-')}`), '-q']);
      expect(cli.code, cli.stderr).toBe(3);
      expect(cli.stderr, what).toContain(`${path}: ${typeof reason === 'string' ? reason : 'its image data cannot be inflated'}`);
    }
  });

  it('computes the CRC of chunks by its table as zlib does, carried on from piece to piece', () => {
    // Every PNG's IEND chunk ends with this CRC of its type.
    expect(tableCrc(Buffer.from('IEND', 'latin1'))).toBe(0xae426082);
    const bytes = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7919) >> 3);
    const zlibCrc = (zlib as { crc32?: (b: Uint8Array, previous?: number) => number }).crc32;
    if (zlibCrc !== undefined) expect(tableCrc(bytes)).toBe(zlibCrc(bytes));
    expect(tableCrc(bytes.subarray(3000), tableCrc(bytes.subarray(0, 3000)))).toBe(tableCrc(bytes));
  });

  it('builds the same tiles, by labels and by pieces, from a PNG read in bands as through libvips', async () => {
    const width = 300;
    const data = labels(7, width, 5000).map((v, i) => (i >= 120 * width && i < 130 * width ? 0 : v));
    const path = write('build.png', data, { width, height: H, bits: 16, filter: (y) => (y * 7) % 5, idatBytes: 512 });
    const build = async (direct: boolean, maskFeatures: 'label' | 'piece') => {
      const sink = new MemorySink();
      await buildPyramid([{ source: maskSource(path, 17 * width * 2, direct) }], { maxZoom: 2, workers: 1, maskFeatures }, { sink });
      return withoutReport(sink);
    };
    for (const mode of ['label', 'piece'] as const) {
      const libvips = await build(false, mode);
      expect(libvips.size, mode).toBeGreaterThan(5);
      expect(await build(true, mode), mode).toEqual(libvips);
    }
  });
});
