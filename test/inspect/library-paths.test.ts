// inspectPyramid and verifyPyramid read a path as a directory: an archive, or a folder of them, says how to read it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPyramid, inspectPyramid, InputError, memorySource, openPyramidReader, verifyPyramid } from '../../src/index.js';
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
