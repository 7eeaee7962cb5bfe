// Tile stage of a build, all levels at once: a unit goes to the pool as soon as its inputs are final (level 0 at
// once, a coarser cell when every finer unit that may send it features is done); its tiles go to the sink (or are
// written by the worker), then its marker and its features reduced for the level above to the work directory.
import path from 'node:path';
import pLimit from 'p-limit';
import type { TileFormat, WriteOptions } from '../io/sink.js';
import { writeFailure } from '../io/dirs.js';
import { SpillingStore, type UnitSource } from '../stages/partition.js';
import { planUpperUnits, readsPart, type BuildPlan, type UnitPlan } from '../stages/plan.js';
import type { TileSpec } from '../stages/tile/spec.js';
import { raiseThresholds } from '../stages/thresholds.js';
import { compareUnitKeys } from '../stages/unit-key.js';
import type { UnitResult } from '../stages/unit.js';
import { COLLECT_HEAP, HEAVY_BATCH, isOverview, type BatchUnit, type TileBatch, type TileBatchResult } from '../worker/protocol.js';
import { flightBudget, secondsSince, storeBudget, throwIfAborted, type RunContext } from './context.js';
import { previewPatch } from './report.js';
import { LevelGraph } from './schedule.js';
import { savePlan, spillRoot } from './state.js';
import { unreadableRecords } from './planned-records.js';
import type { UnitMarker } from './unit-log.js';

/**
 * Records per batch sent to a worker: one message carries many small units (a real slide's units hold a few dozen
 * cells each), few enough that both workers get batches until the end.
 */
const BATCH_BYTES = 1 << 20;
/** How a tile the workers gzipped goes to the sink (one object, not one per tile). */
const GZIPPED: WriteOptions = { gzipped: true };

export interface LevelsOutcome {
  /** Every level's markers, each level in unit order. */
  markers: UnitMarker[][];
  /** Units skipped because their markers existed (resumed), and all units, over the levels tiled. */
  resumed: number;
  units: number;
}

/**
 * Tiles the units of level 0 (`base`, records in `store`), and with `upper` every level above as its inputs become
 * final. Without `upper` (a shard), level 0 alone, with the plan's thresholds as they are.
 *
 * With `upper`, every tile ends within the budget: where a unit found a tile over it (the plan's estimate missed),
 * that level is finished with the thresholds it was started with, the thresholds of its zooms and the coarser ones
 * are raised from all its units' needs (as if the levels ran one after the other, so the result does not depend on
 * which unit finished first), what that level and the coarser ones wrote is removed, and the run starts again from
 * the markers left, as a resumed build would. Level-0 records therefore stay in `store` until the end.
 */
export async function tileLevels(ctx: RunContext, base: UnitPlan[], store: SpillingStore, upper: boolean): Promise<LevelsOutcome> {
  let resumed: number | undefined;
  for (;;) {
    const run = new LevelRun(ctx, base, store, upper ? ctx.planFile.plan.levels.length : 1, upper);
    let out: LevelsOutcome & { restart?: number };
    try {
      out = await run.run();
    } finally {
      run.close();
    }
    // Units of a run after a correction are not the user's resumed ones.
    resumed ??= out.resumed;
    if (out.restart === undefined) return { markers: out.markers, resumed, units: out.units };
    await raiseAndUndo(ctx, out.restart, out.markers);
  }
}

/**
 * Raises the thresholds from the needs of every unit of `level`, then removes the markers of that level and the
 * coarser ones, and the tiles they wrote below the finest zoom. Markers go before the raised plan is saved: an
 * interruption in between redoes units, never keeps stale ones.
 */
async function raiseAndUndo(ctx: RunContext, level: number, markers: UnitMarker[][]): Promise<void> {
  const plan = ctx.planFile.plan;
  const raised = raiseRule(plan, markers[level]);
  // The removals stand over the tiles they remove, and what is tiled again over them, whichever process writes which
  // (a shard run again after finalize's correction was killed).
  ctx.sink.setEpoch?.(epochOf(plan, true));
  const undone: [number, string][] = [];
  for (let l = level; l < markers.length; l++) {
    for (const m of markers[l]) {
      for (const p of m.coarse) await ctx.sink.remove(p);
      undone.push([l, m.key]);
    }
  }
  // The removals reach the disk before the markers go (an archive part buffers them): a kill in between would leave
  // tiles that the units, tiled again, no longer write.
  await ctx.sink.flush?.();
  ctx.units.remove(undone);
  plan.raised = [...new Set([...plan.raised, ...raised])].sort((a, b) => a - b);
  plan.corrections = (plan.corrections ?? 0) + 1;
  savePlan(ctx.work, ctx.planFile);
  ctx.sink.setEpoch?.(epochOf(plan));
}

