// The census of a resumed directory build: a finished unit's tiles counted in its cell against its marker.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TileCensus } from '../../src/build/census.js';
import type { UnitMarker } from '../../src/build/unit-log.js';
import type { UnitPlan } from '../../src/stages/plan.js';
import { removeTemps, tempDir } from '../e2e/helpers.js';

afterAll(removeTemps);

const plane = { t: 0, c: 1, z: 0 };
const unit: UnitPlan = { key: 'u', level: 0, plane, cell: { z: 1, x: 1, y: 0 }, sources: [] };
const count = (tiles: number) => ({ tiles, bytes: tiles * 10 });

function marker(byZoom: UnitMarker['byZoom']): UnitMarker {
  return { key: 'u', byZoom, largest: null, pointified: [], kept: [], offered: [], needs: [], unspare: -1, coarse: [], notInPbf: 0, next: [] };
}

function touch(root: string, rel: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), 'x');
}

describe('TileCensus', () => {
  it('counts only tiles inside the unit\'s cell, per zoom and format, in the plane\'s folders', () => {
    const root = tempDir('census');
    // Cell (1, 1, 0) holds x 2–3, y 0–1 at zoom 2.
    for (const rel of ['2/1/2/0.pbf', '2/1/3/1.pbf', '2/1/2/0.json', '1/1/1/0.pbf']) touch(root, rel);
    // Outside the cell, another plane, not tiles: none of them counts.
    for (const rel of ['2/1/2/2.pbf', '2/1/1/0.pbf', '2/0/2/1.pbf', '2/1/2/notes.pbf', '2/1/3/0.pbf.tmp-1']) touch(root, rel);
    const census = new TileCensus(root, ['c']);
    expect(census.short(unit, marker({ 1: { json: count(0), pbf: count(1), features: 1 }, 2: { json: count(1), pbf: count(2), features: 3 } }))).toBeUndefined();
    expect(census.short(unit, marker({ 2: { json: count(1), pbf: count(3), features: 3 } }))).toBe('2 of its 3 pbf tiles of zoom 2');
    expect(census.short(unit, marker({ 2: { json: count(2), pbf: count(0), features: 3 } }))).toBe('1 of its 2 json tiles of zoom 2');
    // A zoom whose folder is gone.
    expect(census.short(unit, marker({ 3: { json: count(0), pbf: count(4), features: 3 } }))).toBe('0 of its 4 pbf tiles of zoom 3');
  });

  it('counts a row by the name the build writes it under: a user\'s `07.pbf` is not the lost `7.pbf`', () => {
    // As `--force` (io/written.ts) and verify see it: `01.pbf` is no tile's name, so the unit is tiled again.
    const root = tempDir('census-zeros');
    for (const rel of ['2/1/2/0.pbf', '2/1/2/01.pbf']) touch(root, rel);
    const census = new TileCensus(root, ['c']);
    expect(census.short(unit, marker({ 2: { json: count(0), pbf: count(2), features: 2 } }))).toBe('1 of its 2 pbf tiles of zoom 2');
  });

  it('does not count zoom 0\'s JSON tiles: they are the overviews the build writes at its end', () => {
    const root = tempDir('census-0');
    const top: UnitPlan = { ...unit, cell: { z: 0, x: 0, y: 0 } };
    expect(new TileCensus(root, ['c']).short(top, marker({ 0: { json: count(1), pbf: count(0), features: 1 } }))).toBeUndefined();
    expect(new TileCensus(root, ['c']).short(top, marker({ 0: { json: count(1), pbf: count(1), features: 1 } }))).toBe('0 of its 1 pbf tiles of zoom 0');
  });
});
