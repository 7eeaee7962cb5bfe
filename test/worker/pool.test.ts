// runOrdered (results in submission order, a bounded window, failures) and what the worker protocol moves between threads.
import { describe, expect, it } from 'vitest';
import { Piscina } from 'piscina';
import { poolOptions, runOrdered } from '../../src/worker/pool.js';
import { parseTransfers, resultTransfers, transferable } from '../../src/worker/protocol.js';
import type { ParseResult, ParseTask } from '../../src/stages/parse.js';
import type { UnitResult } from '../../src/stages/unit.js';

/** A promise settled from outside, so a test decides in which order tasks finish. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void, reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('runOrdered', () => {
  it('hands results on in item order however the tasks finish, and runs every item once', async () => {
    const tasks = new Map<number, ReturnType<typeof deferred<string>>>();
    const consumed: Array<[string, number]> = [];
    const run = runOrdered([0, 1, 2, 3, 4, 5], 3, (i) => {
      const d = deferred<string>();
      tasks.set(i, d);
      return d.promise;
    }, (r, i) => { consumed.push([r, i]); });
    // Finish in reverse order, as far as the window lets tasks start.
    for (const order of [[2, 1, 0], [5, 4, 3]]) {
      await tick();
      for (const i of order) { tasks.get(i)?.resolve(`r${i}`); await tick(); }
    }
    await run;
    expect(consumed).toEqual([0, 1, 2, 3, 4, 5].map((i) => [`r${i}`, i]));
    expect([...tasks.keys()].sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('never has more than `window` tasks in flight, and pulls items from the producer only as the window frees', async () => {
    let inFlight = 0, most = 0, pulled = 0, consumedCount = 0;
    let pulledAhead = 0;
    async function* items() {
      for (let i = 0; i < 20; i++) {
        pulled++;
        pulledAhead = Math.max(pulledAhead, pulled - consumedCount);
        yield i;
      }
    }
    await runOrdered(items(), 4, async (i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Uneven durations: later items often finish first.
      await new Promise((r) => setTimeout(r, (i * 7) % 5));
      inFlight--;
      return i * 2;
    }, async (r, i) => {
      expect(r).toBe(i * 2);
      expect(i).toBe(consumedCount);
      consumedCount++;
      await tick();
    });
    expect(consumedCount).toBe(20);
    expect(most).toBeLessThanOrEqual(4);
    expect(most).toBeGreaterThan(1);
    expect(pulledAhead).toBeLessThanOrEqual(4);
  });

  it('with weights, starts a task only while those in flight and it weigh at most the maximum, one always', async () => {
    let load = 0, most = 0;
    const weight = (i: number) => (i === 2 ? 100 : 10);
    const out: number[] = [];
    await runOrdered([0, 1, 2, 3, 4, 5], 4, async (i) => {
      load += weight(i);
      most = Math.max(most, load);
      await new Promise((r) => setTimeout(r, 2));
      load -= weight(i);
      return i;
    }, (r) => { out.push(r); }, { of: weight, max: 30 });
    expect(out).toEqual([0, 1, 2, 3, 4, 5]);
    // The heavy task ran alone (over the maximum by itself); the others at most three at a time.
    expect(most).toBe(100);
  });

  it('consumes a task heavier than the maximum before it asks for the next item, those before it first', async () => {
    // What happened, in order: items asked for (a value batch's records were held while the next class was traced).
    const log: string[] = [];
    function* items(): Generator<number> {
      for (let i = 0; i < 6; i++) { log.push(`next ${i}`); yield i; }
    }
    const heavy = (i: number) => (i === 2 || i === 3 ? 1 : 0);
    await runOrdered(items(), 4, async (i) => {
      await new Promise((r) => setTimeout(r, 1));
      return i;
    }, (r) => { log.push(`consumed ${r}`); }, { of: heavy, max: 0 });
    expect(log.slice(0, 7)).toEqual(['next 0', 'next 1', 'next 2', 'consumed 0', 'consumed 1', 'consumed 2', 'next 3']);
    expect(log.slice(7, 9)).toEqual(['consumed 3', 'next 4']);
    expect(log.filter((e) => e.startsWith('consumed'))).toEqual([0, 1, 2, 3, 4, 5].map((i) => `consumed ${i}`));
  });

  it('with a window of 1 runs one task at a time', async () => {
    let inFlight = 0, most = 0;
    const out: number[] = [];
    await runOrdered([3, 1, 2], 1, async (i) => {
      inFlight++; most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, i));
      inFlight--;
      return i;
    }, (r) => { out.push(r); });
    expect(out).toEqual([3, 1, 2]);
    expect(most).toBe(1);
  });

  it('stops at a failed task: results before it are consumed, none after, and tasks in flight settle before it throws', async () => {
    const consumed: number[] = [];
    const settled: number[] = [];
    let started = 0;
    const run = runOrdered([0, 1, 2, 3, 4, 5, 6, 7], 3, async (i) => {
      started++;
      await new Promise((r) => setTimeout(r, i === 2 ? 1 : 10));
      settled.push(i);
      if (i === 2) throw new Error('task 2 failed');
      return i;
    }, (r) => { consumed.push(r); });
    await expect(run).rejects.toThrow('task 2 failed');
    expect(consumed).toEqual([0, 1]);
    // Everything started has settled by the time the error comes out: no task keeps running behind the caller's back.
    expect(settled.length).toBe(started);
    expect(started).toBeLessThan(8);
  });

  it('stops when consuming a result throws, after the tasks in flight settle', async () => {
    const settled: number[] = [];
    let started = 0;
    const run = runOrdered([0, 1, 2, 3, 4, 5], 2, async (i) => {
      started++;
      await tick();
      settled.push(i);
      return i;
    }, (r) => { if (r === 1) throw new Error(`cannot write ${r}`); });
    await expect(run).rejects.toThrow('cannot write 1');
    expect(settled.length).toBe(started);
    expect(started).toBeLessThan(6);
  });

  it('does nothing for no items', async () => {
    let calls = 0;
    await runOrdered([], 2, async () => { calls++; }, () => { calls++; });
    expect(calls).toBe(0);
  });
});

/** The very buffers expected, in order (toEqual would take any two empty-looking ArrayBuffers as equal). */
function expectSame(got: ArrayBufferLike[], want: ArrayBufferLike[]): void {
  expect(got.length).toBe(want.length);
  got.forEach((b, i) => expect(b).toBe(want[i]));
}

