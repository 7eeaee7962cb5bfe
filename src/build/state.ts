// The durable state of a build in its work directory: plan.json (versioned, checked on load), one marker per finished
// shard (units have theirs in build/unit-log.ts), where each lives, and the fingerprint a resumed build or a shard must match.
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { Properties } from '../model/feature.js';
import type { IdCounts } from '../model/descriptor.js';
import type { Multiscale } from '../model/multiscale.js';
import type { Vocabularies } from '../model/vocabulary.js';
import { DiskWorkDir, OWNER_FILE, OWNERS_DIR, REMOVING_FILE, type ProcessProbe, type WorkDir } from '../io/workdir.js';
import { MemoryWorkDir } from '../io/workdir-memory.js';
import { existingAncestor } from '../io/dirs.js';
import { archiveWorkDir } from '../archive/archive-names.js';
import { flagName, isArchiveFile, type BuildConfig, type Options, type TileCompression } from '../options.js';
import { StateUsageError, UsageError, WorkStateError } from '../report/errors.js';
import type { LayerStats } from '../stages/assign.js';
import type { BuildPlan, UnitPlan } from '../stages/plan.js';
import type { Dim, Plane } from '../tiling/space.js';
import type { PreviewGrid } from '../io/preview.js';
import type { IssueCounts, SkippedPlace } from '../validate/tally.js';
import type { UnitLog } from './unit-log.js';
import { pixelSizeChange } from './plan-differs.js';

export const WORK_DIR_NAME = '.mudm-work';
const PLAN_FILE = 'plan.json';
/**
 * The layout of plan.json and of the unit markers; a work directory of another version is refused, never misread.
 * 6: `tileCompression`, which a step of version 5 would ignore (a shard storing tiles otherwise than the archive says).
 * 7: stored records reach the buffer of a cell twice as wide, and level-0 units may be gathered or read the stored cells
 * around them (a step of version 6 would miss features in tile buffers, or read neighbours' home flags as its own).
 * 8: with --lod none, a marker's kept counts leave out the features its tiles have nothing of at a zoom (a step of
 * version 7 counts them within its level, and the descriptor's kept fractions would mix both).
 * 9: with --preview and --image, the image as the previews take it, in the work directory (8 read it at its path).
 * 10: a MultiPolygon of NEAR_PIECES polygons or more is stored in part in the cells away from its home and centroid (a
 * step of version 9 would read such a partial record as the whole feature).
 * 11: MultiPoints and MultiLineStrings of NEAR_PIECES pieces are stored in part too, a record flags a feature of many
 * pieces (thinned piece by piece: tile/pieces.ts), and a box from a tile's buffered edge meets it (space.ts `tileRange`):
 * steps of versions 10 and 11 would each tile the other's plans otherwise, so only this version is read.
 * 12: markers count a feature of many pieces by its pieces, its reduced records carry the whole's (11 counts features).
 * 13: features are counted by id three ways (`IdCounts`, 12: two), a marker's record shared by cells written once.
 * 14: level 0 is split finer for records narrower than a cell only (`planBuild`): 13 split one cell of a wide record.
 * 15: per-zoom sparing sizes (`spareSizes`), pieces spared by their own: 14 spared a class mask whole or not at all.
 * 16: a record's tag keys lie together ahead of their values (record.ts): 15 wrote each key beside its value.
 * A field a step of the same version may pass over, or find absent, without misreading keeps it: `recordBytes`.
 */
export const PLAN_VERSION = 16;
/** The versions of the plans this mudm-tiles goes on with: its own, and those whose records it reads alike (none now). */
const READ_VERSIONS = [PLAN_VERSION] as const;

/** What the reading pass found: everything the plan, the descriptor and the report need. */
export interface ReadSummary {
  read: number; valid: number; invalid: number;
  issues: IssueCounts;
  /** Valid features the pyramid cannot place, by reason. */
  skipped: Record<string, number>;
  /** Per reason in `skipped`, where the first such feature is in the input (absent in plans of earlier builds). */
  skippedFirst?: Record<string, SkippedPlace>;
  bounds: [number, number, number, number] | null;
  /** Placed features by the world side they need: `extent[k]` need 2^k (see `findOutliers`). */
  extent: number[];
  /** The largest half width or height of a placed feature's box (px): how far past its cell a unit's features reach (build/schedule.ts). */
  halfExtent: number;
  dims: Dim[];
  stats: LayerStats;
  collection: { multiscale?: Multiscale; properties?: Properties; vocabularies?: Vocabularies };
  /** An input reported its image's size (a label mask): the world holds that image. */
  imageSized?: boolean;
  /** Valid QuPath objects on every channel (plane c -1, or none), when there are any: the plan puts them in every channel's plane. */
  everyChannel?: number;
  /** Per layer, features by their input id (a nucleus has none): the descriptor's `feature_ids`, unsaid when absent. */
  ids?: Record<string, IdCounts>;
}

