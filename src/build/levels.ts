// Tile stage of a build, all levels at once: a unit goes to the pool as soon as its inputs are final (level 0 at
// once, a coarser cell when every finer unit that may send it features is done); its tiles go to the sink (or are
// written by the worker), then its marker and its features reduced for the level above to the work directory.
import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { describeFsError } from '../report/errors.js';
import { SpillingStore, type UnitSource, type UnitStore } from '../stages/partition.js';
import type { UnitPlan } from '../stages/plan.js';
import type { TileSpec } from '../stages/tile/spec.js';
import { compareUnitKeys, parseUnitKey } from '../stages/unit-key.js';
import type { UnitResult } from '../stages/unit.js';
import { isOverview, type BatchUnit, type TileBatch, type TileBatchResult } from '../worker/protocol.js';
import { secondsSince, storeBudget, throwIfAborted, type RunContext } from './context.js';
import { LevelGraph } from './schedule.js';
import { isUnitDone, readUnitMarker, spillRoot, writeUnitMarker, type UnitMarker } from './state.js';

/**
 * Records per batch sent to a worker: one message carries many small units (a real slide's units hold a few dozen
 * cells each), few enough that both workers get batches until the end.
 */
const BATCH_BYTES = 1 << 20;

export interface LevelsOutcome {
  /** Every level's markers, each level in unit order. */
  markers: UnitMarker[][];
  /** Units skipped because their markers existed (resumed), and all units, over the levels tiled. */
  resumed: number;
  units: number;
}

/**
 * Tiles the units of level 0 (`base`, records in `store`; none needed when every one has its marker), and with
 * `upper` every level above as its inputs become final. Without `upper` (a shard), level 0 alone.
 */
export async function tileLevels(ctx: RunContext, base: UnitPlan[], store: UnitStore | undefined, upper: boolean): Promise<LevelsOutcome> {
  const run = new LevelRun(ctx, base, store, upper ? ctx.planFile.plan.levels.length : 1);
  try {
    return await run.run();
  } finally {
    run.close();
  }
}

interface InFlight { level: number; units: UnitPlan[]; bytes: number; done: Promise<{ result?: TileBatchResult; error?: unknown }> }

class LevelRun {
  private readonly plan: RunContext['planFile']['plan'];
  private readonly stores: (UnitStore | undefined)[];
  /** Per level above 0: bytes of records its store holds in memory (all of them share half the store budget). */
  private readonly held: number[];
  private graph: LevelGraph;
  /** Per level: cells that received records (a cell is a unit only if it did). */
  private readonly received: Set<string>[];
  /** Per level: units whose inputs are final, in the order they became so. */
  private readonly ready: UnitPlan[][];
  private readonly markers: Map<string, UnitMarker>[];
  /** Level 0: a source cell may feed several units; its records leave memory after its last reader. */
  private readonly lastReader = new Map<string, UnitPlan>();
  private readonly inFlight = new Set<InFlight>();
  /** Where workers write tiles themselves (a directory sink), else undefined: tile bytes come back to this thread. */
  private readonly writeTo: string | undefined;
  private readonly limit = pLimit(16);
  private resumed = 0;
  private units = 0;
  private finished = 0;
  private tiles = 0;
  private bytes = 0;

  constructor(private readonly ctx: RunContext, base: UnitPlan[], store: UnitStore | undefined, private readonly levels: number) {
    this.plan = ctx.planFile.plan;
    this.stores = [store];
    for (let l = 1; l < levels; l++) this.stores.push(new SpillingStore(path.join(spillRoot(ctx.config.options, ctx.work), `level-${l}`), Infinity));
    this.held = new Array<number>(levels).fill(0);
    this.received = Array.from({ length: levels }, () => new Set<string>());
    this.ready = Array.from({ length: levels }, () => []);
    this.markers = Array.from({ length: levels }, () => new Map());
    const zooms = Array.from({ length: this.plan.maxZoom - this.plan.minZoom + 1 }, (_, i) => this.plan.minZoom + i);
    this.writeTo = ctx.sink.directTiles?.(zooms);
    this.graph = new LevelGraph(this.plan, ctx.planFile.read.halfExtent, 0, base.map((u) => u.key), levels);
    const todo = new Set(base.filter((u) => !isUnitDone(ctx.work, 0, u.key)));
    for (const u of todo) for (const src of u.sources) this.lastReader.set(src, u);
    this.units = base.length;
    for (const u of base) {
      if (todo.has(u)) this.ready[0].push(u);
      else this.resume(0, u);
    }
  }

