// Where each step of a build writes: the caller's sink, a directory, or PMTiles archives (one file, or one per plane
// and format under a directory) whose parts grow in the work directory, one folder per step that writes tiles.
import fs from 'node:fs';
import path from 'node:path';
import { besideArchive } from '../archive/archive-names.js';
import { ArchiveSink, MADE } from '../archive/archive-sink.js';
import { DirectorySink, type OutputLayout, type TileSink } from '../io/sink.js';
import { REMOVING_FILE, type WorkDir } from '../io/workdir.js';
import type { Removal } from '../io/written.js';
import { isArchiveFile, type ArchiveMode, type BuildConfig, type TileCompression } from '../options.js';
import { EXTENT, tileSize } from '../tiling/space.js';
import { tileSegments, type TilePathParts } from '../tiling/tile-names.js';
import { repairPart } from '../archive/pmtiles-part.js';
import { DataError, InputError, RemovalError, StateUsageError, UsageError, WorkStateError, describeFsError } from '../report/errors.js';
import type { BuildReport, ZoomReport } from '../report/types.js';
import type { BuildPlan, UnitPlan } from '../stages/plan.js';
import type { BuildIO } from './context.js';
import { TileCensus } from './census.js';
import type { UnitLog, UnitMarker } from './unit-log.js';
import { nothingFor, shardedInstead } from './not-planned.js';
import { ofOtherPlan, partsProblem, type ShardMarker } from './state.js';

/** The step of a build a sink serves: the whole build here, `plan`, one `build-shard`, `finalize`. */
export type Step = { kind: 'build' } | { kind: 'plan' } | { kind: 'shard'; shard: number } | { kind: 'finalize' };

/** Folder of the work directory holding the archive parts: `parts/build`, `parts/shard-I`, `parts/finalize`. */
const PARTS = 'parts';

export function layoutOf(plan: BuildPlan): OutputLayout {
  return { dims: plan.dims, planes: plan.planes, formats: plan.formats, maxZoom: plan.maxZoom };
}

/**
 * Opens the output for tiles (`sink.begin`). A --force build marks its removal of what earlier builds wrote in the
 * work directory from its start (pipeline.ts `startOver`) until the removal is done: resumed as it was, a build killed
 * before that would take the earlier build's folders for its own and keep their tiles beside its descriptor; it
 * removes them first. Shards refuse to start (`loadPlan`).
 */
export async function beginOutput(sink: TileSink, work: WorkDir, run: OutputRun, layout: OutputLayout): Promise<Removal | void> {
  const unfinished = work.exists(REMOVING_FILE);
  let removal: Removal | void;
  try {
    removal = await sink.begin({ force: run.force || unfinished, resume: run.resume && !unfinished, layout });
  } catch (err) {
    // Of a resumed build, only the removal it finishes is said so: a temporary file it cannot remove is a failed write.
    throw err instanceof RemovalError && (!run.resume || unfinished) ? removalStopped(err, work, run) : err;
  }
  work.removeFolder(REMOVING_FILE);
  return removal;
}

/** What a step opening its output was given: its command, its output, and whether it replaces or continues one there. */
export interface OutputRun { force: boolean; resume: boolean; command: 'build' | 'plan'; out?: string }

/**
 * A --force removal that stopped at a path it could not remove, as the user goes on from it: what it removed stays
 * removed and nothing else was touched. A plan's work directory goes (its records are read anew), so plan --force
 * runs again once the path can go, removing the rest of what the record lists. A build's is kept, marked as removing
 * (failed.ts `failedBuild`), as a build killed then leaves it: --resume finishes the removal, then builds, and a plain
 * build or a step of a sharded one run there says what happened; --force again starts over. A --resume finishing
 * such a removal (`run.resume`) keeps it so too, and says to run it again. Nothing else is removed.
 */
