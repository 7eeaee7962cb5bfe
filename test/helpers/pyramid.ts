// Test helpers for pyramids: decode PBF tiles to pixel coordinates, read a written tree, measure clipped areas.
import fs from 'node:fs';
import path from 'node:path';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { makeTemp } from './temps.js';

export interface DecodedFeature { layer: string; id: number | undefined; type: number; properties: Record<string, unknown>; rings: number[][][] }

/** Decodes a PBF tile; geometry mapped from tile-local units to global pixels. */
export function decodePbf(bytes: Uint8Array, side: number, z: number, x: number, y: number): DecodedFeature[] {
  const tile = new VectorTile(new PbfReader(bytes));
  const ts = side / 2 ** z;
  const out: DecodedFeature[] = [];
  for (const name of Object.keys(tile.layers)) {
    const layer = tile.layers[name];
    for (let i = 0; i < layer.length; i++) {
      const f = layer.feature(i);
      const rings = f.loadGeometry().map((ring) => ring.map((p) => [x * ts + (p.x * ts) / layer.extent, y * ts + (p.y * ts) / layer.extent]));
      out.push({ layer: name, id: f.id, type: f.type, properties: { ...f.properties }, rings });
    }
  }
  return out;
}

/** Every file below `dir`, relative path → bytes. */
export function readTree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r); else out.set(r, fs.readFileSync(path.join(dir, r)));
    }
  };
  walk('');
  return out;
}

/**
 * The files that differ between two pyramids on disk (in one only, or other bytes), the build report aside (it holds
 * timings): empty when they are the same, byte for byte.
 */
export function treeDifferences(one: string, other: string): string[] {
  const a = readTree(one), b = readTree(other);
  a.delete('build-report.json'); b.delete('build-report.json');
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => !(a.get(k)?.equals(b.get(k) ?? Buffer.alloc(0)) ?? false)).sort();
}

/** Shoelace area of a ring of [x, y] positions (signed: positive when clockwise on screen, y down). */
export function ringArea(ring: number[][]): number {
  let a = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) a += (ring[j][0] - ring[i][0]) * (ring[j][1] + ring[i][1]);
  return a / 2;
}

/** Sutherland–Hodgman clip of a ring to an axis-aligned rectangle (independent of the project's own clipper). */
export function clipRingToRect(ring: number[][], x0: number, y0: number, x1: number, y1: number): number[][] {
  const edges: Array<[(p: number[]) => boolean, (a: number[], b: number[]) => number[]]> = [
    [(p) => p[0] >= x0, (a, b) => [x0, a[1] + ((b[1] - a[1]) * (x0 - a[0])) / (b[0] - a[0])]],
    [(p) => p[0] <= x1, (a, b) => [x1, a[1] + ((b[1] - a[1]) * (x1 - a[0])) / (b[0] - a[0])]],
    [(p) => p[1] >= y0, (a, b) => [a[0] + ((b[0] - a[0]) * (y0 - a[1])) / (b[1] - a[1]), y0]],
    [(p) => p[1] <= y1, (a, b) => [a[0] + ((b[0] - a[0]) * (y1 - a[1])) / (b[1] - a[1]), y1]],
  ];
  let pts = ring.slice(0, -1);
  for (const [inside, cut] of edges) {
    const next: number[][] = [];
    for (let i = 0; i < pts.length; i++) {
      const a = pts[(i + pts.length - 1) % pts.length], b = pts[i];
      if (inside(b)) {
        if (!inside(a)) next.push(cut(a, b));
        next.push(b);
      } else if (inside(a)) next.push(cut(a, b));
    }
    pts = next;
    if (pts.length === 0) break;
  }
  return pts.length ? [...pts, pts[0]] : [];
}

/** A regular polygon ring (counter-clockwise in y-up terms), closed. */
export function circleRing(cx: number, cy: number, r: number, n = 16): number[][] {
  const ring: number[][] = [];
  for (let i = 0; i < n; i++) ring.push([+(cx + r * Math.cos((2 * Math.PI * i) / n)).toFixed(3), +(cy + r * Math.sin((2 * Math.PI * i) / n)).toFixed(3)]);
  ring.push(ring[0]);
  return ring;
}

/**
 * Writes an input in `dir` whose large feature spans many cells: an outline of 6,000 vertices across most of a
 * 2048-px world (a record of about 100 KiB that a plan spills once, to shared.bin, with a pointer in each cell's
 * records), and a small circle at (300, 300). Returns its path.
 */
export function longOutlineInput(dir: string): string {
  const file = path.join(dir, 'outline.json');
  fs.writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features: [
    { type: 'Feature', id: 1, properties: {}, geometry: { type: 'Polygon', coordinates: [circleRing(1024, 1024, 900, 6000)] } },
    { type: 'Feature', id: 2, properties: {}, geometry: { type: 'Polygon', coordinates: [circleRing(300, 300, 20)] } },
  ] }));
  return file;
}

/** A fresh temporary directory, removed after the test file (test/setup-temps.ts). */
export function tmpDir(prefix: string): string {
  return makeTemp(prefix);
}

/** A JSON file of an in-memory build's sink, parsed. */
export function sinkJson(sink: { files: Map<string, Uint8Array> }, p: string): Record<string, unknown> {
  const b = sink.files.get(p);
  if (!b) throw new Error(`missing ${p}`);
  return JSON.parse(Buffer.from(b).toString('utf8')) as Record<string, unknown>;
}

/** A sink's files but the build report (which describes the run), as base64, to compare two builds byte by byte. */
export function withoutReport(sink: { files: Map<string, Uint8Array> }): Map<string, string> {
  return new Map([...sink.files].filter(([k]) => k !== 'build-report.json').map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
}

/** A square polygon's coordinates, corner (x, y), side s. */
export const squareCoords = (x: number, y: number, s: number): number[][][] => [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]];
