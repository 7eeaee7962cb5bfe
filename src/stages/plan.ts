// Plan stage: from what the reading pass found, fix the world, zooms, layers, levels and work units of a build.
import type { Multiscale } from '../model/multiscale.js';
import type { Properties } from '../model/feature.js';
import { channelsOf, compareUnitKeys, EVERY_CHANNEL, parseUnitKey, planeOfPrefix, tiledPlanes, unitKey, unitKeyPrefix } from './unit-key.js';
import type { BuildConfig } from '../options.js';
import type { LayerStats } from './assign.js';
import { tilePrefix } from './encode-json.js';
import { SPARED_PIXELS, TileSketch } from './thinning.js';
import { planThresholds, tileOverhead } from './thresholds.js';
import { FieldFilter, type FewFields } from './field-filter.js';
import { circlePad, comparePlanes, defaultMaxZoom, MAX_WORLD_SIDE, planeKey, tilePad, tileSize, worldSide, type Dim, type Plane, type World } from '../tiling/space.js';

/**
 * The most zooms the first level above level 0 tiles (see FIRST_UPPER_BYTES); each level above it tiles one. That
 * level's cost is mostly loading its records and reducing them for the level above, not tiling (at 100k cells,
 * before: 1.7 CPU-s for zoom 5, 1.4 s for zoom 4, 1.1 s for zoom 3, each tiling all 200,000 features): tiling several
 * zooms from one load saves the loads and reductions between them. Tiles are the same bytes however they are grouped.
 */
export const FIRST_UPPER_ZOOMS = 3;

/**
 * A level tiles zooms [max(zoom, minZoom), topZoom] from cells at `zoom`; level 0 reads the input, higher levels the
 * reduced features. Level 0's cells may be coarser than the minimum zoom (see planLevels).
 */
export interface Level { zoom: number; topZoom: number }

export interface UnitPlan {
  key: string;
  level: number;
  plane: Plane;
  cell: { z: number; x: number; y: number };
  /** Keys of the store the unit reads (level 0: the pixel cells it covers; above: its own key). */
  sources: string[];
}

export interface BuildPlan {
  world: World;
  minZoom: number;
  maxZoom: number;
  cellSize: number;
  dims: Dim[];
  layers: string[];
  planes: Plane[];
  levels: Level[];
  formats: { json: boolean; pbf: boolean };
  lod: 'auto' | 'none';
  tileBudget: number;
  collection: { multiscale?: Multiscale; properties?: Properties };
  /** Features that made a world from the data far larger than the rest need (reported, not left out). */
  outliers?: Outliers;
  /**
   * Per zoom (the index) and layer: the thinning threshold every tile of that zoom applies (stages/thinning.ts),
   * 0 where everything is drawn. Fixed by the plan from the read's estimates; raised after tiling where a tile
   * was still over the budget, and then the zooms in `raised` were tiled again.
   */
  thresholds: number[][];
  raised: number[];
  /** How many times the thresholds were raised after tiling: each correction is an epoch of the outputs (`TileSink.setEpoch`). */
  corrections?: number;
  /**
   * The coarsest zoom that draws large lines and polygons whatever its threshold (thinning.ts `drawn`): coarser ones
   * thin them like the rest, where the plan found, or a tile showed, them too many for the budget.
   */
  spareFrom: number;
  /** Per zoom from `spareFrom`: how many display pixels across a line or polygon it spares is at least (thinning.ts `planThresholds`). */
  spareSizes: number[];
  /** `--coarse-fields`: the only fields tiles carry below zoom `below` (absent: every zoom carries every field). */
  fewFields?: FewFields;
  /** `--fields`: the only fields tiles carry (absent: every field). Records hold only these already; kept for `finalize`. */
  keptFields?: string[];
}

export interface PlanInput {
  imageSize?: { width: number; height: number };
  /** Bounds of the placed features, or null when there are none. */
  bounds: [number, number, number, number] | null;
  minZoom: number;
  maxZoom?: number;
  cellSize: number;
  /** JSON tiles are built: their zoom 0 is the overview descriptor, so the features need zoom 1 at least. */
  json?: boolean;
}

/**
 * The world square and zoom range: from the image size when given, else from the data (at least one pixel, at
 * most MAX_WORLD_SIDE: features were cut to it).
 */
