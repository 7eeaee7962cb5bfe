// A label mask read in bands of rows (src/raster/strips.ts, io/mask-source.ts) gives the features and tiles of one read whole.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { GROUP_VALUE_VERTICES, maskSource } from '../../src/io/mask-source.js';
import { readLabelMask } from '../../src/io/mask.js';
import { MemorySink } from '../../src/io/sink.js';
import { FeatureText } from '../../src/io/source.js';
import { labelFeature, labelsOf, labelsToFeatures } from '../../src/raster/features.js';
import { FeatureTextWriter } from '../../src/raster/feature-text.js';
import { traceLabelRings } from '../../src/raster/trace.js';
import { LabelRows } from '../../src/raster/strips.js';
import { mulberry32 } from '../../src/random.js';
import { littleEndianTiff } from '../helpers/tiff.js';
import { withoutReport } from '../helpers/pyramid.js';
import { asGeoJSON, featuresAsGeoJSON } from '../helpers/mask-features.js';

/** An uncompressed single-strip TIFF of 32-bit samples (sampleFormat 1: unsigned, 2: signed). */
function tiff32(width: number, height: number, data: Uint32Array | Int32Array, sampleFormat: 1 | 2 = 1): Buffer {
  return littleEndianTiff([
    [256, 4, width], [257, 4, height], [258, 3, 32], [259, 3, 1], [262, 3, 1], [273, 4, 0],
    [277, 3, 1], [278, 4, height], [279, 4, data.byteLength], [339, 3, sampleFormat],
  ], new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

/**
 * Cells as discs (some with holes) under labels drawn at random (small and 32-bit, a few given to two far-apart
 * discs), touching and overlapping; one tall label down the left edge reaching through many bands; a label of one
 * pixel on the last row.
 */
function instanceMask(seed: number, width: number, height: number): Uint32Array {
  const rnd = mulberry32(seed);
  const data = new Uint32Array(width * height);
  const labels: number[] = [];
  for (let k = 0; k < 40; k++) {
    const L = k % 7 === 3 && labels.length > 0 ? labels[Math.floor(rnd() * labels.length)] : rnd() < 0.3 ? 1 + Math.floor(rnd() * 4294967294) : 1 + Math.floor(rnd() * 500);
    labels.push(L);
    const cx = rnd() * width, cy = rnd() * height, r = 1.5 + rnd() * 7, hole = rnd() < 0.2;
    for (let y = Math.max(0, Math.floor(cy - r)); y < Math.min(height, cy + r); y++) {
      for (let x = Math.max(0, Math.floor(cx - r)); x < Math.min(width, cx + r); x++) {
        const d = Math.hypot(x + 0.5 - cx, y + 0.5 - cy);
        if (d < r && !(hole && d < r / 2)) data[y * width + x] = L;
      }
    }
  }
  for (let y = 3; y < height - 5; y++) data[y * width] = data[y * width + 1] = 999_999;
  data[(height - 1) * width + width - 1] = 7_777_777;
  return data;
}

/** The mask source's features, texts parsed as they come (their bytes are reused for the next group). */
async function featuresOf(path: string, bandBytes?: number): Promise<unknown[]> {
  return featuresAsGeoJSON(maskSource(path, bandBytes));
}

describe('label masks read in bands of rows', () => {
  let dir = '';
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'mudm-bands-')); });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  it('gives the features of the whole mask, in the same order, whatever the band height', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const width = 40 + seed * 7, height = 60 + seed * 11;
      const data = instanceMask(seed, width, height);
      const path = join(dir, `m${seed}.tif`);
      await writeFile(path, tiff32(width, height, data));
      const whole = await featuresOf(path);
      expect(whole).toEqual([...labelsToFeatures(await readLabelMask(path))]);
      expect(whole.length).toBeGreaterThan(20);
      for (const rows of [1, 2, 5, 13, 40]) expect(await featuresOf(path, rows * width * 4), `seed ${seed}, ${rows} rows a band`).toEqual(whole);
    }
  });

  it('writes each label as the text JSON.stringify gives its feature, byte for byte', () => {
    const width = 90, height = 70;
    const rings = traceLabelRings({ width, height, data: instanceMask(9, width, height) });
    const writer = new FeatureTextWriter();
    const utf8 = new TextDecoder();
    let multi = 0, holes = 0;
    for (const parts of labelsOf(rings)) {
      const f = labelFeature(rings, parts, 1_000_000_007);
      expect(utf8.decode(writer.write(rings, parts, 1_000_000_007))).toBe(JSON.stringify(f));
      if (parts.polygons.length > 1) multi++;
      if (parts.polygons.some((p) => p.length > 1)) holes++;
    }
    expect([multi > 0, holes > 0]).toEqual([true, true]);
  });

  it('finds the last row of every label, small and 32-bit, in rows added a few at a time', () => {
    const width = 4;
    const rows = (...lines: number[][]) => Uint32Array.from(lines.flat());
    const labels = new LabelRows();
    // Label 5 spans rows 0–4, label 2^30 rows 2–3, label 9 row 7 only.
    labels.add(rows([5, 0, 0, 0], [5, 0, 0, 0], [5, 0, 2 ** 30, 0]), width, 0);
    labels.add(rows([5, 0, 2 ** 30, 0], [5, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 9, 9, 0]), width, 3);
    expect([labels.lastRow(5), labels.lastRow(2 ** 30), labels.lastRow(9)]).toEqual([4, 3, 7]);
  });

  it('builds the same tiles from a mask read in bands as read whole', async () => {
    const width = 300, height = 260;
    const path = join(dir, 'build.tif');
    await writeFile(path, tiff32(width, height, instanceMask(11, width, height)));
    const build = async (bandBytes?: number) => {
      const sink = new MemorySink();
      await buildPyramid([{ source: maskSource(path, bandBytes) }], { maxZoom: 2, workers: 1 }, { sink });
      return withoutReport(sink);
    };
    const whole = await build();
    expect(whole.size).toBeGreaterThan(5);
    expect(await build(17 * width * 4)).toEqual(whole);
  });

  it('hands on labels given as values in groups of a bounded number of vertices, not 64 at a time', async () => {
    // 17 combs of 66,000 vertices each (values, not text): 1.1 million vertices, which went on in one group.
    const width = 33_000, combs = 17, height = 6 * combs;
    const data = new Uint8Array(width * height);
    for (let k = 0; k < combs; k++) {
      data.fill(k + 1, 6 * k * width, (6 * k + 1) * width);
      for (let y = 6 * k + 1; y < 6 * k + 5; y++) for (let x = 0; x < width; x += 2) data[y * width + x] = k + 1;
    }
    const path = join(dir, 'combs.tif');
    await writeFile(path, littleEndianTiff([
      [256, 4, width], [257, 4, height], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, height], [279, 4, data.byteLength],
    ], data));
    const labels: number[] = [];
    for await (const group of maskSource(path).features()) {
      let vertices = 0;
      for (const made of group) {
        if (made instanceof FeatureText) continue;
        const f = asGeoJSON(made);
        const g = f.geometry;
        const polygons = g?.type === 'Polygon' ? [g.coordinates] : g?.type === 'MultiPolygon' ? g.coordinates : [];
        expect(vertices, `group ending with label ${String(f.id)}`).toBeLessThan(GROUP_VALUE_VERTICES);
        for (const rings of polygons) for (const r of rings) vertices += r.length - 1;
        labels.push(Number(f.id));
      }
    }
    expect(labels).toEqual(Array.from({ length: combs }, (_, k) => k + 1));
  });

  it('names the pixel of a label that is no label at its row in the mask, not in the band', async () => {
    const width = 6, height = 30;
    const data = new Int32Array(width * height).fill(1);
    data[21 * width + 4] = -4;
    const path = join(dir, 'neg.tif');
    await writeFile(path, tiff32(width, height, data, 2));
    await expect(featuresOf(path, 5 * width * 4)).rejects.toThrow(`${path}: label value -4 at pixel (4, 21) is not a non-negative integer below 2^32`);
  });
});
