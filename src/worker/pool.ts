// Worker pool: piscina threads fed through a bounded window, results handed on in submission order (see protocol.ts).
import { setMaxListeners } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ParseResult, ParseTask } from '../stages/parse.js';
import { InterruptedError } from '../report/errors.js';
import { parseTransfers, transferable, type Pool, type TileBatch, type TileBatchResult } from './protocol.js';

/**
 * The worker entry as JavaScript: next to this file in dist/, or in dist/ when tests run the TypeScript sources (the
 * vitest global setup compiles dist/ first, so it is never older than the sources).
 */
function workerFile(): string {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../dist/worker/entry.js', here).href : new URL('./entry.js', here).href;
}

export type { Pool } from './protocol.js';

/**
 * A pool of `threads` workers. Aborting `signal` (SIGINT, SIGTERM) ends the tasks in flight at once, terminating
 * their threads, so a stop never waits for a long unit or batch: they reject with InterruptedError.
 */
/** How long `close` waits for threads still loading their modules. */
const LOAD_WAIT_MS = 5_000;
/**
 * Each thread's young generation (V8 keeps it at three semi-spaces): twice Node's default. A parse batch's JSON values
 * and a unit's tiling scratch then mostly die before a scavenge instead of being copied and promoted; 100,000 cells:
 * CPU time ×0.93, peak memory +90 MiB (README, *Eighth session*).
 */
const YOUNG_GENERATION_MB = 96;

/** The pool's threads: `threads` of them, all the time, each with the young generation above. */
export function poolOptions(threads: number): ConstructorParameters<typeof Piscina>[0] {
  return {
    filename: workerFile(), minThreads: threads, maxThreads: threads, idleTimeout: 60_000,
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  };
}

export function createPool(threads: number, signal?: AbortSignal): Pool {
  const pool = new Piscina(poolOptions(threads));
  // Each task in flight listens on the signal (a few per thread): Node's warning of a leak at 11 is not one here.
  if (signal) setMaxListeners(16 + 8 * threads, signal);
  const run = <R>(task: ParseTask | TileBatch, transferList: ArrayBuffer[]) => (pool.run(task, { transferList, signal }) as Promise<R>).catch((e: unknown) => {
    throw signal?.aborted ? new InterruptedError('build interrupted') : e;
  });
  // Ending a thread while it still loads its modules aborts the whole process (a V8 check in Node 20: "IsGraphAsync
  // must be used on an instantiated module"), which a build that fails at once would do: close waits for the load.
  const loaded = Promise.all(pool.threads.map(loadedOnce));
  return {
    // The batch's text moves to the worker (the reading thread made it for the worker alone).
    parse: (task) => run<ParseResult>(task, parseTransfers(task)),
    tile: (batch, move = []) => run<TileBatchResult>(batch, transferable(move)),
    close: async () => {
      // Bounded: a thread whose ready message never reaches us must not leave the process waiting on nothing (with no
      // timer alive Node ends with exit 13, an unsettled await); after the bound every thread has long loaded.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([loaded, new Promise<void>((resolve) => { timer = setTimeout(resolve, LOAD_WAIT_MS); })]);
      clearTimeout(timer);
      await pool.destroy();
    },
  };
}

/** Settles once the thread has loaded (its first message is piscina's "ready", sent after the handler loaded) or ended. */
function loadedOnce(thread: Worker): Promise<void> {
  return new Promise((resolve) => {
    thread.once('message', () => resolve());
    thread.once('exit', () => resolve());
  });
}

/**
 * What a task weighs (the bytes it holds) and how much may be in flight at once; one task always may, and one that
 * weighs more than `max` on its own goes alone: those before it are consumed first, and it before the next is asked for.
 */
export interface Weights<T> { of: (item: T) => number; max: number }

/**
 * Runs `work` over items with at most `window` tasks in flight, and calls `consume` with results strictly in item order,
 * so what is written never depends on which worker finishes first. The producer waits when the window is full, and
 * with `weights` also while the tasks in flight and the next weigh more than `weights.max` together; a task heavier than
 * that alone is consumed before the next item is asked for, so its result is not held while the producer makes more.
 */
export async function runOrdered<T, R>(
  items: AsyncIterable<T> | Iterable<T>,
  window: number,
  work: (item: T) => Promise<R>,
  consume: (result: R, item: T) => Promise<void> | void,
  weights?: Weights<T>,
): Promise<void> {
  const inFlight: Array<{ item: T; result: Promise<R>; weight: number }> = [];
  let load = 0;
  const drainOne = async () => {
    const head = inFlight.shift() as { item: T; result: Promise<R>; weight: number };
    load -= head.weight;
    await consume(await head.result, head.item);
  };
  try {
    for await (const item of items) {
      const weight = weights ? weights.of(item) : 0;
      while (weights && inFlight.length > 0 && load + weight > weights.max) await drainOne();
      const result = work(item);
      // Attach a handler at once so a failure while we wait on an earlier task is not an unhandled rejection.
      result.catch(() => undefined);
      inFlight.push({ item, result, weight });
      load += weight;
      if (inFlight.length >= window || (weights && weight > weights.max)) await drainOne();
    }
    while (inFlight.length) await drainOne();
  } finally {
    await Promise.allSettled(inFlight.map((t) => t.result));
  }
}
