// The order of a build, and nothing else: build = plan + every shard + finalize, on this machine or spread over many.
// plan: read (build/read.ts) → plan (stages/plan.ts) → plan.json (build/state.ts); a shard: level 0 (build/levels.ts);
// finalize: the levels above → previews and report (build/report.ts) → overview descriptors → report → descriptor last.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { archiveAssets } from '../archive/archive-names.js';
import { planeKey, tilePath } from '../tiling/space.js';
import { fileIdentity, imageHeader } from '../io/image.js';
import { statedPixelSize } from '../io/pixel-size.js';
import type { Removal, TileSink } from '../io/sink.js';
import { OWNER_FILE, type WorkDir } from '../io/workdir.js';
import { parseImageSize, resolveBuildConfig, type BuildConfig, type Options } from '../options.js';
import { DataError, UsageError, WorkStateError } from '../report/errors.js';
import type { BuildReport } from '../report/types.js';
import { overviewDescriptor, tilesetDescriptor, type DescribeInput } from '../stages/describe.js';
import { SpillingStore } from '../stages/partition.js';
import { planBuild } from '../stages/plan.js';
import { TileSketch } from '../stages/thinning.js';
import { createPool, type Pool } from '../worker/pool.js';
import { memoryWarning, secondsSince, storeBudget, type BuildIO, type InputSpec, type RunContext } from './context.js';
import { tileLevels, type LevelsOutcome } from './levels.js';
import {
  beginOutput, finalizedAlready, hasParts, healBuildParts, healShardParts, layoutOf, outputSink, partsOf, refuseBuildParts, refuseLostTiles, refuseNoTiles, resumeCensus, shardPartError, type Step,
} from './output.js';
import { readInputs } from './read.js';
import { refuseNotPlanned } from './not-planned.js';
import { coarseFieldsWarning, manyPlanesWarning, noCoarseZoomWarning, thinOverviewNotices } from './option-fields.js';
import { metaOf, plannedAlready, type Planned } from './plan-again.js';
import { UnitLog } from './unit-log.js';
import { buildReport, everyChannelWarning, nothingPlaced, noValidFeature, planesWithPbf, plannedFeatures, planPreview, sumMarkers, writePreviews } from './report.js';
import { outlierWarning } from '../report/format.js';
import {
  PLAN_VERSION, checkSamePlan, checkShardIndex, takeOver, checkShardsDone, fingerprintLines, fingerprintOfLines, loadPlan, markShardDone,
  resumablePlan, savePlan, shardUnits, spillRoot, workDirFor, type PlanFile,
} from './state.js';
import { failedBuild, failedStep } from './failed.js';
import { checkSameStreams, streamDigests } from './streamed.js';
import { ownStep, refuseClaimed, refuseRunning, startOver } from './claims.js';
import { PLANNED_RECORDS, recordSizes, refuseUnplanned } from './planned-records.js';

export type { BuildIO, InputSpec } from './context.js';

/** The options of a build, checked once (the world from an --image header); `warn`: a budget its workers would pass. */
async function configOf(given: Partial<Options>, io: BuildIO, readsInputs: boolean, warn?: BuildIO['onWarning']): Promise<BuildConfig> {
  // The CLI turns them into inputs before it calls here: given to the library, they would be passed over in silence.
  if (readsInputs && ((given.input?.length ?? 0) > 0 || given.manifest !== undefined)) {
    throw new UsageError('input and manifest name files for the command line to read; a library build takes its inputs as InputSpec[] (a source such as fileSource(FILE), with its plane and layer)');
  }
  const header = readsInputs && given.image !== undefined ? await imageHeader(given.image, given.imageSize === undefined ? undefined : parseImageSize(given.imageSize)) : undefined;
  // Shards and finalize store tiles as their plan says, whatever a library caller passes (the CLI refuses the option).
  const config = resolveBuildConfig(readsInputs ? given : { ...given, tileCompression: undefined }, header);
  // Only an image that is the world (no --image-size, by which it may be a smaller picture of the slide) sizes its pixel.
  if (header && given.image !== undefined) config.imagePixel = { file: given.image, ...statedPixelSize(given.image, header.format, header.page) };
  // Another image of the same size would pass for it on --resume (another background, another pixel size stated).
  if (readsInputs && given.image !== undefined) config.imageFile = { file: given.image, identity: await fileIdentity(given.image) };
  if (io.sink === undefined && config.options.out === undefined) throw new UsageError('no output directory given (-o DIR)');
  const memory = memoryWarning(config);
  if (memory) warn?.(memory.message, memory.fields);
  return config;
}

