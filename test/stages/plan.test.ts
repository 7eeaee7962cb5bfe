// The plan stage: the world and zoom range, the levels, and the work units each level tiles.
import { describe, expect, it } from 'vitest';
import {
  beyondStored, COARSER_BYTES, COARSER_MIN_UNITS, FIRST_UPPER_BYTES, FIRST_UPPER_ZOOMS, firstUpperZooms, planBaseUnits, planBuild, planLevels, planUpperUnits, planWorld, sortPlanes,
  UNIT_BYTES,
} from '../../src/stages/plan.js';
import { resolveBuildConfig } from '../../src/options.js';
import { TileSketch } from '../../src/stages/thinning.js';
import { flatten, type TileGeometry } from '../../src/tiling/flat.js';
import type { Position } from '../../src/model/geometry.js';
import type { Dim } from '../../src/tiling/space.js';

describe('planWorld', () => {
  it('takes the world from the image size when given, whatever the data', () => {
    expect(planWorld({ imageSize: { width: 5000, height: 3000 }, bounds: [0, 0, 10, 10], minZoom: 0, cellSize: 2048 }))
      .toEqual({ world: { side: 8192, width: 5000, height: 3000 }, minZoom: 0, maxZoom: 4 });
  });

  it('takes it from the features\' bounds otherwise (rounded up), and a one-pixel world when there are none', () => {
    expect(planWorld({ bounds: [3, 4, 2011.2, 1341.5], minZoom: 0, cellSize: 2048 }))
      .toEqual({ world: { side: 2048, width: 2012, height: 1342 }, minZoom: 0, maxZoom: 2 });
    expect(planWorld({ bounds: null, minZoom: 0, cellSize: 2048 })).toEqual({ world: { side: 1, width: 1, height: 1 }, minZoom: 0, maxZoom: 0 });
    // With JSON tiles zoom 0 is the overview: the features get zoom 1 (a 300 x 200 label mask built to JSON had none).
    expect(planWorld({ bounds: [0, 0, 300, 200], minZoom: 0, cellSize: 2048, json: true }).maxZoom).toBe(1);
    expect(planWorld({ bounds: [0, 0, 300, 200], minZoom: 0, cellSize: 2048 }).maxZoom).toBe(0);
  });

  it('keeps a given finest zoom, and never puts the default finest zoom below the coarsest', () => {
    expect(planWorld({ bounds: [0, 0, 2048, 2048], minZoom: 0, maxZoom: 5, cellSize: 2048 }).maxZoom).toBe(5);
    expect(planWorld({ bounds: [0, 0, 2048, 2048], minZoom: 4, cellSize: 2048 }).maxZoom).toBe(4);
  });
});

describe('planLevels', () => {
  it('puts level-0 cells at about the unit size and one zoom per level above, down to the coarsest zoom', () => {
    // 8192 px world, 2048 px units: level-0 cells at zoom 2 tile zooms 2–4; then zoom 1, then zoom 0.
    expect(planLevels(8192, 0, 4, 2048)).toEqual([{ zoom: 2, topZoom: 4 }, { zoom: 1, topZoom: 1 }, { zoom: 0, topZoom: 0 }]);
    expect(planLevels(8192, 0, 4, 256)).toEqual([
      { zoom: 4, topZoom: 4 }, { zoom: 3, topZoom: 3 }, { zoom: 2, topZoom: 2 }, { zoom: 1, topZoom: 1 }, { zoom: 0, topZoom: 0 },
    ]);
  });

  it('lets the first level above level 0 tile several zooms, then one per level, never below the coarsest zoom', () => {
    // The real 100k-cell shape: 131,072 px world, zooms 0–8, three zooms in the first upper level.
    expect(planLevels(131072, 0, 8, 2048, 0, 3)).toEqual([
      { zoom: 6, topZoom: 8 }, { zoom: 3, topZoom: 5 }, { zoom: 2, topZoom: 2 }, { zoom: 1, topZoom: 1 }, { zoom: 0, topZoom: 0 },
    ]);
    expect(planLevels(8192, 0, 4, 256, 0, 2)).toEqual([{ zoom: 4, topZoom: 4 }, { zoom: 2, topZoom: 3 }, { zoom: 1, topZoom: 1 }, { zoom: 0, topZoom: 0 }]);
    expect(planLevels(8192, 1, 4, 256, 0, 3)).toEqual([{ zoom: 4, topZoom: 4 }, { zoom: 1, topZoom: 3 }]);
    expect(planLevels(8192, 0, 4, 2048, 0, 3)).toEqual([{ zoom: 2, topZoom: 4 }, { zoom: 0, topZoom: 1 }]);
  });

  it('never puts level-0 cells finer than the finest zoom, nor raises them to a finer coarsest zoom', () => {
    expect(planLevels(2048, 0, 2, 64)).toEqual([{ zoom: 2, topZoom: 2 }, { zoom: 1, topZoom: 1 }, { zoom: 0, topZoom: 0 }]);
    // --min-zoom 3 on an 8192 px world: cells stay at zoom 2 (2048 px), one level tiles zooms 3–4.
    expect(planLevels(8192, 3, 4, 2048)).toEqual([{ zoom: 2, topZoom: 4 }]);
    // A world smaller than a unit: one cell, zoom 0.
    expect(planLevels(1024, 0, 1, 2048)).toEqual([{ zoom: 0, topZoom: 1 }]);
  });
});