/** The plan of a build as kept in the work directory. */
export interface PlanFile {
  version: (typeof READ_VERSIONS)[number];
  fingerprint: string;
  /** What the fingerprint was made of (fingerprintLines; absent in plans of earlier versions). */
  fingerprintLines?: string[];
  plan: BuildPlan;
  read: ReadSummary;
  units: UnitPlan[];
  shards: number;
  meta: { name?: string; description?: string; attribution?: string; version?: string; baseUrl?: string };
  /**
   * --preview: a PNG quicklook per plane on `grid`, painted by the level-0 units (points as discs of `pointRadius`),
   * over this image when given, which also becomes the viewer's background.
   */
  preview: { enabled: boolean; image?: string; grid?: PreviewGrid; pointRadius?: number };
  spilled: boolean;
  /**
   * Of each input read as a stream (standard input), its name and the SHA-256 of its bytes (`streamDigests`): the one
   * way a --resume can tell other bytes there that plan alike. Absent when no input is a stream.
   */
  streamed?: string[];
  /** Bytes of records spilled once for many cells (`SHARED_FILE` beside the level-0 records), when there are any. */
  sharedBytes?: number;
  /**
   * Bytes of each level-0 record file as `plan` wrote it, by store key (the units' sources): a file of another size is
   * refused before a step writes anything (build/planned-records.ts). Absent in a build's plan and in plans written
   * before sizes were kept, whose files are checked only for being there.
   */
  recordBytes?: Record<string, number>;
  readSeconds: number;
  /** Tiles into PMTiles archives (`-o FILE.pmtiles`, or `--archive pmtiles`): shards and finalize write them so too. */
  archive?: 'file' | 'planes';
  /** `--tile-compression` when not `auto`: shards and finalize store tiles so too. */
  tileCompression?: Exclude<TileCompression, 'auto'>;
  /** This plan and no other (random, made once): what a shard's marker names, so a shard of another plan shows. */
  id?: string;
  /** Written by `plan` (for shards, even one), not by a `build`. */
  forShards?: boolean;
}

/** The work directory: the caller's, else OUT/.mudm-work (beside FILE.pmtiles: .FILE.pmtiles.mudm-work) on disk, else memory. */
export function workDirFor(options: Options, work: WorkDir | undefined, processes?: ProcessProbe): WorkDir {
  if (work) return work;
  if (options.out) return new DiskWorkDir(isArchiveFile(options.out) ? archiveWorkDir(options.out) : path.join(options.out, WORK_DIR_NAME), processes);
  return new MemoryWorkDir();
}

/** Where spilled records go: --tmp-dir, else the work directory, else the system temporary directory. */
export function spillRoot(options: Options, work: WorkDir): string {
  if (options.tmpDir) return path.join(options.tmpDir, `mudm-spill-${createHash('sha1').update(path.resolve(options.out ?? '.')).digest('hex').slice(0, 10)}`);
  return work.root ? path.join(work.root, 'spill') : path.join(os.tmpdir(), `mudm-spill-${randomBytes(6).toString('hex')}`);
}

/**
 * The fingerprint of what `fingerprintLines` gave: it identifies the inputs and the options that change output (the
 * image size however it was given), which a resume must see the same.
 */
export function fingerprintOfLines(lines: readonly string[]): string {
  const h = createHash('sha256');
  for (const line of lines) h.update(`${line}\n`);
  return h.digest('hex');
}

export type FingerprintInput = { source: { name: string }; layer?: string; plane?: Partial<Plane>; fingerprint?: string };