/** Builds a pyramid on this machine: plan, every shard in the local pool, finalize. Returns the run report. */
export async function buildPyramid(inputs: InputSpec[], given: Partial<Options>, io: BuildIO = {}): Promise<BuildReport> {
  const config = await configOf(given, io, true, io.onWarning);
  const o = config.options;
  const work = workDirFor(o, io.work, io.processes);
  const sink = outputSink(o.out, config.archive, config.tileCompression, work, io, { kind: 'build' });
  const t0 = performance.now();
  // A --resume that cannot continue what OUT holds is refused before anything there is touched.
  refuseRunning(work, o.force, o.resume);
  refuseClaimed(work, o.force, o.resume, o.out);
  const previous = o.resume ? resumablePlan(work, inputs, config) : undefined;
  // Archive tiles of shards lie in their parts, which a build does not assemble: its units marked done would be lost.
  if (previous && config.archive !== 'none' && hasParts(work, 'shard')) {
    throw new WorkStateError(`--resume: ${work.root ?? 'the work directory'} was planned for shards, and shards have written archive parts there: continue with build-shard and finalize, or start over with --force`, work.root);
  }
  await sink.initialize({ force: o.force, resume: o.resume });
  if (!o.resume) startOver(work, o.force, 'build');
  takeOver(work, o.resume);
  const pool = createPool(o.workers, io.signal);
  let store: SpillingStore | undefined;
  let keepWork = false, failed = false;
  let planned = false, tiling = false;
  try {
    store = new SpillingStore(path.join(spillRoot(o, work), 'level-0'), storeBudget(config), 'fresh', true);
    const planFile = await plan(inputs, config, work, pool, store, io, t0, 1, previous);
    planned = true;
    const units = new UnitLog(work, planFile.id);
    if (previous && config.archive !== 'none') healBuildParts(work, units, io);
    sayRemoved(await beginOutput(sink, work, { ...o, command: 'build' }, layoutOf(planFile.plan)), io);
    tiling = true;
    const ctx: RunContext = { config, planFile, sink, work, units, pool, io, t0, census: previous && resumeCensus(config, io, planFile.plan.dims) };
    const tTile = performance.now();
    const levels = await tileLevels(ctx, planFile.units, store, true);
    store.close();
    return await finalize(ctx, levels, secondsSince(tTile));
  } catch (err) {
    failed = true;
    const outcome = failedBuild(err, work, { planned, tiling, resume: o.resume, callersWork: io.work !== undefined });
    keepWork = outcome.keep;
    throw outcome.error;
  } finally {
    // A failure that keeps nothing leaves nothing behind, even when closing fails too (a full disk fails the part's close).
    await cleanUp(
      failed, () => store?.close(), () => sink.close?.(), () => pool.close(), () => keepWork && work.removeFolder('spill'), () => (keepWork ? work.release() : work.destroy()),
      () => failed && !keepWork && sink.abandon?.(),
    );
  }
}

/**
 * Runs every cleanup step, each even when one before it threw. The first error is thrown once all have run, unless
 * the build failed already: its own error says more.
 */
async function cleanUp(failed: boolean, ...steps: (() => unknown)[]): Promise<void> {
  let first: { error: unknown } | undefined;
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      first ??= { error };
    }
  }
  if (first && !failed) throw first.error;
}

