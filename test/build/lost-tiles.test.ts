// finalize's check of the tiles shards wrote: counted per zoom, and the units short of tiles named with their shards.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { refuseLostTiles } from '../../src/build/output.js';
import type { UnitMarker } from '../../src/build/unit-log.js';
import { WorkStateError } from '../../src/report/errors.js';
import type { ZoomReport } from '../../src/report/types.js';
import type { UnitPlan } from '../../src/stages/plan.js';
import { tmpDir } from '../helpers/pyramid.js';

const count = (tiles: number) => ({ tiles, bytes: tiles });
const zoom = (pbf: number): ZoomReport => ({ tiles: pbf, bytes: pbf, json: count(0), pbf: count(pbf), features: 0, pointified: 0, thinned: 0 });

/** Four level-0 units of cells at zoom 1 over two channels (dims c, z), each holding the 4 tiles of zoom 2 of its cell. */
function pyramid(): { out: string; units: UnitPlan[]; markers: UnitMarker[] } {
  const out = tmpDir('mudm-lost');
  const units: UnitPlan[] = [];
  const markers: UnitMarker[] = [];
  for (const c of [0, 1]) {
    for (const [x, y] of [[0, 0], [1, 1]]) {
      const key = `0/${c}/0/${x}/${y}`;
      units.push({ key, level: 0, plane: { t: 0, c, z: 0 }, cell: { z: 1, x, y }, sources: [] });
      markers.push({ key, byZoom: { 2: { json: count(0), pbf: count(4), features: 4 } } } as unknown as UnitMarker);
      for (let tx = 2 * x; tx < 2 * x + 2; tx++) {
        for (let ty = 2 * y; ty < 2 * y + 2; ty++) {
          fs.mkdirSync(path.join(out, '2', String(c), '0', String(tx)), { recursive: true });
          fs.writeFileSync(path.join(out, '2', String(c), '0', String(tx), `${ty}.pbf`), 'x');
        }
      }
    }
  }
  return { out, units, markers };
}

describe('refuseLostTiles', () => {
  it('passes a pyramid holding every tile the markers count', () => {
    const { out, units, markers } = pyramid();
    expect(() => refuseLostTiles(out, { 2: zoom(16) }, { dims: ['c', 'z'], units, shards: 3, markers })).not.toThrow();
  });

  it('names the units whose cells lack tiles, in their plane, and the shards that tiled them', () => {
    const { out, units, markers } = pyramid();
    // Unit 3 (c 1, cell 1/1: shard 0 of 3) loses one tile; unit 1 (c 0, cell 1/1: shard 1) two.
    fs.rmSync(path.join(out, '2', '1', '0', '3', '2.pbf'));
    fs.rmSync(path.join(out, '2', '0', '0', '2', '3.pbf'));
    fs.rmSync(path.join(out, '2', '0', '0', '3', '3.pbf'));
    let error: unknown;
    try {
      refuseLostTiles(out, { 2: zoom(16) }, { dims: ['c', 'z'], units, shards: 3, markers });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(WorkStateError);
    expect((error as Error).message).toBe(
      `cannot finalize: ${out} holds 13 pbf tiles of zoom 2, where the units' markers count 16: tiles were lost between the steps`
      + " (a partial copy or merge of the shards' outputs); units short of tiles: 0/0/0/1/1 (shard 1: 2 of its 4 tiles here),"
      + ' 0/1/0/1/1 (shard 0: 3 of its 4 tiles here); shards 0, 1 of 3; bring the shards\' outputs whole, or plan --force and'
      + ' run the shards again',
    );
  });

  it('does not take a file no build writes for a lost tile: `02.pbf` is not `2.pbf`', () => {
    const p = pyramid();
    fs.renameSync(path.join(p.out, '2', '1', '0', '3', '2.pbf'), path.join(p.out, '2', '1', '0', '3', '02.pbf'));
    expect(() => refuseLostTiles(p.out, { 2: zoom(16) }, { dims: ['c', 'z'], units: p.units, shards: 3, markers: p.markers })).toThrow(
      `holds 15 pbf tiles of zoom 2, where the units' markers count 16: tiles were lost between the steps (a partial copy or merge of the shards' outputs); units short of tiles: 0/1/0/1/1 (shard 0: 3 of its 4 tiles here)`,
    );
  });

  it('refuses tiles cut short, or another build\'s among them, where the count alone would pass', () => {
    const plan = (p: ReturnType<typeof pyramid>) => ({ dims: ['c', 'z'] as ('c' | 'z')[], units: p.units, shards: 3, markers: p.markers });
    const cut = pyramid();
    fs.writeFileSync(path.join(cut.out, '2', '1', '0', '3', '2.pbf'), '');
    expect(() => refuseLostTiles(cut.out, { 2: zoom(16) }, plan(cut))).toThrow(
      `cannot finalize: ${cut.out} holds 16 pbf tiles of zoom 2 of 15 bytes, where the units' markers count 16 of 16 bytes: tiles were cut short or`
      + " replaced between the steps (a partial copy, or another build's files); bring the shards' outputs whole, or plan --force and run the shards again",
    );
    // A user's files under a zoom folder, not at a tile's place: not counted, the build's tiles pass.
    const notes = pyramid();
    fs.mkdirSync(path.join(notes.out, '2', 'notes'), { recursive: true });
    fs.writeFileSync(path.join(notes.out, '2', 'notes', '1.pbf'), 'x');
    fs.mkdirSync(path.join(notes.out, '2', '1', '0', 'old'), { recursive: true });
    fs.writeFileSync(path.join(notes.out, '2', '1', '0', 'old', '1.pbf'), 'x');
    expect(() => refuseLostTiles(notes.out, { 2: zoom(16) }, plan(notes))).not.toThrow();
    // Nor names no build writes (as --force and verify see them): a row or a folder with a leading zero.
    const zeros = pyramid();
    fs.writeFileSync(path.join(zeros.out, '2', '1', '0', '3', '01.pbf'), 'x');
    fs.mkdirSync(path.join(zeros.out, '2', '1', '00', '3'), { recursive: true });
    fs.writeFileSync(path.join(zeros.out, '2', '1', '00', '3', '1.pbf'), 'x');
    expect(() => refuseLostTiles(zeros.out, { 2: zoom(16) }, plan(zeros))).not.toThrow();
    const extra = pyramid();
    fs.writeFileSync(path.join(extra.out, '2', '1', '0', '3', '0.pbf'), 'x');
    expect(() => refuseLostTiles(extra.out, { 2: zoom(16) }, plan(extra))).toThrow(`holds 17 pbf tiles of zoom 2 of 17 bytes, where the units' markers count 16 of 16 bytes`);
  });
});