/**
 * What a fingerprint is made of, one line each: every input (name, layer, plane, size and time, NUL-separated),
 * then the options that shape the pyramid as `key=value`, the --image file among them identified as an input is (its
 * path, size and time: its dimensions alone let another image of that size through). Kept in the plan, so a refused
 * --resume can say what differs.
 */
export function fingerprintLines(inputs: readonly FingerprintInput[], config: BuildConfig): string[] {
  const lines = inputs.map((i) => `${i.source.name}\0${i.layer ?? ''}\0${JSON.stringify(i.plane ?? {})}\0${i.fingerprint ?? ''}`);
  for (const k of ['format', 'layer', 'layerBy', 'planeField', 'nucleusFeatures', 'minZoom', 'maxZoom', 'lod', 'tileBudget', 'unitSize'] as const) lines.push(`${k}=${String(config.options[k])}`);
  // Only when given, as below; before imageSize, so that another image is named as such rather than by its size.
  if (config.imageFile) lines.push(`image=${JSON.stringify([config.imageFile.file, config.imageFile.identity ?? ''])}`);
  lines.push(`imageSize=${JSON.stringify(config.imageSize ?? null)}`);
  // Only when set, so that the fingerprints of directory builds stay what they were (a mask's pieces are other features).
  for (const [k, v, unset] of [['archive', config.archive, 'none'], ['tileCompression', config.tileCompression, 'auto'], ['maskFeatures', config.maskFeatures, 'auto']] as const) if (v !== unset) lines.push(`${k}=${v}`);
  // The names as read (` a, b` is `a,b`), so that a list written otherwise resumes.
  if (config.fields) lines.push(`fields=${config.fields.join(',')}`);
  if (config.coarseFields) lines.push(`coarseFields=${config.coarseFields.keep.join(',')}`);
  if (config.coarseFields?.from !== undefined) lines.push(`fieldsFromZoom=${config.coarseFields.from}`);
  return lines;
}

/** The first difference between the fingerprint lines of the interrupted build and of this one, as a person reads it. */
function whatDiffers(then: readonly string[], now: readonly string[]): string | undefined {
  const options = (lines: readonly string[]) => new Map(lines.filter((l) => !l.includes('\0')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));
  const o1 = options(then), o2 = options(now);
  for (const k of new Set([...o1.keys(), ...o2.keys()])) {
    if (o1.get(k) === o2.get(k)) continue;
    if (k === 'image') return imageDiffers(o1.get(k), o2.get(k));
    const flag = k === 'imageSize' ? '--image-size (or the --image header)' : `--${flagName(k as keyof Options)}`;
    // The archive mode by the value the flag takes (`planes` is what --archive pmtiles makes of a directory output).
    // An empty --coarse-fields (keep none) as it is typed.
    const shown = (v: string | undefined) => (v === undefined || v === 'undefined' ? 'not given' : k === 'archive' && v === 'planes' ? 'pmtiles' : v === '' ? '""' : v);
    return `${flag} was ${shown(o1.get(k))}, is ${shown(o2.get(k))} now`;
  }
  const files = (lines: readonly string[]) => lines.filter((l) => l.includes('\0'));
  const f1 = files(then), f2 = files(now);
  const name = (l: string) => l.slice(0, l.indexOf('\0'));
  for (const l of f2) if (!f1.some((m) => name(m) === name(l))) return `input ${name(l)} was not read then`;
  for (const l of f1) if (!f2.some((m) => name(m) === name(l))) return `input ${name(l)} is not given now`;
  for (const l of f2) if (!f1.includes(l)) return `input ${name(l)} has changed since (its size or modification time, or its layer or plane)`;
  return f1.join('\n') !== f2.join('\n') ? 'the inputs are given in another order' : undefined;
}

/** How the --image file differs between two fingerprint values (`image=` lines: its path and its size and time, as JSON). */
function imageDiffers(then: string | undefined, now: string | undefined): string {
  const [was] = then === undefined ? [] : (JSON.parse(then) as [string, string]);
  const [is] = now === undefined ? [] : (JSON.parse(now) as [string, string]);
  // Plans written before the image was identified hold its dimensions only.
  if (was === undefined) return `--image ${is} was not recorded by the interrupted build (it had none, or an earlier mudm-tiles made it, which recorded the image's dimensions only)`;
  if (is === undefined) return `--image was ${was}, is not given now`;
  return was === is ? `--image ${is} has changed since: its size or modification time differs` : `--image was ${was}, is ${is} now`;
}

