// On --resume of a directory build: whether a finished unit's tiles are all still in OUT, so one that lost some is tiled again.
import fs from 'node:fs';
import path from 'node:path';
import type { UnitPlan } from '../stages/plan.js';
import { tilePath, type Dim } from '../tiling/space.js';
import { tileFileName } from '../tiling/tile-names.js';
import type { UnitMarker } from './unit-log.js';

/** Rows found in one column folder, per format, sorted. */
interface Column { json: number[]; pbf: number[] }

/**
 * Counts a unit's tiles in OUT by the cell they lie in, against what its marker says it wrote. Each column folder is
 * read once, whatever the number of units that look in it: a resume costs one listing of the pyramid.
 */
export class TileCensus {
  private readonly columns = new Map<string, Column>();

  constructor(private readonly root: string, private readonly dims: readonly Dim[]) {}

  /**
   * Where OUT holds fewer of the unit's tiles than its marker counts: "N of its M pbf tiles of zoom Z"; undefined when
   * none is missing. Zoom 0's JSON tiles are not counted: they are the overviews, which the build's end writes again.
   */
  short(unit: UnitPlan, marker: UnitMarker): string | undefined {
    for (const [zoom, counts] of Object.entries(marker.byZoom)) {
      const z = Number(zoom);
      const d = 2 ** (z - unit.cell.z);
      if (!Number.isInteger(d)) continue;
      const x0 = unit.cell.x * d, y0 = unit.cell.y * d;
      for (const f of ['json', 'pbf'] as const) {
        const want = counts[f].tiles;
        if (want === 0 || (z === 0 && f === 'json')) continue;
        let found = 0;
        for (let x = x0; x < x0 + d && found < want; x++) found += within(this.column(unit, z, x)[f], y0, y0 + d);
        if (found < want) return `${found} of its ${want} ${f} tiles of zoom ${z}`;
      }
    }
    return undefined;
  }

  private column(unit: UnitPlan, z: number, x: number): Column {
    const dir = path.dirname(tilePath(z, x, 0, unit.plane, this.dims, 'pbf'));
    let c = this.columns.get(dir);
    if (c !== undefined) return c;
    c = { json: [], pbf: [] };
    let names: string[] = [];
    // A folder that is gone holds none of the unit's tiles; one that cannot be read is the write's to report.
    try { names = fs.readdirSync(path.join(this.root, dir)); } catch { /* none */ }
    for (const n of names) {
      // By the name the build writes: a user's `07.pbf` is no tile, and must not stand in for a lost `7.pbf`.
      const file = tileFileName(n);
      if (file !== null) c[file.ext].push(file.y);
    }
    c.json.sort((a, b) => a - b);
    c.pbf.sort((a, b) => a - b);
    this.columns.set(dir, c);
    return c;
  }
}

/** How many of the sorted `rows` lie in [from, to). */
function within(rows: readonly number[], from: number, to: number): number {
  return lowerBound(rows, to) - lowerBound(rows, from);
}

function lowerBound(rows: readonly number[], v: number): number {
  let lo = 0, hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid] < v) lo = mid + 1; else hi = mid;
  }
  return lo;
}
