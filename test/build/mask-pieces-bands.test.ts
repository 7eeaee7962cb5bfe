// --mask-features piece read in bands: the features read whole, on random masks (fixed seed), reading no more rows than its pieces need.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { maskSource } from '../../src/io/mask-source.js';
import { mulberry32 } from '../../src/random.js';
import { tmpDir } from '../helpers/pyramid.js';
import { littleEndianTiff } from '../helpers/tiff.js';

/** The 4-connected pieces by first pixel in raster order, by flood fill: label, pixel count, number within the label. */
function floodPieces(data: ArrayLike<number>, width: number): Array<{ label: number; area: number; piece: number }> {
  const height = data.length / width, seen = new Uint8Array(data.length), within = new Map<number, number>();
  const out: Array<{ label: number; area: number; piece: number }> = [];
  for (let i = 0; i < data.length; i++) {
    if (data[i] === 0 || seen[i]) continue;
    const label = data[i], stack = [i];
    let area = 0;
    seen[i] = 1;
    while (stack.length) {
      const p = stack.pop() as number, x = p % width, y = (p - x) / width;
      area++;
      for (const [nx, ny] of [[x - 1, y], [x + 1, y], [x, y - 1], [x, y + 1]]) {
        const q = ny * width + nx;
        if (nx >= 0 && nx < width && ny >= 0 && ny < height && !seen[q] && data[q] === label) { seen[q] = 1; stack.push(q); }
      }
    }
    within.set(label, (within.get(label) ?? 0) + 1);
    out.push({ label, area, piece: within.get(label) as number });
  }
  return out;
}

/** A mask of a few labels painted as rectangles (tall and thin ones among them, to cross bands) and scattered pixels. */
function randomMask(next: () => number, bits: 8 | 16 | 32): { width: number; height: number; data: Uint8Array | Uint16Array | Uint32Array } {
  const pick = (n: number) => Math.floor(next() * n);
  const width = 1 + pick(14);
  const height = [1, 2, 1 + pick(40), 60 + pick(200)][pick(4)];
  const data = bits === 8 ? new Uint8Array(width * height) : bits === 16 ? new Uint16Array(width * height) : new Uint32Array(width * height);
  const top = bits === 8 ? 255 : bits === 16 ? 65535 : 0xffffffff;
  // Few labels, so that each has many pieces; in 32 bits, labels at and past 2^24 too (counted in a map).
  const palette = Array.from({ length: 1 + pick(3) }, () => (bits === 32 && next() < 0.5 ? (1 << 24) + pick(3) : next() < 0.3 ? top - pick(2) : 1 + pick(3)));
  const fill = (x0: number, y0: number, w: number, h: number, v: number) => {
    for (let y = y0; y < Math.min(height, y0 + h); y++) for (let x = x0; x < Math.min(width, x0 + w); x++) data[y * width + x] = v;
  };
  for (let k = pick(12); k > 0; k--) {
    const tall = next() < 0.5;
    fill(pick(width), pick(height), 1 + pick(tall ? 3 : width), 1 + pick(tall ? height : 8), next() < 0.2 ? 0 : palette[pick(palette.length)]);
  }
  for (let k = pick(width * height / 4); k > 0; k--) data[pick(width * height)] = next() < 0.3 ? 0 : palette[pick(palette.length)];
  // Last, whole: a snake down, up and down again, one pixel wide, which a band following it down from its top (reading
  // 64 rows past its own at first) finds only in part.
  if (width >= 5 && height > 100 && next() < 0.7) {
    const x = pick(width - 4), y0 = pick(height - 100), v = palette[pick(palette.length)];
    const down = y0 + 80 + pick(height - y0 - 80), up = y0 + 70 + pick(down - y0 - 69);
    fill(x, y0, 1, down - y0 + 1, v); fill(x, down, 3, 1, v); fill(x + 2, up, 1, down - up + 1, v);
    fill(x + 2, up, 3, 1, v); fill(x + 4, up, 1, height - up, v);
  }
  return { width, height, data };
}