/** The epoch of what is written (`TileSink.setEpoch`): two per correction so far, one more while one removes tiles. */
function epochOf(plan: Pick<BuildPlan, 'corrections'>, removing = false): number {
  return 2 * (plan.corrections ?? 0) + (removing ? 1 : 0);
}

/**
 * Raises, in place, what a zoom draws from units' markers: the thresholds their tiles need, and `spareFrom` above the
 * zooms where spared features alone took more than SPARED_SHARE of a tile's budget. Returns the zooms whose rule changed.
 */
export function raiseRule(rule: Pick<BuildPlan, 'thresholds' | 'spareFrom' | 'minZoom' | 'maxZoom'>, markers: UnitMarker[]): number[] {
  // Sparing ends above the finest zoom where a unit's spared features alone took too much of a tile (-1: none did).
  const spareFrom = Math.max(rule.spareFrom, ...markers.map((m) => m.unspare + 1));
  // Needs of the zooms that stop sparing were worked out with the spared features whole, leaving the rest little
  // room: those zooms are measured again rather than thinned by them.
  const needs = markers.map((m) => (spareFrom > rule.spareFrom ? m.needs.map((n, z) => (z < spareFrom ? 0 : n)) : m.needs));
  const raised = raiseThresholds(rule.thresholds, needs, rule.minZoom, rule.maxZoom);
  for (let z = Math.max(rule.spareFrom, rule.minZoom); z < spareFrom; z++) if (!raised.includes(z)) raised.push(z);
  rule.spareFrom = spareFrom;
  return raised.sort((a, b) => a - b);
}

interface InFlight { level: number; units: UnitPlan[]; bytes: number; done: Promise<{ result?: TileBatchResult; error?: unknown }> }

class LevelRun {
  private readonly plan: RunContext['planFile']['plan'];
  private readonly stores: SpillingStore[];
  /** Per level above 0: bytes of records its store holds in memory (all of them share half the store budget). */
  private readonly held: number[];
  private graph: LevelGraph;
  /** Per level: cells that received records (a cell is a unit only if it did). */
  private readonly received: Set<string>[];
  /** Per level: units whose inputs are final, in the order they became so. */
  private readonly ready: UnitPlan[][];
  private readonly markers: Map<string, UnitMarker>[];
  /** Level 0 of a shard: a source cell may feed several units; its records leave memory after its last reader. */
  private readonly lastReader = new Map<string, UnitPlan>();
  private readonly inFlight = new Set<InFlight>();
  /** Where workers write tiles themselves (a directory sink), else undefined: tile bytes come back to this thread. */
  private readonly writeTo: string | undefined;
  /** Formats whose tiles the workers gzip, as the sink stores them (when tile bytes come back). */
  private readonly gzip: TileFormat[] | undefined;
  /** Level-0 units smaller than the stored cells they read, or reading those around them, keep only their part of them. */
  private readonly part: boolean;
  private readonly limit = pLimit(16);
  /** The finest level where a unit found a tile over the budget: nothing coarser is started, the run ends there. */
  private restart: number | undefined;
  private resumed = 0;
  private units = 0;
  private finished = 0;
  private tiles = 0;
  private bytes = 0;

