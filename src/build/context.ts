// What a build is given (inputs, the caller's sink, work directory and hooks) and what its steps share while it runs.
import type { FeatureSource, Source } from '../io/source.js';
import type { Removal, TileSink } from '../io/sink.js';
import type { WorkDir } from '../io/workdir.js';
import type { BuildConfig } from '../options.js';
import { InterruptedError } from '../report/errors.js';
import type { ProgressEvent } from '../report/types.js';
import type { Plane } from '../tiling/space.js';
import type { Pool } from '../worker/pool.js';
import type { PlanFile } from './state.js';

export interface InputSpec {
  /** JSON bytes, or features made in memory (a label mask's traced polygons). */
  source: Source | FeatureSource;
  /** Layer id (default: `--layer`, else the file name without extensions). */
  layer?: string;
  /** Plane dimensions fixed for the whole input. */
  plane?: Partial<Plane>;
  /** Size and modification time, when known: a resumed build checks that its inputs did not change. */
  fingerprint?: string;
}

export interface BuildIO {
  sink?: TileSink;
  /** Durable build state; default: OUT/.mudm-work on disk, or memory when a sink is given without OUT. */
  work?: WorkDir;
  onProgress?: (e: ProgressEvent) => void;
  /** Aborting stops the build between batches and units (SIGINT, SIGTERM); the work directory is kept for --resume. */
  signal?: AbortSignal;
  /** What --force removed of earlier builds (nothing else is ever removed), for the caller to say. */
  onRemoved?: (removal: Removal) => void;
}

/** A build from its plan on: what tiling the levels and describing the pyramid need. */
export interface RunContext {
  config: BuildConfig;
  planFile: PlanFile;
  sink: TileSink;
  work: WorkDir;
  pool: Pool;
  io: BuildIO;
  /** When the run started (performance.now()). */
  t0: number;
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError('build interrupted');
}

/**
 * Bytes of unit records held in memory before they spill: a fifth of the budget. The rest is for the workers'
 * units in flight (features decoded, tiles encoded) and the parse batches in the window.
 */
export function storeBudget(config: BuildConfig): number {
  return Math.floor(config.options.memoryBudget / 5);
}

export function secondsSince(t: number): number {
  return (performance.now() - t) / 1000;
}