/** `mudm-tiles plan`: one streaming pass that fixes world, zooms, fields and units, written to OUT/.mudm-work. */
export async function planShardedBuild(inputs: InputSpec[], given: Partial<Options>, io: BuildIO = {}): Promise<Planned & { again?: true }> {
  const config = await configOf(given, {}, true, io.onWarning);
  const o = config.options;
  if (o.tmpDir !== undefined) throw new UsageError(`--tmp-dir ${o.tmpDir} does not apply to plan: it keeps every record in the work directory, where the shards read them`);
  const work = workDirFor(o, io.work, io.processes);
  const again = o.force ? undefined : plannedAlready(work, inputs, config);
  if (again) return again;
  const sink = outputSink(o.out, config.archive, config.tileCompression, work, io, { kind: 'plan' });
  refuseRunning(work, o.force, false);
  refuseClaimed(work, o.force, false, o.out);
  await sink.initialize({ force: o.force, resume: false });
  if (work.root === undefined) throw new UsageError('plan needs a work directory on disk');
  startOver(work, o.force, 'plan');
  // Recorded while it reads, so that no other build or plan takes the place, nor a retry after a kill finds it
  // nobody's; removed once the plan is written.
  takeOver(work, false);
  const pool = createPool(o.workers, io.signal);
  try {
    // Shards on other machines read the units from the work directory: always on disk.
    const store = new SpillingStore(path.join(work.root, PLANNED_RECORDS), 0, 'fresh', true);
    const planFile = await plan(inputs, config, work, pool, store, io, performance.now(), o.shards, undefined, true);
    // Shards write tiles next: what an earlier build left (with --force) must not mix with them.
    sayRemoved(await beginOutput(sink, work, { ...o, resume: false, command: 'plan' }, layoutOf(planFile.plan)), io);
    // The plan is whole: shards, on other machines maybe, work in what it leaves (copied between workflow steps, where
    // each step's own files must be its own), and its owner record has done its work.
    work.release();
    work.removeFolder(OWNER_FILE);
    return { units: planFile.units.length, shards: planFile.shards, features: planFile.read.read, lost: plannedFeatures(planFile.read), workDir: work.root };
  } catch (err) {
    // A plan that failed (a full disk, invalid input) leaves no work directory that shards could take for one.
    work.destroy();
    sink.abandon?.();
    throw err;
  } finally {
    work.release();
    await pool.close();
  }
}

/** `mudm-tiles build-shard OUT --shard I`: tiles the units of shard I and writes its completion marker. Idempotent. */
export async function buildShard(given: Partial<Options>, shard: number, io: BuildIO = {}, from = '--shard'): Promise<{ units: number; skipped: number; finalized?: boolean }> {
  // Formats, zooms and layers come from the plan; only how to run (workers, budget) comes from these options.
  const config = await configOf(given, {}, false, io.onWarning);
  const work = workDirFor(config.options, io.work, io.processes);
  if (finalizedAlready(work, config.options.out, io, shard)) return { units: 0, skipped: 0, finalized: true };
  // Before the shard's index means anything, and before it records itself there (an interrupted build's plan has 1).
  refuseNotPlanned(work, config.options.out, shard);
  const planFile = loadPlan(work, config.options.out);
  checkShardIndex(work, planFile, shard, from);
  // A build --force or --resume on this machine must not take the work directory from under a shard running here,
  // nor may a second run of the same shard write its parts at once.
  ownStep(work, `shard-${shard}`, `build-shard: shard ${shard} is running already`);
  // From the claim on, every way out releases it: a claim left behind would keep this process's later runs out.
  let sink: TileSink | undefined, pool: Pool | undefined;
  let failed = false;
  try {
    const step: Step = { kind: 'shard', shard };
    const units = shardUnits(planFile.units, shard, planFile.shards);
    refuseUnplanned(work, 'build-shard', units, planFile);
    if (planFile.archive) refuseBuildParts(work, 'build-shard');
    const log = new UnitLog(work, planFile.id);
    healShardParts(work, step, units, log, planFile.id, io);
    sink = outputSink(config.options.out, planFile.archive ?? 'none', planFile.tileCompression ?? 'auto', work, io, step, planFile.plan);
    pool = createPool(config.options.workers, io.signal);
    // Reads the planned records from the work directory; nothing is appended, so the store's spill budget is 0.
    const store = new SpillingStore(path.join(work.root as string, PLANNED_RECORDS), 0, 'existing');
    const { resumed } = await tileLevels({ config, planFile, sink, work, units: log, pool, io, t0: performance.now() }, units, store, false);
    markShardDone(work, shard, units, planFile, partsOf(work, step));
    return { units: units.length, skipped: resumed };
  } catch (err) {
    failed = true;
    // Finalized while it ran (this a duplicate of a shard done): the output is whole, and there is nothing to do.
    if (finalizedAlready(work, config.options.out, io, shard)) return { units: 0, skipped: 0, finalized: true };
    throw failedStep(err, work, `shard ${shard}`, `run build-shard --shard ${shard} again`);
  } finally {
    // A part's close fails too on a full disk: the error in flight, which says what to do, is the one thrown.
    await cleanUp(failed, () => work.release(), () => work.close(), () => sink?.close?.(), () => pool?.close());
  }
}

