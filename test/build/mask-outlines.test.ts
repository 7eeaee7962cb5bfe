// Label outlines held past a share of --memory-budget while a mask is read in bands: spilled, read back, the same features.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { spillRoot, workDirFor } from '../../src/build/state.js';
import { exitCodeFor } from '../../src/cli/exit.js';
import { maskSource } from '../../src/io/mask-source.js';
import { MemoryOutlines, OutlineFile, OUTLINES_DIR, OUTLINES_FILE } from '../../src/io/outline-spill.js';
import { MemorySink } from '../../src/io/sink.js';
import type { MadeOptions } from '../../src/io/source.js';
import type { Feature } from '../../src/model/feature.js';
import { resolveBuildConfig } from '../../src/options.js';
import type { Recurring } from '../../src/raster/strips.js';
import { EXIT_OUTPUT, OutputError } from '../../src/report/errors.js';
import { asGeoJSON } from '../helpers/mask-features.js';
import { tmpDir, withoutReport } from '../helpers/pyramid.js';
import { littleEndianTiff } from '../helpers/tiff.js';

/** 400² px, 16 bits, in 4 tiles of 200 px of 100 round cells each (radius 2, 20 px apart), numbered from 1 in each tile. */
const W = 400;
/** Bands of 20 rows: every label is open from its first tile row to its second, across ten bands. */
const BAND = 20 * W * 2;

function afreshMask(): string {
  const data = new Uint16Array(W * W);
  for (let t = 0; t < 4; t++) {
    for (let k = 0; k < 100; k++) {
      const cx = (t % 2) * 200 + (k % 10) * 20 + 10, cy = Math.floor(t / 2) * 200 + Math.floor(k / 10) * 20 + 10;
      for (let y = cy - 2; y <= cy + 2; y++) for (let x = cx - 2; x <= cx + 2; x++) if ((x - cx) ** 2 + (y - cy) ** 2 <= 4) data[y * W + x] = k + 1;
    }
  }
  // A label with a hole and an island in it, across both tile rows: its rings keep their order and their signs.
  for (let y = 96; y < 304; y++) for (let x = 196; x < 204; x++) data[y * W + x] = y >= 98 && y < 302 && x >= 198 && x < 202 ? (y === 150 ? 101 : 0) : 101;
  const file = path.join(tmpDir('mask-outlines'), 'afresh.tif');
  fs.writeFileSync(file, littleEndianTiff([[256, 4, W], [257, 4, W], [258, 3, 16], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, W], [279, 4, 2 * W * W], [339, 3, 1]], new Uint8Array(data.buffer)));
  return file;
}

