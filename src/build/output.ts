// Where each step of a build writes: the caller's sink, a directory, or PMTiles archives (one file, or one per plane
// and format under a directory) whose parts grow in the work directory, one folder per step that writes tiles.
import path from 'node:path';
import { ArchiveSink } from '../archive/archive-sink.js';
import { DirectorySink, type OutputLayout, type TileSink } from '../io/sink.js';
import type { WorkDir } from '../io/workdir.js';
import type { ArchiveMode } from '../options.js';
import { UsageError } from '../report/errors.js';
import type { BuildPlan } from '../stages/plan.js';
import type { BuildIO } from './context.js';

/** The step of a build a sink serves: the whole build here, `plan`, one `build-shard`, `finalize`. */
export type Step = { kind: 'build' } | { kind: 'plan' } | { kind: 'shard'; shard: number } | { kind: 'finalize' };

/** Folder of the work directory holding the archive parts: `parts/build`, `parts/shard-I`, `parts/finalize`. */
const PARTS = 'parts';

export function layoutOf(plan: BuildPlan): OutputLayout {
  return { dims: plan.dims, planes: plan.planes, formats: plan.formats, maxZoom: plan.maxZoom };
}

/**
 * The sink of one step. Archives: each step writes its own parts; shards and finalize continue theirs when run
 * again; finalize merges every shard's parts with its own into the archives (tiles copied, never re-encoded).
 * `plan` is given when the step starts from a plan (shards, finalize); the whole build hands it to `begin`.
 */
export function outputSink(out: string | undefined, archive: ArchiveMode, work: WorkDir, io: BuildIO, step: Step, plan?: BuildPlan): TileSink {
  if (io.sink) return io.sink;
  if (out === undefined) throw new UsageError('no output given (-o DIR or -o FILE.pmtiles)');
  if (archive === 'none') return new DirectorySink(out);
  const root = work.root;
  if (root === undefined) throw new UsageError(`${out}: an archive output keeps its parts in a work directory on disk`);
  return new ArchiveSink({
    mode: archive, out,
    partsDir: path.join(root, PARTS, step.kind === 'shard' ? `shard-${step.shard}` : step.kind),
    resumeParts: step.kind === 'shard' || step.kind === 'finalize',
    mergeParts: step.kind === 'finalize' ? (name) => shardParts(work, root, name) : undefined,
    layout: plan && layoutOf(plan),
  });
}

/** The parts of an archive that the shards wrote. */
function shardParts(work: WorkDir, root: string, name: string): string[] {
  return work.list(PARTS).filter((d) => /^shard-\d+$/.test(d) && work.exists(`${PARTS}/${d}/${name}.part`)).map((d) => path.join(root, PARTS, d, `${name}.part`));
}