function removalStopped(err: RemovalError, work: WorkDir, run: OutputRun): RemovalError {
  const out = run.out ?? 'the output';
  const who = `${run.command} ${run.resume ? '--resume' : '--force'}`;
  const done = err.removed > 0
    ? `${who} removed ${err.removed} file(s) of what earlier builds wrote in ${out} before it (that pyramid is no longer whole), and touched nothing else`
    : `${who} removed nothing in ${out}`;
  const once = `once ${err.path} can be removed (or is moved away)`;
  const next = run.command === 'build'
    ? `its state is kept in ${work.root ?? 'the work directory'}: ${once}, run mudm-tiles build INPUT... -o ${out} --resume${run.resume ? ' again' : ', with the same inputs and options,'} to continue it: it removes the rest of what earlier builds wrote, then builds (build --force again starts over)`
    : `${once}, run mudm-tiles plan INPUT... -o ${out} --shards N --force again: it removes the rest of what earlier builds wrote, then plans`;
  return new RemovalError(`${err.message}. ${done}; ${next}`, err.path as string, err.errno, err.removed, true);
}

/**
 * The sink of one step. Archives: each step writes its own parts; shards and finalize continue theirs when run
 * again; finalize merges every shard's parts with its own into the archives (tiles copied, never re-encoded).
 * `plan` is given when the step starts from a plan (shards, finalize); the whole build hands it to `begin`.
 */
export function outputSink(out: string | undefined, archive: ArchiveMode, compression: TileCompression, work: WorkDir, io: BuildIO, step: Step, plan?: BuildPlan): TileSink {
  // A caller's sink takes the tiles as a directory lays them out; the descriptor of archives would list files it never got.
  if (io.sink && archive !== 'none') throw new UsageError(`archives (${archive === 'file' ? `out: ${out}` : 'archive: pmtiles'}) are written to disk, not into a caller's sink: give one or the other`);
  if (io.sink) return io.sink;
  if (out === undefined) throw new UsageError('no output given (-o DIR or -o FILE.pmtiles)');
  if (archive === 'none') return new DirectorySink(out);
  const root = work.root;
  if (root === undefined) throw new UsageError(`${out}: an archive output keeps its parts in a work directory on disk`);
  return new ArchiveSink({
    mode: archive, out, compression,
    partsDir: path.join(root, partsFolder(step)),
    resumeParts: step.kind === 'shard' || step.kind === 'finalize',
    mergeParts: step.kind === 'finalize' ? (name) => shardParts(work, root, name) : undefined,
    layout: plan && layoutOf(plan),
  });
}

/** Where a step's parts grow, in the work directory. */
function partsFolder(step: Step): string {
  return `${PARTS}/${step.kind === 'shard' ? `shard-${step.shard}` : step.kind}`;
}

/** The folder of a shard's parts (`shard-I`), its index captured. */
const SHARD_FOLDER = /^shard-(\d+)$/;

/** The file names of the archive parts a step has written so far. */
function partNames(work: WorkDir, step: Step): string[] {
  return work.list(partsFolder(step)).filter((n) => n.endsWith('.part'));
}

/** The archive parts a step has written so far: their file names and sizes in bytes. */
export function partsOf(work: WorkDir, step: Step): Map<string, number> {
  return new Map(partNames(work, step).map((n) => [n, work.size(`${partsFolder(step)}/${n}`) ?? 0]));
}

/** Whether a step has written parts: a `build`'s and shards' tiles of one work directory cannot be assembled together. */
export function hasParts(work: WorkDir, kind: 'build' | 'shard'): boolean {
  return work.list(PARTS).some((d) => (kind === 'build' ? d === 'build' : SHARD_FOLDER.test(d)));
}

/** The parts of an archive that the shards wrote. */
function shardParts(work: WorkDir, root: string, name: string): string[] {
  return work.list(PARTS).filter((d) => SHARD_FOLDER.test(d) && work.exists(`${PARTS}/${d}/${name}.part`)).map((d) => path.join(root, PARTS, d, `${name}.part`));
}

/** A `build` interrupted into archives keeps its tiles in its own parts, which shards and finalize do not assemble. */
export function refuseBuildParts(work: WorkDir, command: string): void {
  if (!hasParts(work, 'build')) return;
  throw new WorkStateError(`${command}: ${work.root ?? 'the work directory'} holds the archive parts of an interrupted build: continue it with build --resume, or start over with plan --force`, work.root);
}

/**
 * An error reading a shard's part at assembly (cut short or damaged since the shard finished), as a work-state error
 * saying how to get out of it; any other error as it is.
 */