/** The rows of each read of a mask, as the source asks for them: what a band holds at once. */
const reads: number[] = [];
vi.mock('../../src/io/mask.js', async (original) => (await import('../helpers/counted-reads.js')).countingReads(await original(), (rows) => reads.push(rows)));

/** A 16-bit mask `width` wide, as a single-strip TIFF. */
function tiff16(file: string, width: number, data: Uint16Array): string {
  const height = data.length / width;
  fs.writeFileSync(file, littleEndianTiff([[256, 4, width], [257, 4, height], [258, 3, 16], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, height], [279, 4, 2 * width * height], [339, 3, 1]], new Uint8Array(data.buffer)));
  return file;
}

describe('--mask-features piece in bands', () => {
  it('reads a tall cell of a label numbered afresh in each tile a band at a time, not down to its end or the label\'s last row', async () => {
    // Tiles of 64 px numbering their four cells 1–4; a cell of label 3 100 rows high starts 6 rows above the end of a
    // band of 128 rows (read 64 below it at first). Label 3 has cells down to the mask's last tile.
    const W = 512, H = 2048, data = new Uint16Array(W * H);
    const fill = (x0: number, y0: number, w: number, h: number, v: number) => { for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) data[y * W + x] = v; };
    for (let ty = 0; ty < H; ty += 64) for (let tx = 0; tx < W; tx += 64) for (let k = 0; k < 4; k++) fill(tx + 4 + 15 * k, ty + 10, 10, 20, k + 1);
    fill(301, 250, 3, 100, 3);
    const file = tiff16(path.join(tmpDir('mask-pieces-bands'), 'tiles.tif'), W, data);
    const ids: number[] = [];
    reads.length = 0;
    for await (const group of maskSource(file, W * 2 * 128).features({ maskFeatures: 'piece' })) for (const f of group) ids.push(JSON.parse(new TextDecoder().decode((f as { bytes: Uint8Array }).bytes)).id);
    expect(ids).toEqual(Array.from({ length: 4 * 8 * 32 + 1 }, (_, k) => k + 1));
    // The cell crosses the cut at row 256: stitched across it, each band of 128 rows read once with the row below
    // it; not down to the cell's last row (349), nor label 3's (1,981), the rest of the mask.
    expect(Math.max(...reads)).toBe(128 + 1);
  });


  it('gives, for random masks of 8, 16 and 32 bits and bands of 1 row up, the features read whole, in raster order', async () => {
    const next = mulberry32(75);
    const dir = tmpDir('mask-pieces-bands');
    for (let n = 0; n < 45; n++) {
      const bits = ([8, 16, 32] as const)[n % 3], bytes = bits / 8;
      const { width, height, data } = randomMask(next, bits);
      const file = path.join(dir, `${n}.tif`);
      fs.writeFileSync(file, littleEndianTiff([[256, 4, width], [257, 4, height], [258, 3, bits], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, height], [279, 4, bytes * width * height], [339, 3, 1]], new Uint8Array(data.buffer)));
      const texts = async (bandBytes?: number) => {
        const out: Array<{ id: number; properties: { label: number; piece: number; area: number } }> = [];
        for await (const group of maskSource(file, bandBytes).features({ maskFeatures: 'piece' })) {
          for (const f of group) out.push(JSON.parse(new TextDecoder().decode((f as { bytes: Uint8Array }).bytes)));
        }
        return out;
      };
      const whole = await texts();
      expect(whole.map((f) => ({ id: f.id, ...f.properties })), `mask ${n}`).toEqual(floodPieces(data, width).map((p, k) => ({ id: k + 1, label: p.label, area: p.area, piece: p.piece })));
      // Bands of 1 row, a few rows, and a byte count that is no whole number of rows.
      for (const bandBytes of [width * bytes, (1 + Math.floor(next() * 6)) * width * bytes, Math.floor(next() * height * width * bytes) + 1]) {
        expect(await texts(bandBytes), `mask ${n}, bands of ${bandBytes} bytes`).toEqual(whole);
      }
    }
  });
});