  async run(): Promise<LevelsOutcome> {
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
    if (!this.graph.complete) throw new Error('internal: the tile stage ended with units whose inputs never became final');
    const byKey = (m: Map<string, UnitMarker>) => [...m.values()].sort((a, b) => compareUnitKeys(a.key, b.key));
    return { markers: this.markers.map(byKey), resumed: this.resumed, units: this.units };
  }

  close(): void {
    for (const s of this.stores.slice(1)) s?.close();
  }

  /**
   * Sends batches while the window has room: coarser levels first (they are the ones the end of the build waits for).
   * Records in flight stay under half the store budget (a batch goes alone when it is larger): a coarse unit of a
   * PBF-only build holds hundreds of thousands of features, and several of them decoded at once were its peak.
   */
  private fill(): void {
    const { workers } = this.ctx.config.options;
    const budget = storeBudget(this.ctx.config) / 2;
    for (;;) {
      let level = this.ready.length - 1;
      while (level >= 0 && this.ready[level].length === 0) level--;
      if (level < 0 || this.inFlight.size >= workers * 2) return;
      if (this.inFlight.size > 0 && this.inFlightBytes() + this.unitBytes(level, this.ready[level][0]) > budget) return;
      throwIfAborted(this.ctx.io.signal);
      this.dispatch(level);
    }
  }

