// A piece reaching down many bands of a mask (a class's web of regions) traced band by band and stitched: the whole trace's features.
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { maskSource } from '../../src/io/mask-source.js';
import { readLabelMask } from '../../src/io/mask.js';
import type { Feature } from '../../src/model/feature.js';
import { labelsToFeatures } from '../../src/raster/features.js';
import { mulberry32 } from '../../src/random.js';
import { asGeoJSON, featuresAsGeoJSON } from '../helpers/mask-features.js';
import { tmpDir } from '../helpers/pyramid.js';
import { maskTiff as tiff } from '../helpers/tiff.js';

/** The rows of each read of a mask, as the source asks for them: what a band holds at once. */
const reads: number[] = [];
vi.mock('../../src/io/mask.js', async (original) => (await import('../helpers/counted-reads.js')).countingReads(await original(), (rows) => reads.push(rows)));

type Data = Uint8Array | Uint16Array | Uint32Array;

/**
 * A class mask whose first label is one web from its top row to its bottom one: a spine and branches, square frames
 * of it (holes holding an island with a hole of its own, a hole inside a hole), U shapes opening up and down, all
 * far taller than a band of a few rows; and specks of every label, which make saddles, pinched rings among them.
 */
function webMask(next: () => number, bits: 8 | 16 | 32): { width: number; data: Data } {
  const pick = (n: number) => Math.floor(next() * n);
  const width = 12 + pick(40), height = 30 + pick(120);
  const data = bits === 8 ? new Uint8Array(width * height) : bits === 16 ? new Uint16Array(width * height) : new Uint32Array(width * height);
  const palette = Array.from({ length: 2 + pick(3) }, (_, k) => (bits === 32 && k % 2 === 1 ? (1 << 24) + pick(5) : 1 + pick(200)));
  const web = palette[0];
  const fill = (x0: number, y0: number, w: number, h: number, v: number) => {
    for (let y = Math.max(0, y0); y < Math.min(height, y0 + h); y++) for (let x = Math.max(0, x0); x < Math.min(width, x0 + w); x++) data[y * width + x] = v;
  };
  for (let k = 1 + pick(3); k > 0; k--) {
    const L = next() < 0.6 ? web : palette[pick(palette.length)], s = 7 + pick(24), x = pick(width), y = pick(height);
    // Nested squares: L, a hole, an island of L, a hole in it; or of another label in the hole.
    fill(x, y, s, s, L); fill(x + 1, y + 1, s - 2, s - 2, 0); fill(x + 2, y + 2, s - 4, s - 4, next() < 0.7 ? L : palette[pick(palette.length)]); fill(x + 3, y + 3, s - 6, s - 6, 0);
  }
  for (let k = pick(4); k > 0; k--) {
    const x = pick(width), y = pick(height), w = 3 + pick(10), h = 5 + pick(height), L = next() < 0.5 ? web : palette[pick(palette.length)], up = next() < 0.5;
    fill(x, y, 1, h, L); fill(x + w - 1, y, 1, h, L); fill(x, up ? y : y + h - 1, w, 1, L);
  }
  for (let k = pick((width * height) / 5); k > 0; k--) data[pick(width * height)] = next() < 0.4 ? 0 : palette[pick(palette.length)];
  // The web last, whole: a spine from the top row to the bottom one, with branches across.
  const spine = pick(width);
  fill(spine, 0, 1 + pick(2), height, web);
  for (let k = 2 + pick(5); k > 0; k--) fill(pick(width), pick(height), 1 + pick(width), 1, web);
  return { width, data };
}

async function pieces(file: string, bandBytes?: number): Promise<Feature[]> {
  const out: Feature[] = [];
  for await (const group of maskSource(file, bandBytes).features({ maskFeatures: 'piece' })) out.push(...group.map(asGeoJSON));
  return out;
}