export function planWorld(p: PlanInput): { world: World; minZoom: number; maxZoom: number } {
  const fromData = (v: number | undefined) => Math.min(MAX_WORLD_SIDE, Math.max(1, Math.ceil(v ?? 1)));
  const width = p.imageSize?.width ?? fromData(p.bounds?.[2]);
  const height = p.imageSize?.height ?? fromData(p.bounds?.[3]);
  const side = worldSide(width, height);
  const maxZoom = p.maxZoom ?? Math.max(p.minZoom, defaultMaxZoom(side), p.json ? 1 : 0);
  return { world: { side, width, height }, minZoom: p.minZoom, maxZoom };
}

/** Features that make a world from the data far larger than the rest need: how many, and the side the rest need. */
export interface Outliers { features: number; of: number; side: number; bulkSide: number }

/** At most this share of the placed features (and at least one) may lie beyond the side the bulk needs... */
const OUTLIER_SHARE = 0.01;
/** ...when that side is this many times smaller than the world (4 zoom levels): then they are reported. */
const OUTLIER_RATIO = 16;

/**
 * Outliers of a world sized by the data: `extent[k]` placed features need a world of side 2^k. The bulk is all but
 * the farthest 1% (at least one feature); when the world is at least 16 times its side, those beyond are reported.
 */
export function findOutliers(extent: readonly number[], side: number): Outliers | null {
  const of = extent.reduce((n, c) => n + (c ?? 0), 0);
  if (of < 2) return null;
  const bulk = of - Math.max(1, Math.floor(of * OUTLIER_SHARE));
  let seen = 0;
  for (let k = 0; k < extent.length; k++) {
    seen += extent[k] ?? 0;
    if (seen < bulk) continue;
    const bulkSide = 2 ** k;
    return side >= OUTLIER_RATIO * bulkSide ? { features: of - seen, of, side, bulkSide } : null;
  }
  return null;
}

/**
 * Cell zooms of the levels, finest first. `finer` zooms more for level 0 split dense data into smaller units, or
 * fewer (negative) gather light ones into larger units (see `planBuild`); `firstUpper` zooms for the level above it
 * (see firstUpperZooms).
 */
export function planLevels(side: number, minZoom: number, maxZoom: number, cellSize: number, finer = 0, firstUpper = 1): Level[] {
  // Level-0 cells are about cellSize pixels whatever the zoom range: cells of the minimum zoom, when it is finer, would
  // each read a whole stored pixel cell for a fraction of it (16 times over at two zooms finer: 4x the build time).
  // A world smaller than a cell starts at zoom 0 and may still be split finer; gathering never goes below zoom 0.
  const k0 = Math.min(maxZoom, Math.max(0, Math.max(0, Math.round(Math.log2(side / cellSize))) + finer));
  const levels: Level[] = [{ zoom: k0, topZoom: maxZoom }];
  while (levels[levels.length - 1].zoom > minZoom) {
    const above = levels[levels.length - 1].zoom;
    const zooms = levels.length === 1 ? firstUpper : 1;
    levels.push({ zoom: Math.max(minZoom, above - zooms), topZoom: above - 1 });
  }
  return levels;
}

/**
 * How far around a stored cell the reading pass stores a feature (parse.ts): the pad of a tile COARSER_MAX zooms
 * coarser than the cell, so that gathered cells (see COARSER_BYTES) hold every feature their tiles' buffers reach.
 */
export function storedPad(cellSize: number): number {
  return tilePad(cellSize * 2 ** COARSER_MAX);
}

/**
 * How far from a stored cell the reading pass stores a point drawn as its circle of radius `reach` (`circlePad`), of
 * the same tile as `storedPad`: beyond that pad, only where the circle itself can reach a tile of a unit reading the
 * cell. A unit of coarser cells than that reads other stored cells around it (`beyondStored`), nearer the centre.
 */
export function storedCirclePad(cellSize: number, reach: number): number {
  return circlePad(cellSize * 2 ** COARSER_MAX, reach);
}

/**
 * Whether level-0 cells of zoom `zoom` reach beyond what their stored cells hold (a --max-zoom coarser than the stored
 * cells): they then also read the stored cells around them, and keep what meets their buffer.
 */
export function beyondStored(side: number, zoom: number, cellSize: number): boolean {
  return tilePad(tileSize(side, zoom)) > storedPad(cellSize);
}

