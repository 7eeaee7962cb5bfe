// Label masks as the tools that segment cells write them (test/fixtures/masks/make.py: Pillow, tifffile, ImageMagick)
// read to the same labels, with the pixel size each states, and build the same tiles.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { maskSource } from '../../src/io/mask-source.js';
import { readLabelMask } from '../../src/io/mask.js';
import { MemorySink } from '../../src/io/sink.js';
import { withoutReport } from '../helpers/pyramid.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'masks');
const FILES = readdirSync(DIR).filter((f) => /\.(png|tif)$/.test(f)).sort();

/** The labels make.py draws: ellipses labelled 3, 6, 9 … and a band of 250 across them, on 0. */
function expected(): number[] {
  const out: number[] = [];
  for (let y = 0; y < 90; y++) {
    for (let x = 0; x < 120; x++) {
      let v = 0, n = 0;
      for (let cy = 8; cy < 90; cy += 17) {
        for (let cx = 8; cx < 120; cx += 19) {
          n++;
          if ((y - cy) ** 2 + 0.7 * (x - cx) ** 2 <= (4 + (n % 4)) ** 2) v = 3 * n;
        }
      }
      out.push(y >= 40 && y < 46 && x >= 10 && x < 110 ? 250 : v);
    }
  }
  return out;
}

describe('label masks as segmentation tools write them', () => {
  it('are the files make.py writes', () => {
    expect(FILES).toEqual([
      'im-u16-lzw.tif', 'im-u16.png', 'pil-u16-deflate.tif', 'pil-u16.png', 'pil-u8.png', 'tf-f64-tiled-zlib-pred.tif', 'tf-f64-zlib.tif',
      'tf-i64-tiled.tif', 'tf-i64-zlib-be.tif', 'tf-i64.tif', 'tf-u16-ome.tif', 'tf-u16-zlib-tiled.tif', 'tf-u16.tif', 'tf-u32-imagej.tif',
      'tf-u32.tif', 'tf-u64-tiled-be-big.tif',
    ]);
  });

  it('read to the labels drawn, whatever the writer, sample type (8 to 64-bit, float) and encoding', async () => {
    const labels = expected();
    for (const f of FILES) {
      const mask = await readLabelMask(join(DIR, f));
      expect([mask.width, mask.height], f).toEqual([120, 90]);
      expect(Array.from(mask.data), f).toEqual(labels);
    }
  });

  it('give the pixel size their headers state: ImageJ\'s calibration, OME-XML', async () => {
    const size = async (f: string) => (await readLabelMask(join(DIR, f))).pixelSize;
    expect(await size('tf-u32-imagej.tif')).toMatchObject({ x: 0.25, y: 0.25, unitX: 'micrometer', unitY: 'micrometer' });
    expect(await size('tf-u16-ome.tif')).toMatchObject({ x: 0.5, y: 0.5, unitX: 'micrometer', unitY: 'micrometer' });
    expect(await size('tf-i64.tif')).toBeUndefined();
  });

  const build = async (f: string, bandBytes?: number) => {
    const sink = new MemorySink();
    await buildPyramid([{ source: maskSource(join(DIR, f), bandBytes), layer: 'cells' }], { maxZoom: 1, workers: 1 }, { sink });
    return withoutReport(sink);
  };

  it('build the same tiles from tifffile\'s int64 strips as from Pillow\'s 16-bit PNG', async () => {
    const png = await build('pil-u16.png');
    expect(png.size).toBeGreaterThan(2);
    expect(await build('tf-i64.tif')).toEqual(png);
  });

  it('build the same tiles from tifffile\'s tiled 64-bit TIFFs as from its uint32 strips, read whole and in bands across tiles', async () => {
    const strips = await build('tf-u32.tif');
    expect(strips.size).toBeGreaterThan(2);
    for (const f of ['tf-i64-tiled.tif', 'tf-u64-tiled-be-big.tif', 'tf-f64-tiled-zlib-pred.tif']) {
      expect(await build(f), f).toEqual(strips);
      // Bands of 13 rows: reads that start and end inside rows of tiles 32 and 48 rows high.
      expect(await build(f, 13 * 120 * 8), `${f} in bands`).toEqual(strips);
    }
  });
});