/** Each level-0 unit of a 2048 px world's zoom-1 cells (1024 px) with the store keys it reads. */
const sourcesOf = (keys: string[], cellSize: number) => planBaseUnits(keys, 2048, { zoom: 1, topZoom: 2 }, cellSize).map((u) => [u.key, u.sources]);

describe('planBaseUnits', () => {
  it('gathers the stored pixel cells each level-0 cell covers, units in key order', () => {
    // 512 px stored cells, level-0 cells of 1024 px (zoom 1 of a 2048 px world): each unit reads up to 4 stored cells.
    const keys = ['0/0/0/3/3', '0/0/0/0/0', '0/0/0/1/1', '0/0/0/2/0', '0/1/0/0/1'];
    const units = planBaseUnits(keys, 2048, { zoom: 1, topZoom: 2 }, 512);
    expect(sourcesOf(keys, 512)).toEqual([
      ['0/0/0/0/0', ['0/0/0/0/0', '0/0/0/1/1']],
      ['0/0/0/1/0', ['0/0/0/2/0']],
      ['0/0/0/1/1', ['0/0/0/3/3']],
      ['0/1/0/0/0', ['0/1/0/0/1']],
    ]);
    expect(units[3]).toEqual({ key: '0/1/0/0/0', level: 0, plane: { t: 0, c: 1, z: 0 }, cell: { z: 1, x: 0, y: 0 }, sources: ['0/1/0/0/1'] });
  });

  it('lets one stored cell feed every finer level-0 cell inside it, within the grid', () => {
    // A 2048 px stored cell in a 1024 px world covers all four zoom-1 cells (512 px), and no cell beyond the grid.
    const units = planBaseUnits(['2/0/1/0/0'], 1024, { zoom: 1, topZoom: 1 }, 2048);
    expect(units.map((u) => [u.key, u.cell, u.sources])).toEqual([
      ['2/0/1/0/0', { z: 1, x: 0, y: 0 }, ['2/0/1/0/0']],
      ['2/0/1/0/1', { z: 1, x: 0, y: 1 }, ['2/0/1/0/0']],
      ['2/0/1/1/0', { z: 1, x: 1, y: 0 }, ['2/0/1/0/0']],
      ['2/0/1/1/1', { z: 1, x: 1, y: 1 }, ['2/0/1/0/0']],
    ]);
  });
});