/**
 * Whether level-0 units of zoom `zoom` keep only their part of the stored cells they read (`TileTask.part`): units
 * smaller than the stored cells (dense data split finer), or `beyondStored`.
 */
export function readsPart(side: number, zoom: number, cellSize: number): boolean {
  return tileSize(side, zoom) < Math.min(cellSize, side) || beyondStored(side, zoom, cellSize);
}

/**
 * Level-0 units: cells at the level's zoom, each reading the pixel cells (of side cellSize) that overlap it, and those
 * within its tile buffer when its cells are `beyondStored`; a unit of each of `channels` reads the every-channel
 * plane's cells too (`tiledPlanes`).
 */
export function planBaseUnits(storeKeys: string[], side: number, level: Level, cellSize: number, channels: readonly number[] = channelsOf(storeKeys)): UnitPlan[] {
  const ts = tileSize(side, level.zoom);
  const n = 2 ** level.zoom;
  const reach = beyondStored(side, level.zoom, cellSize) ? tilePad(ts) : 0;
  const units = new Map<string, UnitPlan>();
  for (const k of storeKeys) {
    const { plane: stored, x, y } = parseUnitKey(k);
    const ux0 = Math.max(0, Math.floor((x * cellSize - reach) / ts)), uy0 = Math.max(0, Math.floor((y * cellSize - reach) / ts));
    const ux1 = Math.ceil(((x + 1) * cellSize + reach) / ts) - 1, uy1 = Math.ceil(((y + 1) * cellSize + reach) / ts) - 1;
    for (const plane of tiledPlanes(stored, channels)) {
      for (let uy = uy0; uy <= Math.min(uy1, n - 1); uy++) {
        for (let ux = ux0; ux <= Math.min(ux1, n - 1); ux++) {
          const key = unitKey(plane, ux, uy);
          let u = units.get(key);
          if (!u) units.set(key, (u = { key, level: 0, plane, cell: { z: level.zoom, x: ux, y: uy }, sources: [] }));
          u.sources.push(k);
        }
      }
    }
  }
  return [...units.values()].sort((a, b) => compareUnitKeys(a.key, b.key));
}

/**
 * The bytes of records a level-0 unit holds, estimated: its stored cells' records, a share of each by area when the
 * unit is smaller than they are (records spread evenly: what a dense cell is split by).
 */
export function unitBytes(u: UnitPlan, side: number, cellSize: number, bytesOf: (key: string) => number): number {
  const share = Math.min(1, (tileSize(side, u.cell.z) / Math.min(cellSize, side)) ** 2);
  return u.sources.reduce((n, k) => n + bytesOf(k), 0) * share;
}

/**
 * Zooms the first level above level 0 tiles: the most, up to FIRST_UPPER_ZOOMS, for which each of its cells covers
 * at most FIRST_UPPER_BYTES of records, estimated by the level-0 units inside it (records for a coarser zoom are
 * reduced, so never larger). Dense data keep one zoom: on the dense slide two zooms would take cells of 58 MiB.
 */
export function firstUpperZooms(units: UnitPlan[], bytesOf: (u: UnitPlan) => number): number {
  for (let n = FIRST_UPPER_ZOOMS; n > 1; n--) {
    const cells = new Map<string, number>();
    let heaviest = 0;
    for (const u of units) {
      const key = unitKey(u.plane, u.cell.x >> n, u.cell.y >> n);
      const bytes = (cells.get(key) ?? 0) + bytesOf(u);
      cells.set(key, bytes);
      heaviest = Math.max(heaviest, bytes);
    }
    if (heaviest <= FIRST_UPPER_BYTES) return n;
  }
  return 1;
}

/** Units of a level above 0: one per stored key (cells at the level's zoom). */
export function planUpperUnits(storeKeys: string[], levelIndex: number, level: Level): UnitPlan[] {
  return storeKeys.map((key) => {
    const { plane, x, y } = parseUnitKey(key);
    return { key, level: levelIndex, plane, cell: { z: level.zoom, x, y }, sources: [key] };
  });
}

export function sortPlanes(planes: Iterable<Plane>): Plane[] {
  return [...planes].sort(comparePlanes);
}