export function savePlan(work: WorkDir, planFile: PlanFile): void {
  work.writeJson(PLAN_FILE, planFile);
}

/**
 * The plan of the work directory (of output `out`); a missing, unreadable or foreign one is a WorkStateError saying
 * what to do.
 */
export function loadPlan(work: WorkDir, out?: string): PlanFile {
  const planFile = findPlan(work);
  if (!planFile) throw new WorkStateError(noPlan(work, out), work.root);
  // Shards must not write beside what a plan --force stopped part-way left of an earlier build (output.ts `beginOutput`).
  if (work.exists(REMOVING_FILE)) {
    throw new WorkStateError(`${where(work)}: plan --force was stopped before it removed what an earlier build wrote in the output, and some of it is left: run plan --force again`, work.root);
  }
  // A plan removes its owner record at its end: one left names a plan still running, or one that ended before its end.
  if (planFile.forShards === true && work.exists(OWNER_FILE)) {
    const live = work.liveOwner(OWNER_FILE);
    throw new WorkStateError(live
      ? `${where(work)}: the plan is still being written (${live.who}): wait for plan to end`
      : `${where(work)}: the process that wrote the plan (plan, or build --resume of it) ended before its end (${OWNER_FILE} is left): run plan again`, work.root);
  }
  return planFile;
}

/**
 * Why there is no plan: the folder the work directory goes in is not there (a path mistyped, or plan not run yet), so
 * the message names that rather than a work directory inside it; or the work directory holds none.
 */
function noPlan(work: WorkDir, out: string | undefined): string {
  const folder = work.root === undefined ? undefined : path.dirname(work.root);
  if (folder === undefined || existingAncestor(folder).missing.length === 0) return `no readable plan in ${where(work)}: run mudm-tiles plan first`;
  return `${folder} does not exist, so there is no plan to go on with: check the path, or run mudm-tiles plan INPUT... -o ${out ?? folder} first`;
}

/** The plan an earlier run left, if any (for --resume); one of another version is refused. */
export function findPlan(work: WorkDir): PlanFile | undefined {
  const value = work.readJson<unknown>(PLAN_FILE);
  if (value === undefined) return undefined;
  const version = value !== null && typeof value === 'object' ? (value as { version?: unknown }).version : undefined;
  if (!(READ_VERSIONS as readonly unknown[]).includes(version)) {
    throw new WorkStateError(
      `the plan in ${where(work)} has version ${JSON.stringify(version ?? null)}, this mudm-tiles reads ${READ_VERSIONS.length > 1 ? 'versions' : 'version'} ${READ_VERSIONS.join(' and ')}: `
      + 'it was written by another version; plan (or build) again without --resume', work.root,
    );
  }
  return value as PlanFile;
}

/** Why a new build cannot start where another build's work directory is (of output `out`), and what goes on with that build. */
export function claimedMessage(work: WorkDir, out = 'the output'): string {
  const previous = findPlan(work);
  const head = `${where(work)} holds the state of another build of this output`;
  if (!previous) return `${head}, which has no plan yet (it is still reading its input, or stopped without a record of its process): nothing there to continue; wait for it to end, or start over with --force once no build runs there`;
  if (previous.forShards || previous.shards > 1) return `${head}, planned for ${previous.shards} shard(s): build-shard and finalize go on with it, --force starts over, removing that state`;
  // A build --force marks its removal of the earlier build's files until it ends (output.ts `beginOutput`): one killed
  // part-way, or stopped at a file it could not remove, is told apart, as what is left in OUT is the old pyramid's.
  if (work.exists(REMOVING_FILE) && !work.liveOwner(OWNER_FILE)) {
    return `${where(work)} holds the state of a build --force of this output that stopped before it had removed all that an earlier build wrote in ${out} (it was killed, or could not remove a file), and wrote none of its own tiles: `
      + `mudm-tiles build INPUT... -o ${out} --resume continues it, with the inputs and options it was given, removing the rest first; mudm-tiles build INPUT... -o ${out} --force starts over`;
  }
  return `${head} (interrupted, or still running): --resume continues it, --force starts over, removing that state`;
}