async function features(file: string, bandBytes?: number, made: MadeOptions = {}): Promise<Feature[]> {
  const out: Feature[] = [];
  for await (const group of maskSource(file, bandBytes).features(made)) out.push(...group.map(asGeoJSON));
  return out;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('label outlines past the budget', () => {
  it('go to the spill and come back: the features of the mask read whole, the spill closed, the numbering told early', async () => {
    const file = afreshMask();
    const whole = await features(file);
    expect(whole).toHaveLength(101);
    expect(await features(file, BAND)).toEqual(whole);
    const twin = new MemoryOutlines();
    let opened = 0;
    const told: Recurring[] = [];
    const made: MadeOptions = { outlines: { bytes: 4096, open: () => { opened++; return twin; } }, onRecurring: (r) => told.push(r) };
    expect(await features(file, BAND, made)).toEqual(whole);
    // Every band's outlines of its 100 cells are past 4 KiB: spilled, once opened, closed once the mask was read. The
    // bands' pieces come in batches of whole rows (those behind label 101's open piece together), a part each.
    expect(opened).toBe(1);
    expect(twin.parts.length).toBeGreaterThanOrEqual(3);
    expect(twin.bytes).toBeGreaterThan(100 * 4 * 12);
    expect(twin.closed).toBe(true);
    // Told from the first pass, once ten labels came back: those of the first row of cells (rows 8–12), at row 208.
    expect(told).toEqual([{ labels: 10, first: { label: 1, top: 8, bottom: 12, again: 208 } }]);
    // A budget the outlines never pass opens no spill.
    const unused = new MemoryOutlines();
    expect(await features(file, BAND, { outlines: { bytes: 1 << 30, open: () => unused } })).toEqual(whole);
    expect(unused.parts).toEqual([]);
  });

  it('spill to a file in --tmp-dir in a build, which removes it and nothing else, the pyramid the same', async () => {
    const file = afreshMask();
    const build = async (options: { memoryBudget?: number; tmpDir?: string }) => {
      const sink = new MemorySink();
      const warnings: unknown[] = [];
      await buildPyramid([{ source: maskSource(file, BAND) }], { maxZoom: 2, workers: 1, maskFeatures: 'label', ...options }, { sink, onWarning: (_, d) => warnings.push(d) });
      return { sink, warnings: warnings.map((w) => (w as { event: string }).event).filter((e) => e !== 'pixel-size-default' && e !== 'memory-budget') };
    };
    const plain = await build({});
    const tmp = tmpDir('mask-outlines-tmp');
    fs.writeFileSync(path.join(tmp, 'keep.txt'), 'not the build\'s');
    const writes = vi.spyOn(OutlineFile.prototype, 'write');
    const spilled = await build({ memoryBudget: 64 * 1024, tmpDir: tmp });
    expect(writes.mock.calls.length).toBeGreaterThanOrEqual(3);
    expect(withoutReport(spilled.sink)).toEqual(withoutReport(plain.sink));
    // Warned of as the mask's rows were first read, and not again once it was read.
    expect(spilled.warnings).toEqual(['mask-recurring']);
    expect(plain.warnings).toEqual(['mask-recurring']);
    expect(fs.readdirSync(tmp)).toEqual(['keep.txt']);
  });

  it('left by a build killed while it read the mask are removed by the next build, spilling or not; nothing else is', async () => {
    const file = afreshMask();
    for (const memoryBudget of [64 * 1024, 512 * 1024 * 1024]) {
      const tmp = tmpDir('mask-outlines-stale');
      const o = resolveBuildConfig({ tmpDir: tmp }).options;
      const dir = path.join(spillRoot(o, workDirFor(o, undefined)), OUTLINES_DIR);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, OUTLINES_FILE), new Uint8Array(4096));
      await buildPyramid([{ source: maskSource(file, BAND) }], { maxZoom: 2, workers: 1, maskFeatures: 'label', memoryBudget, tmpDir: tmp }, { sink: new MemorySink() });
      expect(fs.readdirSync(tmp)).toEqual([]);
      // A file the build did not name is kept, and so are the folders holding it.
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
      await buildPyramid([{ source: maskSource(file, BAND) }], { maxZoom: 2, workers: 1, maskFeatures: 'label', memoryBudget, tmpDir: tmp }, { sink: new MemorySink() });
      expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
    }
  });

  it('that cannot be written stop the build, naming the file and --tmp-dir (exit 4)', async () => {
    const file = afreshMask();
    const tmp = tmpDir('mask-outlines-blocked');
    const o = resolveBuildConfig({ tmpDir: tmp }).options;
    const root = spillRoot(o, workDirFor(o, undefined));
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, OUTLINES_DIR), 'in the way');
    const error = await buildPyramid([{ source: maskSource(file, BAND) }], { maxZoom: 2, workers: 1, maskFeatures: 'label', memoryBudget: 64 * 1024, tmpDir: tmp }, { sink: new MemorySink() }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OutputError);
    expect(exitCodeFor(error)).toBe(EXIT_OUTPUT);
    expect((error as Error).message).toBe(`cannot write ${path.join(root, OUTLINES_DIR, OUTLINES_FILE)} (label outlines held past a tenth of --memory-budget while a mask is read; --tmp-dir sets where they go): a file is in the way of a directory`);
    // What was in the way is left as it was.
    expect(fs.readFileSync(path.join(root, OUTLINES_DIR), 'utf8')).toBe('in the way');
  });
});
