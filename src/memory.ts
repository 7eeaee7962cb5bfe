// What a build's process takes beside the data --memory-budget bounds, as measured: the budget a number of workers
// needs, and how many workers a budget carries (the default of --workers, at most the cores).

export const MIB = 1024 ** 2;
/**
 * Node's main thread (reading, the plan, writing), and each worker thread (its isolate, its young generation of
 * worker/pool.ts, the batches it parses and the units it tiles) on a whole slide (a small input takes less): from the peaks of the
 * 100,000-cell slide with 1 to 5 workers and budgets from 128M to 1G (README *Memory*), every one of which stayed
 * within `budgetNeeded` of its workers, though runs differ by up to 70 MiB with when the threads collect garbage.
 */
const PROCESS_BYTES = 165 * MIB;
const WORKER_BYTES = 110 * MIB;
/**
 * The records a build holds in memory, in tenths of the budget: a fifth at level 0 and half as much for the levels
 * above (build/context.ts). The process and its workers must fit in the rest.
 */
const RECORD_TENTHS = 3;

/** What the process and `workers` workers take at the most (a whole slide), beside the records. */
export function processBytes(workers: number): number {
  return PROCESS_BYTES + workers * WORKER_BYTES;
}

/** The smallest budget a build with `workers` workers stays under: the process beside the records it holds. */
export function budgetNeeded(workers: number): number {
  return Math.ceil((processBytes(workers) * 10) / (10 - RECORD_TENTHS));
}

/** How many workers `budget` carries: the most for which `budgetNeeded` is within it (0: not even one). */
export function workersCarried(budget: number): number {
  return Math.max(0, Math.floor(((10 - RECORD_TENTHS) * budget - 10 * PROCESS_BYTES) / (10 * WORKER_BYTES)));
}

/** The default number of workers: the cores, but no more than the budget carries, and one at the least. */
export function defaultWorkers(cores: number, budget: number): number {
  return Number.isFinite(budget) ? Math.max(1, Math.min(cores, workersCarried(budget))) : cores;
}
