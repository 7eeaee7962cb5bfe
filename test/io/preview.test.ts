// PNG previews: size, features visible over a dark background or an image, deterministic bytes, bounded feature count.
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
  it('scales the plane to maxSide and draws features over a dark background', async () => {
    const features: Feature[] = [
      square(100, 100, 500, 400, 'cell'),
      { type: 'Feature', featureClass: 'spot', geometry: { type: 'Point', coordinates: [800, 250] } },
      { type: 'Feature', geometry: { type: 'LineString', coordinates: [[0, 450], [1000, 450]] } },
      { type: 'Feature', geometry: null },
    ];
    const out = await renderPreviewPng({ width: 1000, height: 500, features, maxSide: 200 });
    expect(out).toMatchObject({ width: 200, height: 100, scale: 0.2, drawn: 3, total: 4 });
    const { info, at } = await decode(out.png);
    expect([info.width, info.height, info.channels]).toEqual([200, 100, 3]);
    expect((await sharp(out.png).metadata()).format).toBe('png');
    const background = at(150, 20);
    expect(at(60, 50)).not.toEqual(background); // inside the square (20..100, 20..80)
    expect(at(20, 50)).not.toEqual(background); // on its outline
    expect(at(160, 50)).not.toEqual(background); // the point
    expect(at(100, 90)).not.toEqual(background); // the line
    expect(at(60, 50)).not.toEqual(at(160, 50)); // classes get different colours
  });

  it('gives the same bytes for the same input, and writes them to the file', async () => {
    const features = () => Array.from({ length: 200 }, (_, i) => square((i % 20) * 50, Math.floor(i / 20) * 50, (i % 20) * 50 + 40, Math.floor(i / 20) * 50 + 40, `c${i % 5}`));
    const a = await renderPreviewPng({ width: 1000, height: 500, features: features(), maxSide: 300 });
    const b = await renderPreviewPng({ width: 1000, height: 500, features: features(), maxSide: 300 });
    expect(Buffer.compare(a.png, b.png)).toBe(0);
    const outPath = join(dir, 'plane.png');
    const written = await renderPreview({ width: 1000, height: 500, features: features(), maxSide: 300, outPath });
    expect(written).toMatchObject({ path: outPath, width: 300, height: 150, drawn: 200 });
    expect(Buffer.compare(await readFile(outPath), a.png)).toBe(0);
  });

  it('draws at most maxFeatures, the same ones every time, from an async iterable too', async () => {
    async function* many() { for (let i = 0; i < 1000; i++) yield square(i, 0, i + 1, 10); }
    const a = await renderPreviewPng({ width: 1000, height: 10, features: many(), maxFeatures: 25 });
    const b = await renderPreviewPng({ width: 1000, height: 10, features: many(), maxFeatures: 25 });
    expect(a).toMatchObject({ drawn: 25, total: 1000 });
    expect(Buffer.compare(a.png, b.png)).toBe(0);
    // The sample spreads over the input, not only its beginning.
    const { at } = await decode(a.png);
    let drawnRight = 0;
    for (let x = 500; x < 1000; x++) if (at(x, 5)[0] > 40) drawnRight++;
    expect(drawnRight).toBeGreaterThan(0);
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
