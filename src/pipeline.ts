// The build pipeline: the only file that knows the order of the stages (read → validate/assign → partition → tile →
// write → describe). `build` is `plan`, every shard in the local pool, and `finalize`: one code path.
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import pLimit from 'p-limit';
import type { Feature, Properties } from './model/feature.js';
import type { Asset } from './model/descriptor.js';
import { renderPreviewPng } from './io/preview.js';
import type { Multiscale } from './model/multiscale.js';
import type { Vocabularies } from './model/vocabulary.js';
import { resolveOptions, type Options } from './options.js';
import { readEventBatches, ReadError, layerNameFor, type Source } from './io/read.js';
import { DirectorySink, type TileSink } from './io/sink.js';
import { DiskWorkDir, MemoryWorkDir, type WorkDir } from './io/workdir.js';
import { DataError, InputError, InterruptedError, OutputError, UsageError } from './report/errors.js';
import { mergeStats, type LayerStats, type PlaneRule } from './stages/assign.js';
import { META, type IssueSample, type ParseResult, type RawBatch } from './stages/parse.js';
import { ByteArena } from './bytes.js';
import { SpillingStore, unitFileName } from './stages/partition.js';
import { planBaseUnits, planLevels, planUpperUnits, planWorld, sortPlanes, type BuildPlan, type UnitPlan } from './stages/plan.js';
import type { TileTask, UnitResult } from './stages/unit.js';
import { overviewDescriptor, tilesetDescriptor } from './stages/describe.js';
import { createPool, runOrdered, type Pool } from './worker/pool.js';
import { tilePath, type Dim, type Plane } from './tiling/space.js';
import { validateCollectionMembers } from './validate/index.js';

export interface InputSpec {
  source: Source;
  /** Layer id (default: `--layer`, else the file name without extensions). */
  layer?: string;
  /** Plane dimensions fixed for the whole input. */
  plane?: Partial<Plane>;
  /** Size and modification time, when known: a resumed build checks that its inputs did not change. */
  fingerprint?: string;
}

export type ProgressEvent =
  | { phase: 'read'; file: string; features: number; elapsed: number }
  | { phase: 'tile'; level: number; units: number; unitsTotal: number; tiles: number; bytes: number; elapsed: number }
  | { phase: 'done'; elapsed: number };

export interface BuildIO {
  sink?: TileSink;
  /** Durable build state; default: OUT/.mudm-work on disk, or memory when a sink is given without OUT. */
  work?: WorkDir;
  onProgress?: (e: ProgressEvent) => void;
  /** Aborting stops the build between batches and units (SIGINT, SIGTERM); the work directory is kept for --resume. */
  signal?: AbortSignal;
}

export interface FormatCount { tiles: number; bytes: number }
export interface ZoomReport { tiles: number; bytes: number; json: FormatCount; pbf: FormatCount; features: number; pointified: number; thinned: number }

export interface BuildReport {
  features: {
    read: number; valid: number; invalid: number;
    invalidByCode: Record<string, number>;
    warningsByCode: Record<string, number>;
    /** Valid features the pyramid cannot place, by reason (null geometry, mesh only by `tiles`, outside the world). */
    notPlaced: Record<string, number>;
    /** Valid features a PBF tile cannot hold (meshes), kept in JSON tiles only. */
    jsonOnly: number;
    samples: IssueSample[];
  };
  world: { side: number; width: number; height: number; minZoom: number; maxZoom: number; dims: Dim[]; planes: number; layers: string[] };
  tiles: {
    total: number; bytes: number;
    byZoom: Record<string, ZoomReport>;
    byLayer: Record<string, { pointified: number[]; thinned: number[]; completeZooms: number[] }>;
    largest: { path: string; bytes: number } | null;
  };
  units: { levels: number; total: number };
  /** How this run went, which may differ between runs that give the same pyramid (all else in the report may not). */
  run: { workers: number; spilled: boolean; resumed: number };
  timings: Record<string, number>;
}

/** What the reading pass found: everything the plan, the descriptor and the report need. */
interface ReadSummary {
  read: number; valid: number; invalid: number;
  invalidByCode: Record<string, number>; warningsByCode: Record<string, number>; skipped: Record<string, number>;
  samples: IssueSample[];
  bounds: [number, number, number, number] | null;
  dims: Dim[];
  stats: LayerStats;
  collection: { multiscale?: Multiscale; properties?: Properties; vocabularies?: Vocabularies };
}

/** The plan of a build as kept in the work directory. */
interface PlanFile {
  version: 1;
  fingerprint: string;
  plan: BuildPlan;
  read: ReadSummary;
  units: UnitPlan[];
  shards: number;
  meta: { name?: string; description?: string; attribution?: string; version?: string; baseUrl?: string };
  /** --preview: PNG quicklooks per plane, drawn over this image when given. */
  preview: { enabled: boolean; image?: string };
  spilled: boolean;
  readSeconds: number;
}

