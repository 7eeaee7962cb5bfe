// Worker thread entry: runs one parse batch or one batch of tile units per call (see protocol.ts); result bytes go back by transfer, not copy.
import v8 from 'node:v8';
import { Piscina, transferableSymbol, valueSymbol } from 'piscina';
import { gzipTile } from '../archive/pmtiles-sink.js';
import type { TileFormat } from '../io/sink.js';
import { TileFiles } from '../io/tile-files.js';
import { WorkStateError } from '../report/errors.js';
import { parseBatch } from '../stages/parse.js';
import { RecordRouter } from '../stages/router.js';
import { cellSpecs } from '../stages/tile/spec.js';
import { TilerScratch } from '../stages/tile/tiler.js';
import { tileUnit, type UnitResult } from '../stages/unit.js';
import { fullCollection } from './collector.js';
import { isOverview, resultTransfers, type Task, type TaskResult, type TileBatch, type TileBatchResult } from './protocol.js';

/** `value` with the buffers listed moved to the caller. */
function moving(value: TaskResult, list: ArrayBuffer[]): ReturnType<typeof Piscina.move> {
  return Piscina.move({ get [transferableSymbol]() { return list; }, get [valueSymbol]() { return value; } } as never);
}

/**
 * Per pyramid root, the tile directories this thread made or found: a batch need not look for them again. A pool's
 * threads live for one build, so this lives no longer than the directories it names.
 */
const knownDirs = new Map<string, Set<string>>();

/** This thread's records on their way to their cells, and its tiler's buffers: scratch memory kept from task to task. */
const router = new RecordRouter();
const tiler = new TilerScratch();

function dirsOf(root: string): Set<string> {
  let dirs = knownDirs.get(root);
  if (dirs === undefined) knownDirs.set(root, (dirs = new Set()));
  return dirs;
}

/** Tiles each unit of the batch; with `writeTo`, writes its tiles (all but the overview, which finalize writes) and drops their bytes. */
function tileBatch(batch: TileBatch): TileBatchResult {
  const files = batch.writeTo === undefined ? undefined : new TileFiles(batch.writeTo, dirsOf(batch.writeTo));
  const res: TileBatchResult = { kind: 'tiles', units: [] };
  const specOf = cellSpecs(batch.spec);
  try {
    for (const { unit, sources, preview } of batch.units) {
      const r = tileUnit({ kind: 'tile', unit, sources, dims: batch.dims, next: batch.next, part: batch.part, preview, spec: specOf(unit.cell) }, router, tiler);
      res.units.push(r);
      if (files === undefined) {
        if (batch.gzip) gzipTiles(r.tiles, batch.gzip);
        continue;
      }
      for (const t of r.tiles) {
        if (t.bytes === undefined || isOverview(t)) continue;
        res.failed = files.write(t.path, t.bytes);
        if (res.failed) return res;
        t.bytes = undefined;
      }
    }
    return res;
  } catch (err) {
    // A record file cut short (unit.ts): said as data, as its class would not survive the trip (the CLI's exit 4).
    if (!(err instanceof WorkStateError)) throw err;
    res.unreadable = { path: err.path ?? '', message: err.message };
    return res;
  } finally {
    files?.close();
  }
}

/** Gzips the tiles of `formats` (all but overviews, which finalize writes): here, beside the tiling, not on the writing thread. */
function gzipTiles(tiles: UnitResult['tiles'], formats: readonly TileFormat[]): void {
  for (const t of tiles) {
    if (t.bytes === undefined || isOverview(t) || !formats.includes(t.path.endsWith('.pbf') ? 'pbf' : 'json')) continue;
    t.bytes = gzipTile(t.bytes);
    t.gzipped = true;
  }
}

/** This thread's full collection, found when a batch first asks for one (null: V8 gives none). */
let collector: (() => void) | null | undefined;

export default function run(task: Task): ReturnType<typeof Piscina.move> {
  if (task.kind === 'parse') {
    const parsed = parseBatch(task, router);
    return moving(parsed, resultTransfers(parsed));
  }
  const res = tileBatch(task);
  if (task.collect !== undefined && v8.getHeapStatistics().used_heap_size >= task.collect) {
    collector ??= fullCollection() ?? null;
    if (collector) { collector(); res.collected = true; }
  }
  return moving(res, resultTransfers(res));
}