/**
 * --resume continues only the build the work directory describes, with the same inputs and options: anything else
 * is refused (a StateUsageError, exit 2) before anything is touched. Returns the interrupted build's plan.
 */
export function resumablePlan(work: WorkDir, inputs: readonly FingerprintInput[], config: BuildConfig): PlanFile {
  const previous = findPlan(work);
  if (!previous) {
    // A build that stopped while reading left its work directory without a plan: a plain build refuses to start over it.
    const next = work.list('').length > 0 ? 'build without --resume, which replaces that state once the build that left it has ended (--force when its process is not recorded)' : 'build without --resume (--force replaces what an earlier build wrote)';
    throw new StateUsageError(`--resume: there is no interrupted build in ${where(work)} (no ${PLAN_FILE}): nothing to continue; ${next}`);
  }
  const lines = fingerprintLines(inputs, config);
  if (previous.fingerprint !== fingerprintOfLines(lines)) {
    const what = previous.fingerprintLines && whatDiffers(previous.fingerprintLines, lines);
    throw new StateUsageError(`--resume: the inputs or options differ from those of the interrupted build in ${where(work)}${what ? ` (${what})` : ''}; run again with the same ones, or start over with --force (without --resume)`);
  }
  return previous;
}

/**
 * After reading, a resumed build's plan must be the interrupted one's: standard input has no size or date to
 * fingerprint, so this is where other bytes on stdin show.
 */
export function checkSamePlan(previous: PlanFile, plan: BuildPlan, units: readonly UnitPlan[], work: WorkDir): void {
  if (JSON.stringify(previous.plan) !== JSON.stringify(plan) || JSON.stringify(previous.units) !== JSON.stringify(units)) {
    // An earlier version may cut the same inputs into other units and levels (its records were of other sizes).
    const pixel = JSON.stringify(previous.units) === JSON.stringify(units) ? pixelSizeChange(previous.plan, plan) : undefined;
    const what = previous.version !== PLAN_VERSION ? `the interrupted build in ${where(work)} was planned by an earlier mudm-tiles (plan version ${previous.version}), which cut it into other work units`
      : pixel ? `${pixel} (the interrupted build in ${where(work)})` : `the inputs read now differ from those of the interrupted build in ${where(work)}`;
    throw new StateUsageError(`--resume: ${what}; run again without --resume`);
  }
}

/** The work directory as messages name it. */
export function where(work: WorkDir): string {
  return work.root ?? 'the work directory';
}

/**
 * Refuses a shard index the plan has no shard of, naming where it came from (`from`: --shard, or the variable an engine
 * set, whose count of tasks must then be the plan's).
 */
export function checkShardIndex(work: WorkDir, planFile: PlanFile, shard: number, from: string): void {
  if (Number.isInteger(shard) && shard >= 0 && shard < planFile.shards) return;
  const engine = from.startsWith('--') ? '' : `; ${from} is set by the engine: run as many tasks as plan --shards made (${planFile.shards}), or plan again with --shards as many as the tasks`;
  throw new UsageError(`${from} must be 0..${planFile.shards - 1}, found ${shard}: the plan in ${where(work)} has ${planFile.shards} shard(s)${engine}`);
}

/** Level-0 units of shard `shard` of `shards`: a fixed round-robin over the sorted units. */
export function shardUnits(units: readonly UnitPlan[], shard: number, shards: number): UnitPlan[] {
  return units.filter((_, i) => i % shards === shard);
}

/**
 * What a finished shard leaves: its units, the plan it tiled them for, and the archive parts it wrote them into, with
 * their sizes then (`sizes[i]` of `parts[i]`; absent in markers of earlier versions).
 */
export interface ShardMarker { shard: number; units: string[]; plan?: string; parts?: string[]; sizes?: number[] }

/** A shard is done: `parts`, the archive parts it wrote (file name → bytes), must reach finalize as they are. */
export function markShardDone(work: WorkDir, shard: number, units: readonly UnitPlan[], planFile: PlanFile, parts: ReadonlyMap<string, number>): void {
  const marker: ShardMarker = { shard, units: units.map((u) => u.key), plan: planFile.id, parts: [...parts.keys()], sizes: [...parts.values()] };
  work.writeJson(`shards/${shard}.json`, marker);
}

