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

export interface TileTask {
  kind: 'tile';
  unit: UnitPlan;
  /** The unit's records: files to read, or bytes handed over in memory; in source order. */
  sources: UnitSource[];
  spec: TileSpec;
  dims: Dim[];
  /** Cell zoom of the next level, when there is one: the unit's own features are reduced for the zoom below its cells. */
  next?: { zoom: number };
}

/** A tile of a unit: its bytes, until whoever writes it (a worker writing files itself) drops them; `size` stays. */
export interface WrittenTile { path: string; z: number; size: number; features: number; bytes?: Uint8Array }

export interface UnitResult {
  key: string;
  tiles: WrittenTile[];
  /** Next-level key → records. */
  next: [string, Uint8Array][];
  features: number;
  pointified: number[][];
  thinned: number[][];
  notInPbf: number;
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
  // Records may arrive in any order (a coarser level's come from units finishing in any order): sequence order is the one order.
  features.sort((a, b) => a.seq - b.seq);
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
    pointified: [], thinned: [], notInPbf: 0,
  };
  for (let z = spec.minZoom; z <= spec.maxZoom; z++) {
    res.pointified[z] = new Array<number>(layers).fill(0);
    res.thinned[z] = new Array<number>(layers).fill(0);
  }
  for (const t of tiles) {
    for (let l = 0; l < layers; l++) {
      res.pointified[t.z][l] += t.stats.pointified[l] ?? 0;
      res.thinned[t.z][l] += t.stats.thinned[l] ?? 0;
    }
    res.notInPbf += t.stats.notInPbf;
    if (t.json) res.tiles.push({ path: tilePath(t.z, t.x, t.y, unit.plane, task.dims, 'json'), z: t.z, size: t.json.byteLength, bytes: t.json, features: t.stats.features });
    if (t.pbf) res.tiles.push({ path: tilePath(t.z, t.x, t.y, unit.plane, task.dims, 'pbf'), z: t.z, size: t.pbf.byteLength, bytes: t.pbf, features: t.stats.features });
  }
  if (task.next && keptAtTop) res.next = reduceForNext(features, home, keptAtTop, task, task.next.zoom);
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
