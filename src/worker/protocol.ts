// The worker protocol: what goes to a worker thread, what comes back, which bytes move rather than being copied, in what order.
import type { TileFormat } from '../io/sink.js';
import type { TileWriteFailure } from '../io/tile-files.js';
import type { ParseResult, ParseTask } from '../stages/parse.js';
import type { UnitPlan } from '../stages/plan.js';
import type { UnitSource } from '../stages/partition.js';
import type { TileSpec } from '../stages/tile/spec.js';
import type { TileTask, UnitResult } from '../stages/unit.js';
import type { Dim } from '../tiling/space.js';

/*
 * The message sequence of a build, main thread ⇄ piscina worker threads (worker/pool.ts ⇄ worker/entry.ts):
 *
 * 1. `createPool(threads)` starts `threads` workers, each loading entry.js once; they live until `close()`.
 * 2. Reading (plan): the main thread splits the inputs into batches of features. Per batch of JSON text, main →
 *    worker: a `ParseTask` (kind 'parse'), whose `raw.bytes` and `raw.meta` move (the reading thread made them for
 *    this worker alone: `parseTransfers`). The worker parses, validates, assigns planes and layers and encodes unit
 *    records (`parseBatch`); worker → main: a `ParseResult`, whose unit record buffers move back, and the batch's
 *    text buffer with them, for the reading thread to fill again (`resultTransfers`).
 *    Batches of values that were never text (traced masks, whole-file documents) are parsed on the main thread: a
 *    structured clone to a worker cost more than the work. Results are consumed in batch order (`runOrdered`).
 * 3. Tiling (every level, each shard): main → worker: a `TileBatch` (kind 'tiles'), several units of one level
 *    sharing one spec, each with its records as files to read or as chunks of bytes; chunks that leave the store
 *    move, chunks another unit still reads are copied (the pool's caller says which). The worker tiles each unit
 *    (`tileUnit`). With `writeTo` (a directory sink) it writes the tile files itself (`io/tile-files.ts`) and sends
 *    back only their sizes; otherwise the tile bytes move back. Worker → main: a `TileBatchResult`, one
 *    `UnitResult` per unit in the batch's order, whose tile bytes (when not written) and records for the level
 *    above move back (`resultTransfers`). A tile that could not be written is reported in `failed`, a record file
 *    cut short or missing in `unreadable`, not thrown (an error's class does not survive the trip). Results are
 *    consumed as batches finish, in any order: what a unit writes is a function of its records alone (build/levels.ts).
 * 4. A failure in a worker rejects that task's promise; the main thread stops submitting, waits for the tasks
 *    still in flight and throws. `close()` ends the workers.
 *
 * Nothing else crosses: a worker keeps no data from one task to the next (only scratch memory, its `RecordRouter`'s,
 * and the tile directories it has made).
 */

/** One unit of a tile batch: its plan, where its records are, and at level 0 with --preview its patch to paint. */
export interface BatchUnit { unit: UnitPlan; sources: UnitSource[]; preview?: TileTask['preview'] }

export interface TileBatch {
  kind: 'tiles';
  /** The level's spec; each unit's own cell is set in the worker. */
  spec: TileSpec;
  dims: Dim[];
  /** Cell zoom of the next level, when there is one. */
  next?: { zoom: number };
  units: BatchUnit[];
  /** Level-0 units smaller than the stored cells they read: each keeps only its part (see TileTask). */
  part?: boolean;
  /** Directory the worker writes tile files into (a directory sink's root); absent: tile bytes come back. */
  writeTo?: string;
  /** Formats whose tiles come back gzipped (`gzipTile`): the sink stores them so (TileSink.gzips). */
  gzip?: TileFormat[];
  /**
   * A full garbage collection once the batch is tiled, where the thread's heap in use is then this many bytes or more:
   * its units held HEAVY_BATCH bytes of records or more, and the thread, allocating little in its next units, would
   * carry their garbage into them (the caller allows it: BuildIO.collect).
   */
  collect?: number;
}

/**
 * Records of a batch from which its worker collects its garbage after it: four times the most a unit of cells holds
 * (UNIT_BYTES), so only a unit of features held whole across a slide (a class mask's classes) is followed by one.
 */
export const HEAVY_BATCH = 64 << 20;

/**
 * The heap in use after a heavy batch from which its thread collects: a unit of a class mask's classes whole leaves
 * 130–170 MB (live scratch and garbage alike), and collecting after each of the 20,000² px class mask's hundred such
 * units cost 4% more CPU for no lower peak; units of labels across a slide left 200–355 MB.
 */
export const COLLECT_HEAP = 192 << 20;

export interface TileBatchResult {
  kind: 'tiles';
  units: UnitResult[];
  /** The worker collected its garbage after the batch (TileBatch.collect). */
  collected?: boolean;
  /** The first tile that could not be written; the batch stops there. */
  failed?: TileWriteFailure;
  /** A unit's record file found cut short or missing (a WorkStateError in the worker, its class lost on the way); the batch stops there. */
  unreadable?: { path: string; message: string };
}

export type Task = ParseTask | TileBatch;
export type TaskResult = ParseResult | TileBatchResult;

/** The zoom-0 JSON tile of a plane is its overview descriptor, written by finalize (which draws the preview from it). */
export function isOverview(t: { z: number; path: string }): boolean {
  return t.z === 0 && t.path.endsWith('.json');
}

/**
 * The buffers behind `views` that can move between threads: a buffer shared by several views is listed once, and
 * only views that own their whole buffer qualify (pooled Node buffers hold other data too).
 */
export function transferable(views: Uint8Array[]): ArrayBuffer[] {
  const owned = views.filter((v) => v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && v.byteLength > 0);
  return [...new Set(owned.map((v) => v.buffer as ArrayBuffer))];
}

/**
 * What of a parse task moves to the worker: the positions of its features and the whole buffer its text is in, which
 * the reading thread filled for this batch alone (values are copied).
 */
export function parseTransfers(task: ParseTask): ArrayBuffer[] {
  return transferable([new Uint8Array(task.raw.meta.buffer), ...('bytes' in task.raw ? [new Uint8Array(task.raw.bytes.buffer)] : [])]);
}

/** What of a result moves back to the main thread: unit records; tile bytes not written, records for the level above, preview patches. */
export function resultTransfers(result: TaskResult): ArrayBuffer[] {
  if (!('kind' in result)) return transferable([...result.units.map(([, b]) => b), ...(result.text ? [result.text] : [])]);
  const views: Uint8Array[] = [];
  for (const u of result.units) {
    for (const t of u.tiles) if (t.bytes) views.push(t.bytes);
    for (const [, b] of u.next) views.push(b);
    if (u.preview) views.push(u.preview.rgba);
  }
  return transferable(views);
}

/** The worker threads as the build uses them (worker/pool.ts): declared here, apart from piscina, whose types a caller need not have. */
export interface Pool {
  parse(task: ParseTask): Promise<ParseResult>;
  /** `move`: bytes of the task that move to the worker rather than being copied (the caller must not use them again). */
  tile(batch: TileBatch, move?: Uint8Array[]): Promise<TileBatchResult>;
  close(): Promise<void>;
}