export function shardPartError(err: unknown, work: WorkDir): unknown {
  const file = err instanceof InputError ? err.file : err instanceof WorkStateError ? err.path : undefined;
  if (file === undefined || work.root === undefined) return err;
  const m = SHARD_FOLDER.exec(path.basename(path.dirname(file)));
  if (!m || path.dirname(path.dirname(file)) !== path.join(work.root, PARTS)) return err;
  return new WorkStateError(`${(err as Error).message}: run build-shard --shard ${m[1]} again (it drops a record cut short at the end, or tiles anew the units whose tiles were lost), then finalize`, file);
}

/**
 * A shard run again whose parts were lost or damaged since (cut short below what it had flushed, removed, copied
 * short between workflow steps), or whose marker is another plan's (copied in): its units' markers no longer stand
 * for their tiles, so they are forgotten and the shard tiles them anew. A record a kill cut short at a part's end is
 * only dropped, as a resumed part drops it: the units marked done keep their tiles.
 */
export function healShardParts(work: WorkDir, step: Step & { kind: 'shard' }, units: readonly UnitPlan[], log: UnitLog, planId: string | undefined, io: BuildIO): void {
  const marker = work.readJson<ShardMarker>(`shards/${step.shard}.json`);
  let why = ofOtherPlan(marker, planId) ? 'its marker is of another plan' : undefined;
  // Repaired first: a record a kill cut short at the end goes, and the part is then the size the shard finished it.
  why ??= damagedPart(work, step);
  why ??= partsProblem(marker, partsOf(work, step));
  if (why === undefined) return;
  forgetParts(work, step, log, units.filter((u) => log.has(0, u.key)).map((u) => [0, u.key]));
  io.onWarning?.(`shard ${step.shard}: its archive parts were damaged (${why}): its ${units.length} unit(s) are tiled again`, { event: 'shard-parts-damaged', shard: step.shard, reason: why });
}

/**
 * A build resumed whose parts lost records it had flushed (a crash or power loss after units were marked done, before
 * the part's end reached the disk; a part damaged since): every finished unit is forgotten and tiled anew from the
 * records the resumed build reads again, rather than the build refused. A record a kill cut short at the end is
 * only dropped.
 */
export function healBuildParts(work: WorkDir, log: UnitLog, io: BuildIO): void {
  const step: Step = { kind: 'build' };
  const why = damagedPart(work, step);
  if (why === undefined) return;
  const done = log.finished();
  forgetParts(work, step, log, done);
  io.onWarning?.(`--resume: the archive parts were damaged (${why}): the ${done.length} finished unit(s) are tiled again`, { event: 'build-parts-damaged', reason: why });
}

/**
 * Damaged parts go, and the units whose tiles were in them (`done`) are forgotten, to be tiled anew; so does a
 * shard's marker, whose part sizes would otherwise condemn the parts of an attempt stopped before it ends.
 */
function forgetParts(work: WorkDir, step: Step, log: UnitLog, done: [number, string][]): void {
  log.remove(done);
  work.removeFolder(partsFolder(step));
  if (step.kind === 'shard') work.removeFolder(`shards/${step.shard}.json`);
}

/** Why one of a step's parts cannot be continued (gone, records lost, not a part, corrupt), after each is repaired. */
function damagedPart(work: WorkDir, step: Step): string | undefined {
  const folder = partsFolder(step);
  const names = work.list(folder);
  const gone = names.filter((n) => n.endsWith(MADE) && !names.includes(`${n.slice(0, -MADE.length)}.part`));
  let why = gone.length > 0 ? `${path.join(work.root as string, folder, `${gone[0].slice(0, -MADE.length)}.part`)} is missing` : undefined;
  for (const name of partNames(work, step)) why ??= repairPart(path.join(work.root as string, folder, name));
  return why;
}

/** For a resumed build writing a directory (not an archive, not a caller's sink): the census of its finished units' tiles. */
export function resumeCensus(config: BuildConfig, io: BuildIO, dims: BuildPlan['dims']): TileCensus | undefined {
  const out = config.options.out;
  return config.archive === 'none' && !io.sink && out !== undefined ? new TileCensus(out, dims) : undefined;
}

/**
 * A pyramid of no tile at any zoom (every feature placed, but too small to draw with --lod none) stops before its
 * descriptor, as an archive of no tile does (PMTiles has none): a descriptor over no tile would pass for the slide's
 * pyramid. What the build wrote (empty zoom folders) goes, as no archive is left, so the next build needs no --force.
 */
