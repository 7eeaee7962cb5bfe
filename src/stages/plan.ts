// Plan stage: from what the reading pass found, fix the world, zooms, layers, levels and work units of a build.
import type { Multiscale } from '../model/multiscale.js';
import type { Properties } from '../model/feature.js';
import { compareUnitKeys, parseUnitKey, unitKey } from './unit-key.js';
import type { BuildConfig } from '../options.js';
import type { LayerStats } from './assign.js';
import { tilePrefix } from './encode-json.js';
import { planThresholds, tileOverhead, type TileSketch } from './thinning.js';
import { comparePlanes, defaultMaxZoom, planeKey, tileSize, worldSide, type Dim, type Plane, type World } from '../tiling/space.js';

/**
 * Zooms between the cell zooms of two levels: each level above the first tiles this many zooms from reduced features.
 * One zoom per level gives each upper level four times the units two would (6 instead of 2 at 100k cells), so the
 * pool stays busy there; tiles are the same bytes either way.
 */
export const LEVEL_STEP = 1;

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
  /**
   * Per zoom (the index) and layer: the thinning threshold every tile of that zoom applies (stages/thinning.ts),
   * 0 where everything is drawn. Fixed by the plan from the read's estimates; raised after tiling where a tile
   * was still over the budget, and then the zooms in `raised` were tiled again.
   */
  thresholds: number[][];
  raised: number[];
}

export interface PlanInput {
  imageSize?: { width: number; height: number };
  /** Bounds of the placed features, or null when there are none. */
  bounds: [number, number, number, number] | null;
  minZoom: number;
  maxZoom?: number;
  cellSize: number;
}

/** The world square and zoom range: from the image size when given, else from the data (at least one pixel). */
export function planWorld(p: PlanInput): { world: World; minZoom: number; maxZoom: number } {
  const width = p.imageSize?.width ?? Math.max(1, Math.ceil(p.bounds?.[2] ?? 1));
  const height = p.imageSize?.height ?? Math.max(1, Math.ceil(p.bounds?.[3] ?? 1));
  const side = worldSide(width, height);
  const maxZoom = p.maxZoom ?? Math.max(p.minZoom, defaultMaxZoom(side));
  return { world: { side, width, height }, minZoom: p.minZoom, maxZoom };
}

/** Cell zooms of the levels, finest first. */
export function planLevels(side: number, minZoom: number, maxZoom: number, cellSize: number): Level[] {
  // Level-0 cells are about cellSize pixels whatever the zoom range: cells of the minimum zoom, when it is finer, would
  // each read a whole stored pixel cell for a fraction of it (16 times over at two zooms finer: 4x the build time).
  const k0 = Math.min(maxZoom, Math.max(0, Math.round(Math.log2(side / cellSize))));
  const levels: Level[] = [{ zoom: k0, topZoom: maxZoom }];
  while (levels[levels.length - 1].zoom > minZoom) {
    const above = levels[levels.length - 1].zoom;
    levels.push({ zoom: Math.max(minZoom, above - LEVEL_STEP), topZoom: above - 1 });
  }
  return levels;
}

/** Level-0 units: cells at the level's zoom, each reading the pixel cells (of side cellSize) that overlap it. */
export function planBaseUnits(storeKeys: string[], side: number, level: Level, cellSize: number): UnitPlan[] {
  const ts = tileSize(side, level.zoom);
  const n = 2 ** level.zoom;
  const units = new Map<string, UnitPlan>();
  for (const k of storeKeys) {
    const { plane, x, y } = parseUnitKey(k);
    const ux0 = Math.floor((x * cellSize) / ts), uy0 = Math.floor((y * cellSize) / ts);
    const ux1 = Math.ceil(((x + 1) * cellSize) / ts) - 1, uy1 = Math.ceil(((y + 1) * cellSize) / ts) - 1;
    for (let uy = uy0; uy <= Math.min(uy1, n - 1); uy++) {
      for (let ux = ux0; ux <= Math.min(ux1, n - 1); ux++) {
        const key = unitKey(plane, ux, uy);
        let u = units.get(key);
        if (!u) units.set(key, (u = { key, level: 0, plane, cell: { z: level.zoom, x: ux, y: uy }, sources: [] }));
        u.sources.push(k);
      }
    }
  }
  return [...units.values()].sort((a, b) => compareUnitKeys(a.key, b.key));
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
  dims: Dim[];
  stats: LayerStats;
  collection: { multiscale?: Multiscale; properties?: Properties };
  sketch?: TileSketch;
}

/** The plan of a build and its level-0 units, from the config, what was read, and the keys of the stored records. */
export function planBuild(config: BuildConfig, found: PlanSources, storeKeys: string[]): { plan: BuildPlan; units: UnitPlan[] } {
  const o = config.options;
  const { world, minZoom, maxZoom } = planWorld({ imageSize: config.imageSize, bounds: found.bounds, minZoom: o.minZoom, maxZoom: o.maxZoom, cellSize: o.unitSize });
  const levels = planLevels(world.side, minZoom, maxZoom, o.unitSize);
  const planes = new Map<string, Plane>();
  for (const k of storeKeys) {
    const { plane } = parseUnitKey(k);
    planes.set(planeKey(plane), plane);
  }
  const sorted = sortPlanes(planes.values());
  if (sorted.length === 0) sorted.push({ t: 0, c: 0, z: 0 });
  const layers = Object.keys(found.stats).sort();
  const collection = { multiscale: found.collection.multiscale, properties: found.collection.properties };
  const perZoom = found.sketch && config.lod === 'auto'
    ? planThresholds({
      sketch: found.sketch, side: world.side, minZoom, maxZoom, budget: o.tileBudget,
      overhead: tileOverhead(found.stats, found.sketch.format, tilePrefix(collection).length),
    })
    : new Array<number>(maxZoom + 1).fill(0);
  const plan: BuildPlan = {
    world, minZoom, maxZoom, cellSize: o.unitSize, dims: found.dims, layers, planes: sorted, levels,
    formats: config.formats, lod: config.lod, tileBudget: o.tileBudget, collection,
    thresholds: perZoom.map((t) => layers.map(() => t)), raised: [],
  };
  return { plan, units: planBaseUnits(storeKeys, world.side, levels[0], o.unitSize) };
}