describe('a web piece across bands', () => {
  it('gives, for web masks of 8, 16 and 32 bits and bands of 1 row up, the features and pieces the whole trace gives', async () => {
    const next = mulberry32(81);
    const dir = tmpDir('mask-web-bands');
    for (let n = 0; n < 30; n++) {
      const bits = ([8, 16, 32] as const)[n % 3];
      const { width, data } = webMask(next, bits);
      const file = tiff(path.join(dir, `${n}.tif`), width, data);
      const whole = await featuresAsGeoJSON(maskSource(file));
      expect(whole, `mask ${n}`).toEqual([...labelsToFeatures(await readLabelMask(file))]);
      const wholePieces = await pieces(file);
      const bytes = width * data.BYTES_PER_ELEMENT, height = data.length / width;
      for (const rows of [1, 2 + Math.floor(next() * 5), 1 + Math.floor(next() * (height - 1))]) {
        expect(await featuresAsGeoJSON(maskSource(file, rows * bytes)), `mask ${n}, bands of ${rows} rows`).toEqual(whole);
        expect(await pieces(file, rows * bytes), `mask ${n}, pieces in bands of ${rows} rows`).toEqual(wholePieces);
      }
    }
  });

  it('gives a hole crossing a cut, a hole in a hole, U shapes opening up and down at a cut, and a pinched ring', async () => {
    // Label 1 a spine down the whole mask; a frame of it across the cut at row 8 (a hole of label 0 holding an island
    // of 1 with a hole of its own); a U of 2 opening up and an arch of 2 opening down, their bends beside the cut; a
    // ring of 3 pinched at one corner (a hole touching its outer ring) whose pinch is on the cut.
    const W = 30, H = 24, data = new Uint8Array(W * H);
    const fill = (x0: number, y0: number, w: number, h: number, v: number) => { for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) data[y * W + x] = v; };
    fill(0, 0, 1, H, 1); fill(0, 12, 8, 1, 1);
    fill(2, 2, 12, 12, 1); fill(3, 3, 10, 10, 0); fill(5, 5, 6, 6, 1); fill(6, 6, 4, 4, 0);
    fill(16, 2, 1, 6, 2); fill(19, 2, 1, 6, 2); fill(16, 7, 4, 1, 2);
    fill(16, 8, 4, 1, 2); fill(16, 8, 1, 6, 2); fill(19, 8, 1, 6, 2);
    fill(22, 4, 5, 4, 3); fill(23, 5, 3, 2, 0); fill(22, 8, 4, 3, 3); fill(23, 8, 2, 2, 0); data[8 * W + 25] = 0; data[7 * W + 26] = 3; data[8 * W + 26] = 0;
    const file = tiff(path.join(tmpDir('mask-web-bands'), 'shapes.tif'), W, data);
    const whole = await featuresAsGeoJSON(maskSource(file)), wholePieces = await pieces(file);
    for (const rows of [1, 2, 4, 8, 5]) {
      expect(await featuresAsGeoJSON(maskSource(file, rows * W)), `bands of ${rows} rows`).toEqual(whole);
      expect(await pieces(file, rows * W), `pieces in bands of ${rows} rows`).toEqual(wholePieces);
    }
  });

  it('reads a 1,024-row mask whose class is one web from its top to its bottom a band at a time, not whole', async () => {
    // Class 1 a spine down column 0 with branches every 16 rows, each bearing a frame with a hole and an island;
    // class 2 a web of its own, a zigzag from top to bottom. Bands of 64 rows.
    const W = 96, H = 1024, data = new Uint8Array(W * H);
    const fill = (x0: number, y0: number, w: number, h: number, v: number) => { for (let y = y0; y < Math.min(H, y0 + h); y++) for (let x = x0; x < x0 + w; x++) data[y * W + x] = v; };
    fill(0, 0, 1, H, 1);
    for (let y = 4; y < H; y += 16) { fill(0, y, 40, 1, 1); fill(10 + (y % 20), y - 3, 9, 9, 1); fill(11 + (y % 20), y - 2, 7, 7, 0); fill(13 + (y % 20), y, 3, 3, 1); }
    for (let y = 0; y < H; y++) data[y * W + 60 + Math.abs((y % 40) - 20)] = 2;
    const file = tiff(path.join(tmpDir('mask-web-bands'), 'web.tif'), W, data);
    const whole = await featuresAsGeoJSON(maskSource(file)), wholePieces = await pieces(file);
    expect(whole.map((f) => f.id)).toEqual([1, 2]);
    reads.length = 0;
    expect(await featuresAsGeoJSON(maskSource(file, W * 64))).toEqual(whole);
    // The first pass (each label's last row) reads 64 rows at a time; each band 64 rows and the one below it.
    expect(Math.max(...reads)).toBeLessThanOrEqual(64 + 1);
    reads.length = 0;
    expect(await pieces(file, W * 64)).toEqual(wholePieces);
    expect(Math.max(...reads)).toBeLessThanOrEqual(64 + 1);
  });
});
