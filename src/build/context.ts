// What a build is given (inputs, the caller's sink, work directory and hooks) and what its steps share while it runs.
import type { FeatureSource, Source } from '../io/source.js';
import type { ValueLimit } from '../io/read.js';
import type { Removal, TileSink } from '../io/sink.js';
import type { ProcessProbe, WorkDir } from '../io/workdir.js';
import { bytesText, type BuildConfig } from '../options.js';
import { budgetNeeded, MIB, processBytes, workersCarried } from '../memory.js';
import { InterruptedError } from '../report/errors.js';
import type { CodedFields } from '../report/coded.js';
import type { ProgressEvent } from '../report/types.js';
import type { Plane } from '../tiling/space.js';
import type { Pool } from '../worker/protocol.js';
import type { TileCensus } from './census.js';
import type { PlanFile } from './state.js';
import type { UnitLog } from './unit-log.js';

export interface InputSpec {
  /** JSON bytes, or features made in memory (a label mask's traced polygons). */
  source: Source | FeatureSource;
  /** Layer id (default: `--layer`, else the file name without extensions); an input's own wins over `--layer`. */
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
  /** What the user should know before the tiles are made (a world made huge by outliers), with its figures. */
  onWarning?: (message: string, fields: CodedFields) => void;
  /** What the user may want to know of a build that is not amiss (a file's default dpi, not taken for a pixel size). */
  onInfo?: (message: string, fields: CodedFields) => void;
  /** Aborting stops the build between batches and units (SIGINT, SIGTERM); the work directory is kept for --resume. */
  signal?: AbortSignal;
  /** What --force removed of earlier builds (nothing else is ever removed), for the caller to say. */
  onRemoved?: (removal: Removal) => void;
  /**
   * This process, and whether another runs: the work directory records its build's process, and --force or --resume
   * refuse one that another process still running on this machine works in. Without it, no such check.
   */
  processes?: ProcessProbe;
  /**
   * A full garbage collection on this thread, called once reading is done (its garbage would last the build); given,
   * the workers collect theirs after a heavy batch too (TileBatch.collect).
   */
  collect?: () => void;
}

/** A build from its plan on: what tiling the levels and describing the pyramid need. */
export interface RunContext {
  config: BuildConfig;
  planFile: PlanFile;
  sink: TileSink;
  work: WorkDir;
  /** The finished units' markers, in the work directory. */
  units: UnitLog;
  pool: Pool;
  io: BuildIO;
  /** When the run started (performance.now()). */
  t0: number;
  /** On --resume of a directory build: finished units that lost tiles from OUT since are tiled again. */
  census?: TileCensus;
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

/**
 * Bytes of label outlines a mask read in bands holds before they spill (`LabelGather`): a tenth of the budget. They
 * are held while the mask is read, beside level 0's records (a fifth) and before any unit is in flight (a tenth):
 * the three tenths `memory.ts` leaves the records.
 */
export function outlineBudget(config: BuildConfig): number {
  return Math.floor(config.options.memoryBudget / 10);
}

/**
 * Bytes of unit records in flight (handed to workers) at once: a tenth of the budget, as a unit takes a few times
 * its records while it is tiled. One unit always goes, however heavy (see UNIT_BYTES in stages/plan.ts).
 */
export function flightBudget(config: BuildConfig): number {
  return Math.floor(config.options.memoryBudget / 10);
}

/**
 * A budget the build cannot stay under with the workers it runs (given, or one when the budget carries none): what
 * it needs, said before the build starts, since the process and its workers are what the budget does not bound.
 */
export function memoryWarning(config: BuildConfig): { message: string; fields: CodedFields } | undefined {
  const { memoryBudget: budget, workers } = config.options;
  const needed = budgetNeeded(workers);
  if (budget >= needed) return undefined;
  const carried = workersCarried(budget);
  const about = (bytes: number) => `about ${Math.ceil(bytes / MIB)} MiB`;
  const fewer = workers === 1 ? '' : `, or fewer --workers (${carried > 0 ? `${bytesText(budget)} carries ${carried}` : `1 needs ${about(budgetNeeded(1))}`})`;
  const them = `${workers} worker${workers === 1 ? '' : 's'}`;
  return {
    message: `--memory-budget ${bytesText(budget)} is below what a build with ${them} may need, ${about(needed)}: Node and ${them} took up to `
      + `${about(processBytes(workers))} on a whole slide (less on a small input), with records up to 3/10 of the budget on top; give --memory-budget ${Math.ceil(needed / MIB)}M or more${fewer}`,
    fields: { event: 'memory-budget', budget, workers, needed, carried },
  };
}

/** One value (a feature, a whole document) may take at most this share of the budget as JSON text. */
const VALUE_SHARE = 20;
/** A budget too small to hold one ordinary feature (`--memory-budget 1` spills everything) still reads them. */
const VALUE_FLOOR = 1 << 20;

/**
 * The largest value a build reads: parsing, validating and tiling one takes about ten times its JSON text, beside
 * the batches and units in flight, so one feature cannot take the budget on its own. A larger one ends the read,
 * named (exit 1), before it is held whole: a gzip bomb of `[` stops after a twentieth of the budget.
 */
export function valueLimit(config: BuildConfig): ValueLimit {
  const budget = config.options.memoryBudget;
  const bytes = Math.max(VALUE_FLOOR, Math.floor(budget / VALUE_SHARE));
  // The budget as it was typed (40M, not 41943040), as the memory warning gives it.
  return { bytes, why: `the most one value may take with --memory-budget ${bytesText(budget)} (a ${VALUE_SHARE}th of it, at least ${bytesText(VALUE_FLOOR)}); raise --memory-budget to read it` };
}

export function secondsSince(t: number): number {
  return (performance.now() - t) / 1000;
}
