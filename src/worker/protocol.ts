// The worker protocol: what goes to a worker thread, what comes back, which bytes move rather than being copied, in what order.
import type { ParseResult, ParseTask } from '../stages/parse.js';
import type { TileTask, UnitResult } from '../stages/unit.js';

/*
 * The message sequence of a build, main thread ⇄ piscina worker threads (worker/pool.ts ⇄ worker/entry.ts):
 *
 * 1. `createPool(threads)` starts `threads` workers, each loading entry.js once; they live until `close()`.
 * 2. Reading (plan): the main thread splits the inputs into batches of features. Per batch of JSON text, main →
 *    worker: a `ParseTask` (kind 'parse'), whose `raw.bytes` and `raw.meta` move (the reading thread made them for
 *    this worker alone: `parseTransfers`). The worker parses, validates, assigns planes and layers and encodes unit
 *    records (`parseBatch`); worker → main: a `ParseResult`, whose unit record buffers move back (`resultTransfers`).
 *    Batches of values that were never text (traced masks, whole-file documents) are parsed on the main thread: a
 *    structured clone to a worker cost more than the work.
 * 3. Tiling (each level, each shard): per unit, main → worker: a `TileTask` (kind 'tile'): the spec, the unit, and
 *    its records as files to read or as chunks of bytes; chunks that leave the store move, chunks another unit still
 *    reads are copied (the pool's caller says which). The worker tiles the unit (`tileUnit`); worker → main: a
 *    `UnitResult`, whose tile bytes and records for the level above move back (`resultTransfers`).
 * 4. Order: tasks run on any worker in any order, but the main thread consumes results strictly in submission order
 *    (`runOrdered`), with at most a window of tasks in flight, so what is written never depends on timing.
 * 5. A failure in a worker rejects that task's promise; when the main thread reaches it in order, it stops
 *    submitting, waits for the tasks still in flight and throws. `close()` ends the workers.
 *
 * Nothing else crosses: a worker holds no state from one task to the next.
 */

export type Task = ParseTask | TileTask;
export type TaskResult = ParseResult | UnitResult;

/**
 * The buffers behind `views` that can move between threads: a buffer shared by several views is listed once, and
 * only views that own their whole buffer qualify (pooled Node buffers hold other data too).
 */
export function transferable(views: Uint8Array[]): ArrayBuffer[] {
  const owned = views.filter((v) => v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && v.byteLength > 0);
  return [...new Set(owned.map((v) => v.buffer as ArrayBuffer))];
}

/** What of a parse task moves to the worker: the batch's text and the positions of its features (values are copied). */
export function parseTransfers(task: ParseTask): ArrayBuffer[] {
  return transferable([new Uint8Array(task.raw.meta.buffer), ...('bytes' in task.raw ? [task.raw.bytes] : [])]);
}

/** What of a result moves back to the main thread: unit records; tile bytes, records for the level above, a preview patch. */
export function resultTransfers(result: TaskResult): ArrayBuffer[] {
  if ('units' in result) return transferable(result.units.map(([, b]) => b));
  return transferable([...result.tiles.map((t) => t.bytes), ...result.next.map(([, b]) => b), ...(result.preview ? [result.preview.rgba] : [])]);
}
