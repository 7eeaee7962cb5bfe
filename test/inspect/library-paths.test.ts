// inspectPyramid and verifyPyramid read a path as a directory: an archive, or a folder of them, says how to read it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPyramid, inspectPyramid, InputError, memorySource, openPyramidReader, UsageError, verifyPyramid } from '../../src/index.js';
import { tmpDir } from '../helpers/pyramid.js';
import { BUILD_OPTIONS, collection } from './fixture.js';

const dir = tmpDir('mudm-library-paths');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a path to archives given to inspectPyramid and verifyPyramid', () => {
  it('is refused with the way to read it, and read whole through openPyramidReader', async () => {
    const file = path.join(dir, 'slide.pmtiles'), folder = path.join(dir, 'folder');
    await buildPyramid([{ source: memorySource('cells.json', collection()) }], { ...BUILD_OPTIONS, out: file });
    await buildPyramid([{ source: memorySource('cells.json', collection()) }], { ...BUILD_OPTIONS, out: folder, archive: 'pmtiles' });
    const advice = (p: string) => `read it through openPyramidReader(${JSON.stringify(p)}), whose reader this takes`;
    expect(() => inspectPyramid(file)).toThrow(InputError);
    expect(() => inspectPyramid(file)).toThrow(`${file} is a file, not a pyramid directory: for a PMTiles archive, ${advice(file)}`);
    expect(() => inspectPyramid(folder)).toThrow(`${folder} holds its tiles in PMTiles archives (--archive pmtiles): ${advice(folder)}`);
    const refused = verifyPyramid(folder);
    expect(refused.ok).toBe(false);
    expect(refused.problems.map((p) => p.message)).toEqual([`${folder} holds its tiles in PMTiles archives (--archive pmtiles): ${advice(folder)}`]);
    for (const p of [file, folder]) {
      const reader = await openPyramidReader(p);
      try {
        const result = verifyPyramid(reader);
        expect(result.ok, JSON.stringify(result.problems)).toBe(true);
        expect(result.checked.tiles).toBeGreaterThan(0);
        expect(inspectPyramid(reader).zooms.present.length).toBeGreaterThan(0);
      } finally {
        reader.close();
      }
    }
  });
});

describe('the options of inspectPyramid and verifyPyramid', () => {
  it('are checked as a build\'s are: by name, sizes as text too, values in range', async () => {
    const out = path.join(dir, 'options');
    await buildPyramid([{ source: memorySource('cells.json', collection()) }], { ...BUILD_OPTIONS, out });
    expect(() => verifyPyramid(out, { tilebudget: 100 } as never)).toThrow(new UsageError('unknown option "tilebudget" (did you mean tileBudget?)'));
    expect(() => verifyPyramid(out, { tileBudget: 'lots' })).toThrow('tileBudget takes a size in bytes (a number, or 1G, 512M, 500K), found "lots"');
    expect(() => verifyPyramid(out, { tileBudget: -1 })).toThrow('--tile-budget must be positive, found -1');
    expect(() => verifyPyramid(out, { maxPerCode: 1.5 })).toThrow('maxPerCode must be a whole number of at least 0, found 1.5');
    expect(() => inspectPyramid(out, { Top: 3 } as never)).toThrow('unknown option "Top" (did you mean top?)');
    expect(() => verifyPyramid(out, { tileBuget: 100 } as never)).toThrow(new UsageError('unknown option "tileBuget" (did you mean tileBudget?)'));
    expect(() => inspectPyramid(out, { top: '3' as never })).toThrow('top must be a whole number of at least 0, found "3"');
    // A budget as text is held as the number: 1 byte fails every coarse tile, as 1 does.
    const text = verifyPyramid(out, { tileBudget: '1B', maxPerCode: 0 });
    const number = verifyPyramid(out, { tileBudget: 1, maxPerCode: 0 });
    expect(text.ok).toBe(false);
    expect(text.counts).toEqual(number.counts);
    expect(text.problems).toEqual([]);
    expect(verifyPyramid(out, { tileBudget: null as never }).ok).toBe(true);
    expect(inspectPyramid(out, { top: 2 }).largest).toHaveLength(2);
    expect(inspectPyramid(out, { top: 0 }).largest).toEqual([]);
    expect(inspectPyramid(out, null).largest.length).toBeGreaterThan(2);
    expect(verifyPyramid(out, null).ok).toBe(true);
  });
});
