// geojson-vt as an oracle for our tiler's clipping: on a generated slide, the same features in every tile of every zoom
// and every ring within one tile unit of geojson-vt's (both at full detail: clipping and quantising, no simplification).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import GeoJSONVT from 'geojson-vt';
import type { GeoJSON } from 'geojson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Feature, FeatureCollection } from '../../src/model/feature.js';
import { tileFeatures } from '../../src/stages/tile/tiler.js';
import type { TileResult } from '../../src/stages/tile/spec.js';
import { pbfFeatures } from './tile-fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** An 8,192 px world to zoom 5: tiles of 256 px, so about a quarter of the cells (20–40 px across) cross a tile edge. */
const SIDE = 8192;
const MAX_ZOOM = 5;
/** Pixels kept clear left and right: more than the zoom-0 buffer (64 of 4,096 tile units: 128 px). */
const MARGIN = 200;

let dir = '';
let features: Feature[] = [];
let ours = new Map<string, TileResult>();
let theirs: GeoJSONVT;

/** geojson-vt knows lon/lat only: the pixel world onto the Web Mercator square, so its tile z/x/y is ours. */
function lonLat([x, y]: number[]): number[] {
  return [(x / SIDE) * 360 - 180, (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / SIDE))) * 180) / Math.PI];
}