/** `mudm-tiles finalize OUT`: checks every shard, tiles the coarse levels, writes overview, report, descriptor; cleans up. */
export async function finalizeShardedBuild(given: Partial<Options>, io: BuildIO = {}): Promise<BuildReport> {
  // Formats, zooms and layers come from the plan; only how to run (workers, budget) comes from these options.
  const config = await configOf(given, {}, false, io.onWarning);
  const work = workDirFor(config.options, io.work, io.processes);
  const done = finalizedAlready(work, config.options.out, io);
  if (done) return done;
  refuseNotPlanned(work, config.options.out);
  const planFile = loadPlan(work, config.options.out);
  // Two at once would append to one part and rename it in turn: an archive of mixed bytes under the final name.
  ownStep(work, 'finalize', `finalize: ${config.options.out} is being finalized already`);
  // From the claim on, every way out releases it (see buildShard).
  let sink: TileSink | undefined, pool: Pool | undefined;
  let failed = false;
  try {
    const units = new UnitLog(work, planFile.id);
    if (planFile.archive) refuseBuildParts(work, 'finalize');
    refuseUnplanned(work, 'finalize', planFile.units, planFile);
    checkShardsDone(work, planFile, units, (shard) => partsOf(work, { kind: 'shard', shard }));
    sink = outputSink(config.options.out, planFile.archive ?? 'none', planFile.tileCompression ?? 'auto', work, io, { kind: 'finalize' }, planFile.plan);
    // What finalize writes may only replace what a build wrote (a finalize run before): checked before anything goes.
    await sink.initialize({ force: config.options.force, resume: true });
    // A finalize killed part-way and run again: what its writes left half done goes (archives continue their parts).
    if (planFile.archive === undefined) await sink.begin({ force: false, resume: true, layout: layoutOf(planFile.plan) });
    pool = createPool(config.options.workers, io.signal);
    const ctx: RunContext = { config, planFile, sink, work, units, pool, io, t0: performance.now() };
    // The shards tiled level 0 with the plan's thresholds: where a tile was still over the budget, it is tiled again
    // here (from the records they read), then every level above. Only the levels above count as resumed.
    const tStart = performance.now();
    const levels = await tileLevels(ctx, planFile.units, new SpillingStore(path.join(work.root as string, PLANNED_RECORDS), 0, 'existing'), true);
    const totals = sumMarkers(planFile.plan, levels.markers);
    if (planFile.archive === undefined && !io.sink && config.options.out !== undefined) refuseLostTiles(config.options.out, totals.byZoom, {
      dims: planFile.plan.dims, units: planFile.units, shards: planFile.shards, markers: levels.markers[0] ?? [],
    });
    const report = await finalize(ctx, { ...levels, resumed: levels.resumed - planFile.units.length }, secondsSince(tStart), totals).catch((err: unknown) => {
      throw shardPartError(err, work);
    });
    work.destroy();
    return report;
  } catch (err) {
    failed = true;
    throw failedStep(err, work, 'finalize', 'run finalize again');
  } finally {
    await cleanUp(failed, () => work.release(), () => work.close(), () => sink?.close?.(), () => pool?.close());
  }
}

