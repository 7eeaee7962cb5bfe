// PNG previews: power-of-two size, every feature visible over a dark background or an image, deterministic bytes.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageError } from '../../src/report/errors.js';
import { renderPreview, renderPreviewPng } from '../../src/io/preview.js';
import type { Feature } from '../../src/model/feature.js';
import type { Polygon } from '../../src/model/geometry.js';

let dir = '';
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'mudm-preview-')); });
afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

function square(x0: number, y0: number, x1: number, y1: number, featureClass?: string): Feature<Polygon> {
  return {
    type: 'Feature', featureClass, properties: {},
    geometry: { type: 'Polygon', coordinates: [[[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]] },
  };
}

async function decode(png: Buffer) {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
  return { info, at };
}

describe('renderPreview', () => {
  it('scales the plane by a power of two to maxSide and draws features over a dark background', async () => {
    const features: Feature[] = [
      square(100, 100, 500, 400, 'cell'),
      { type: 'Feature', featureClass: 'spot', geometry: { type: 'Point', coordinates: [800, 250] } },
      { type: 'Feature', geometry: { type: 'LineString', coordinates: [[0, 450], [1000, 450]] } },
      { type: 'Feature', geometry: null },
    ];
    // 1000 / 200 = 5 plane pixels per preview pixel at least: 8, the next power of two.
    const out = await renderPreviewPng({ width: 1000, height: 500, features, maxSide: 200 });
    expect(out).toMatchObject({ width: 125, height: 63, scale: 0.125, drawn: 3, total: 4 });
    const { info, at } = await decode(out.png);
    expect([info.width, info.height, info.channels]).toEqual([125, 63, 3]);
    expect((await sharp(out.png).metadata()).format).toBe('png');
    const background = at(120, 5);
    expect(background).toEqual([17, 19, 24]);
    expect(at(40, 30)).not.toEqual(background); // inside the square (12.5..62.5, 12.5..50)
    expect(at(12, 30)).not.toEqual(background); // on its outline
    expect(at(12, 30)).not.toEqual(at(40, 30)); // outline and interior differ
    expect(at(100, 31)).not.toEqual(background); // the point
    expect(at(100, 56)).not.toEqual(background); // the line
    expect(at(40, 30)).not.toEqual(at(100, 31)); // classes get different colours
  });

  it('gives the same bytes for the same input, and writes them to the file', async () => {
    const features = () => Array.from({ length: 200 }, (_, i) => square((i % 20) * 50, Math.floor(i / 20) * 50, (i % 20) * 50 + 40, Math.floor(i / 20) * 50 + 40, `c${i % 5}`));
    const a = await renderPreviewPng({ width: 1000, height: 500, features: features(), maxSide: 300 });
    const b = await renderPreviewPng({ width: 1000, height: 500, features: features(), maxSide: 300 });
    expect(Buffer.compare(a.png, b.png)).toBe(0);
    const outPath = join(dir, 'plane.png');
    const written = await renderPreview({ width: 1000, height: 500, features: features(), maxSide: 300, outPath });
    expect(written).toMatchObject({ path: outPath, width: 250, height: 125, drawn: 200 });
    expect(Buffer.compare(await readFile(outPath), a.png)).toBe(0);
  });

  it('paints every feature, from an async iterable too, however many there are', async () => {
    async function* many() { for (let i = 0; i < 1000; i++) yield square(i + 0.2, 2, i + 0.6, 8); }
    const a = await renderPreviewPng({ width: 1000, height: 10, features: many() });
    expect(a).toMatchObject({ drawn: 1000, total: 1000, width: 1000 });
    const { at } = await decode(a.png);
    // Each square is narrower than a pixel and between pixel centres: its outline still marks its column.
    const unmarked = Array.from({ length: 1000 }, (_, x) => x).filter((x) => at(x, 5).join() === '17,19,24');
    expect(unmarked).toEqual([]);
    expect(at(500, 0)).toEqual([17, 19, 24]);
  });

  it('draws over the downscaled image: a pixel under a feature differs from the image', async () => {
    const image = join(dir, 'slide.png');
    await sharp({ create: { width: 800, height: 600, channels: 3, background: { r: 200, g: 200, b: 200 } } }).png().toFile(image);
    const out = await renderPreviewPng({ width: 800, height: 600, features: [square(0, 0, 400, 300)], image, maxSide: 400 });
    expect([out.width, out.height]).toEqual([400, 300]);
    const { at } = await decode(out.png);
    expect(at(300, 250)).toEqual([200, 200, 200]);
    expect(at(100, 75)).not.toEqual([200, 200, 200]);
  });

  it('uses a reduced level of a pyramidal TIFF as background', async () => {
    const image = join(dir, 'pyramid.tif');
    await sharp({ create: { width: 2048, height: 1024, channels: 3, background: { r: 90, g: 60, b: 30 } } })
      .tiff({ pyramid: true, tile: true, tileWidth: 256, tileHeight: 256, compression: 'lzw' }).toFile(image);
    expect((await sharp(image).metadata()).pages).toBeGreaterThan(1);
    const out = await renderPreviewPng({ width: 2048, height: 1024, features: [square(0, 0, 1024, 512)], image, maxSide: 256 });
    const { at } = await decode(out.png);
    expect([out.width, out.height]).toEqual([256, 128]);
    expect(at(200, 100)).toEqual([90, 60, 30]);
    expect(at(60, 30)).not.toEqual([90, 60, 30]);
  });

  it('takes a 16-bit greyscale image, and reports a missing image as ImageError', async () => {
    const image = join(dir, 'grey16.png');
    const data = new Uint16Array(64 * 32);
    for (let i = 0; i < data.length; i++) data[i] = (i % 64) * 64; // dim ramp: stretched for display
    await sharp(data, { raw: { width: 64, height: 32, channels: 1 } }).toColourspace('grey16').png().toFile(image);
    const out = await renderPreviewPng({ width: 64, height: 32, features: [square(40, 8, 56, 24, 'x')], image });
    const { info, at } = await decode(out.png);
    expect([info.width, info.height, info.channels]).toEqual([64, 32, 3]);
    expect(at(62, 2)[0]).toBeGreaterThan(200);
    expect(at(48, 16)).not.toEqual(at(48, 2));
    await expect(renderPreviewPng({ width: 10, height: 10, features: [], image: join(dir, 'nope.tif') })).rejects.toThrow(ImageError);
  });
});