/** What the reading pass found that fixes the plan; the tile estimates when the build thins (lod auto). */
export interface PlanSources {
  bounds: [number, number, number, number] | null;
  /** Placed features by the world side they need (2^k), for outliers. */
  extent?: readonly number[];
  /** An input that knows its image's size (a label mask) said so: the world is the image, set by no outlier. */
  imageSized?: boolean;
  dims: Dim[];
  stats: LayerStats;
  collection: { multiscale?: Multiscale; properties?: Properties };
  sketch?: TileSketch;
  /** The estimates of tiles that carry only `--coarse-fields` (its zooms are thinned by these). */
  fewSketch?: TileSketch;
}

/**
 * The most records a level-0 unit should hold: tiling one takes a few times its records (decoded features, JSON and
 * PBF tiles). A constant, not a share of --memory-budget: the plan, and so the bytes of a thinned pyramid, must not
 * depend on the budget (units at tile borders thin apart).
 */
export const UNIT_BYTES = 16 << 20;

/**
 * Level-0 cells are made coarser, up to COARSER_MAX zooms, while the heaviest unit of the coarser cells would hold at
 * most this many bytes of records. A unit of a whole slide's 2,048-px cell holds about 40 KB: its fixed costs (a
 * tiling call, a reduction for the level above, a marker, its share of a message) then weigh as much as its tiling,
 * and level 0 tiles one zoom more from each load of its records. At 100k cells (0.27 MiB at most in a 4,096-px unit)
 * the archive build took ×0.977 the wall time (8 alternating pairs); at 1M cells three pairs gave ×0.82, ×0.97 and
 * ×1.08 (a noisy machine), peaks 50 MiB lower. The dense slide's 2,048-px cells hold 4.9 MiB and stay (gathered, 16
 * units for the whole slide were ×1.11-1.26 slower).
 */
export const COARSER_BYTES = UNIT_BYTES / 32;
export const COARSER_MAX = 1;
/** Cells are gathered only where level 0 has this many units: a few hundred light units cost little, and keep both workers busy. */
export const COARSER_MIN_UNITS = 1024;

/**
 * The most records (estimated) a cell of the first level above level 0 may cover; fewer zooms are taken above it. Its
 * units hold their decoded features and the tiles of all their zooms at once. At 100k cells a cell of zoom 3 covers
 * 3.5 MiB (PBF) to 5 MiB (JSON + PBF) and one of zoom 2 11.5 to 16 MiB: four zooms from zoom-2 cells raised the peak
 * by 100–180 MB and took longer than three.
 */
export const FIRST_UPPER_BYTES = UNIT_BYTES / 2;

/**
 * The plan of a build and its level-0 units, from the config, what was read, and the keys of the stored records
 * with their bytes. Level 0 is split into finer units (down to the finest zoom) while its heaviest unit holds more
 * than UNIT_BYTES: a few huge features (1 MB ids) in one cell must not be tiled all at once. Only records narrower
 * than a cell count there (`wideOf`: the bytes of those a cell or more across): a finer unit reads every record its
 * box meets, so one across the slide is read by each of them. One class of a 20,000² px class mask held a web of
 * tissue of 2.9 million vertices; split for it, level 0 was 1,600 units that each read it, about 30 minutes of
 * tiling, where 139 units took 82 s. Where its units are light (a whole slide's cells), they are made coarser
 * instead (COARSER_BYTES).
 */