  constructor(private readonly ctx: RunContext, base: UnitPlan[], store: SpillingStore, private readonly levels: number, private readonly correct: boolean) {
    this.plan = ctx.planFile.plan;
    this.stores = [store];
    for (let l = 1; l < levels; l++) this.stores.push(new SpillingStore(path.join(spillRoot(ctx.config.options, ctx.work), `level-${l}`), Infinity));
    this.held = new Array<number>(levels).fill(0);
    this.received = Array.from({ length: levels }, () => new Set<string>());
    this.ready = Array.from({ length: levels }, () => []);
    this.markers = Array.from({ length: levels }, () => new Map());
    this.part = readsPart(this.plan.world.side, this.plan.levels[0].zoom, this.plan.cellSize);
    const zooms = Array.from({ length: this.plan.maxZoom - this.plan.minZoom + 1 }, (_, i) => this.plan.minZoom + i);
    this.writeTo = ctx.sink.directTiles?.(zooms);
    ctx.sink.setEpoch?.(epochOf(this.plan));
    this.gzip = this.writeTo === undefined ? ctx.sink.gzips?.() : undefined;
    this.graph = new LevelGraph(this.plan, ctx.planFile.read.halfExtent, 0, base.map((u) => u.key), levels);
    const todo = new Set(base.filter((u) => !ctx.units.has(0, u.key) || this.lostTiles(0, u)));
    for (const u of todo) for (const src of u.sources) this.lastReader.set(src, u);
    this.units = base.length;
    for (const u of base) {
      if (todo.has(u)) this.ready[0].push(u);
      else this.resume(0, u);
    }
  }

  async run(): Promise<LevelsOutcome & { restart?: number }> {
    try {
      for (;;) {
        this.fill();
        if (this.inFlight.size === 0) break;
        const batch = await Promise.race([...this.inFlight].map((b) => b.done.then(() => b)));
        this.inFlight.delete(batch);
        const { result, error } = await batch.done;
        if (error !== undefined) throw error;
        this.fill();
        await this.consume(batch, result as TileBatchResult);
      }
    } finally {
      await Promise.allSettled([...this.inFlight].map((b) => b.done));
    }
    if (this.restart === undefined && !this.graph.complete) throw new Error('internal: the tile stage ended with units whose inputs never became final');
    const byKey = (m: Map<string, UnitMarker>) => [...m.values()].sort((a, b) => compareUnitKeys(a.key, b.key));
    return { markers: this.markers.map(byKey), resumed: this.resumed, units: this.units, restart: this.restart };
  }

  /** Drops the records of the levels above 0 (level 0's store belongs to the caller). */
  close(): void {
    for (const s of this.stores.slice(1)) s.close();
  }

  /**
   * Sends batches while the window has room: coarser levels first (they are the ones the end of the build waits for),
   * none coarser than a level being corrected. Records in flight stay under `flightBudget` (a batch goes alone when it
   * is larger): a coarse unit of a PBF-only build holds hundreds of thousands of features, and several of them decoded
   * at once were its peak.
   */
  private fill(): void {
    const { workers } = this.ctx.config.options;
    const budget = flightBudget(this.ctx.config);
    for (;;) {
      let level = Math.min(this.ready.length - 1, this.restart ?? Infinity);
      while (level >= 0 && this.ready[level].length === 0) level--;
      if (level < 0 || this.inFlight.size >= workers * 2) return;
      if (this.inFlight.size > 0 && this.inFlightBytes() + this.unitBytes(level, this.ready[level][0]) > budget) return;
      throwIfAborted(this.ctx.io.signal);
      this.dispatch(level);
    }
  }

  /** Bytes of a unit's records, where they are now. */
  private unitBytes(level: number, unit: UnitPlan): number {
    return unit.sources.reduce((n, src) => n + this.stores[level].bytesOf(src), 0);
  }

  /** One batch of ready units of `level`: about BATCH_BYTES of records, and no more than a worker's share of what is ready. */
  private dispatch(level: number): void {
    const queue = this.ready[level];
    const most = Math.max(1, Math.ceil(queue.length / this.ctx.config.options.workers));
    const units: BatchUnit[] = [];
    const moved: Uint8Array[] = [];
    let bytes = 0;
    while (queue.length > 0 && units.length < most && bytes < BATCH_BYTES) {
      const unit = queue.shift() as UnitPlan;
      bytes += this.unitBytes(level, unit);
      const sources = unit.sources.map((src) => this.source(level, unit, src, moved));
      units.push({ unit, sources, preview: level === 0 ? previewPatch(this.ctx.planFile, unit) : undefined });
    }
    const batch: TileBatch = {
      kind: 'tiles', spec: this.spec(level), dims: this.plan.dims, units, writeTo: this.writeTo, gzip: this.gzip, part: level === 0 && this.part,
      next: level + 1 < this.plan.levels.length ? { zoom: this.plan.levels[level + 1].zoom } : undefined,
      collect: bytes >= HEAVY_BATCH && this.ctx.io.collect !== undefined ? COLLECT_HEAP : undefined,
    };
    const done = this.ctx.pool.tile(batch, moved).then((result) => ({ result }), (error: unknown) => ({ error }));
    this.inFlight.add({ level, units: units.map((u) => u.unit), bytes, done });
  }