/**
 * A zoom range asked for whose finest tiles are narrower than an image pixel is refused: each zoom beyond quadruples
 * the tiles of a cell for nothing (zoom 30 over a 1024-px world: 10^14 tiles a cell, a build that never ends). One of
 * tiles a few pixels wide is warned of.
 */
function checkFinestZoom(side: number, maxZoom: number, o: Options, io: BuildIO): void {
  const deepest = Math.floor(Math.log2(side));
  if (o.maxZoom === undefined && o.minZoom === 0) return;
  const given = o.maxZoom !== undefined ? `--max-zoom ${o.maxZoom}` : `--min-zoom ${o.minZoom}`;
  // Tiles of a few pixels are many and small: 2,000 cells at tiles of 1 px wrote a million of them (3.8 GB).
  const tile = side / 2 ** maxZoom;
  if (maxZoom <= deepest && tile < 32) io.onWarning?.(`${given} makes the finest tiles ${tile} image pixel(s) wide (the world is ${side} px): up to ${(4 ** maxZoom).toLocaleString('en-US')} tiles per plane at that zoom, each of a few pixels; by default the finest tiles span 256–512 px`, { event: 'tiny-tiles', zoom: maxZoom, tilePixels: tile });
  if (maxZoom <= deepest) return;
  throw new UsageError(`${given} makes the finest tiles 1/${2 ** (maxZoom - deepest)} of an image pixel wide (the world is ${side} px): give a zoom of at most ${deepest} (tiles of one pixel)`);
}

/**
 * Reads the inputs into `store` and writes the plan; a build with no valid feature ends here. With --resume
 * (`previous`, the interrupted build's plan), checks that the plan read now is the same.
 */
async function plan(inputs: InputSpec[], config: BuildConfig, work: WorkDir, pool: Pool, store: SpillingStore, io: BuildIO, t0: number, shards: number, previous?: PlanFile, forShards = false): Promise<PlanFile> {
  const o = config.options;
  const lines = fingerprintLines(inputs, config);
  if (!previous) work.removeFolder('units');
  const sketch = config.lod === 'auto' ? new TileSketch(config.formats.pbf ? 'pbf' : 'json') : undefined;
  const fewSketch = sketch && config.coarseFields ? new TileSketch(sketch.format) : undefined;
  const read = await readInputs(inputs, config, pool, store, io, t0, spillRoot(o, work), sketch, fewSketch);
  io.collect?.();
  // Spilled records wait in memory in part: shards (other processes) read them from their files.
  store.flush();
  if (read.valid === 0) throw new DataError(noValidFeature(inputs, read));
  if (store.keys().length === 0) throw new DataError(nothingPlaced(inputs, read, config));
  const streamed = streamDigests(inputs);
  const { plan: buildPlan, units } = planBuild(config, { ...read, sketch, fewSketch }, store.keys(), (k) => store.bytesOf(k), (k, side) => store.wideBytesOf(k, side));
  checkFinestZoom(buildPlan.world.side, buildPlan.maxZoom, o, io);
  if (previous) {
    // A resumed build keeps the thresholds the interrupted one tiled with (raised ones, and how often); the rest must match.
    const { thresholds, raised, spareFrom, spareSizes, corrections } = previous.plan;
    Object.assign(buildPlan, { thresholds, raised, spareFrom, spareSizes, corrections });
    checkSameStreams(previous, streamed, work);
    checkSamePlan(previous, buildPlan, units, work);
  }
  if (buildPlan.outliers) io.onWarning?.(outlierWarning(buildPlan.outliers), { event: 'outliers', ...buildPlan.outliers });
  // Which channels there are, and how many planes a field made, is known once everything is read and planned.
  for (const w of [everyChannelWarning(buildPlan, read), manyPlanesWarning(config, buildPlan.planes, read.valid), coarseFieldsWarning(config, read.stats), noCoarseZoomWarning(config, buildPlan)]) if (w) io.onWarning?.(...w);
  const planFile: PlanFile = {
    version: PLAN_VERSION, fingerprint: fingerprintOfLines(lines), fingerprintLines: lines, plan: buildPlan, read, units, shards, spilled: store.isSpilled, readSeconds: secondsSince(t0),
    ...(streamed ? { streamed } : {}),
    ...(store.sharedSize > 0 ? { sharedBytes: store.sharedSize } : {}),
    meta: metaOf(o),
    preview: await planPreview(o.preview, o.image ? path.resolve(o.image) : undefined, buildPlan, work),
  };
  if (config.archive !== 'none') planFile.archive = config.archive;
  if (config.tileCompression !== 'auto') planFile.tileCompression = config.tileCompression;
  planFile.id = previous?.id ?? randomBytes(8).toString('hex');
  if (forShards) {
    planFile.forShards = true;
    // The record files as flushed: a shard or finalize refuses one of another size (cut short on the way) at its start.
    planFile.recordBytes = recordSizes(store);
  }
  savePlan(work, planFile);
  return planFile;
}