  /** Bytes of a unit's records, where they are now. */
  private unitBytes(level: number, unit: UnitPlan): number {
    const store = this.stores[level] as UnitStore;
    let n = 0;
    for (const src of unit.sources) {
      const s = store.peek(src);
      n += 'chunks' in s ? s.chunks.reduce((m, c) => m + c.byteLength, 0) : fileSize(s.path);
    }
    return n;
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
      const sources = unit.sources.map((src) => this.source(level, unit, src, moved));
      for (const s of sources) bytes += 'chunks' in s ? s.chunks.reduce((n, c) => n + c.byteLength, 0) : fileSize(s.path);
      units.push({ unit, sources });
    }
    const batch: TileBatch = {
      kind: 'tiles', spec: this.spec(level), dims: this.plan.dims, units, writeTo: this.writeTo,
      next: level + 1 < this.plan.levels.length ? { zoom: this.plan.levels[level + 1].zoom } : undefined,
    };
    const done = this.ctx.pool.tile(batch, moved).then((result) => ({ result }), (error: unknown) => ({ error }));
    this.inFlight.add({ level, units: units.map((u) => u.unit), bytes, done });
  }

  private inFlightBytes(): number {
    let n = 0;
    for (const b of this.inFlight) n += b.bytes;
    return n;
  }

  /** Where a unit's records are: records that leave the store move to the worker; those another unit still reads are copied. */
  private source(level: number, unit: UnitPlan, src: string, moved: Uint8Array[]): UnitSource {
    const store = this.stores[level];
    if (store === undefined) throw new Error(`internal: unit ${unit.key} of level ${level} has no records to read`);
    if (level === 0 && this.lastReader.get(src) !== unit) return store.peek(src);
    const taken = store.take(src);
    if ('chunks' in taken) moved.push(...taken.chunks);
    this.release(level, taken);
    return taken;
  }

  private spec(level: number): Omit<TileSpec, 'cell'> {
    const p = this.plan;
    const lv = p.levels[level];
    return {
      side: p.world.side, minZoom: Math.max(lv.zoom, p.minZoom), maxZoom: lv.topZoom, finestZoom: p.maxZoom,
      layers: p.layers.map((id) => ({ id })), formats: p.formats, lod: p.lod, tileBudget: p.tileBudget, collection: p.collection,
    };
  }

  /** A finished batch: tiles the worker did not write go to the sink, then each unit's marker; coarser units may become ready. */
  private async consume(batch: InFlight, result: TileBatchResult): Promise<void> {
    if (result.failed) {
      const f = result.failed;
      throw describeFsError(Object.assign(new Error(f.message), { code: f.code }), f.path);
    }
    const writes: Promise<void>[] = [];
    for (const r of result.units) {
      for (const t of r.tiles) if (t.bytes !== undefined && !isOverview(t)) writes.push(this.limit(() => this.ctx.sink.write(t.path, t.bytes as Uint8Array)));
    }
    await Promise.all(writes);
    // A sink that buffers makes its tiles durable before any marker says they are there.
    await this.ctx.sink.flush?.();
    result.units.forEach((r, i) => this.finish(batch.level, batch.units[i], r));
  }

  /** Records a tiled unit: the marker comes after every tile of the unit, so a unit with a marker never needs redoing. */
  private finish(level: number, unit: UnitPlan, r: UnitResult): void {
    const marker = markerOf(r, this.ctx.planFile.preview.enabled, this.plan.formats.pbf);
    writeUnitMarker(this.ctx.work, level, marker, r.next.map(([, b]) => b));
    marker.next = [];
    if (level + 1 < this.levels) for (const [key, b] of r.next) this.append(level + 1, key, b);
    this.markers[level].set(unit.key, marker);
    this.finished++;
    for (const t of r.tiles) if (!isOverview(t)) { this.tiles++; this.bytes += t.size; }
    this.ctx.io.onProgress?.({
      phase: 'tile', level, units: this.finished + this.resumed, unitsTotal: this.units + this.graph.cells, tiles: this.tiles, bytes: this.bytes, elapsed: secondsSince(this.ctx.t0),
    });
    this.settle(level, unit.key);
  }

  /** A unit finished by an earlier run: its marker, and its records for the level above from the work directory. */
  private resume(level: number, unit: UnitPlan): void {
    const up = level + 1 < this.levels ? { append: (key: string, b: Uint8Array) => this.append(level + 1, key, b) } : undefined;
    this.markers[level].set(unit.key, readUnitMarker(this.ctx.work, level, unit.key, up));
    this.resumed++;
    this.settle(level, unit.key);
  }

  private append(level: number, key: string, bytes: Uint8Array): void {
    if (!this.graph.accepts(level, key)) throw new Error(`internal: records for cell ${key} of level ${level} after its inputs were final`);
    this.received[level].add(key);
    const store = this.stores[level] as SpillingStore;
    store.append(key, bytes);
    if (store.isSpilled) return;
    this.held[level] += bytes.byteLength;
    // The levels above 0 share half the store budget in memory: past it, the level holding most spills to disk.
    if (this.held.reduce((a, b) => a + b, 0) > storeBudget(this.ctx.config) / 2) {
      const most = this.held.indexOf(Math.max(...this.held));
      (this.stores[most] as SpillingStore).spill();
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
    const { plane, x, y } = parseUnitKey(key);
    const unit: UnitPlan = { key, level, plane, cell: { z: this.plan.levels[level].zoom, x, y }, sources: [key] };
    this.units++;
    if (!isUnitDone(this.ctx.work, level, key)) {
      this.ready[level].push(unit);
      return;
    }
    // Its records were appended again by the resumed units below; they are not needed.
    this.release(level, (this.stores[level] as UnitStore).take(key));
    this.resume(level, unit);
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** A unit's marker: its tiles and bytes per zoom and format, its largest tile, thinning counts, next-level record sizes. */
function markerOf(r: UnitResult, preview: boolean, pbf: boolean): UnitMarker {
  const marker: UnitMarker = {
    key: r.key, byZoom: {}, largest: null, pointified: r.pointified, thinned: r.thinned, notInPbf: r.notInPbf,
    next: r.next.map(([key, b]) => [key, b.byteLength]),
  };
  const z0 = r.tiles.find(isOverview);
  if (z0?.bytes && preview) marker.overview = Buffer.from(z0.bytes.buffer, z0.bytes.byteOffset, z0.bytes.byteLength).toString('utf8');
  for (const t of r.tiles) {
    if (isOverview(t)) continue;
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
