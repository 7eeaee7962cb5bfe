// An intensity image given as a label mask is refused by its pieces (src/raster/intensity.ts), and masks of many small objects are not.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskSource } from '../../src/io/mask-source.js';
import { featuresAsGeoJSON } from '../helpers/mask-features.js';
import { mulberry32 } from '../../src/random.js';
import { ImageError } from '../../src/report/errors.js';
import { piecesOf } from '../helpers/pieces.js';

let dir = '';
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'mudm-intensity-')); });
afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

/** An 8 or 16-bit greyscale PNG `w` wide. */
async function png(name: string, w: number, data: Uint8Array | Uint16Array): Promise<string> {
  const file = join(dir, name);
  await sharp(data, { raw: { width: w, height: data.length / w, channels: 1 } }).toColourspace(data instanceof Uint16Array ? 'grey16' : 'b-w').png().toFile(file);
  return file;
}

interface Traced { id: number; properties: { label: number; area: number }; geometry: { type: string; coordinates: unknown[] } }

/** The mask's features, decoded. */
async function featuresOf(file: string, bandBytes?: number): Promise<Traced[]> {
  return (await featuresAsGeoJSON(maskSource(file, bandBytes))) as unknown as Traced[];
}

/** The error reading the mask ends in. */
async function refusal(file: string, bandBytes?: number): Promise<ImageError> {
  const e = await featuresOf(file, bandBytes).then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(ImageError);
  return e as ImageError;
}

const INTENSITY = 'this looks like an intensity image, not a label mask (one integer label per object, 0 background)';

describe('an intensity image given as a label mask', () => {
  it('is refused from 16 sampled windows of 8-bit noise, before the whole is traced', async () => {
    // Just over SAMPLED_FROM pixels: 4 × 4 windows, spread edge to edge.
    const w = 2048, h = 2049, rnd = mulberry32(1), data = new Uint8Array(w * h).map(() => Math.floor(rnd() * 256));
    const e = await refusal(await png('noise8.png', w, data));
    expect(e.reason).toMatch(new RegExp(`^255 labels in [\\d,]+ separate pieces of on average 1\\.0 px in 16 windows of up to 256 × 256 px sampled across it, 99% of their outlines against another label rather than background: ${INTENSITY.replace(/[()]/g, '\\$&')}`));
    // Those of the windows: 16 × 65,536 px of noise, less a 256th that is 0 (background), and about 2 in 256 that join
    // a neighbour of their level.
    const said = Number(/in ([\d,]+) separate/.exec(e.reason)?.[1].replaceAll(',', ''));
    expect(said).toBeLessThan(16 * 65_536 * (1 - 2 / 256));
    expect(said).toBeGreaterThan(16 * 65_536 * (1 - 4 / 256));
  });

  it('read in bands, is refused from the first band of rows, before any label is counted', async () => {
    // Bands of 1,025 rows, just over SAMPLED_FROM pixels.
    const w = 4096, rnd = mulberry32(2), data = new Uint8Array(w * 1100).map(() => Math.floor(rnd() * 256));
    const e = await refusal(await png('noise-bands.png', w, data), w * 1025);
    expect(e.reason).toMatch(/^255 labels in [\d,]+ separate pieces of on average 1\.0 px in 16 windows of up to 256 × 256 px sampled from rows 0–1024, 99% of their outlines/);
  });

  it('of fewer pixels than are sampled, is traced whole and refused with its own figures', async () => {
    const w = 600, rnd = mulberry32(6), data = new Uint16Array(w * w).map(() => Math.floor(rnd() * 65536));
    const e = await refusal(await png('noise16.png', w, data));
    const { pieces, pixels } = piecesOf(data, w);
    const labels = new Set(data.filter((v) => v !== 0)).size;
    expect(e.reason).toBe(`${labels.toLocaleString('en-US')} labels in ${pieces.toLocaleString('en-US')} separate pieces of on average ${(pixels / pieces).toFixed(1)} px, 100% of their outlines against another label rather than background: ${INTENSITY}: `
      + 'its grey levels would be traced as labels, a piece every few pixels; segment it first (Cellpose, StarDist, QuPath, skimage.measure.label of a threshold) and give the label image, or give it as --image, the slide the annotations lie on');
  });

  it('is refused once traced where no sampled window lies, with the whole mask\'s figures', async () => {
    // Noise in rows 300–499 only, between the first two rows of sampled windows (0–255, 629–884), which see background.
    const w = 2144, rnd = mulberry32(3), data = new Uint8Array(w * w);
    for (let i = 300 * w; i < 500 * w; i++) data[i] = Math.floor(rnd() * 256);
    const e = await refusal(await png('noise-top.png', w, data));
    const { pieces, pixels } = piecesOf(data, w);
    const labels = new Set(data.filter((v) => v !== 0)).size;
    expect(e.reason).toMatch(new RegExp(`^${labels} labels in ${pieces.toLocaleString('en-US')} separate pieces of on average ${(pixels / pieces).toFixed(1)} px, 9\\d% of their outlines`));
  });
});

