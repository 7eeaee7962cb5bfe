// A built pyramid as inspect and verify see it: its descriptor, world, plane dimensions and the tile files on disk.
import fs from 'node:fs';
import { listedArchives } from '../archive/archive-names.js';
import type { TilesetDescriptor } from '../model/descriptor.js';
import { InputError, UsageError } from '../report/errors.js';
import { DIMS, isPlaneIndex, tilePath, worldSide, type Dim, type Plane } from '../tiling/space.js';
import { isTileNumber, tileFileName, type TileExt } from '../tiling/tile-names.js';
import { asReader, type PyramidReader } from './reader.js';

export type TileFormat = TileExt;

export interface Pyramid {
  reader: PyramidReader;
  descriptor: TilesetDescriptor;
  /** The format `tileset.json` describes. */
  format: TileFormat;
  /** Plane dimensions in tile paths, in path order (from the `tiles` template). */
  dims: Dim[];
  /** Pixel bounds `[minX, minY, maxX, maxY]` from `bounds`. */
  box: [number, number, number, number];
  /** Image extent from `bounds`, and the world square that covers it. */
  width: number;
  height: number;
  side: number;
  minZoom: number;
  maxZoom: number;
  /** Plane ranges from `bounds` (10 numbers); all 0 in 2D. */
  planeLo: Plane;
  planeHi: Plane;
}

export interface TileRef {
  z: number;
  plane: Plane;
  x: number;
  y: number;
  ext: TileFormat;
  /** Relative path, as written. */
  path: string;
}

function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
}

/** Parses JSON bytes; throws with the file name on failure. */
export function readJson(reader: PyramidReader, relPath: string): unknown {
  const bytes = reader.read(relPath);
  if (bytes === undefined) return undefined;
  try {
    return decodeJson(bytes);
  } catch (err) {
    throw new InputError(`${relPath} in ${reader.name} is not valid JSON: ${(err as Error).message}`, relPath);
  }
}

/** Plane dimensions of a `tiles` template: the `{t}`, `{c}`, `{z}` placeholders in order (`{zlvl}` is the zoom). */
export function dimsOfTemplate(template: string): Dim[] {
  const out: Dim[] = [];
  for (const m of template.matchAll(/\{([a-z]+)\}/g)) {
    const name = m[1];
    if ((DIMS as readonly string[]).includes(name)) out.push(name as Dim);
  }
  return out;
}

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/**
 * Opens a pyramid: reads `tileset.json` and derives what reading tiles needs. Throws InputError when there is no
 * usable descriptor (missing, not JSON, no tiles template, no 2D bounds): nothing below it can be read without one.
 */
export function openPyramid(root: string | PyramidReader): Pyramid {
  // A path is read as a directory: archives only through their own reader, which is asynchronous.
  const throughReader = `read it through openPyramidReader(${JSON.stringify(root)}), whose reader this takes`;
  if (typeof root === 'string' && fs.statSync(root, { throwIfNoEntry: false })?.isFile()) {
    throw new InputError(`${root} is a file, not a pyramid directory: for a PMTiles archive, ${throughReader}`, root);
  }
  const reader = asReader(root);
  const value = readJson(reader, 'tileset.json');
  if (typeof root === 'string' && value !== null && typeof value === 'object' && listedArchives(value as TilesetDescriptor).length > 0) {
    throw new InputError(`${root} holds its tiles in PMTiles archives (--archive pmtiles): ${throughReader}`, root);
  }
  if (value === undefined) throw new InputError(`no tileset.json in ${reader.name}: not a pyramid, or its build did not finish`, reader.name);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError(`tileset.json in ${reader.name} is not a JSON object`, reader.name);
  const descriptor = value as TilesetDescriptor;
  const template = Array.isArray(descriptor.tiles) && typeof descriptor.tiles[0] === 'string' ? descriptor.tiles[0] : undefined;
  if (template === undefined) throw new InputError(`tileset.json in ${reader.name} has no tiles template`, reader.name);
  const dims = dimsOfTemplate(template);
  const format: TileFormat = descriptor.format === 'json' || (descriptor.format === undefined && template.endsWith('.json')) ? 'json' : 'pbf';
  const b = descriptor.bounds;
  if (!Array.isArray(b) || (b.length !== 4 && b.length !== 10) || !b.every(isFiniteNumber)) {
    throw new InputError(`tileset.json in ${reader.name} has no usable bounds (4 or 10 numbers)`, reader.name);
  }
  const planeLo: Plane = { t: 0, c: 0, z: 0 }, planeHi: Plane = { t: 0, c: 0, z: 0 };
  let box: [number, number, number, number];
  if (b.length === 10) {
    if (![b[0], b[1], b[2], b[5], b[6], b[7]].every(isPlaneIndex)) throw new InputError(`tileset.json in ${reader.name} has planes in its bounds that are no indexes (t, c, z: non-negative integers): ${JSON.stringify(b)}`, reader.name);
    [planeLo.t, planeLo.c, planeLo.z] = [b[0], b[1], b[2]];
    [planeHi.t, planeHi.c, planeHi.z] = [b[5], b[6], b[7]];
    box = [b[3], b[4], b[8], b[9]];
  } else {
    box = [b[0], b[1], b[2], b[3]];
  }
  const [, , width, height] = box;
  const minZoom = Number.isInteger(descriptor.minzoom) ? (descriptor.minzoom as number) : 0;
  const maxZoom = Number.isInteger(descriptor.maxzoom) ? (descriptor.maxzoom as number) : 30;
  return { reader, descriptor, format, dims, box, width, height, side: worldSide(width, height), minZoom, maxZoom, planeLo, planeHi };
}

