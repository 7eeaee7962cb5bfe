// Golden-test helpers: run the built CLI on a case, and turn a written pyramid into readable text (PBF decoded).
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { flagName } from '../../src/options.js';
import { readTree } from '../helpers/pyramid.js';

/** The one switch: `UPDATE_GOLDEN=1 npx vitest run test/golden` rewrites expected files from what the code writes now. */
export const UPDATE = process.env.UPDATE_GOLDEN === '1';

export const GOLDEN = path.dirname(new URL(import.meta.url).pathname);

/** `{"imageSize": "64,64", "force": true}` → `--image-size 64,64 --force` (option names as in src/options.ts). */
export function flags(options: Record<string, string | number | boolean>): string[] {
  const out: string[] = [];
  for (const [name, v] of Object.entries(options)) {
    if (v === false) continue;
    out.push(`--${flagName(name)}`);
    if (v !== true) out.push(String(v));
  }
  return out;
}

/** Every file below `dir` as relative path → bytes, paths in sorted order. */
export function listTree(dir: string): Map<string, Buffer> {
  return new Map([...readTree(dir)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** build-report.json without what depends on the run's speed (the `timings` block), as the same text otherwise. */
export function withoutTimings(text: string): string {
  const out = text.replace(/\n {2}"timings": \{[^}]*\}/, '\n  "timings": {}');
  if (out === text) throw new Error('build-report.json has no "timings" block to leave out');
  return out;
}

/** sha256 of every output file; build-report.json is hashed without its timings. */
export function treeHashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rel, bytes] of listTree(dir)) {
    const data = rel === 'build-report.json' ? Buffer.from(withoutTimings(bytes.toString('utf8'))) : bytes;
    out[rel] = createHash('sha256').update(data).digest('hex');
  }
  return out;
}

const GEOMETRY_TYPES = ['Unknown', 'Point', 'LineString', 'Polygon'];

/** A PBF tile as layers of features, geometry in tile units exactly as encoded (one array per command run). */
export function decodePbfTile(bytes: Uint8Array): unknown {
  const tile = new VectorTile(new PbfReader(bytes));
  return Object.entries(tile.layers).map(([name, layer]) => {
    const features = [];
    for (let i = 0; i < layer.length; i++) {
      const f = layer.feature(i);
      features.push({
        id: f.id, type: GEOMETRY_TYPES[f.type], properties: { ...f.properties },
        geometry: f.loadGeometry().map((part) => part.map((p) => [p.x, p.y])),
      });
    }
    return { name, version: layer.version, extent: layer.extent, features };
  });
}

/** JSON indented by object and by array of objects, with arrays of numbers (coordinates) kept on one line. */
export function readable(value: unknown, indent = ''): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0 || numeric(value)) return JSON.stringify(value);
    return `[\n${value.map((v) => inner + readable(v, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${readable(v, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}

function numeric(a: unknown[]): boolean {
  return a.every((v) => typeof v === 'number' || (Array.isArray(v) && numeric(v)));
}

/**
 * The readable form of a written pyramid: relative path → text. JSON files keep their key order (a tile's key order
 * is part of its format); a PBF tile becomes `<path>.pbf.json`; build-report.json loses its timings.
 */
export function decodeTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [rel, bytes] of listTree(dir)) {
    if (rel.endsWith('.pbf')) out.set(`${rel}.json`, `${readable(decodePbfTile(bytes))}\n`);
    else if (rel.endsWith('.json')) {
      const value = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
      if (rel === 'build-report.json') delete value.timings;
      out.set(rel, `${readable(value)}\n`);
    } else out.set(rel, `sha256 ${createHash('sha256').update(bytes).digest('hex')}\n`);
  }
  return out;
}

/** Replaces `dir` with the given files. */
export function writeTree(dir: string, files: Map<string, string>): void {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [rel, text] of files) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

/** The files below `dir` as text (empty when it does not exist). */
export function readTextTree(dir: string): Map<string, string> {
  if (!fs.existsSync(dir)) return new Map();
  return new Map([...listTree(dir)].map(([rel, b]) => [rel, b.toString('utf8')]));
}