/** Whether a shard's marker names a plan, and another than `planId` (a shard copied in from another build). */
export function ofOtherPlan(marker: ShardMarker | undefined, planId: string | undefined): boolean {
  return marker?.plan !== undefined && planId !== undefined && marker.plan !== planId;
}

/**
 * Why a finished shard's parts (`there`: name → bytes now) are not those it finished: one missing, or of another size
 * (an earlier or other copy, brought in by a workflow's merge); undefined when they are.
 */
export function partsProblem(marker: ShardMarker | undefined, there: ReadonlyMap<string, number>): string | undefined {
  const parts = marker?.parts ?? [];
  for (let i = 0; i < parts.length; i++) {
    const size = there.get(parts[i]);
    if (size === undefined) return `${parts[i]} is missing`;
    const want = marker?.sizes?.[i];
    if (want !== undefined && size !== want) return `${parts[i]} holds ${size} bytes, ${want} when the shard finished it (cut short, or an earlier or other copy)`;
  }
  return undefined;
}

/**
 * Refuses to finalize while a shard or a level-0 unit is not finished, a shard was done for another plan (copied in
 * from another build), or a part a shard wrote is missing or of another size (`partsOf(shard)`: the parts there now).
 */
export function checkShardsDone(work: WorkDir, planFile: PlanFile, units: Pick<UnitLog, 'has'>, partsOf: (shard: number) => ReadonlyMap<string, number>): void {
  const missingShards = Array.from({ length: planFile.shards }, (_, i) => i).filter((i) => !work.exists(`shards/${i}.json`));
  const missingUnits = planFile.units.filter((u) => !units.has(0, u.key));
  if (missingShards.length || missingUnits.length) {
    // A shard done once and then tiled anew (its part was damaged) has its marker, not all its units.
    const owning = [...new Set(missingUnits.map((u) => planFile.units.indexOf(u) % planFile.shards))].filter((i) => !missingShards.includes(i));
    const shards = [...missingShards, ...owning].sort((a, b) => a - b);
    // One still running (a workflow that started finalize too early) is waited for, not run again: that run is refused.
    const running = shards.flatMap((i) => { const r = work.liveOwner(`${OWNERS_DIR}/shard-${i}.json`); return r ? [`shard ${i} (${r.who})`] : []; });
    const others = shards.length - running.length;
    const todo = running.length === 0 ? 'run build-shard for them'
      : `${running.join(', ')} ${running.length === 1 ? 'is' : 'are'} still running: run finalize again once ${running.length === 1 ? 'it ends' : 'they end'}${others > 0 ? ', and build-shard for the others' : ''}`;
    throw new WorkStateError(`cannot finalize: shard(s) ${shards.join(', ')} not complete, ${missingUnits.length} unit(s) missing; ${todo}`, work.root);
  }
  for (let i = 0; i < planFile.shards; i++) {
    const marker = work.readJson<ShardMarker>(`shards/${i}.json`);
    if (ofOtherPlan(marker, planFile.id)) {
      throw new WorkStateError(`cannot finalize: shard ${i} was built for another plan than the one in ${where(work)} (copied in from another build?): its tiles and records are not this plan's; start over with plan --force`, work.root);
    }
    const why = partsProblem(marker, partsOf(i));
    if (why) throw new WorkStateError(`cannot finalize: the archive part ${why}, of shard ${i} in ${where(work)}: run build-shard --shard ${i} again (it tiles its units anew)`, work.root);
  }
}

/**
 * Records this build as the one working in its work directory: a new build over the record its claim made; a resumed
 * one takes the record over only from a build that has ended, judged as it writes it, so of two resumed at once one
 * gets in. On any failure the claim is let go: a claim left behind would keep this process's later builds out.
 */
export function takeOver(work: WorkDir, resume: boolean): void {
  try {
    if (!resume) return work.own();
    const running = work.claimOwner(OWNER_FILE);
    if (running) throw stillRunning(work, running, '--resume');
  } catch (err) {
    work.release();
    throw err;
  }
}

/** Why `flag` cannot act on a work directory whose owner `running` runs, and how to go on. */
export function stillRunning(work: WorkDir, running: { who: string; file: string }, flag: string): WorkStateError {
  return new WorkStateError(`${where(work)} belongs to a build that is still running (${running.who}): ${flag} does not stop it; wait for it to end or stop it first (if no build runs there, remove ${running.file})`, work.root);
}