export function refuseNoTiles(sink: TileSink, out: string | undefined, plan: BuildPlan, byZoom: Record<string, ZoomReport>): void {
  if (Object.values(byZoom).some((z) => z.tiles > 0)) return;
  sink.discard?.();
  const unit = tileSize(plan.world.side, plan.maxZoom) / EXTENT;
  const why = plan.lod === 'none'
    ? `too small to draw at zooms ${plan.minZoom}–${plan.maxZoom} with --lod none: nothing of it is left on the finest zoom's grid, ${unit < 1 ? `1/${1 / unit}` : unit} image pixel${unit > 1 ? 's' : ''}`
    : 'outside the world, too small to draw at these zooms, or a mesh, which PBF tiles do not carry';
  throw new DataError(`${out ?? 'the pyramid'}: there is no tile to write (every feature left out: ${why}): nothing to build, no descriptor written${plan.lod === 'none' ? '; --lod auto draws a feature too small for a zoom as a point' : ''}`);
}

/**
 * Before a sharded directory build's descriptor is written (its presence means the pyramid is complete): every tile
 * the units' markers count (`byZoom`) must be in `out`. The shards' outputs reach finalize by copies and merges of a
 * workflow, which can leave files out; a WorkStateError then names the zoom and format that lack tiles, and the level-0
 * units short of tiles with their shards, so the shard whose output did not arrive whole can be copied or run again.
 * Counted per zoom first: a user's files named like tiles in the zoom's folders can hide as many missing ones.
 */
export function refuseLostTiles(out: string, byZoom: Record<string, ZoomReport>, plan: LostTilesPlan): void {
  for (const [z, r] of Object.entries(byZoom)) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(path.join(out, z), { recursive: true, encoding: 'utf8' });
    } catch (err) {
      // No folder of the zoom: no tiles there. Anything else (no permission) is said as it is.
      if ((err as { code?: string }).code !== 'ENOENT') throw describeFsError(err, path.join(out, z));
    }
    const found = { json: 0, pbf: 0 }, bytes = { json: 0, pbf: 0 };
    const tiles: TilePathParts[] = [];
    for (const n of names) {
      // Tiles only, by the names the build writes: a user's `2/notes/1.json` or `2/0/07.json` is no tile of the build.
      const tile = tileSegments([z, ...n.split(/[\\/]/)]);
      if (tile === null || tile.planes.length !== plan.dims.length) continue;
      tiles.push(tile);
      found[tile.ext]++;
      bytes[tile.ext] += fs.statSync(path.join(out, z, n), { throwIfNoEntry: false })?.size ?? 0;
    }
    const whole = "bring the shards' outputs whole, or plan --force and run the shards again";
    for (const f of ['json', 'pbf'] as const) {
      if (found[f] < r[f].tiles) {
        throw new WorkStateError(`cannot finalize: ${out} holds ${found[f]} ${f} tiles of zoom ${z}, where the units' markers count ${r[f].tiles}: tiles were lost between the steps (a partial copy or merge of the shards' outputs)${shortUnits(plan, Number(z), f, tiles)}; ${whole}`, out);
      }
      // As many files, but not the shards' bytes: tiles cut short by a copy, or files of another build among them.
      // Zoom 0's JSON tiles are the overview descriptors, which finalize writes (a run of it killed before its end).
      if (z === '0' && f === 'json') continue;
      if (found[f] !== r[f].tiles || bytes[f] !== r[f].bytes) {
        throw new WorkStateError(`cannot finalize: ${out} holds ${found[f]} ${f} tiles of zoom ${z} of ${bytes[f]} bytes, where the units' markers count ${r[f].tiles} of ${r[f].bytes} bytes: tiles were cut short or replaced between the steps (a partial copy, or another build's files); ${whole}`, out);
      }
    }
  }
}

/** What `refuseLostTiles` needs to say whose tiles are missing: the plan's level-0 units in shard order, and their markers. */
export interface LostTilesPlan { dims: BuildPlan['dims']; units: readonly UnitPlan[]; shards: number; markers: readonly UnitMarker[] }

/**
 * The level-0 units whose cells hold fewer tiles of zoom `z` than their markers count, as a clause of the refusal.
 * The tiles found are counted by the cell they lie in, so the cost follows the files there, not the tiles a cell could hold.
 */
