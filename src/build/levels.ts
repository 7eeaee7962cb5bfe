// Tile stage of a build, level by level: a level's units go through the pool, their tiles to the sink, then each
// unit's marker (and its reduced features for the level above) to the work directory.
import path from 'node:path';
import pLimit from 'p-limit';
import { SpillingStore } from '../stages/partition.js';
import { planUpperUnits, type UnitPlan } from '../stages/plan.js';
import type { TileTask, UnitResult } from '../stages/unit.js';
import { runOrdered } from '../worker/pool.js';
import { secondsSince, storeBudget, throwIfAborted, type RunContext } from './context.js';
import { isUnitDone, readUnitMarker, removeUnitMarker, savePlan, spillRoot, writeUnitMarker, type UnitMarker } from './state.js';
import { raiseThresholds } from '../stages/thinning.js';
import { previewPatch } from './report.js';

/**
 * Tiles the units of one level that have no marker yet, writing tiles, then each unit's marker. Returns how many were
 * skipped. With `retain`, records stay in the store (copied to the workers), for a level that may be tiled again.
 */
export async function tileLevel(ctx: RunContext, level: number, units: UnitPlan[], store: SpillingStore, retain = false): Promise<number> {
  const { plan } = ctx.planFile;
  const lv = plan.levels[level];
  const next = plan.levels[level + 1];
  const todo = units.filter((u) => !isUnitDone(ctx.work, level, u.key));
  // A source cell may feed several units (cells smaller than it): its records leave memory after its last reader.
  const lastReader = new Map<string, number>();
  todo.forEach((u, i) => u.sources.forEach((src) => lastReader.set(src, i)));
  const limit = pLimit(16);
  let done = units.length - todo.length, tiles = 0, bytes = 0;
  await runOrdered(todo.map((u, i) => ({ u, i })), ctx.config.options.workers * 2, ({ u, i }) => {
    throwIfAborted(ctx.io.signal);
    // Records that leave the store move to the worker; those another unit still reads are copied.
    const moved: Uint8Array[] = [];
    const sources = u.sources.map((src) => {
      if (retain || lastReader.get(src) !== i) return store.peek(src);
      const taken = store.take(src);
      if ('chunks' in taken) moved.push(...taken.chunks);
      return taken;
    });
    const task: TileTask = {
      kind: 'tile', unit: u, dims: plan.dims, next: next ? { zoom: next.zoom } : undefined, sources,
      spec: {
        side: plan.world.side, minZoom: Math.max(lv.zoom, plan.minZoom), maxZoom: lv.topZoom, finestZoom: plan.maxZoom, cell: u.cell,
        layers: plan.layers.map((id) => ({ id })), formats: plan.formats, lod: plan.lod, tileBudget: plan.tileBudget, collection: plan.collection,
        thresholds: plan.thresholds,
      },
      preview: level === 0 ? previewPatch(ctx.planFile, u) : undefined,
    };
    return ctx.pool.tile(task, moved);
  }, async (r: UnitResult) => {
    const marker = markerOf(r, plan.formats.pbf, plan.maxZoom);
    if (r.preview) marker.preview = r.preview.area;
    const files = r.tiles.filter((t) => !isOverview(t));
    await Promise.all(files.map((t) => limit(() => ctx.sink.write(t.path, t.bytes))));
    // The marker comes after every tile of the unit, flushed (an archive buffers them): a unit with a marker never needs redoing.
    await ctx.sink.flush?.();
    writeUnitMarker(ctx.work, level, marker, r.next.map(([, b]) => b), r.preview?.rgba);
    done++;
    tiles += files.length;
    bytes += files.reduce((n, t) => n + t.bytes.byteLength, 0);
    ctx.io.onProgress?.({ phase: 'tile', level, units: done, unitsTotal: units.length, tiles, bytes, elapsed: secondsSince(ctx.t0) });
  });
  return units.length - todo.length;
}

/** The zoom-0 JSON tile of a plane is its overview descriptor, written by finalize. */
function isOverview(t: UnitResult['tiles'][number]): boolean {
  return t.z === 0 && t.path.endsWith('.json');
}