describe('worker protocol transfers', () => {
  it('moves only buffers a view owns whole, each once', () => {
    const own = new Uint8Array(8);
    const shared = new Uint8Array(new ArrayBuffer(16), 4, 8);
    const a = new Uint8Array(new ArrayBuffer(4));
    expectSame(transferable([own, shared, a, new Uint8Array(a.buffer), new Uint8Array(0)]), [own.buffer, a.buffer]);
  });

  it('moves a parse batch\'s bytes and positions to the worker, and unit records, tiles and next-level records back', () => {
    // The batch's text is a view of the buffer the reading thread filled for it: the whole buffer moves.
    const raw = { bytes: new Uint8Array(16).subarray(0, 10), meta: new Float64Array(5) };
    const task = { kind: 'parse', raw } as unknown as ParseTask;
    expectSame(parseTransfers(task), [raw.meta.buffer, raw.bytes.buffer]);
    const units: [string, Uint8Array][] = [['0/0/0/0/0', new Uint8Array(8)], ['0/0/0/1/0', new Uint8Array(16)]];
    const text = new Uint8Array(raw.bytes.buffer);
    expectSame(resultTransfers({ units } as unknown as ParseResult), units.map(([, b]) => b.buffer));
    expectSame(resultTransfers({ units, text } as unknown as ParseResult), [...units.map(([, b]) => b.buffer), text.buffer]);
    const tile = new Uint8Array(3), next = new Uint8Array(24);
    // A tile the worker wrote itself has no bytes left to move.
    const written = { path: '1/0/0.pbf', z: 1, size: 5, features: 1 };
    const unit = { tiles: [{ path: '0/0/0.pbf', z: 0, size: 3, bytes: tile, features: 1 }, written], next: [['0/0/0/0/0', next]] } as unknown as UnitResult;
    expectSame(resultTransfers({ kind: 'tiles', units: [unit] }), [tile.buffer, next.buffer]);
  });
});

describe('pool threads', () => {
  it('run with the larger young generation (V8 reports the limits each thread was started with)', async () => {
    const pool = new Piscina(poolOptions(2));
    try {
      await Promise.all(pool.threads.map((t) => new Promise((resolve) => t.once('message', resolve))));
      expect(pool.threads).toHaveLength(2);
      for (const t of pool.threads) expect(t.resourceLimits?.maxYoungGenerationSizeMb).toBe(96);
    } finally {
      await pool.destroy();
    }
  });
});