function shortUnits(plan: LostTilesPlan, z: number, f: 'json' | 'pbf', tiles: readonly TilePathParts[]): string {
  const counted = new Map(plan.markers.map((m) => [m.key, m.byZoom[z]?.[f].tiles ?? 0]));
  // Per cell zoom of the units (one, in practice): files counted by `plane folders|cell x|cell y`.
  const byCell = new Map<number, Map<string, number>>();
  const cellCounts = (cz: number): Map<string, number> => {
    let m = byCell.get(cz);
    if (m !== undefined) return m;
    byCell.set(cz, (m = new Map()));
    const shift = 2 ** (z - cz);
    for (const t of tiles) {
      if (t.ext !== f) continue;
      const key = `${t.planes.join('/')}|${Math.floor(t.x / shift)}|${Math.floor(t.y / shift)}`;
      m.set(key, (m.get(key) ?? 0) + 1);
    }
    return m;
  };
  const short: string[] = [];
  const shards = new Set<number>();
  plan.units.forEach((u, i) => {
    const want = counted.get(u.key) ?? 0;
    if (want === 0 || z < u.cell.z) return;
    const folders = plan.dims.map((d) => String(u.plane[d])).join('/');
    const have = cellCounts(u.cell.z).get(`${folders}|${u.cell.x}|${u.cell.y}`) ?? 0;
    if (have >= want) return;
    shards.add(i % plan.shards);
    short.push(`${u.key} (shard ${i % plan.shards}: ${have} of its ${want} tiles here)`);
  });
  if (short.length === 0) return '';
  const listed = short.length > 5 ? `${short.slice(0, 5).join(', ')} and ${short.length - 5} more` : short.join(', ');
  return `; units short of tiles: ${listed}; shard${shards.size > 1 ? 's' : ''} ${[...shards].sort((a, b) => a - b).join(', ')} of ${plan.shards}`;
}

/**
 * The report of a finished build at `out` (its archive, or its `tileset.json`, there beside the report): what
 * `finalize` run again, once its work directory is gone, answers with (a workflow retrying a step that succeeded).
 */
export function finishedReport(out: string): BuildReport | undefined {
  const archive = isArchiveFile(out);
  try {
    if (!fs.statSync(archive ? out : path.join(out, 'tileset.json')).isFile()) return undefined;
    const report = JSON.parse(fs.readFileSync(archive ? besideArchive(out, 'build-report.json') as string : path.join(out, 'build-report.json'), 'utf8')) as BuildReport;
    return report !== null && typeof report === 'object' && typeof report.tiles === 'object' ? report : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The report of the output when a step is run again after `finalize` succeeded (a workflow retrying it): the output
 * whole, its work directory gone. Says there is nothing to do (for `shard`, or for finalize), or undefined when it is
 * not so. A report naming no shards is refused (exit 2): `build` wrote that pyramid whole, or a `finalize` of a version
 * that did not record them did; nothing tells which, and either way no step of a plan is left to run.
 */
export function finalizedAlready(work: WorkDir, out: string | undefined, io: BuildIO, shard?: number): BuildReport | undefined {
  if (out === undefined || work.exists('')) return undefined;
  const done = finishedReport(out);
  if (!done) return undefined;
  if (done.run?.shards === undefined) {
    const found = `no work directory${work.root === undefined ? '' : ` ${work.root}`}, and its build-report.json names no shards, run.shards`;
    const left = shard === undefined ? 'finalize' : 'tile';
    throw new StateUsageError(`${nothingFor(shard)}: ${out} holds a complete pyramid and no plan for shards (${found}): either build wrote it whole, or the finalize of an earlier mudm-tiles, which did not record shards, finished it; this cannot tell which, and either way the pyramid is complete as it is, with nothing left to ${left}; ${shardedInstead(out, 'anew')}`);
  }
  const what = shard === undefined ? '' : ` for shard ${shard}`;
  // Its removal, the last thing finalize does, may have been killed part-way (the work directory moved aside first,
  // then removed): what is left aside, as large as the plan's records, goes now.
  work.sweep();
  io.onWarning?.(`${out} is finalized already (a complete output, its work directory gone): nothing${what} to do`, { event: 'finalized-already', out });
  return done;
}