export function planBuild(config: BuildConfig, found: PlanSources, storeKeys: string[], bytesOf: (key: string) => number = () => 0, wideOf: (key: string, side: number) => number = () => 0): { plan: BuildPlan; units: UnitPlan[] } {
  const o = config.options;
  const { world, minZoom, maxZoom } = planWorld({ imageSize: config.imageSize, bounds: found.bounds, minZoom: o.minZoom, maxZoom: o.maxZoom, cellSize: o.unitSize, json: config.formats.json });
  // Level 0 decides the units; the levels above it follow from their bytes.
  const baseLevel = (finer: number) => planLevels(world.side, minZoom, maxZoom, o.unitSize, finer)[0];
  const bytes = (u: UnitPlan) => unitBytes(u, world.side, o.unitSize, bytesOf);
  const channels = channelsOf(storeKeys);
  let finer = 0;
  let units = planBaseUnits(storeKeys, world.side, baseLevel(finer), o.unitSize, channels);
  const heaviestOf = (us: UnitPlan[]) => us.reduce((m, u) => Math.max(m, bytes(u)), 0);
  const cell = Math.min(o.unitSize, world.side);
  const heaviest = units.reduce((m, u) => Math.max(m, unitBytes(u, world.side, o.unitSize, (k) => bytesOf(k) - wideOf(k, cell))), 0);
  if (heaviest > UNIT_BYTES && baseLevel(finer).zoom < maxZoom) {
    // Each zoom finer quarters a unit.
    finer = Math.ceil(Math.log2(heaviest / UNIT_BYTES) / 2);
    units = planBaseUnits(storeKeys, world.side, baseLevel(finer), o.unitSize, channels);
  } else if (units.length >= COARSER_MIN_UNITS) {
    while (finer > -COARSER_MAX && baseLevel(finer - 1).zoom < baseLevel(finer).zoom) {
      const coarser = planBaseUnits(storeKeys, world.side, baseLevel(finer - 1), o.unitSize, channels);
      if (heaviestOf(coarser) > COARSER_BYTES) break;
      finer--;
      units = coarser;
    }
  }
  const levels = planLevels(world.side, minZoom, maxZoom, o.unitSize, finer, firstUpperZooms(units, bytes));
  const planes = new Map<string, Plane>();
  for (const k of storeKeys) for (const plane of tiledPlanes(parseUnitKey(k).plane, channels)) planes.set(planeKey(plane), plane);
  const sorted = sortPlanes(planes.values());
  if (sorted.length === 0) sorted.push({ t: 0, c: 0, z: 0 });
  const layers = Object.keys(found.stats).sort();
  const collection = { multiscale: found.collection.multiscale, properties: found.collection.properties };
  // The zoom from which tiles carry every field: --fields-from-zoom, else the finest zoom less one (at most the finest).
  const few = config.coarseFields;
  const fewFields: FewFields | undefined = few && { keep: few.keep, below: Math.min(few.from ?? maxZoom - 1, maxZoom) };
  const thinning = found.sketch && config.lod === 'auto'
    ? planThresholds({
      sketch: inEveryChannel(found.sketch, channels), side: world.side, minZoom, maxZoom, budget: o.tileBudget,
      few: fewFields && found.fewSketch ? {
        sketch: inEveryChannel(found.fewSketch, channels), below: fewFields.below,
        overhead: tileOverhead(found.stats, found.sketch.format, tilePrefix(collection).length, new FieldFilter(fewFields.keep)),
      } : undefined,
      overhead: tileOverhead(found.stats, found.sketch.format, tilePrefix(collection).length),
    })
    : { thresholds: new Array<number>(maxZoom + 1).fill(0), spareFrom: minZoom, spareSizes: new Array<number>(maxZoom + 1).fill(SPARED_PIXELS) };
  const plan: BuildPlan = {
    world, minZoom, maxZoom, cellSize: o.unitSize, dims: found.dims, layers, planes: sorted, levels,
    formats: config.formats, lod: config.lod, tileBudget: o.tileBudget, collection,
    thresholds: thinning.thresholds.map((t) => layers.map(() => t)), raised: [], spareFrom: thinning.spareFrom, spareSizes: thinning.spareSizes,
  };
  if (fewFields && fewFields.below > minZoom) plan.fewFields = fewFields;
  if (config.fields) plan.keptFields = [...config.fields];
  const outliers = config.imageSize === undefined && !found.imageSized && found.extent ? findOutliers(found.extent, world.side) : null;
  if (outliers) plan.outliers = outliers;
  return { plan, units };
}

/**
 * The estimates with the every-channel plane's added to each channel's plane at its t and z: the tiles of a channel
 * hold both. The sums are of whole numbers, so they come out the same whichever way they are added up.
 */
function inEveryChannel(sketch: TileSketch, channels: readonly number[]): TileSketch {
  const data = sketch.data();
  if (!data.some((d) => planeOfPrefix(d.plane).c === EVERY_CHANNEL)) return sketch;
  const out = new TileSketch(sketch.format, sketch.minLog2);
  for (const d of data) out.merge(tiledPlanes(planeOfPrefix(d.plane), channels).map((plane) => ({ ...d, plane: unitKeyPrefix(plane) })));
  return out;
}
