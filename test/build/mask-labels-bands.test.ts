// --mask-features label read in bands of pieces: the features of the mask read whole (outlines spilled or not), reading no more rows than its pieces need.
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { maskSource } from '../../src/io/mask-source.js';
import { readLabelMask } from '../../src/io/mask.js';
import { labelsToFeatures } from '../../src/raster/features.js';
import { mulberry32 } from '../../src/random.js';
import { MemoryOutlines } from '../../src/io/outline-spill.js';
import { asGeoJSON, featuresAsGeoJSON } from '../helpers/mask-features.js';
import { tmpDir } from '../helpers/pyramid.js';
import { InterruptedError } from '../../src/report/errors.js';
import { maskTiff as tiff } from '../helpers/tiff.js';

/** The rows of each read of a mask, as the source asks for them: what a band holds at once. */
const reads: number[] = [];
/** Called after each read is counted, before it is made. */
let afterRead: (() => void) | undefined;
vi.mock('../../src/io/mask.js', async (original) => (await import('../helpers/counted-reads.js')).countingReads(await original(), (rows) => { reads.push(rows); afterRead?.(); }));

type Data = Uint8Array | Uint16Array | Uint32Array;

/** Paints a rectangle of `v` (clipped to the mask). */
function fill(data: Data, width: number, x0: number, y0: number, w: number, h: number, v: number): void {
  const height = data.length / width;
  for (let y = Math.max(0, y0); y < Math.min(height, y0 + h); y++) for (let x = Math.max(0, x0); x < Math.min(width, x0 + w); x++) data[y * width + x] = v;
}

/**
 * A class-like mask: a few labels, each in many pieces, among them a label on the first and last rows, U shapes and
 * arches, rings around an island of their own label, and blobs and specks; in 32 bits, labels past 2^24 too.
 */
function classMask(next: () => number, bits: 8 | 16 | 32): { width: number; data: Data } {
  const pick = (n: number) => Math.floor(next() * n);
  const width = 3 + pick(30), height = [2, 1 + pick(30), 40 + pick(160)][pick(3)];
  const data = bits === 8 ? new Uint8Array(width * height) : bits === 16 ? new Uint16Array(width * height) : new Uint32Array(width * height);
  const palette = Array.from({ length: 2 + pick(4) }, (_, k) => (bits === 32 && k % 2 === 1 ? (1 << 24) + pick(5) : 1 + pick(6)));
  const v = () => palette[pick(palette.length)];
  const p = (x: number, y: number, w: number, h: number, L: number) => fill(data, width, x, y, w, h, L);
  for (let k = pick(8); k > 0; k--) p(pick(width), pick(height), 1 + pick(width), 1 + pick(12), v());
  for (let k = pick(5); k > 0; k--) {
    // A U (or, upside down, an arch), its legs far apart in rows.
    const x = pick(width), y = pick(height), w = 3 + pick(8), h = 2 + pick(height), L = v(), up = next() < 0.5;
    p(x, y, 1, h, L); p(x + w - 1, y, 1, h, L); p(x, up ? y : y + h - 1, w, 1, L);
  }
  for (let k = pick(4); k > 0; k--) {
    // A ring with an island of its own label in its hole.
    const x = pick(width), y = pick(height), L = v();
    p(x, y, 5, 5, L); p(x + 1, y + 1, 3, 3, 0); p(x + 2, y + 2, 1, 1, L);
  }
  for (let k = pick(width * height / 6); k > 0; k--) data[pick(width * height)] = next() < 0.4 ? 0 : v();
  // A class on the first and last rows: open from the top of the mask to its bottom.
  const first = v();
  p(0, 0, width, 1, first); p(0, height - 1, width, 1, first);
  return { width, data };
}

async function labelFeatures(file: string, bandBytes?: number): Promise<unknown[]> {
  return featuresAsGeoJSON(maskSource(file, bandBytes));
}

/** The features with every band's outlines spilled (a budget of 0 bytes) to an in-memory twin, and the twin. */
async function spilledFeatures(file: string, bandBytes: number): Promise<{ features: unknown[]; spill: MemoryOutlines }> {
  const spill = new MemoryOutlines(), features: unknown[] = [];
  for await (const group of maskSource(file, bandBytes).features({ outlines: { bytes: 0, open: () => spill } })) features.push(...group.map(asGeoJSON));
  return { features, spill };
}