describe('objects on every channel (the EVERY_CHANNEL plane of the store)', () => {
  it('are read by a unit of every channel the other records name, at their own t and z, or of channel 0 alone when none does', () => {
    const keys = ['0/-1/0/0/0', '0/-1/1/1/0', '0/0/0/0/0', '0/2/0/1/1'];
    expect(sourcesOf(keys, 1024)).toEqual([
      ['0/0/0/0/0', ['0/-1/0/0/0', '0/0/0/0/0']], ['0/0/1/1/0', ['0/-1/1/1/0']],
      ['0/2/0/0/0', ['0/-1/0/0/0']], ['0/2/0/1/1', ['0/2/0/1/1']], ['0/2/1/1/0', ['0/-1/1/1/0']],
    ]);
    expect(planBaseUnits(keys, 2048, { zoom: 1, topZoom: 1 }, 1024).map((u) => u.plane.c)).toEqual([0, 0, 2, 2, 2]);
    // No channel named: the pyramid's one channel, as every other feature's.
    expect(sourcesOf(['0/-1/0/0/0', '0/0/0/1/0'], 1024)).toEqual([
      ['0/0/0/0/0', ['0/-1/0/0/0']],
      ['0/0/0/1/0', ['0/0/0/1/0']],
    ]);
  });

  it('make planes of every channel at their z, and count in each channel\'s tile estimates as if each channel held them', () => {
    const config = resolveBuildConfig({ out: 'o', tileBudget: 2048, maxZoom: 3 });
    const found = { bounds: [0, 0, 2000, 2000] as [number, number, number, number], dims: ['c', 'z'] as Dim[], stats: { cells: {} }, collection: {} };
    const ring = (x: number, y: number): Position[] => [[x, y], [x + 9, y], [x + 9, y + 9], [x, y + 9], [x, y]];
    const add = (s: TileSketch, plane: string, seq: number) => {
      const x = 40 + (seq % 40) * 45, y = 40 + Math.floor(seq / 40) * 45;
      s.add(plane, flatten({ type: 'Polygon', coordinates: [ring(x, y)] }) as TileGeometry, [x, y, x + 9, y + 9], { id: null, keys: ['n'], values: [seq] }, seq, 40, seq);
    };
    // 600 objects on every channel and 100 on channel 2, or the same 600 written into both channels' planes (each
    // channel's in a sketch of its own, so that each counts its values as new).
    const spread = new TileSketch('pbf'), copied = new TileSketch('pbf'), channel0 = new TileSketch('pbf'), channel2 = new TileSketch('pbf');
    for (let seq = 0; seq < 700; seq++) {
      add(spread, seq < 600 ? '0/-1/1/' : '0/2/1/', seq);
      if (seq < 600) add(channel0, '0/0/1/', seq);
      add(channel2, '0/2/1/', seq);
    }
    copied.merge(channel0.data());
    copied.merge(channel2.data());
    const keys = ['0/-1/1/0/0', '0/0/0/0/0', '0/2/1/0/0'];
    const a = planBuild(config, { ...found, sketch: spread }, keys), b = planBuild(config, { ...found, sketch: copied }, keys);
    expect(a.plan.planes).toEqual([{ t: 0, c: 0, z: 0 }, { t: 0, c: 0, z: 1 }, { t: 0, c: 2, z: 1 }]);
    expect(a.plan.thresholds[1][0]).toBeGreaterThan(0);
    expect(a.plan.thresholds).toEqual(b.plan.thresholds);
    expect(a.plan.spareFrom).toBe(b.plan.spareFrom);
  });
});

describe('planUpperUnits and sortPlanes', () => {
  it('makes one unit per stored key of a level above 0, reading its own key', () => {
    expect(planUpperUnits(['1/0/2/3/1'], 2, { zoom: 2, topZoom: 2 })).toEqual([
      { key: '1/0/2/3/1', level: 2, plane: { t: 1, c: 0, z: 2 }, cell: { z: 2, x: 3, y: 1 }, sources: ['1/0/2/3/1'] },
    ]);
  });

  it('orders planes by t, then c, then z', () => {
    const planes = [{ t: 1, c: 0, z: 0 }, { t: 0, c: 2, z: 1 }, { t: 0, c: 2, z: 0 }, { t: 0, c: 10, z: 0 }];
    expect(sortPlanes(planes)).toEqual([{ t: 0, c: 2, z: 0 }, { t: 0, c: 2, z: 1 }, { t: 0, c: 10, z: 0 }, { t: 1, c: 0, z: 0 }]);
  });
});