/** What one finished unit leaves in the work directory: its statistics and its features reduced for the level above. */
interface UnitMarker {
  key: string;
  byZoom: Record<string, { json: FormatCount; pbf: FormatCount; features: number }>;
  largest: { path: string; bytes: number } | null;
  pointified: number[][];
  thinned: number[][];
  notInPbf: number;
  /** Next-level key → byte length of its binary records (record.ts), which lie back to back in the marker's `.next` file. */
  next: [string, number][];
  /** With --preview: the unit's zoom-0 JSON tile (a FeatureCollection), which the preview of its plane is drawn from. */
  overview?: string;
}

const BATCH_BYTES = 4 << 20;
const BATCH_FEATURES = 4096;
const SAMPLE_CAP = 20;
const PLAN_FILE = 'plan.json';
export const WORK_DIR_NAME = '.mudm-work';

function check(cond: boolean, message: string): void {
  if (!cond) throw new UsageError(message);
}

function parseImageSize(text: string): { width: number; height: number } {
  const m = /^(\d+)\s*[,x]\s*(\d+)$/.exec(text.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new UsageError(`--image-size must be W,H in pixels, found "${text}"`);
  return { width: Number(m[1]), height: Number(m[2]) };
}

/** `t=frame,c=channel` → { t: 'frame', c: 'channel' }. */
export function parsePlaneFields(text: string | undefined): Partial<Record<Dim, string>> {
  const out: Partial<Record<Dim, string>> = {};
  if (!text) return out;
  for (const part of text.split(',')) {
    const m = /^([tcz])=(.+)$/.exec(part.trim());
    if (!m) throw new UsageError(`--plane-field expects t=NAME,c=NAME,z=NAME, found "${part}"`);
    out[m[1] as Dim] = m[2];
  }
  return out;
}

/** `t=0,c=1` → { t: 0, c: 1 }. */
export function parsePlane(text: string): Partial<Plane> {
  const out: Partial<Plane> = {};
  for (const part of text.split(',')) {
    const m = /^([tcz])=(\d+)$/.exec(part.trim());
    if (!m) throw new UsageError(`a plane is written t=N,c=N,z=N with non-negative integers, found "${part}"`);
    out[m[1] as Dim] = Number(m[2]);
  }
  return out;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new InterruptedError('build interrupted');
}

function sortedRecord(r: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function add(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/** Options checked once, for every entry point. */
interface Settings {
  opts: Options;
  formats: { json: boolean; pbf: boolean };
  imageSize?: { width: number; height: number };
  planeFields: Partial<Record<Dim, string>>;
}

function settings(given: Partial<Options>, needOut: boolean, hasSink: boolean): Settings {
  const opts = resolveOptions(given);
  check(!needOut || hasSink || opts.out !== undefined, 'no output directory given (-o DIR)');
  const formats = { json: false, pbf: false };
  for (const f of opts.format.split(',')) {
    check(f === 'json' || f === 'pbf', `--format takes json, pbf or json,pbf, found "${f}"`);
    formats[f as 'json' | 'pbf'] = true;
  }
  check(Number.isInteger(opts.workers) && opts.workers >= 1, `--workers must be at least 1, found ${opts.workers}`);
  check(Number.isInteger(Math.log2(opts.unitSize)) && opts.unitSize >= 256, `--unit-size must be a power of two of at least 256, found ${opts.unitSize}`);
  check(opts.minZoom >= 0 && opts.minZoom <= 30, `--min-zoom must be 0..30, found ${opts.minZoom}`);
  check(opts.maxZoom === undefined || (opts.maxZoom >= opts.minZoom && opts.maxZoom <= 30), `--max-zoom must be ${opts.minZoom}..30, found ${opts.maxZoom}`);
  check(opts.shards >= 1, `--shards must be at least 1, found ${opts.shards}`);
  check(opts.tileBudget > 0, `--tile-budget must be positive, found ${opts.tileBudget}`);
  check(!opts.preview || formats.json, '--preview draws the zoom-0 JSON tiles: keep json in --format');
  return { opts, formats, planeFields: parsePlaneFields(opts.planeField), imageSize: opts.imageSize !== undefined ? parseImageSize(opts.imageSize) : undefined };
}

function workDirFor(opts: Options, io: BuildIO): WorkDir {
  if (io.work) return io.work;
  if (opts.out) return new DiskWorkDir(path.join(opts.out, WORK_DIR_NAME));
  return new MemoryWorkDir();
}

/** Where spilled records go: --tmp-dir, else the work directory, else the system temporary directory. */
function spillRoot(opts: Options, work: WorkDir): string {
  if (opts.tmpDir) return path.join(opts.tmpDir, `mudm-spill-${createHash('sha1').update(path.resolve(opts.out ?? '.')).digest('hex').slice(0, 10)}`);
  return work.root ? path.join(work.root, 'spill') : path.join(os.tmpdir(), `mudm-spill-${randomBytes(6).toString('hex')}`);
}

// ---- read, validate, assign, partition ---------------------------------------------------------------------

async function readInputs(inputs: InputSpec[], s: Settings, pool: Pool, store: SpillingStore, io: BuildIO, t0: number): Promise<ReadSummary> {
  const { opts } = s;
  const sum: ReadSummary = {
    read: 0, valid: 0, invalid: 0, invalidByCode: {}, warningsByCode: {}, skipped: {}, samples: [],
    bounds: null, dims: [], stats: {}, collection: {},
  };
  const dims = new Set<Dim>();
  const perFileCode = new Map<string, number>();
  const knownSide = s.imageSize ? 2 ** Math.ceil(Math.log2(Math.max(s.imageSize.width, s.imageSize.height))) : undefined;
  const sample = (x: IssueSample) => {
    const key = `${x.file}\0${x.code}`;
    const n = (perFileCode.get(key) ?? 0) + 1;
    perFileCode.set(key, n);
    if (n <= SAMPLE_CAP) sum.samples.push(x);
  };
  let seq = 0;
  async function* batches(): AsyncGenerator<{ file: string; layer: string; rule: PlaneRule; raw: RawBatch; count: number; seq0: number }> {
    for (const input of inputs) {
      const file = input.source.name;
      const layer = opts.layer ?? input.layer ?? layerNameFor(file);
      const rule: PlaneRule = { fixed: input.plane ?? {}, fields: s.planeFields };
      // Feature bytes are gathered in one reused buffer; each batch moves to a worker as a copy of exactly its bytes
      // (a fresh large buffer per batch would leave the allocator holding freed ones: RSS grew with the input).
      const bytes = new ByteArena(BATCH_BYTES + (BATCH_BYTES >> 2));
      let meta: number[] = [];
      const take = () => {
        const b = { file, layer, rule, raw: { bytes: bytes.copy(), meta: Float64Array.from(meta) }, count: meta.length / META, seq0: seq };
        seq += b.count;
        bytes.pos = 0;
        meta = [];
        return b;
      };
      try {
        for await (const events of readEventBatches(input.source)) {
          for (const ev of events) {
            if (ev.kind === 'members') {
              collectMembers(sum, file, ev.members, opts.strict, sample);
              continue;
            }
            let featureBytes: Uint8Array;
            if (ev.kind === 'document') {
              if (ev.value !== null && typeof ev.value === 'object' && 'tilejson' in ev.value) {
                throw new InputError(`${file} is a tileset descriptor, not annotations`, file);
              }
              featureBytes = new TextEncoder().encode(JSON.stringify(ev.value));
            } else {
              featureBytes = ev.bytes;
            }
            const start = bytes.addBytes(featureBytes);
            meta.push(ev.index, ev.line, ev.column, start, bytes.pos);
            if (bytes.pos >= BATCH_BYTES || meta.length >= BATCH_FEATURES * META) {
              throwIfAborted(io.signal);
              yield take();
            }
          }
        }
      } catch (err) {
        if (err instanceof ReadError) throw new InputError(`${err.where}: ${err.message}`, err.file, err.line, err.column);
        throw err;
      }
      if (meta.length > 0) yield take();
    }
  }
  await runOrdered(batches(), opts.workers * 2, (b) => pool.parse({
    kind: 'parse', file: b.file, layer: b.layer, layerBy: opts.layerBy, rule: b.rule, cellSize: opts.unitSize,
    side: knownSide, seq0: b.seq0, raw: b.raw, sampleCap: SAMPLE_CAP,
  }), (r: ParseResult, b) => {
    if (r.syntax) {
      throw new InputError(`${b.file}:${r.syntax.line}:${r.syntax.column}: feature ${r.syntax.index}: ${r.syntax.message}`, b.file, r.syntax.line, r.syntax.column);
    }
    sum.read += r.read; sum.valid += r.valid; sum.invalid += r.invalid;
    add(sum.invalidByCode, r.invalidByCode);
    add(sum.warningsByCode, r.warningsByCode);
    add(sum.skipped, r.skipped);
    r.samples.forEach(sample);
    if (opts.strict && r.invalid > 0) {
      const x = r.samples.find((i) => i.severity === 'error');
      throw new DataError(x ? `${x.file}:feature ${x.index}: ${x.path || '/'}: ${x.message} [${x.code}]` : `${b.file}: invalid feature`);
    }
    if (r.bounds) {
      const bb = (sum.bounds ??= [Infinity, Infinity, -Infinity, -Infinity]);
      bb[0] = Math.min(bb[0], r.bounds[0]); bb[1] = Math.min(bb[1], r.bounds[1]);
      bb[2] = Math.max(bb[2], r.bounds[2]); bb[3] = Math.max(bb[3], r.bounds[3]);
    }
    for (const d of r.dims) dims.add(d);
    mergeStats(sum.stats, r.stats);
    for (const [key, text] of r.units) store.append(key, text);
    io.onProgress?.({ phase: 'read', file: b.file, features: sum.read, elapsed: (performance.now() - t0) / 1000 });
  });
  sum.dims = (['t', 'c', 'z'] as const).filter((d) => dims.has(d));
  return sum;
}

/** Keeps the first input's collection members for the tiles; an invalid collection member is reported like a feature. */
function collectMembers(sum: ReadSummary, file: string, members: Record<string, unknown>, strict: boolean, sample: (x: IssueSample) => void): void {
  const issues = validateCollectionMembers(members);
  for (const is of issues) {
    const counts = is.severity === 'error' ? sum.invalidByCode : sum.warningsByCode;
    counts[is.code] = (counts[is.code] ?? 0) + 1;
    sample({ ...is, file, index: -1, line: 0 });
    if (strict && is.severity === 'error') throw new DataError(`${file}: ${is.path}: ${is.message} [${is.code}]`);
  }
  if (issues.some((i) => i.severity === 'error')) return;
  const c = sum.collection;
  if (c.multiscale === undefined && members.multiscale) c.multiscale = members.multiscale as Multiscale;
  if (c.properties === undefined && members.properties && typeof members.properties === 'object') c.properties = members.properties as Properties;
  if (c.vocabularies === undefined && members.vocabularies) c.vocabularies = members.vocabularies as Vocabularies;
}

function makePlan(s: Settings, read: ReadSummary, storeKeys: string[]): { plan: BuildPlan; units: UnitPlan[] } {
  const { opts, formats } = s;
  const { world, minZoom, maxZoom } = planWorld({ imageSize: s.imageSize, bounds: read.bounds, minZoom: opts.minZoom, maxZoom: opts.maxZoom, cellSize: opts.unitSize });
  const levels = planLevels(world.side, minZoom, maxZoom, opts.unitSize);
  const planeKeys = new Set(storeKeys.map((k) => k.split('/').slice(0, 3).join('/')));
  const planes = sortPlanes([...planeKeys].map((k) => { const [t, c, z] = k.split('/').map(Number); return { t, c, z }; }));
  if (planes.length === 0) planes.push({ t: 0, c: 0, z: 0 });
  const plan: BuildPlan = {
    world, minZoom, maxZoom, cellSize: opts.unitSize, dims: read.dims, layers: Object.keys(read.stats).sort(), planes, levels, formats,
    lod: opts.lod as 'auto' | 'none', tileBudget: opts.tileBudget,
    collection: { multiscale: read.collection.multiscale, properties: read.collection.properties },
  };
  return { plan, units: planBaseUnits(storeKeys, world.side, levels[0], opts.unitSize) };
}

/** Identifies inputs and the options that change output: a resume or a shard must see the same ones. */
function fingerprintOf(inputs: InputSpec[], opts: Options): string {
  const h = createHash('sha256');
  for (const i of inputs) h.update(`${i.source.name}\0${i.layer ?? ''}\0${JSON.stringify(i.plane ?? {})}\0${i.fingerprint ?? ''}\n`);
  for (const k of ['format', 'layer', 'layerBy', 'planeField', 'imageSize', 'minZoom', 'maxZoom', 'lod', 'tileBudget', 'unitSize'] as const) h.update(`${k}=${String(opts[k])}\n`);
  return h.digest('hex');
}

// ---- tile and write -----------------------------------------------------------------------------------------

interface TileContext {
  s: Settings;
  planFile: PlanFile;
  sink: TileSink;
  work: WorkDir;
  pool: Pool;
  io: BuildIO;
  t0: number;
}

/**
 * Bytes of unit records held in memory before they spill: a fifth of the budget. The rest is for the workers'
 * units in flight (features decoded, tiles encoded) and the parse batches in the window.
 */
function storeBudget(opts: Options): number {
  return Math.floor(opts.memoryBudget / 5);
}

function markerPath(level: number, key: string): string {
  return `units/${level}/${unitFileName(key)}.json`;
}

/** The unit's records for the level above, beside its marker. */
function nextPath(level: number, key: string): string {
  return `units/${level}/${unitFileName(key)}.next`;
}

/** Tiles units of one level (those without a marker), writing tiles, then each unit's marker. Returns how many were skipped. */
async function tileLevel(ctx: TileContext, level: number, units: UnitPlan[], store: SpillingStore): Promise<number> {
  const { plan } = ctx.planFile;
  const lv = plan.levels[level];
  const next = plan.levels[level + 1];
  const todo = units.filter((u) => !ctx.work.exists(markerPath(level, u.key)));
  // A source cell may feed several units (cells smaller than it): its records leave memory after its last reader.
  const lastReader = new Map<string, number>();
  todo.forEach((u, i) => u.sources.forEach((src) => lastReader.set(src, i)));
  const limit = pLimit(16);
  let done = units.length - todo.length, tiles = 0, bytes = 0;
  await runOrdered(todo.map((u, i) => ({ u, i })), ctx.s.opts.workers * 2, ({ u, i }) => {
    throwIfAborted(ctx.io.signal);
    // Records that leave the store move to the worker; those another unit still reads are copied.
    const moved: Uint8Array[] = [];
    const sources = u.sources.map((src) => {
      if (lastReader.get(src) !== i) return store.peek(src);
      const taken = store.take(src);
      if ('chunks' in taken) moved.push(...taken.chunks);
      return taken;
    });
    const task: TileTask = {
      kind: 'tile', unit: u, dims: plan.dims, next: next ? { zoom: next.zoom } : undefined, sources,
      spec: {
        side: plan.world.side, minZoom: Math.max(lv.zoom, plan.minZoom), maxZoom: lv.topZoom, finestZoom: plan.maxZoom, cell: u.cell,
        layers: plan.layers.map((id) => ({ id })), formats: plan.formats, lod: plan.lod, tileBudget: plan.tileBudget, collection: plan.collection,
      },
    };
    return ctx.pool.tile(task, moved);
  }, async (r: UnitResult) => {
    const marker: UnitMarker = {
      key: r.key, byZoom: {}, largest: null, pointified: r.pointified, thinned: r.thinned, notInPbf: r.notInPbf,
      next: r.next.map(([key, b]) => [key, b.byteLength]),
    };
    // The zoom-0 JSON tile of a plane is its overview descriptor, written by finalize; the preview is drawn from it.
    const z0 = r.tiles.find((t) => t.z === 0 && t.path.endsWith('.json'));
    if (z0 && ctx.planFile.preview.enabled) marker.overview = Buffer.from(z0.bytes.buffer, z0.bytes.byteOffset, z0.bytes.byteLength).toString('utf8');
    const files = r.tiles.filter((t) => !(t.z === 0 && t.path.endsWith('.json')));
    for (const t of files) {
      const zr = (marker.byZoom[t.z] ??= { json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 }, features: 0 });
      const f = t.path.endsWith('.json') ? zr.json : zr.pbf;
      f.tiles++;
      f.bytes += t.bytes.byteLength;
      if (t.path.endsWith('.pbf') || !plan.formats.pbf) zr.features += t.features;
      if (!marker.largest || t.bytes.byteLength > marker.largest.bytes || (t.bytes.byteLength === marker.largest.bytes && t.path < marker.largest.path)) {
        marker.largest = { path: t.path, bytes: t.bytes.byteLength };
      }
    }
    await Promise.all(files.map((t) => limit(() => ctx.sink.write(t.path, t.bytes))));
    // The marker comes after every tile of the unit and its records for the level above are in place: a unit with
    // a marker never needs redoing.
    if (r.next.length > 0) ctx.work.writeBytes(nextPath(level, r.key), r.next.map(([, b]) => b));
    ctx.work.writeJson(markerPath(level, r.key), marker);
    done++;
    tiles += files.length;
    bytes += files.reduce((n, t) => n + t.bytes.byteLength, 0);
    ctx.io.onProgress?.({ phase: 'tile', level, units: done, unitsTotal: units.length, tiles, bytes, elapsed: (performance.now() - ctx.t0) / 1000 });
  });
  return units.length - todo.length;
}

/** Level-0 units of shard `shard` of `shards`: a fixed round-robin over the sorted units. */
function shardUnits(units: UnitPlan[], shard: number, shards: number): UnitPlan[] {
  return units.filter((_, i) => i % shards === shard);
}

// ---- entry points ---------------------------------------------------------------------------------------------

/** Builds a pyramid on this machine: plan, every shard in the local pool, finalize. Returns the run report. */
export async function buildPyramid(inputs: InputSpec[], given: Partial<Options>, io: BuildIO = {}): Promise<BuildReport> {
  const s = settings(given, true, io.sink !== undefined);
  const sink = io.sink ?? new DirectorySink(s.opts.out as string);
  const work = workDirFor(s.opts, io);
  const t0 = performance.now();
  await sink.initialize({ force: s.opts.force, resume: s.opts.resume });
  if (!s.opts.resume) work.destroy();
  const pool = createPool(s.opts.workers);
  let store: SpillingStore | undefined;
  let interrupted = false;
  try {
    store = new SpillingStore(path.join(spillRoot(s.opts, work), 'level-0'), storeBudget(s.opts));
    const planFile = await planInto(inputs, s, work, pool, store, io, t0, 1);
    await sink.begin({ force: s.opts.force, resume: s.opts.resume });
    const ctx: TileContext = { s, planFile, sink, work, pool, io, t0 };
    const tTile = performance.now();
    const resumed = await tileLevel(ctx, 0, planFile.units, store);
    store.close();
    const tileSeconds = (performance.now() - tTile) / 1000;
    return await finishPyramid(ctx, { resumed, tileSeconds });
  } catch (err) {
    // An interrupted build, and a --resume refused because inputs changed, keep what a later --resume needs.
    interrupted = err instanceof InterruptedError || (s.opts.resume && err instanceof UsageError);
    throw err;
  } finally {
    store?.close();
    await pool.close();
    // An interrupted build keeps its plan and unit markers for --resume; any other failure leaves nothing behind.
    if (!interrupted) work.destroy();
    else work.removeFolder('spill');
  }
}

/** Reads the inputs into `store` and writes the plan; with resume, checks it matches the interrupted build's plan. */
async function planInto(inputs: InputSpec[], s: Settings, work: WorkDir, pool: Pool, store: SpillingStore, io: BuildIO, t0: number, shards: number): Promise<PlanFile> {
  const fingerprint = fingerprintOf(inputs, s.opts);
  const previous = s.opts.resume ? work.readJson<PlanFile>(PLAN_FILE) : undefined;
  if (previous && previous.fingerprint !== fingerprint) {
    throw new UsageError('--resume: the inputs or options differ from the interrupted build; run again without --resume');
  }
  if (!previous) work.removeFolder('units');
  const read = await readInputs(inputs, s, pool, store, io, t0);
  const { plan, units } = makePlan(s, read, store.keys());
  const o = s.opts;
  const planFile: PlanFile = {
    version: 1, fingerprint, plan, read, units, shards, spilled: store.isSpilled, readSeconds: (performance.now() - t0) / 1000,
    meta: { name: o.name, description: o.description, attribution: o.attribution, version: o.version, baseUrl: o.baseUrl },
    preview: { enabled: o.preview, image: o.image ? path.resolve(o.image) : undefined },
  };
  work.writeJson(PLAN_FILE, planFile);
  return planFile;
}

/** `mudm-tiles plan`: one streaming pass that fixes world, zooms, fields and units, written to OUT/.mudm-work. */
export async function planShardedBuild(inputs: InputSpec[], given: Partial<Options>, io: BuildIO = {}): Promise<{ units: number; shards: number; features: number }> {
  const s = settings(given, true, false);
  const sink = io.sink ?? new DirectorySink(s.opts.out as string);
  await sink.initialize({ force: s.opts.force, resume: false });
  const work = workDirFor(s.opts, io);
  check(work.root !== undefined, 'plan needs a work directory on disk');
  work.destroy();
  const pool = createPool(s.opts.workers);
  try {
    // Shards on other machines read the units from the work directory: always on disk.
    const store = new SpillingStore(path.join(work.root as string, 'level-0'), 0);
    const planFile = await planInto(inputs, s, work, pool, store, io, performance.now(), s.opts.shards);
    // Shards write tiles next: what an earlier build left (with --force) must not mix with them.
    await sink.begin({ force: s.opts.force, resume: false });
    return { units: planFile.units.length, shards: planFile.shards, features: planFile.read.read };
  } finally {
    await pool.close();
  }
}

function loadPlan(work: WorkDir): PlanFile {
  const planFile = work.readJson<PlanFile>(PLAN_FILE);
  if (!planFile) throw new InputError(`no plan in ${work.root ?? 'the work directory'}: run mudm-tiles plan first`, work.root);
  return planFile;
}

/** `mudm-tiles build-shard OUT --shard I`: tiles the units of shard I and writes its completion marker. Idempotent. */
export async function buildShard(given: Partial<Options>, shard: number, io: BuildIO = {}): Promise<{ units: number; skipped: number }> {
  // Formats, zooms and layers come from the plan; only how to run (workers, budget) comes from these options.
  const s = settings(given, true, false);
  const work = workDirFor(s.opts, io);
  const planFile = loadPlan(work);
  check(Number.isInteger(shard) && shard >= 0 && shard < planFile.shards, `--shard must be 0..${planFile.shards - 1}, found ${shard}`);
  const sink = io.sink ?? new DirectorySink(s.opts.out as string);
  const pool = createPool(s.opts.workers);
  try {
    const units = shardUnits(planFile.units, shard, planFile.shards);
    // Reads the planned records from the work directory; nothing is appended, so the store's spill budget is 0.
    const store = new SpillingStore(path.join(work.root as string, 'level-0'), 0, 'existing');
    const ctx: TileContext = { s, planFile, sink, work, pool, io, t0: performance.now() };
    const skipped = await tileLevel(ctx, 0, units, store);
    work.writeJson(`shards/${shard}.json`, { shard, units: units.map((u) => u.key) });
    return { units: units.length, skipped };
  } finally {
    await pool.close();
  }
}

/** `mudm-tiles finalize OUT`: checks every shard, tiles the coarse levels, writes overview, report, descriptor; cleans up. */
export async function finalizeShardedBuild(given: Partial<Options>, io: BuildIO = {}): Promise<BuildReport> {
  // Formats, zooms and layers come from the plan; only how to run (workers, budget) comes from these options.
  const s = settings(given, true, false);
  const work = workDirFor(s.opts, io);
  const planFile = loadPlan(work);
  const missingShards = Array.from({ length: planFile.shards }, (_, i) => i).filter((i) => !work.exists(`shards/${i}.json`));
  const missingUnits = planFile.units.filter((u) => !work.exists(markerPath(0, u.key)));
  if (missingShards.length || missingUnits.length) {
    throw new OutputError(`cannot finalize: shard(s) ${missingShards.join(', ') || 'none'} not complete, ${missingUnits.length} unit(s) missing; run build-shard for them`, work.root);
  }
  const sink = io.sink ?? new DirectorySink(s.opts.out as string);
  const pool = createPool(s.opts.workers);
  try {
    const report = await finishPyramid({ s, planFile, sink, work, pool, io, t0: performance.now() }, { resumed: 0, tileSeconds: 0 });
    work.destroy();
    return report;
  } finally {
    await pool.close();
  }
}

/** Tiles the levels above 0 from the reduced features the level below left in its markers, then describes the pyramid. */
async function finishPyramid(ctx: TileContext, so: { resumed: number; tileSeconds: number }): Promise<BuildReport> {
  const { plan, units: baseUnits, read } = ctx.planFile;
  const { s, work } = ctx;
  const tUpper = performance.now();
  /**
   * The level's markers in unit order. With a store, each marker's records for the level above go into it as the
   * marker is read and are dropped from it: they may be most of the marker, and all of them at once would not be flat.
   */
  const readMarkers = (level: number, units: UnitPlan[], store?: SpillingStore) => units.map((u) => {
    const m = work.readJson<UnitMarker>(markerPath(level, u.key)) as UnitMarker;
    if (store && m.next.length > 0) {
      const bytes = work.readBytes(nextPath(level, u.key));
      if (bytes === undefined) throw new OutputError(`the records of unit ${u.key} for the level above are missing from the work directory`, work.root);
      let at = 0;
      for (const [key, length] of m.next) { store.append(key, bytes.subarray(at, at + length)); at += length; }
    }
    m.next = [];
    return m;
  });
  /** Markers per level, each in unit order. */
  const markers: UnitMarker[][] = [];
  let resumed = so.resumed;
  let unitsTotal = baseUnits.length;
  let below = baseUnits;
  for (let level = 1; level < plan.levels.length; level++) {
    throwIfAborted(ctx.io.signal);
    const store = new SpillingStore(path.join(spillRoot(s.opts, work), `level-${level}`), storeBudget(s.opts));
    try {
      // Markers are read in unit order, so what a unit of this level reads does not depend on who tiled the level below.
      markers.push(readMarkers(level - 1, below, store));
      const units = planUpperUnits(store.keys(), level, plan.levels[level]);
      unitsTotal += units.length;
      resumed += await tileLevel(ctx, level, units, store);
      below = units;
    } finally {
      store.close();
    }
  }
  markers.push(readMarkers(plan.levels.length - 1, below));
  const upperSeconds = (performance.now() - tUpper) / 1000;
  return describe(ctx, markers, { resumed, unitsTotal, tileSeconds: so.tileSeconds + upperSeconds, readSeconds: ctx.planFile.readSeconds, read });
}

/** One PNG quicklook per plane, drawn from the plane's zoom-0 tile over the image when one was given. */
async function writePreviews(ctx: TileContext, markers: UnitMarker[][]): Promise<Asset[]> {
  const { plan, preview } = ctx.planFile;
  const assets: Asset[] = [];
  for (const plane of plan.planes) {
    // Unit keys are `t/c/z/x/y`; the zoom-0 tile of a plane comes from one unit of some level.
    const prefix = `${plane.t}/${plane.c}/${plane.z}/`;
    const overview = markers.flat().find((m) => m.overview !== undefined && m.key.startsWith(prefix))?.overview;
    const features = overview ? (JSON.parse(overview) as { features: Feature[] }).features : [];
    const { png } = await renderPreviewPng({ width: plan.world.width, height: plan.world.height, features, image: preview.image });
    const name = plan.dims.length ? `preview/${plan.dims.map((d) => `${d}${plane[d]}`).join('-')}.png` : 'preview/preview.png';
    await ctx.sink.write(name, png);
    const asset: Asset = { role: 'raster', href: name, media_type: 'image/png', title: `preview${plan.dims.length ? ` of ${plan.dims.map((d) => `${d}=${plane[d]}`).join(', ')}` : ''}` };
    // Foreign members: the plane a preview shows (viewers pick the one of the current plane) and the pixels it covers.
    for (const d of plan.dims) asset[d] = plane[d];
    asset.bbox = [0, 0, plan.world.width, plan.world.height];
    assets.push(asset);
  }
  return assets;
}

async function describe(ctx: TileContext, markers: UnitMarker[][], x: { resumed: number; unitsTotal: number; tileSeconds: number; readSeconds: number; read: ReadSummary }): Promise<BuildReport> {
  const { plan, meta } = ctx.planFile;
  const { sink } = ctx;
  const tDesc = performance.now();
  const byZoom: Record<string, ZoomReport> = {};
  const pointified: number[][] = [], thinned: number[][] = [];
  const L = plan.layers.length;
  for (let z = plan.minZoom; z <= plan.maxZoom; z++) {
    byZoom[z] = { tiles: 0, bytes: 0, json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 }, features: 0, pointified: 0, thinned: 0 };
    pointified[z] = new Array<number>(L).fill(0);
    thinned[z] = new Array<number>(L).fill(0);
  }
  let largest: { path: string; bytes: number } | null = null;
  // Upper levels see the same meshes again: each is counted once, where it was read.
  const jsonOnly = markers[0].reduce((n, m) => n + m.notInPbf, 0);
  for (const m of markers.flat()) {
    for (const [z, zr] of Object.entries(m.byZoom)) {
      const r = byZoom[z];
      r.json.tiles += zr.json.tiles; r.json.bytes += zr.json.bytes;
      r.pbf.tiles += zr.pbf.tiles; r.pbf.bytes += zr.pbf.bytes;
      r.tiles += zr.json.tiles + zr.pbf.tiles; r.bytes += zr.json.bytes + zr.pbf.bytes;
      r.features += zr.features;
    }
    m.pointified.forEach((row, z) => row?.forEach((v, l) => { pointified[z][l] += v; }));
    m.thinned.forEach((row, z) => row?.forEach((v, l) => { thinned[z][l] += v; }));
    if (m.largest && (!largest || m.largest.bytes > largest.bytes || (m.largest.bytes === largest.bytes && m.largest.path < largest.path))) largest = m.largest;
  }
  for (let z = plan.minZoom; z <= plan.maxZoom; z++) {
    byZoom[z].pointified = pointified[z].reduce((a, b) => a + b, 0);
    byZoom[z].thinned = thinned[z].reduce((a, b) => a + b, 0);
  }
  const assets = ctx.planFile.preview.enabled ? await writePreviews(ctx, markers) : undefined;
  const input = { plan, stats: x.read.stats, pointified, thinned, vocabularies: x.read.collection.vocabularies, meta, assets };
  if (plan.formats.json) {
    for (const plane of plan.planes) {
      const p = tilePath(0, 0, 0, plane, plan.dims, 'json');
      await sink.write(p, `${JSON.stringify(overviewDescriptor(input, plane, p), null, 2)}\n`);
    }
  }
  const descriptor = tilesetDescriptor(input);
  const byLayer: BuildReport['tiles']['byLayer'] = {};
  plan.layers.forEach((id, l) => {
    byLayer[id] = {
      pointified: pointified.map((p) => p?.[l] ?? 0), thinned: thinned.map((t) => t?.[l] ?? 0),
      completeZooms: descriptor.vector_layers[l].complete_zooms as number[],
    };
  });
  const totals = Object.values(byZoom).reduce((a, z) => ({ tiles: a.tiles + z.tiles, bytes: a.bytes + z.bytes }), { tiles: 0, bytes: 0 });
  const r = x.read;
  const report: BuildReport = {
    features: {
      read: r.read, valid: r.valid, invalid: r.invalid, invalidByCode: sortedRecord(r.invalidByCode), warningsByCode: sortedRecord(r.warningsByCode),
      notPlaced: sortedRecord(r.skipped), jsonOnly, samples: r.samples,
    },
    world: { ...plan.world, minZoom: plan.minZoom, maxZoom: plan.maxZoom, dims: plan.dims, planes: plan.planes.length, layers: plan.layers },
    tiles: { total: totals.tiles, bytes: totals.bytes, byZoom, byLayer, largest },
    units: { levels: plan.levels.length, total: x.unitsTotal },
    run: { workers: ctx.s.opts.workers, spilled: ctx.planFile.spilled, resumed: x.resumed },
    timings: { read: x.readSeconds, tile: x.tileSeconds, describe: 0, total: 0 },
  };
  report.timings.describe = (performance.now() - tDesc) / 1000;
  report.timings.total = (performance.now() - ctx.t0) / 1000;
  await sink.write('build-report.json', `${JSON.stringify(report, null, 2)}\n`);
  // The descriptor goes last: its presence means the pyramid is complete.
  await sink.write('tileset.json', `${JSON.stringify(descriptor, null, 2)}\n`);
  await sink.finish();
  ctx.io.onProgress?.({ phase: 'done', elapsed: (performance.now() - ctx.t0) / 1000 });
  return report;
}