describe('--mask-features label in bands', () => {
  it('gives, for class-like masks of 8, 16 and 32 bits and bands of 1 row up, the features read whole: order, polygons, rings', async () => {
    const next = mulberry32(76);
    const dir = tmpDir('mask-labels-bands');
    let spilledBytes = 0;
    for (let n = 0; n < 60; n++) {
      const bits = ([8, 16, 32] as const)[n % 3];
      const { width, data } = classMask(next, bits);
      const file = tiff(path.join(dir, `${n}.tif`), width, data);
      const whole = await labelFeatures(file);
      expect(whole, `mask ${n}`).toEqual([...labelsToFeatures(await readLabelMask(file))]);
      const bytes = width * data.BYTES_PER_ELEMENT, height = data.length / width;
      for (const bandBytes of [bytes, (2 + Math.floor(next() * 6)) * bytes, Math.floor(next() * height * bytes) + 1]) {
        expect(await labelFeatures(file, bandBytes), `mask ${n}, bands of ${bandBytes} bytes`).toEqual(whole);
        // Its outlines spilled as each band is kept and read back as their labels are given: the same features.
        const spilled = await spilledFeatures(file, bandBytes);
        expect(spilled.features, `mask ${n}, bands of ${bandBytes} bytes, spilled`).toEqual(whole);
        spilledBytes += spilled.spill.bytes;
      }
    }
    // Classes open across bands were spilled, and read back.
    expect(spilledBytes).toBeGreaterThan(0);
  });

  it('reads a class mask whose class 1 is on its first and last rows a band of its pieces at a time, not whole', async () => {
    // Bands of 64 rows; class 1 on rows 0 and 1,023, and in blobs with holes holding islands of it, and U shapes;
    // classes 2 and 3 so too. Every piece is 30 rows high at most, 10 rows from the next.
    const W = 96, H = 1024, data = new Uint8Array(W * H);
    fill(data, W, 0, 0, W, 1, 1); fill(data, W, 0, H - 1, W, 1, 1);
    for (let y = 8, k = 0; y < H - 40; y += 40, k++) {
      const x = (y * 7) % (W - 20), L = 1 + (k % 3);
      fill(data, W, x, y, 9, 9, L); fill(data, W, x + 2, y + 2, 5, 5, 0); fill(data, W, x + 4, y + 4, 1, 1, L);
      fill(data, W, (x + 40) % (W - 10), y, 1, 30, L); fill(data, W, (x + 46) % (W - 10), y, 1, 30, L); fill(data, W, (x + 40) % (W - 10), y + 29, 7, 1, L);
    }
    const file = tiff(path.join(tmpDir('mask-labels-bands'), 'classes.tif'), W, data);
    const whole = await labelFeatures(file);
    expect(whole.map((f) => (f as { id: number }).id)).toEqual([1, 2, 3]);
    reads.length = 0;
    expect(await labelFeatures(file, W * 64)).toEqual(whole);
    // Each band of 64 rows read once, with the row below it: which pieces cross into the next band.
    expect(Math.max(...reads)).toBe(64 + 1);
  });

  it('gives a label that ends and one that starts in the same band, after a label open above both, in order', async () => {
    // Label 9 on rows 0 and 11 (open through every band of 2 rows); 4 on rows 1–2, 3 on rows 3–4 (band 2–3 holds
    // the end of 4 and the start of 3), 2 a U from row 5 to 9, 6 a ring from row 6 around an island of its own.
    const W = 12, H = 12, data = new Uint16Array(W * H);
    fill(data, W, 0, 0, W, 1, 9); fill(data, W, 0, 11, W, 1, 9);
    fill(data, W, 1, 1, 3, 2, 4); fill(data, W, 5, 3, 2, 2, 3);
    fill(data, W, 0, 5, 1, 5, 2); fill(data, W, 3, 5, 1, 5, 2); fill(data, W, 0, 9, 4, 1, 2);
    fill(data, W, 6, 6, 5, 5, 6); fill(data, W, 7, 7, 3, 3, 0); fill(data, W, 8, 8, 1, 1, 6);
    const file = tiff(path.join(tmpDir('mask-labels-bands'), 'order.tif'), W, data);
    const whole = await labelFeatures(file);
    expect(whole.map((f) => (f as { id: number }).id)).toEqual([9, 4, 3, 2, 6]);
    for (const rows of [1, 2, 3, 5]) expect(await labelFeatures(file, rows * W * 2), `bands of ${rows} rows`).toEqual(whole);
  });

  it('stops at its next read of rows once the build is stopped (SIGINT, SIGTERM), in its first pass and in its bands', async () => {
    // 10 rows of cells, each label on every row of them: a first pass of 10 bands before the first feature.
    const W = 40, H = 100, data = new Uint16Array(W * H);
    for (let y = 0; y < H; y += 10) for (let x = 0; x < W; x += 8) fill(data, W, x + 2, y + 2, 4, 4, 1 + x / 8);
    const file = tiff(path.join(tmpDir('mask-labels-bands'), 'stop.tif'), W, data);
    for (const [mode, stopAt] of [['label', 3], ['label', 12], ['piece', 3]] as const) {
      const stop = new AbortController();
      reads.length = 0;
      afterRead = () => { if (reads.length === stopAt) stop.abort(); };
      const read = async () => { for await (const group of maskSource(file, 10 * W * 2).features({ maskFeatures: mode, signal: stop.signal })) expect(group.length).toBeGreaterThan(0); };
      await expect(read(), `${mode}, stopped at read ${stopAt}`).rejects.toThrow(new InterruptedError('build interrupted'));
      expect(reads, `${mode}, stopped at read ${stopAt}`).toHaveLength(stopAt);
    }
    afterRead = undefined;
  });
});