/**
 * A unit's marker: its tiles and bytes per zoom and format, its largest tile, thinning counts and needs, the tiles it
 * wrote below the finest zoom, next-level record sizes.
 */
function markerOf(r: UnitResult, pbf: boolean, finest: number): UnitMarker {
  const marker: UnitMarker = {
    key: r.key, byZoom: {}, largest: null, pointified: r.pointified, kept: r.kept, needs: r.needs, coarse: [], notInPbf: r.notInPbf,
    next: r.next.map(([key, b]) => [key, b.byteLength]),
  };
  for (const t of r.tiles) {
    if (isOverview(t)) continue;
    if (t.z < finest) marker.coarse.push(t.path);
    const zr = (marker.byZoom[t.z] ??= { json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 }, features: 0 });
    const f = t.path.endsWith('.json') ? zr.json : zr.pbf;
    f.tiles++;
    f.bytes += t.bytes.byteLength;
    // Features are counted once per tile: in its PBF file, or in its JSON file when there is no PBF.
    if (t.path.endsWith('.pbf') || !pbf) zr.features += t.features;
    if (!marker.largest || t.bytes.byteLength > marker.largest.bytes || (t.bytes.byteLength === marker.largest.bytes && t.path < marker.largest.path)) {
      marker.largest = { path: t.path, bytes: t.bytes.byteLength };
    }
  }
  return marker;
}

/**
 * Tiles the levels above 0 from the reduced features each level left in its markers. Returns every level's markers,
 * each level in unit order, with how many units were skipped (resumed) and how many there were.
 */
export async function tileUpperLevels(ctx: RunContext): Promise<{ markers: UnitMarker[][]; resumed: number; units: number }> {
  const { plan, units: baseUnits } = ctx.planFile;
  const markers: UnitMarker[][] = [];
  let resumed = 0;
  let total = baseUnits.length;
  let below = baseUnits;
  for (let level = 1; level < plan.levels.length; level++) {
    throwIfAborted(ctx.io.signal);
    const store = new SpillingStore(path.join(spillRoot(ctx.config.options, ctx.work), `level-${level}`), storeBudget(ctx.config));
    try {
      // Markers are read in unit order, so what a unit of this level reads does not depend on who tiled the level
      // below; each marker's records for this level go into the store as it is read, not all at once.
      markers.push(below.map((u) => readUnitMarker(ctx.work, level - 1, u.key, store)));
      const units = planUpperUnits(store.keys(), level, plan.levels[level]);
      total += units.length;
      resumed += await tileLevelWithinBudget(ctx, level, units, store);
      below = units;
    } finally {
      store.close();
    }
  }
  markers.push(below.map((u) => readUnitMarker(ctx.work, plan.levels.length - 1, u.key)));
  return { markers, resumed, units: total };
}

/**
 * Tiles a level until every tile is within the budget: where a unit found a tile over it (the estimate missed), the
 * thresholds of that zoom and the coarser ones are raised for the whole build, the tiles the level wrote below the
 * finest zoom are removed with its markers, and the level is tiled again (its records stay in the store for that).
 * Returns how many units the first pass skipped.
 */
export async function tileLevelWithinBudget(ctx: RunContext, level: number, units: UnitPlan[], store: SpillingStore): Promise<number> {
  const skipped = await tileLevel(ctx, level, units, store, true);
  for (;;) {
    const markers = units.map((u) => readUnitMarker(ctx.work, level, u.key));
    const plan = ctx.planFile.plan;
    const raised = raiseThresholds(plan.thresholds, markers.map((m) => m.needs), plan.minZoom, plan.maxZoom);
    if (raised.length === 0) return skipped;
    // Markers go before the raised plan is saved: an interruption in between redoes units, never keeps stale ones.
    for (const m of markers) {
      for (const p of m.coarse) await ctx.sink.remove(p);
      removeUnitMarker(ctx.work, level, m.key);
    }
    plan.raised = [...new Set([...plan.raised, ...raised])].sort((a, b) => a - b);
    savePlan(ctx.work, ctx.planFile);
    await tileLevel(ctx, level, units, store, true);
  }
}