  private inFlightBytes(): number {
    let n = 0;
    for (const b of this.inFlight) n += b.bytes;
    return n;
  }

  /**
   * Where a unit's records are: records that leave the store move to the worker; those another unit still reads,
   * and level 0's where a correction may tile the level again, are copied.
   */
  private source(level: number, unit: UnitPlan, src: string, moved: Uint8Array[]): UnitSource {
    const store = this.stores[level];
    if (level === 0 && (this.correct || this.lastReader.get(src) !== unit)) return store.peek(src);
    const taken = store.take(src);
    if ('chunks' in taken) moved.push(...taken.chunks);
    this.release(level, taken);
    return taken;
  }

  private spec(level: number): TileSpec {
    const p = this.plan;
    const lv = p.levels[level];
    return {
      side: p.world.side, minZoom: Math.max(lv.zoom, p.minZoom), maxZoom: lv.topZoom, finestZoom: p.maxZoom,
      layers: p.layers.map((id) => ({ id })), formats: p.formats, lod: p.lod, tileBudget: p.tileBudget, collection: p.collection,
      thresholds: p.thresholds, spareFrom: p.spareFrom, spareSizes: p.spareSizes, fewFields: p.fewFields,
    };
  }

  /** A finished batch: tiles the worker did not write go to the sink, then each unit's marker; coarser units may become ready. */
  private async consume(batch: InFlight, result: TileBatchResult): Promise<void> {
    if (result.unreadable) throw unreadableRecords(this.ctx.work, result.unreadable);
    const f = result.failed;
    if (f) throw writeFailure(Object.assign(new Error(f.message), { code: f.code }), f.path);
    const writes: Promise<void>[] = [];
    for (const r of result.units) {
      for (const t of r.tiles) if (t.bytes !== undefined && !isOverview(t)) writes.push(this.limit(() => this.ctx.sink.write(t.path, t.bytes as Uint8Array, t.gzipped ? GZIPPED : undefined)));
    }
    await Promise.all(writes);
    // A sink that buffers makes its tiles durable before any marker says they are there.
    await this.ctx.sink.flush?.();
    result.units.forEach((r, i) => this.finish(batch.level, batch.units[i], r));
  }

  /** Records a tiled unit: the marker comes after every tile of the unit, so a unit with a marker never needs redoing. */
  private finish(level: number, unit: UnitPlan, r: UnitResult): void {
    const marker = markerOf(r, this.plan.formats.pbf, this.plan.maxZoom);
    if (r.preview) marker.preview = r.preview.area;
    this.ctx.units.write(level, marker, r.next.map(([, b]) => b), r.preview?.rgba);
    if (level + 1 < this.levels) for (const [key, b] of r.next) this.append(level + 1, key, b);
    this.markers[level].set(unit.key, marker);
    this.finished++;
    for (const t of r.tiles) if (!isOverview(t)) { this.tiles++; this.bytes += t.size; }
    this.ctx.io.onProgress?.({
      phase: 'tile', level, units: this.finished + this.resumed, unitsTotal: this.units + this.graph.cells, tiles: this.tiles, bytes: this.bytes, elapsed: secondsSince(this.ctx.t0),
    });
    this.settled(level, unit.key, marker);
  }

  /** A unit finished by an earlier run: its marker, and its records for the level above from the work directory. */
  private resume(level: number, unit: UnitPlan): void {
    const up = level + 1 < this.levels ? { append: (key: string, b: Uint8Array) => this.append(level + 1, key, b) } : undefined;
    const marker = this.ctx.units.read(level, unit.key, up);
    this.markers[level].set(unit.key, marker);
    this.resumed++;
    this.settled(level, unit.key, marker);
  }

  /** Whether a finished unit lost tiles from OUT since (a resumed directory build): its marker goes, it is tiled again. */
  private lostTiles(level: number, unit: UnitPlan): boolean {
    const short = this.ctx.census?.short(unit, this.ctx.units.read(level, unit.key));
    if (short === undefined) return false;
    this.ctx.io.onWarning?.(`--resume: unit ${unit.key} (level ${level}) was marked done, but its output holds ${short}: it is tiled again`, { event: 'unit-tiles-lost', unit: unit.key, level });
    this.ctx.units.remove([[level, unit.key]]);
    return true;
  }