/** Every zoom directory name that is a zoom number, ascending. */
export function zoomDirs(p: Pyramid): number[] {
  return p.reader.list('').filter(isTileNumber).map(Number);
}

/** The tile files of one zoom directory, in path order (planes, then x, then y). `stray` gets files that are not tiles. */
export function* listZoomTiles(p: Pyramid, z: number, stray?: (relPath: string) => void): Generator<TileRef> {
  const plane: Plane = { t: 0, c: 0, z: 0 };
  function* walk(dir: string, depth: number): Generator<TileRef> {
    const names = p.reader.list(dir);
    if (depth < p.dims.length) {
      for (const n of names) {
        if (!isTileNumber(n)) { stray?.(`${dir}/${n}`); continue; }
        plane[p.dims[depth]] = Number(n);
        yield* walk(`${dir}/${n}`, depth + 1);
      }
      return;
    }
    for (const xn of names) {
      if (!isTileNumber(xn)) { stray?.(`${dir}/${xn}`); continue; }
      for (const yn of p.reader.list(`${dir}/${xn}`)) {
        const file = tileFileName(yn);
        if (!file) { stray?.(`${dir}/${xn}/${yn}`); continue; }
        yield { z, plane: { ...plane }, x: Number(xn), y: file.y, ext: file.ext, path: `${dir}/${xn}/${yn}` };
      }
    }
  }
  yield* walk(String(z), 0);
}

/** Every tile file of the pyramid, zoom by zoom. */
export function* listTiles(p: Pyramid, stray?: (relPath: string) => void): Generator<TileRef> {
  for (const z of zoomDirs(p)) yield* listZoomTiles(p, z, stray);
}

/** Path of the overview (the zoom-0 JSON tile, a descriptor) of a plane. */
export function overviewPath(p: Pyramid, plane: Plane): string {
  return tilePath(0, 0, 0, plane, p.dims, 'json');
}

/** Whether a tile path is the overview descriptor rather than a tile of features. */
export function isOverview(t: TileRef): boolean {
  return t.ext === 'json' && t.z === 0 && t.x === 0 && t.y === 0;
}

/** Parses `Z/X/Y` or, with plane dimensions, `Z/T/C/ZZ/X/Y` (only the used dimensions, in path order). */
export function parseTileAddress(p: Pick<Pyramid, 'dims'>, text: string): { z: number; x: number; y: number; plane: Plane; format?: TileFormat } {
  const suffix = /\.(json|pbf)$/.exec(text);
  const parts = text.slice(0, suffix ? suffix.index : text.length).split('/');
  const want = 3 + p.dims.length;
  const shape = ['Z', ...p.dims.map((d) => (d === 'z' ? 'ZZ' : d.toUpperCase())), 'X', 'Y'].join('/');
  if (parts.length !== want || !parts.every(isTileNumber)) {
    throw new UsageError(`a tile of this pyramid is addressed ${shape} with non-negative integers, found "${text}"`);
  }
  const n = parts.map(Number);
  const plane: Plane = { t: 0, c: 0, z: 0 };
  p.dims.forEach((d, i) => { plane[d] = n[1 + i]; });
  const at = { z: n[0], plane, x: n[want - 2], y: n[want - 1] };
  return suffix ? { ...at, format: suffix[1] as TileFormat } : at;
}

/** Why a tile address lies outside the pyramid (zoom, column or row, plane), or undefined when it lies inside. */
export function outsidePyramid(p: Pick<Pyramid, 'dims' | 'minZoom' | 'maxZoom' | 'planeLo' | 'planeHi'>, a: { z: number; x: number; y: number; plane: Plane }): string | undefined {
  if (a.z < p.minZoom || a.z > p.maxZoom) return `zoom ${a.z} is outside this pyramid's zooms ${p.minZoom}–${p.maxZoom}`;
  const n = 2 ** a.z;
  if (a.x >= n || a.y >= n) return `zoom ${a.z} has ${n} × ${n} tiles, x and y 0–${n - 1}`;
  const off = p.dims.filter((d) => a.plane[d] < p.planeLo[d] || a.plane[d] > p.planeHi[d]);
  if (off.length) return `no plane ${off.map((d) => `${d}=${a.plane[d]}`).join(', ')} in this pyramid (${off.map((d) => `${d} ${p.planeLo[d]}–${p.planeHi[d]}`).join(', ')})`;
  return undefined;
}
