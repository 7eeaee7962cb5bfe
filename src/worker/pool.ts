// Worker pool: piscina threads fed through a bounded window, results handed on in submission order (see protocol.ts).
import type { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ParseResult, ParseTask } from '../stages/parse.js';
import { parseTransfers, transferable, type TileBatch, type TileBatchResult } from './protocol.js';

/**
 * The worker entry as JavaScript: next to this file in dist/, or in dist/ when tests run the TypeScript sources (the
 * vitest global setup compiles dist/ first, so it is never older than the sources).
 */
function workerFile(): string {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../dist/worker/entry.js', here).href : new URL('./entry.js', here).href;
}

export interface Pool {
  parse(task: ParseTask): Promise<ParseResult>;
  /** `move`: bytes of the task that move to the worker rather than being copied (the caller must not use them again). */
  tile(batch: TileBatch, move?: Uint8Array[]): Promise<TileBatchResult>;
  close(): Promise<void>;
}

export function createPool(threads: number): Pool {
  const pool = new Piscina({ filename: workerFile(), minThreads: threads, maxThreads: threads, idleTimeout: 60_000 });
  // Ending a thread while it still loads its modules aborts the whole process (a V8 check in Node 20: "IsGraphAsync
  // must be used on an instantiated module"), which a build that fails at once would do: close waits for the load.
  const loaded = Promise.all(pool.threads.map(loadedOnce));
  return {
    // The batch's text moves to the worker (the reading thread made it for the worker alone).
    parse: (task) => pool.run(task, { transferList: parseTransfers(task) }) as Promise<ParseResult>,
    tile: (batch, move = []) => pool.run(batch, { transferList: transferable(move) }) as Promise<TileBatchResult>,
    close: async () => {
      await loaded;
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
 * Runs `work` over items with at most `window` tasks in flight, and calls `consume` with results strictly in item order,
 * so what is written never depends on which worker finishes first. The producer waits when the window is full.
 */
export async function runOrdered<T, R>(
  items: AsyncIterable<T> | Iterable<T>,
  window: number,
  work: (item: T) => Promise<R>,
  consume: (result: R, item: T) => Promise<void> | void,
): Promise<void> {
  const inFlight: Array<{ item: T; result: Promise<R> }> = [];
  const drainOne = async () => {
    const head = inFlight.shift() as { item: T; result: Promise<R> };
    await consume(await head.result, head.item);
  };
  try {
    for await (const item of items) {
      const result = work(item);
      // Attach a handler at once so a failure while we wait on an earlier task is not an unhandled rejection.
      result.catch(() => undefined);
      inFlight.push({ item, result });
      if (inFlight.length >= window) await drainOne();
    }
    while (inFlight.length) await drainOne();
  } finally {
    await Promise.allSettled(inFlight.map((t) => t.result));
  }
}
