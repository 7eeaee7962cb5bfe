// Image header reading: size, format and sample layout of TIFF, PNG and JPEG without decoding, and clear errors.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageError } from '../../src/report/errors.js';
import { readImageSize } from '../../src/io/image.js';
import { littleEndianTiff, type TiffEntry } from '../helpers/tiff.js';

let dir = '';
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'mudm-image-')); });
afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

const rgb = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#406080' } });

/** A TIFF whose header claims a whole-slide size but holds almost no pixel data: only a header reader can size it. */
function hugeTiffHeader(width: number, height: number): Buffer {
  const entries: TiffEntry[] = [
    [256, 4, width], [257, 4, height], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0],
    [277, 3, 1], [278, 4, height], [279, 4, width * height],
  ];
  return littleEndianTiff(entries, new Uint8Array(16));
}

describe('readImageSize', () => {
  it('TIFF, PNG and JPEG: width, height, format, channels, bits per sample', async () => {
    await rgb(300, 200).tiff({ compression: 'lzw' }).toFile(join(dir, 'a.tif'));
    await rgb(123, 45).png().toFile(join(dir, 'a.png'));
    await rgb(640, 480).jpeg().toFile(join(dir, 'a.jpg'));
    const grey16 = new Uint16Array(7 * 5).fill(40000);
    await sharp(grey16, { raw: { width: 7, height: 5, channels: 1 } }).toColourspace('grey16').png().toFile(join(dir, 'g16.png'));
    await rgb(10, 20).ensureAlpha().png().toFile(join(dir, 'rgba.png'));

    expect(await readImageSize(join(dir, 'a.tif'))).toEqual({ width: 300, height: 200, format: 'tiff', channels: 3, bitsPerSample: 8 });
    expect(await readImageSize(join(dir, 'a.png'))).toEqual({ width: 123, height: 45, format: 'png', channels: 3, bitsPerSample: 8 });
    expect(await readImageSize(join(dir, 'a.jpg'))).toEqual({ width: 640, height: 480, format: 'jpeg', channels: 3, bitsPerSample: 8 });
    expect(await readImageSize(join(dir, 'g16.png'))).toEqual({ width: 7, height: 5, format: 'png', channels: 1, bitsPerSample: 16 });
    expect(await readImageSize(join(dir, 'rgba.png'))).toMatchObject({ width: 10, height: 20, channels: 4 });
  });

  it('reads a whole-slide size from the header alone: no decode, no pixel limit', async () => {
    const path = join(dir, 'slide.tif');
    await writeFile(path, hugeTiffHeader(60_000, 50_000));
    expect(await readImageSize(path)).toEqual({ width: 60_000, height: 50_000, format: 'tiff', channels: 1, bitsPerSample: 8 });
  });

  it('ImageError with the path and a reason for missing, empty, non-image and unsupported files', async () => {
    const reasonOf = async (path: string) => {
      const err = await readImageSize(path).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ImageError);
      expect((err as ImageError).path).toBe(path);
      expect((err as ImageError).message).toContain(path);
      return (err as ImageError).reason;
    };
    expect(await reasonOf(join(dir, 'missing.tif'))).toBe('no such file');
    await writeFile(join(dir, 'empty.png'), '');
    expect(await reasonOf(join(dir, 'empty.png'))).toBe('the file is empty');
    await writeFile(join(dir, 'notes.tif'), 'not an image at all');
    expect(await reasonOf(join(dir, 'notes.tif'))).toMatch(/not an image/);
    await mkdir(join(dir, 'folder.png'));
    expect(await reasonOf(join(dir, 'folder.png'))).toMatch(/directory/);
    await rgb(8, 8).webp().toFile(join(dir, 'a.webp'));
    expect(await reasonOf(join(dir, 'a.webp'))).toMatch(/unsupported image format 'webp'/);
    await rgb(8, 8).gif().toFile(join(dir, 'a.gif'));
    expect(await reasonOf(join(dir, 'a.gif'))).toMatch(/unsupported image format 'gif'/);
  });
});