function project(c: unknown): unknown {
  return typeof (c as number[])[0] === 'number' ? lonLat(c as number[]) : (c as unknown[]).map(project);
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mudm-oracle-'));
  const file = path.join(dir, 'slide.json');
  // Cells with holes (vacuoles) and polygon nuclei: multi-ring polygons cut by tile edges.
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'generate.js'), '--cells', '3000', '--seed', '5', '--nuclei', 'polygons', '--holes',
    '--width', String(SIDE - 2 * MARGIN), '--height', String(SIDE - 1500), '--quiet', '-o', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bench/generate.js failed: ${r.stderr}`);
  features = (JSON.parse(fs.readFileSync(file, 'utf8')) as FeatureCollection).features;
  // geojson-vt wraps the world around: what lies within a buffer of its left edge shows up beyond its right edge too.
  const shift = (c: unknown): void => {
    if (typeof (c as number[])[0] === 'number') (c as number[])[0] += MARGIN;
    else for (const x of c as unknown[]) shift(x);
  };
  for (const f of features) shift((f.geometry as { coordinates: unknown }).coordinates);
  // Full detail at every zoom (every zoom counts as the finest: no simplification, thinning or sub-pixel points), as
  // geojson-vt with tolerance 0: what differs is then clipping and quantising alone.
  const results = tileFeatures(features.map((feature, seq) => ({ seq, layer: 0, feature })), {
    side: SIDE, minZoom: 0, maxZoom: MAX_ZOOM, finestZoom: 0, layers: [{ id: 'cells' }], formats: { json: false, pbf: true }, lod: 'none', tileBudget: 1 << 30,
  });
  ours = new Map(results.map((t) => [`${t.z}/${t.x}/${t.y}`, t]));
  const geo = { type: 'FeatureCollection', features: features.map((f) => ({ type: 'Feature', id: f.id, properties: {}, geometry: { type: f.geometry?.type, coordinates: project((f.geometry as { coordinates: unknown }).coordinates) } })) };
  theirs = new GeoJSONVT(geo as GeoJSON, { maxZoom: MAX_ZOOM, indexMaxZoom: MAX_ZOOM, indexMaxPoints: 0, buffer: 64, extent: 4096, tolerance: 0 });
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Their non-empty tiles: key → feature id → rings in tile units. */
function theirTiles(): Map<string, Map<number, number[][][]>> {
  const out = new Map<string, Map<number, number[][][]>>();
  for (const { z, x, y } of theirs.tileCoords) {
    const t = theirs.getTile(z, x, y);
    if (!t || t.features.length === 0) continue;
    const byId = new Map<number, number[][][]>();
    for (const f of t.features) {
      const rings = f.type === 1 ? [f.geometry] : f.geometry;
      byId.set(Number(f.id), [...(byId.get(Number(f.id)) ?? []), ...rings.map((ring) => ring.map(([a, b]) => [a, b]))]);
    }
    out.set(`${z}/${x}/${y}`, byId);
  }
  return out;
}

function ourFeatures(t: TileResult): Map<number, number[][][]> {
  const byId = new Map<number, number[][][]>();
  for (const f of pbfFeatures(t.pbf as Uint8Array)) byId.set(f.id as number, f.geometry);
  return byId;
}

/**
 * How far point p lies from segment ab along the worse axis (the larger of its x and y gaps), at the segment's best
 * point: each side rounds to the tile grid on its own, so a vertex may move a unit in x and a unit in y. The gap is
 * the larger of two V-shaped functions of the position t along the segment: its least value is at an end, at a V's
 * bottom, or where the two cross.
 */
function toSegment(p: number[], a: number[], b: number[]): number {
  const ex = p[0] - a[0], ey = p[1] - a[1], dx = b[0] - a[0], dy = b[1] - a[1];
  const at = (t: number) => Math.max(Math.abs(ex - t * dx), Math.abs(ey - t * dy));
  let best = Math.min(at(0), at(1));
  for (const [n, d] of [[ex, dx], [ey, dy], [ex - ey, dx - dy], [ex + ey, dx + dy]]) {
    if (d !== 0) best = Math.min(best, at(Math.max(0, Math.min(1, n / d))));
  }
  return best;
}

/** How far p lies from the outline of the nearest of `rings` (closed rings). */
function toRings(p: number[], rings: number[][][]): number {
  let best = Infinity;
  for (const r of rings) for (let i = 0; i < r.length; i++) best = Math.min(best, toSegment(p, r[i], r[(i + 1) % r.length]));
  return best;
}

/**
 * A ring at most two tile units across (in x or in y), so within one unit of its mid-line: a sliver where a feature
 * barely enters a tile's buffer, or a small ring quantised nearly flat. Flattened to a line it has no area, and
 * either side may drop it: one keeping it and the other not is still within one unit.
 */
function sliver(ring: number[][]): boolean {
  const xs = ring.map((p) => p[0]), ys = ring.map((p) => p[1]);
  return Math.max(...xs) - Math.min(...xs) <= 2 || Math.max(...ys) - Math.min(...ys) <= 2;
}

/** The input feature's rings in the tile units of tile z/x/y, unclipped. */
function inputRings(f: Feature, z: number, x: number, y: number): number[][][] {
  const ts = SIDE / 2 ** z;
  const g = f.geometry as { type: string; coordinates: number[][][] | number[][][][] };
  const polygons = (g.type === 'Polygon' ? [g.coordinates] : g.coordinates) as number[][][][];
  return polygons.flat().map((ring) => ring.map(([px, py]) => [((px - x * ts) * 4096) / ts, ((py - y * ts) * 4096) / ts]));
}

const EDGE = [-64, 4096 + 64];

/**
 * Problems of `rings` (one side's feature in a tile) against `other` (the other side's): a ring that is no sliver must
 * have every vertex within one unit of the other's rings; a vertex on the buffered tile's edge may instead lie within
 * one unit of the input feature: quantising before clipping (ours) or after (geojson-vt) leaves different zero-width
 * runs along that edge where an input edge runs within a unit of it.
 */
function ringProblems(rings: number[][][], other: number[][][], input: () => number[][][], where: string): string[] {
  const out: string[] = [];
  for (const [i, ring] of rings.entries()) {
    if (sliver(ring)) continue;
    if (other.length === 0) { out.push(`${where}: ring ${i} has no counterpart`); continue; }
    for (const p of ring) {
      const d = toRings(p, other);
      if (d <= 1) continue;
      if ((EDGE.includes(p[0]) || EDGE.includes(p[1])) && toRings(p, input()) <= 1) continue;
      out.push(`${where}: ring ${i} vertex ${p} is ${d.toFixed(2)} units from the other side`);
      break;
    }
  }
  return out;
}

describe('our tiler against geojson-vt (oracle)', () => {
  it('makes the same tiles, each with the same features (but slivers), each ring within one tile unit of geojson-vt\'s', () => {
    const them = theirTiles();
    const sorted = (keys: Iterable<string>) => [...keys].sort();
    expect(sorted(ours.keys())).toEqual(sorted(them.keys()));
    const byId = new Map(features.map((f) => [Number(f.id), f]));
    const problems: string[] = [];
    let rings = 0;
    for (const [key, t] of ours) {
      const [z, x, y] = key.split('/').map(Number);
      const mine = ourFeatures(t), theirsHere = them.get(key) as Map<number, number[][][]>;
      for (const id of new Set([...mine.keys(), ...theirsHere.keys()])) {
        const a = mine.get(id) ?? [], b = theirsHere.get(id) ?? [];
        rings += a.length;
        const input = () => inputRings(byId.get(id) as Feature, z, x, y);
        problems.push(...ringProblems(a, b, input, `${key} feature ${id}, ours`), ...ringProblems(b, a, input, `${key} feature ${id}, geojson-vt's`));
      }
    }
    expect(problems.slice(0, 10), `${problems.length} problems`).toEqual([]);
    expect(rings).toBeGreaterThan(features.length * 3);
    // The slide must exercise clipping: features cut by an edge at the finest zoom, seen in two tiles or more.
    const seen = new Map<number, number>();
    for (const [key, t] of ours) if (key.startsWith(`${MAX_ZOOM}/`)) for (const id of ourFeatures(t).keys()) seen.set(id, (seen.get(id) ?? 0) + 1);
    expect([...seen.values()].filter((n) => n > 1).length).toBeGreaterThan(features.length / 10);
  });
});