  /** A unit's marker is written: where it needs higher thresholds than the plan's, nothing coarser is started. */
  private settled(level: number, key: string, marker: UnitMarker): void {
    if (this.correct && (this.restart === undefined || level < this.restart)) {
      const { minZoom, maxZoom, spareFrom } = this.plan;
      const trial = { minZoom, maxZoom, spareFrom, thresholds: this.plan.thresholds.map((t) => [...t]) };
      if (raiseRule(trial, [marker]).length > 0) this.restart = level;
    }
    this.settle(level, key);
  }

  private append(level: number, key: string, bytes: Uint8Array): void {
    if (!this.graph.accepts(level, key)) throw new Error(`internal: records for cell ${key} of level ${level} after its inputs were final`);
    this.received[level].add(key);
    const store = this.stores[level];
    store.append(key, bytes);
    if (store.isSpilled) return;
    this.held[level] += bytes.byteLength;
    // The levels above 0 share half the store budget in memory: past it, the level holding most spills to disk.
    if (this.held.reduce((a, b) => a + b, 0) > storeBudget(this.ctx.config) / 2) {
      const most = this.held.indexOf(Math.max(...this.held));
      this.stores[most].spill();
      this.held[most] = 0;
    }
  }

  /** Records that left the store of `level` (above 0) no longer count against its memory. */
  private release(level: number, taken: UnitSource): void {
    if (level > 0 && 'chunks' in taken) this.held[level] -= taken.chunks.reduce((n, c) => n + c.byteLength, 0);
  }

  /** A cell is settled: cells above it whose inputs are now final become units (or settle at once when empty). */
  private settle(level: number, key: string): void {
    for (const k of this.graph.settle(level, key)) this.final(level + 1, k);
    // Features large enough to reach far: the level after the graph waits for all of it, then a new graph starts there.
    if (this.graph.complete && this.graph.end + 1 < this.levels) {
      const next = this.graph.end + 1;
      const cells = [...this.received[next]].sort(compareUnitKeys);
      this.graph = new LevelGraph(this.plan, this.ctx.planFile.read.halfExtent, next, cells, this.levels);
      for (const k of cells) this.final(next, k);
    }
  }

  /** Cell `key` of `level` has all its inputs. */
  private final(level: number, key: string): void {
    if (!this.received[level].has(key)) {
      this.settle(level, key);
      return;
    }
    const [unit] = planUpperUnits([key], level, this.plan.levels[level]);
    this.units++;
    if (!this.ctx.units.has(level, key) || this.lostTiles(level, unit)) {
      this.ready[level].push(unit);
      return;
    }
    // Its records were appended again by the resumed units below; they are not needed.
    this.release(level, this.stores[level].take(key));
    this.resume(level, unit);
  }
}

/**
 * A unit's marker: its tiles and bytes per zoom and format, its largest tile, thinning counts and needs, the tiles it
 * wrote below the finest zoom, next-level record sizes.
 */
function markerOf(r: UnitResult, pbf: boolean, finest: number): UnitMarker {
  const marker: UnitMarker = {
    key: r.key, byZoom: {}, largest: null, pointified: r.pointified, kept: r.kept, offered: r.offered, needs: r.needs, unspare: r.unspare, coarse: [], notInPbf: r.notInPbf,
    next: r.next.map(([key, b]) => [key, b.byteLength]),
  };
  for (const t of r.tiles) {
    if (isOverview(t)) continue;
    if (t.z < finest) marker.coarse.push(t.path);
    const zr = (marker.byZoom[t.z] ??= { json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 }, features: 0 });
    const f = t.path.endsWith('.json') ? zr.json : zr.pbf;
    f.tiles++;
    f.bytes += t.size;
    // Features are counted once per tile: in its PBF file, or in its JSON file when there is no PBF.
    if (t.path.endsWith('.pbf') || !pbf) zr.features += t.features;
    if (!marker.largest || t.size > marker.largest.bytes || (t.size === marker.largest.bytes && t.path < marker.largest.path)) {
      marker.largest = { path: t.path, bytes: t.size };
    }
  }
  return marker;
}
