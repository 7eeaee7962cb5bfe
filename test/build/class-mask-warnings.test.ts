// A class mask whose classes lie in specks far apart is not warned of as a mask numbered afresh in each tile; a mask
// numbered afresh is, and --mask-features auto (the default) reads it by its pieces.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { maskSource } from '../../src/io/mask-source.js';
import { MemorySink } from '../../src/io/sink.js';
import type { MaskFeatures } from '../../src/options.js';
import { tmpDir } from '../helpers/pyramid.js';
import { runCli } from '../e2e/helpers.js';
import { littleEndianTiff } from '../helpers/tiff.js';

const W = 800;
/** Bands of 50 rows: the specks' second row of them (rows 228–287) comes in the fifth and sixth bands. */
const BAND = 50 * W;

/**
 * 800² px, 8 bits: labels 2–13 each in 4 specks (discs of radius 2) 200 rows apart, as cells numbered 1–12 afresh in
 * each of 4 rows of tiles are; with `tissue`, label 1 too, a stripe 150 px wide down the whole mask, as the tissue
 * class of a class mask whose rarer classes are specks (mitoses, vessels, …) is.
 */
function specks(tissue: boolean): string {
  const data = new Uint8Array(W * W);
  if (tissue) for (let y = 0; y < W; y++) data.fill(1, y * W, y * W + 150);
  for (let c = 2; c <= 13; c++) {
    for (let j = 0; j < 4; j++) {
      const cx = 250 + 40 * (c - 2), cy = 20 + 200 * j + 5 * c;
      for (let y = cy - 2; y <= cy + 2; y++) for (let x = cx - 2; x <= cx + 2; x++) if ((x - cx) ** 2 + (y - cy) ** 2 <= 4) data[y * W + x] = c;
    }
  }
  const file = path.join(tmpDir('class-mask'), `${tissue ? 'classes' : 'specks'}.tif`);
  fs.writeFileSync(file, littleEndianTiff([[256, 4, W], [257, 4, W], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, W], [279, 4, W * W], [339, 3, 1]], data));
  return file;
}

/** The build's warnings and its tiles (but the run report, which names the options). */
async function built(file: string, bandBytes?: number, maskFeatures?: MaskFeatures): Promise<{ warnings: [string, unknown][]; tiles: Map<string, Uint8Array> }> {
  const warnings: [string, unknown][] = [];
  const sink = new MemorySink();
  await buildPyramid([{ source: maskSource(file, bandBytes) }], { maxZoom: 1, workers: 1, maskFeatures }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
  return { warnings, tiles: new Map([...sink.files].filter(([name]) => /\.(json|pbf)$/.test(name) && !name.includes('report'))) };
}

async function warningsOf(file: string, bandBytes?: number, maskFeatures: MaskFeatures = 'label'): Promise<[string, unknown][]> {
  return (await built(file, bandBytes, maskFeatures)).warnings;
}

describe('labels in specks far apart', () => {
  it('are warned of as a mask numbered afresh in each tile when they are all the mask holds, read whole or in bands (--mask-features label)', async () => {
    const file = specks(false);
    expect(await warningsOf(file)).toEqual([[
      `${file}: 12 of 12 labels are each in pieces far apart (label 2: 4 pieces across 5 × 605 px, 52 px in all): was the mask segmented tile by tile and numbered afresh in each? A label is one feature: one id and one hover card for all its pieces; build with --mask-features piece for a feature per piece (its label kept as a property), or number each object once across the mask (scikit-image: measure.label)`,
      { event: 'mask-scattered', file, labels: 12, of: 12, label: 2, pieces: 4, width: 5, height: 605, area: 52, readAs: 'label' },
    ]]);
    // In bands, from the first pass: label 2's first speck is rows 28–32, its second from row 228.
    expect(await warningsOf(file, BAND)).toEqual([[
      `${file}: labels recur far apart down the mask (label 2 in rows 28–32, again from row 228; 12 labels so far): was the mask segmented tile by tile and numbered afresh in each? A label is one feature: one id and one hover card for all its pieces, each held as outlines until its last row is read (spilled beyond a tenth of --memory-budget); build with --mask-features piece for a feature per piece (its label kept as a property), or number each object once across the mask (scikit-image: measure.label)`,
      { event: 'mask-recurring', file, labels: 12, label: 2, top: 28, bottom: 32, again: 228, readAs: 'label' },
    ]]);
  });

  it('make --mask-features auto (the default) read the mask by its pieces, the tiles those of --mask-features piece, read whole or in bands', async () => {
    const file = specks(false);
    const pieces = (await built(file, undefined, 'piece')).tiles;
    expect(pieces.size).toBeGreaterThan(0);
    const whole = await built(file);
    expect(whole.warnings).toEqual([[
      `${file}: 12 of 12 labels are each in pieces far apart (label 2: 4 pieces across 5 × 605 px, 52 px in all): was the mask segmented tile by tile and numbered afresh in each? It is read piece by piece (--mask-features auto): a feature per piece, its label kept as a property; --mask-features label makes each label one feature of all its pieces`,
      { event: 'mask-scattered', file, labels: 12, of: 12, label: 2, pieces: 4, width: 5, height: 605, area: 52, readAs: 'piece' },
    ]]);
    expect(whole.tiles).toEqual(pieces);
    // In bands, once the first pass is over: every label counted, not 'so far'.
    const banded = await built(file, BAND);
    expect(banded.warnings).toEqual([[
      `${file}: labels recur far apart down the mask (label 2 in rows 28–32, again from row 228; 12 labels): was the mask segmented tile by tile and numbered afresh in each? It is read piece by piece (--mask-features auto): a feature per piece, its label kept as a property; --mask-features label makes each label one feature of all its pieces`,
      { event: 'mask-recurring', file, labels: 12, label: 2, top: 28, bottom: 32, again: 228, readAs: 'piece' },
    ]]);
    expect(banded.tiles).toEqual(pieces);
    // By labels they are other tiles: 12 features of 4 specks each, not 48.
    expect((await built(file, undefined, 'label')).tiles).not.toEqual(pieces);
    // validate counts what the build makes.
    const v = await runCli(['validate', file]);
    expect([v.code, v.stdout.split('\n')[0]]).toEqual([0, `${file}: valid, label mask of 48 pieces, 0 errors, 0 warnings`]);
    expect((await runCli(['validate', file, '--mask-features', 'label'])).stdout.split('\n')[0]).toBe(`${file}: valid, label mask of 12 labels, 0 errors, 0 warnings`);
  });

  it('are not, in a class mask of a few values one of which lies in every row, read whole or in bands; auto reads its labels', async () => {
    const file = specks(true);
    expect(await warningsOf(file)).toEqual([]);
    expect(await warningsOf(file, BAND)).toEqual([]);
    const labels = (await built(file, undefined, 'label')).tiles;
    for (const bandBytes of [undefined, BAND]) {
      const auto = await built(file, bandBytes);
      expect(auto.warnings).toEqual([]);
      expect(auto.tiles).toEqual(labels);
    }
  });
});
