// Tile file names and paths read back: what tilePath writes, and nothing else.
import { describe, expect, it } from 'vitest';
import { tilePath, type Dim } from '../../src/tiling/space.js';
import { isTileNumber, tileFileName, tilePathParts, tileSegments } from '../../src/tiling/tile-names.js';

describe('tile names', () => {
  it('reads back every path tilePath writes, with or without plane folders', () => {
    const plane = { t: 1700000000, c: 0, z: 12 };
    for (const dims of [[], ['c'], ['t', 'c', 'z']] as Dim[][]) {
      for (const ext of ['json', 'pbf'] as const) {
        const p = tilePath(26, 67108863, 0, plane, dims, ext);
        expect(tilePathParts(p), p).toEqual({ z: 26, planes: dims.map((d) => plane[d]), x: 67108863, y: 0, ext });
      }
    }
  });

  it('takes a tile file name as the build writes it: its row without a leading zero, then json or pbf', () => {
    expect(tileFileName('0.json')).toEqual({ y: 0, ext: 'json' });
    expect(tileFileName('1073741823.pbf')).toEqual({ y: 1073741823, ext: 'pbf' });
    for (const n of ['07.pbf', '00.json', '7.png', '7.PBF', '7.pbf.tmp-0123abcd-1', '7', '.pbf', '-1.pbf', '7.json.gz', ' 7.pbf', 'x7.pbf']) {
      expect(tileFileName(n), n).toBeNull();
    }
  });

  it('refuses a path with a folder no build writes, or too few segments', () => {
    for (const p of ['2/01/3.pbf', '02/1/3.pbf', '2/1/x/3.pbf', '2/3.pbf', '3.pbf', '2//1/3.pbf', '2/1/3.pbf/', '/2/1/3.pbf', '2/1/03.pbf', '2/1/3.png']) {
      expect(tilePathParts(p), p).toBeNull();
    }
    expect(tileSegments(['2', '1', '3.pbf'])).toEqual({ z: 2, planes: [], x: 1, y: 3, ext: 'pbf' });
    expect(isTileNumber('0')).toBe(true);
    expect(['00', '01', '', '1.5', '+1', 'a'].filter(isTileNumber)).toEqual([]);
  });
});
