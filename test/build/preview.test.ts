// Previews of a build: every feature painted at full form from the level-0 units' patches (the same picture as one
// canvas of the input), over the image when one is given, and the image itself downsampled as the viewer's background.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPyramid, memorySource, MemorySink } from '../../src/index.js';
import { renderPreviewPng } from '../../src/io/preview.js';
import type { Feature } from '../../src/model/feature.js';
import { tmpDir } from '../helpers/pyramid.js';
import { littleEndianPages, type TiffEntry } from '../helpers/tiff.js';

const W = 6000, H = 4000;
const dir = tmpDir('mudm-preview-build');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** 3,000 small cells and 300 points, deterministic, dense on the left. */
function slide(): Feature[] {
  let a = 99;
  const r = () => { a = (Math.imul(a, 1103515245) + 12345) >>> 0; return a / 4294967296; };
  const out: Feature[] = [];
  for (let i = 0; i < 3300; i++) {
    const x = 10 + (i % 3 === 0 ? r() * (W - 20) : r() * (W / 3)), y = 10 + r() * (H - 20);
    if (i % 11 === 0) { out.push({ type: 'Feature', featureClass: 'spot', properties: {}, geometry: { type: 'Point', coordinates: [x, y] } }); continue; }
    const ring = Array.from({ length: 7 }, (_, k) => [x + 5 * Math.cos((k % 6) * Math.PI / 3), y + 5 * Math.sin((k % 6) * Math.PI / 3)] as [number, number]);
    out.push({ type: 'Feature', featureClass: i % 2 ? 'tumor' : 'stroma', properties: { n: i }, geometry: { type: 'Polygon', coordinates: [ring] } });
  }
  return out;
}

async function build(features: Feature[], extra: Record<string, unknown> = {}) {
  const sink = new MemorySink();
  const text = features.map((f) => JSON.stringify(f)).join('\n');
  // Small cells (512 px): 96 level-0 units paint patches of 128 × 128 preview pixels (4 plane pixels each).
  await buildPyramid([{ source: memorySource('cells.ndjson', text) }], { imageSize: `${W},${H}`, unitSize: 512, tileBudget: 20 * 1024, format: 'pbf', workers: 2, preview: true, ...extra }, { sink });
  return sink;
}

const descriptorOf = (sink: MemorySink) => JSON.parse(Buffer.from(sink.files.get('tileset.json') as Uint8Array).toString('utf8'));

describe('build previews', async () => {
  const features = slide();
  const sink = await build(features);
  const png = Buffer.from(sink.files.get('preview/preview.png') as Uint8Array);

  it('is the picture of every input feature: the same bytes as the input painted on one canvas', async () => {
    const { width, height } = await sharp(png).metadata();
    expect([width, height]).toEqual([1500, 1000]);
    // A point's disc reaches one pixel here: no further than the records a unit reads around its cell.
    const whole = await renderPreviewPng({ width: W, height: H, features, pointRadius: 1 });
    expect(Buffer.compare(whole.png, png)).toBe(0);
  });

  it('has an outline for every feature, although the coarse zooms are thinned', async () => {
    const report = JSON.parse(Buffer.from(sink.files.get('build-report.json') as Uint8Array).toString('utf8'));
    expect(report.tiles.byZoom['0'].thinned).toBeGreaterThan(1000);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)].join();
    // Rasterised from the input: each feature's first position lies in a preview pixel its outline (or disc) marks.
    const bare = features.filter((f) => {
      const g = f.geometry as { type: string; coordinates: unknown };
      const p = (g.type === 'Point' ? g.coordinates : (g.coordinates as number[][][])[0][0]) as number[];
      return at(Math.floor(p[0] / 4), Math.floor(p[1] / 4)) === '17,19,24';
    });
    expect(bare.length).toBe(0);
    expect(at(1490, 10)).toBe('17,19,24');
    expect(descriptorOf(sink).assets).toEqual([{ role: 'raster', href: 'preview/preview.png', media_type: 'image/png', title: 'preview', bbox: [0, 0, 6000, 4000] }]);
  });

  it('paints over the image given, and lists the image downsampled as the background asset', async () => {
    const image = path.join(dir, 'slide.jpg');
    // A smaller picture of the plane (the world stays --image-size): stretched over it.
    await sharp({ create: { width: W / 4, height: H / 4, channels: 3, background: { r: 230, g: 200, b: 220 } } }).jpeg().toFile(image);
    const withImage = await build(features, { image });
    const assets = descriptorOf(withImage).assets;
    expect(assets).toEqual([
      { role: 'raster', href: 'preview/preview.png', media_type: 'image/png', title: 'preview', bbox: [0, 0, 6000, 4000] },
      { role: 'background', href: 'preview/image.jpg', media_type: 'image/jpeg', title: 'the slide image, downsampled', bbox: [0, 0, 6000, 4000] },
    ]);
    const jpg = Buffer.from(withImage.files.get('preview/image.jpg') as Uint8Array);
    const meta = await sharp(jpg).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 1500, 1000]);
    const { data } = await sharp(jpg).raw().toBuffer({ resolveWithObject: true });
    expect(Math.abs(data[0] - 230) + Math.abs(data[1] - 200) + Math.abs(data[2] - 220)).toBeLessThan(12);
    // The quicklook: the image where nothing is painted, features over it elsewhere (never in the background).
    const { data: q, info } = await sharp(Buffer.from(withImage.files.get('preview/preview.png') as Uint8Array)).raw().toBuffer({ resolveWithObject: true });
    const corner = q.subarray((10 * info.width + 1490) * 3, (10 * info.width + 1490) * 3 + 3);
    expect(Math.abs(corner[0] - 230) + Math.abs(corner[1] - 200) + Math.abs(corner[2] - 220)).toBeLessThan(12);
    expect(Buffer.compare(Buffer.from(q), Buffer.from((await sharp(png).raw().toBuffer()).buffer))).not.toBe(0);
  });

  it('takes the image from its largest page: a small overview stored first (Leica SCN, Ventana BIF) is not the slide', async () => {
    const page = (w: number, h: number, grey: number): { entries: TiffEntry[]; strip: Uint8Array } => ({
      entries: [[256, 4, w], [257, 4, h], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, h], [279, 4, w * h]],
      strip: new Uint8Array(w * h).fill(grey),
    });
    const image = path.join(dir, 'overview-first.tif');
    // Read first, the 30 × 30 overview had not the plane's shape: the build refused the image.
    fs.writeFileSync(image, littleEndianPages([page(30, 30, 250), page(W / 4, H / 4, 60)]));
    const jpg = Buffer.from((await build(features, { image })).files.get('preview/image.jpg') as Uint8Array);
    const { data, info } = await sharp(jpg).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([1500, 1000]);
    expect(Math.abs(data[0] - 60) + Math.abs(data[1] - 60) + Math.abs(data[2] - 60)).toBeLessThan(6);
  });
});