/** Says what --force removed, through the caller's hook. */
function sayRemoved(removal: Removal | void, io: BuildIO): void {
  if (removal) io.onRemoved?.(removal);
}

/** Once every level is tiled: previews, the overview descriptor of each plane, the report, and the descriptor last. */
async function finalize(ctx: RunContext, upper: LevelsOutcome, tileSeconds: number, totals = sumMarkers(ctx.planFile.plan, upper.markers)): Promise<BuildReport> {
  const { plan: p, meta, read, readSeconds } = ctx.planFile;
  const { sink } = ctx;
  const tDescribe = performance.now();
  refuseNoTiles(sink, ctx.config.options.out, p, totals.byZoom);
  const assets = ctx.planFile.preview.enabled ? await writePreviews(ctx, upper.markers[0]) : undefined;
  const input: DescribeInput = {
    plan: p, stats: read.stats, pointified: totals.pointified, thinned: totals.thinned, keptFraction: totals.keptFraction,
    ids: read.ids, vocabularies: read.collection.vocabularies, meta, assets,
  };
  if (p.formats.json) {
    for (const plane of p.planes) {
      const at = tilePath(0, 0, 0, plane, p.dims, 'json');
      await sink.write(at, `${JSON.stringify(overviewDescriptor(input, plane, at), null, 2)}\n`);
    }
  }
  // Under -o DIR --archive pmtiles the descriptor lists the archives (the overviews do not: they are tiles, in them);
  // a JSON archive always holds its plane's overview, a PBF one only where the plane's units wrote PBF tiles.
  const withPbf = ctx.planFile.archive === 'planes' ? planesWithPbf(upper.markers) : undefined;
  const archives = withPbf ? archiveAssets(p.dims, p.planes, p.formats, (plane, format) => format === 'json' || withPbf.has(planeKey(plane))) : [];
  const descriptor = tilesetDescriptor(archives.length ? { ...input, assets: [...(assets ?? []), ...archives] } : input);
  const report = buildReport(ctx, totals, descriptor, {
    read, units: upper.units, resumed: upper.resumed,
    timings: { read: readSeconds, tile: tileSeconds, describe: secondsSince(tDescribe), total: secondsSince(ctx.t0) },
  });
  await sink.write('build-report.json', `${JSON.stringify(report, null, 2)}\n`);
  for (const n of thinOverviewNotices(ctx.config, p, descriptor.vector_layers)) ctx.io.onInfo?.(...n);
  // The descriptor goes last: its presence means the pyramid is complete.
  await sink.write('tileset.json', `${JSON.stringify(descriptor, null, 2)}\n`);
  await sink.finish();
  ctx.io.onProgress?.({ phase: 'done', elapsed: secondsSince(ctx.t0) });
  return report;
}