describe('label masks of many small objects', () => {
  it('an instance mask of 14,400 small cells, every other one touching its neighbours, is traced', async () => {
    // Discs on a 6 px grid, 16-bit labels shuffled: of radius 1.5–3 px, and every other one of 4.3 px, reaching the next.
    const w = 720, side = 6, n = (w / side) ** 2, rnd = mulberry32(4), data = new Uint16Array(w * w);
    const labels = Array.from({ length: n }, (_, k) => k + 1);
    for (let k = n - 1; k > 0; k--) { const j = Math.floor(rnd() * (k + 1)); [labels[k], labels[j]] = [labels[j], labels[k]]; }
    const area = new Map<number, number>();
    for (let k = 0; k < n; k++) {
      const cx = (k % (w / side)) * side + 3, cy = Math.floor(k / (w / side)) * side + 3, r = k % 2 === 0 ? 4.3 : 1.5 + rnd() * 1.5;
      for (let y = cy - 3; y < cy + 3; y++) for (let x = cx - 3; x <= cx + 3; x++) {
        if (Math.hypot(x + 0.5 - cx, y + 0.5 - cy) <= r) data[y * w + x] = labels[k];
      }
    }
    for (const v of data) if (v !== 0) area.set(v, (area.get(v) ?? 0) + 1);
    const features = await featuresOf(await png('cells.png', w, data));
    expect(features.length).toBe(area.size);
    expect(new Map(features.map((f) => [f.id, f.properties.area]))).toEqual(area);
  });

  it('a 0/255 mask of 14,400 spots of 1–5 px, on average under 4 px, is traced: its spots lie on background', async () => {
    const w = 480, rnd = mulberry32(5), data = new Uint8Array(w * w);
    // Shapes of 1, 2, 3, 4 and 5 px (a cross), each in its own 4 × 4 px cell.
    const shapes = [[[0, 0]], [[0, 0], [1, 0]], [[0, 0], [1, 0], [0, 1]], [[0, 0], [1, 0], [0, 1], [1, 1]], [[1, 0], [0, 1], [1, 1], [2, 1], [1, 2]]];
    let pixels = 0;
    for (let cy = 0; cy < w; cy += 4) for (let cx = 0; cx < w; cx += 4) {
      const s = shapes[Math.floor(rnd() ** 2 * shapes.length)];
      for (const [dx, dy] of s) data[(cy + dy) * w + cx + dx] = 255;
      pixels += s.length;
    }
    expect(pixels / 14_400).toBeLessThan(4);
    const features = await featuresOf(await png('spots.png', w, data));
    expect(features.map((f) => [f.id, f.properties.area, f.geometry.coordinates.length])).toEqual([[255, pixels, 14_400]]);
  });
});