describe('planBuild: dense level-0 cells', () => {
  const found = { bounds: [0, 0, 8000, 8000] as [number, number, number, number], dims: [], stats: { cells: {} }, collection: {} };
  // An 8192 px world, zooms 0-4, 2048 px stored cells: level 0 at zoom 2, one unit per cell.
  const keys = ['0/0/0/0/0', '0/0/0/1/0'];
  const config = resolveBuildConfig({ out: 'o', memoryBudget: 64 << 20 });

  it('keeps units at the unit size while the heaviest holds at most UNIT_BYTES, whatever the budget', () => {
    const { plan, units } = planBuild(config, found, keys, () => UNIT_BYTES);
    expect(plan.levels[0].zoom).toBe(2);
    expect(units.map((u) => u.key)).toEqual(keys);
  });

  it('splits them a zoom finer per fourfold excess, each part reading its stored cell, never past the finest zoom', () => {
    const heavy = (k: string) => (k === '0/0/0/0/0' ? 5 * UNIT_BYTES : 0);
    const { plan, units } = planBuild(config, found, keys, heavy);
    // Five times the limit: two zooms finer (a sixteenth each).
    expect(plan.levels.map((l) => l.zoom)).toEqual([4, 3, 2, 1, 0]);
    expect(units).toHaveLength(32);
    expect(units.filter((u) => u.sources[0] === '0/0/0/0/0').map((u) => `${u.cell.x}/${u.cell.y}`)).toContain('3/3');
    expect(units.every((u) => u.sources.length === 1 && u.cell.z === 4)).toBe(true);
    expect(planBuild(config, found, keys, () => 1e12).plan.levels[0].zoom).toBe(4);
  });

  it('splits for the records narrower than a cell only: a finer unit would read one a cell wide whole', () => {
    // Five times the limit, of which a record a cell wide (class 2 of a class mask across the slide) takes 4.5.
    const heavy = (k: string) => (k === '0/0/0/0/0' ? 5 * UNIT_BYTES : 0);
    const wide = (k: string, side: number) => (k === '0/0/0/0/0' && side === 2048 ? 4.5 * UNIT_BYTES : 0);
    const { plan, units } = planBuild(config, found, keys, heavy, wide);
    expect(plan.levels[0].zoom).toBe(2);
    expect(units.map((u) => u.key)).toEqual(keys);
    // What is left is still over the limit, threefold: one zoom finer.
    const narrower = (k: string, side: number) => (k === '0/0/0/0/0' && side === 2048 ? 2 * UNIT_BYTES : 0);
    expect(planBuild(config, found, keys, heavy, narrower).plan.levels[0].zoom).toBe(3);
  });
});

describe('firstUpperZooms', () => {
  // 64 level-0 units at zoom 6 (an 8 × 8 block of cells), each holding `each` bytes.
  const units = planBaseUnits(
    Array.from({ length: 64 }, (_, i) => `0/0/0/${i % 8}/${Math.floor(i / 8)}`), 131072, { zoom: 6, topZoom: 8 }, 2048,
  );
  const zooms = (each: number) => firstUpperZooms(units, () => each);

  it(`takes up to ${FIRST_UPPER_ZOOMS} zooms while a cell of the coarsest covers at most FIRST_UPPER_BYTES, estimated by level 0`, () => {
    expect(FIRST_UPPER_ZOOMS).toBe(3);
    // Three zooms up, one cell holds all 64 units; two up, 16; one up, 4.
    expect(zooms(FIRST_UPPER_BYTES / 64)).toBe(3);
    expect(zooms(FIRST_UPPER_BYTES / 64 + 1)).toBe(2);
    expect(zooms(FIRST_UPPER_BYTES / 16)).toBe(2);
    expect(zooms(FIRST_UPPER_BYTES / 16 + 1)).toBe(1);
    expect(zooms(FIRST_UPPER_BYTES)).toBe(1);
  });

  it('counts cells apart per plane, and the heaviest cell decides', () => {
    const twoPlanes = [...units, ...units.map((u) => ({ ...u, plane: { t: 1, c: 0, z: 0 } }))];
    expect(firstUpperZooms(twoPlanes, () => FIRST_UPPER_BYTES / 64)).toBe(3);
    const oneHeavy = (bytes: number) => (u: { cell: { x: number; y: number } }) => (u.cell.x === 5 && u.cell.y === 2 ? bytes : 0);
    expect(firstUpperZooms(units, oneHeavy(FIRST_UPPER_BYTES))).toBe(3);
    expect(firstUpperZooms(units, oneHeavy(FIRST_UPPER_BYTES + 1))).toBe(1);
    // Two columns of units at a quarter each: an 8 × 8 block holds four times the limit, a 4 × 4 block twice.
    expect(firstUpperZooms(units, (u) => (u.cell.x < 2 ? FIRST_UPPER_BYTES / 4 : 0))).toBe(1);
  });

  it('gives a plan whose first upper level tiles those zooms', () => {
    const found = { bounds: [0, 0, 100000, 100000] as [number, number, number, number], dims: [], stats: { cells: {} }, collection: {} };
    const config = resolveBuildConfig({ out: 'o', memoryBudget: 64 << 20 });
    const keys = units.map((u) => u.key);
    expect(planBuild(config, found, keys, () => 1024).plan.levels.slice(0, 3)).toEqual([
      { zoom: 6, topZoom: 8 }, { zoom: 3, topZoom: 5 }, { zoom: 2, topZoom: 2 },
    ]);
    expect(planBuild(config, found, keys, () => UNIT_BYTES / 8).plan.levels.slice(0, 3)).toEqual([
      { zoom: 6, topZoom: 8 }, { zoom: 5, topZoom: 5 }, { zoom: 4, topZoom: 4 },
    ]);
  });
});

