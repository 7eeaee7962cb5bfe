// Tile one work unit: read its records, tile and encode its zooms, and reduce its own features for the level above.
import fs from 'node:fs';
import { BUFFER, EXTENT, tilePath, tileSize, type Dim } from '../tiling/space.js';
import type { FlatFeature } from '../tiling/flat.js';
import { Simplifier } from '../tiling/simplify.js';
import { tileFeatures } from './tile/tiler.js';
import { reduceForZoom } from './tile/reduce.js';
import type { TileSpec } from './tile/spec.js';
import { routeRecord, unitChunks, type UnitSource } from './partition.js';
import { unitKeyPrefix } from './unit-key.js';
import { RecordEncoder, RecordReader, StringCache } from './record.js';
import type { ByteArena } from '../bytes.js';
import type { UnitPlan } from './plan.js';
import { keeps } from './thinning.js';
import { PreviewPainter, paintFeature, type PatchArea } from '../raster/paint.js';

export interface TileTask {
  kind: 'tile';
  unit: UnitPlan;
  /** The unit's records: files to read, or bytes handed over in memory; in source order. */
  sources: UnitSource[];
  spec: TileSpec;
  dims: Dim[];
  /** Cell zoom of the next level, when there is one: the unit's own features are reduced for the zoom below its cells. */
  next?: { zoom: number };
  /** With --preview, at level 0: the unit's patch of its plane's preview, painted from every feature it reads. */
  preview?: { area: PatchArea; pointRadius: number };
}

export interface WrittenTile { path: string; z: number; bytes: Uint8Array; features: number }

export interface UnitResult {
  key: string;
  tiles: WrittenTile[];
  /** Next-level key → records. */
  next: [string, Uint8Array][];
  features: number;
  pointified: number[][];
  /** Per zoom, per layer: the unit's own features (home) that the zoom draws. */
  kept: number[][];
  /** Per zoom: the lowest threshold at which every tile of the unit fits the budget, where one does not (else 0). */
  needs: number[];
  notInPbf: number;
  /** The preview patch: where it lies on the plane's preview grid, and its premultiplied RGBA. */
  preview?: { area: PatchArea; rgba: Uint8Array };
}

/** Reads the unit's records, each feature once (a feature near a cell border is stored in every cell it touches). */
function loadFeatures(task: TileTask): { features: FlatFeature[]; home: Set<number> } {
  const layerIndex = new Map(task.spec.layers.map((l, i) => [l.id, i]));
  const indexOf = (id: string) => layerIndex.get(id) ?? 0;
  const seen = new Set<number>();
  const home = new Set<number>();
  const features: FlatFeature[] = [];
  const strings = new StringCache();
  for (const src of task.sources) {
    for (const bytes of 'chunks' in src ? src.chunks : [fs.readFileSync(src.path)]) {
      const r = new RecordReader(bytes, strings);
      while (r.next()) {
        if (r.home) home.add(r.seq);
        if (seen.has(r.seq)) continue;
        seen.add(r.seq);
        features.push(r.feature(indexOf));
      }
    }
  }
  if (task.sources.length > 1) features.sort((a, b) => a.seq - b.seq);
  return { features, home };
}

export function tileUnit(task: TileTask): UnitResult {
  const { unit, spec } = task;
  const { features, home } = loadFeatures(task);
  // Only features still drawn at the unit's coarsest zoom go up to the next level: the rest were thinned away.
  const keptAtTop = task.next ? new Set<number>() : undefined;
  const tiles = tileFeatures(features, spec, keptAtTop);
  const layers = spec.layers.length;
  const res: UnitResult = {
    key: unit.key, tiles: [], next: [], features: features.length,
    pointified: [], kept: [], needs: [], notInPbf: 0,
  };
  for (let z = spec.minZoom; z <= spec.maxZoom; z++) {
    res.pointified[z] = new Array<number>(layers).fill(0);
    res.kept[z] = new Array<number>(layers).fill(0);
    res.needs[z] = 0;
  }
  for (const f of features) {
    if (!home.has(f.seq)) continue;
    for (let z = spec.minZoom; z <= spec.maxZoom; z++) if (keeps(spec.thresholds?.[z]?.[f.layer] ?? 0, f.seq)) res.kept[z][f.layer]++;
  }
  for (const t of tiles) {
    for (let l = 0; l < layers; l++) res.pointified[t.z][l] += t.stats.pointified[l] ?? 0;
    if (t.need !== undefined) res.needs[t.z] = Math.max(res.needs[t.z], t.need);
    res.notInPbf += t.stats.notInPbf;
    if (t.json) res.tiles.push({ path: tilePath(t.z, t.x, t.y, unit.plane, task.dims, 'json'), z: t.z, bytes: t.json, features: t.stats.features });
    if (t.pbf) res.tiles.push({ path: tilePath(t.z, t.x, t.y, unit.plane, task.dims, 'pbf'), z: t.z, bytes: t.pbf, features: t.stats.features });
  }
  if (task.next && keptAtTop) res.next = reduceForNext(features, home, keptAtTop, task, task.next.zoom);
  if (task.preview) {
    // Every feature the unit reads, in input order: the patch is what one canvas of the whole plane shows there.
    const painter = new PreviewPainter(task.preview.area, task.preview.pointRadius);
    for (const f of features) paintFeature(painter, f);
    res.preview = { area: task.preview.area, rgba: painter.rgba };
  }
  return res;
}

/** The unit's own features, reduced for the zoom just above its cells and routed into the next level's cells. */
function reduceForNext(features: FlatFeature[], home: Set<number>, kept: Set<number>, task: TileTask, zoom: number): [string, Uint8Array][] {
  const { side } = task.spec;
  const reduceZoom = task.unit.cell.z - 1;
  const ts = tileSize(side, zoom);
  // One tile unit beyond the buffer: the tiler places features by their quantised bbox, which may reach that far.
  const pad = (ts * (BUFFER + 1)) / EXTENT;
  const n = 2 ** zoom;
  const prefix = unitKeyPrefix(task.unit.plane);
  const out = new Map<string, ByteArena>();
  const enc = new RecordEncoder();
  const simplifier = new Simplifier();
  for (const f of features) {
    if (!home.has(f.seq) || !kept.has(f.seq)) continue;
    const r = reduceForZoom(f, task.spec, reduceZoom, simplifier);
    if (r === null || !enc.encode(task.spec.layers[r.layer].id, r)) continue;
    routeRecord(out, prefix, enc.bytes(), enc.box, ts, pad, n - 1);
  }
  return unitChunks(out);
}