describe('level-0 cells for light and for heavy stored cells', () => {
  // A 100,000-px slide of 2,048-px stored cells: 49 × 49 of them, more than COARSER_MIN_UNITS.
  const keys = Array.from({ length: 49 * 49 }, (_, i) => `0/0/0/${i % 49}/${Math.floor(i / 49)}`);
  const found = { bounds: [0, 0, 100000, 100000] as [number, number, number, number], dims: [], stats: { cells: {} }, collection: {} };
  const config = resolveBuildConfig({ out: 'o', memoryBudget: 64 << 20 });

  it('gathers light cells by 2 × 2 when level 0 has many units, so a unit reads the four stored cells it covers', () => {
    expect(keys.length).toBeGreaterThanOrEqual(COARSER_MIN_UNITS);
    // Four cells of 128 KiB make a unit of COARSER_BYTES: gathered.
    const { plan, units } = planBuild(config, found, keys, () => COARSER_BYTES / 4);
    expect(plan.levels[0]).toEqual({ zoom: 5, topZoom: 8 });
    expect(units).toHaveLength(25 * 25);
    expect(units[0]).toMatchObject({ key: '0/0/0/0/0', cell: { z: 5, x: 0, y: 0 }, sources: ['0/0/0/0/0', '0/0/0/1/0', '0/0/0/0/1', '0/0/0/1/1'] });
    expect(beyondStored(plan.world.side, plan.levels[0].zoom, plan.cellSize)).toBe(false);
  });

  it('keeps cells apart when one gathered unit would be heavier than COARSER_BYTES, or level 0 has few units', () => {
    const oneHeavy = (k: string) => (k === '0/0/0/7/7' ? COARSER_BYTES / 4 + 1 : COARSER_BYTES / 4);
    expect(planBuild(config, found, keys, oneHeavy).plan.levels[0]).toEqual({ zoom: 6, topZoom: 8 });
    expect(planBuild(config, found, keys.slice(0, COARSER_MIN_UNITS - 1), () => 1024).plan.levels[0]).toEqual({ zoom: 6, topZoom: 8 });
  });

  it('gives units wider than their stored cells reach the stored cells around them (a coarse --max-zoom)', () => {
    // 256-px stored cells, units of zoom 1 in a 2,048-px world (1,024-px tiles, a 16-px buffer).
    const stored = ['0/0/0/3/0', '0/0/0/4/0', '0/0/0/7/0'];
    expect(beyondStored(2048, 1, 256)).toBe(true);
    expect(beyondStored(2048, 2, 256)).toBe(false);
    const units = planBaseUnits(stored, 2048, { zoom: 1, topZoom: 1 }, 256);
    // Cell 4 (1,024–1,280 px) lies within the buffer of unit 0 (0–1,024 px); cell 3 within that of unit 1; 7 is far.
    expect(units.map((u) => [u.key, u.sources])).toEqual([
      ['0/0/0/0/0', ['0/0/0/3/0', '0/0/0/4/0']],
      ['0/0/0/1/0', ['0/0/0/3/0', '0/0/0/4/0', '0/0/0/7/0']],
    ]);
  });
});

describe('planLevels with finer and coarser level-0 cells', () => {
  it('splits dense data finer in a world smaller than a cell, and never gathers below zoom 0', () => {
    expect(planLevels(1024, 0, 3, 2048, 1)).toEqual([{ zoom: 1, topZoom: 3 }, { zoom: 0, topZoom: 0 }]);
    expect(planLevels(512, 0, 3, 2048, 2)[0]).toEqual({ zoom: 2, topZoom: 3 });
    expect(planLevels(2048, 0, 3, 2048, -1)).toEqual([{ zoom: 0, topZoom: 3 }]);
    expect(planLevels(131072, 0, 8, 2048, -1)[0]).toEqual({ zoom: 5, topZoom: 8 });
  });
});

