// The geometry stream of a unit record (record.ts): read whole, as a box, or as the pieces of a large multi-geometry near a unit.
import type { Mesh } from '../model/geometry.js';
import { boxMeets, type Rect } from '../tiling/clip.js';
import { LodSums, emptyBox, growBox, type Flat, type TileGeometry } from '../tiling/flat.js';
import { LONG_PART } from '../tiling/collapse.js';

export const enum G { Point = 1, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon, Mesh, Collection }

/**
 * Pieces of a multi-geometry (the points of a MultiPoint, the lines of a MultiLineString, the polygons of a
 * MultiPolygon) from which the cells it reaches that are not its home store only the pieces near them
 * (`RecordRouter.route`): a label of a class mask is one feature of thousands of polygons across the slide, and the
 * transcripts of one gene one MultiPoint of as many spots; every unit it reached read all of them, put them on each
 * zoom's grid and let go of them (its tiling grew with the square of the slide: 125 s for a 12,000 × 12,000 px mask).
 */
export const NEAR_PIECES = 64;

/** A large multi-geometry's stream: its code, where each piece starts (and, last, where the stream ends), each piece's box (a polygon's of all its rings), the whole's lod. */
export interface Pieces { code: G; starts: Uint32Array; boxes: Float64Array; lod: number[] }

/** Whether a geometry code is one `piecesOf` may cut: a MultiPoint, MultiLineString or MultiPolygon. */
export const isMulti = (code: number): boolean => code === G.MultiPoint || code === G.MultiLineString || code === G.MultiPolygon;

/**
 * The pieces of the multi-geometry of NEAR_PIECES pieces or more whose stream starts at `start` in `f`, with its
 * lod: the one stored after the stream when `stored` (a record reduced for a coarser level keeps its original's), else
 * worked out as `lodOf` does. Null for any other geometry.
 */
export function piecesOf(f: Float64Array, start: number, stored: boolean): Pieces | null {
  const code = f[start] as G;
  if (!isMulti(code)) return null;
  const points = code === G.MultiPoint, polygons = code === G.MultiPolygon;
  const n = points ? f[start + 1] / 2 : f[start + 1];
  if (!(n >= NEAR_PIECES)) return null;
  const sums = new LodSums();
  const starts = new Uint32Array(n + 1), boxes = new Float64Array(4 * n);
  let j = start + 2;
  for (let p = 0, b = 0; p < n; p++, b += 4) {
    starts[p] = j;
    // A point is two numbers; a line one part of its length; a polygon its rings, the first the exterior.
    const rings = points ? 1 : polygons ? f[j++] : 1;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let r = 0; r < rings; r++) {
      const len = points ? 2 : f[j++];
      // Holes too: one beyond its exterior (invalid, built) is filled by the preview (even-odd) wherever it lies, so a
      // unit whose patch it meets reads its polygon. By the exterior alone, a one-cell build painted it and a unit
      // of another cell, which never read the polygon, did not.
      for (let k = j; k + 1 < j + len; k += 2) {
        const x = f[k], y = f[k + 1];
        if (x < x0) x0 = x;
        if (y < y0) y0 = y;
        if (x > x1) x1 = x;
        if (y > y1) y1 = y;
      }
      if (!stored) sums.addRange(f, polygons, j, j + len);
      j += len;
    }
    boxes[b] = x0; boxes[b + 1] = y0; boxes[b + 2] = x1; boxes[b + 3] = y1;
  }
  starts[n] = j;
  const lod = stored ? [f[j], f[j + 1], f[j + 2], f[j + 3], f[j + 4], f[j + 5]] : sums.lod();
  return lod === null ? null : { code, starts, boxes, lod };
}

/** The indexes of the pieces whose boxes meet `r`, ascending: what a cell or unit away from the home keeps. */
export function piecesNear({ boxes }: Pieces, r: Rect): number[] {
  const near: number[] = [];
  for (let p = 0, b = 0; b < boxes.length; p++, b += 4) {
    if (boxes[b] <= r.maxX && boxes[b + 2] >= r.minX && boxes[b + 1] <= r.maxY && boxes[b + 3] >= r.minY) near.push(p);
  }
  return near;
}

/**
 * Whether one of the pieces `near` (from `piecesNear`) is long (LONG_PART positions or more) and reaches beyond `r`
 * by more than its width or height on either side: stored in part, such a piece would be copied into each cell it
 * meets. One class of a 20,000² px class mask held a web of tissue of 2.9 million vertices across the slide, copied
 * into each of 100 cells: its parse batch asked for an 8 GiB buffer and the build failed at 7.4 GB. A cell near such
 * a piece stores the whole, one buffer every such cell shares (`RecordRouter.take`).
 */
export function nearFarReaching(pieces: Pieces, near: readonly number[], r: Rect): boolean {
  const w = r.maxX - r.minX, h = r.maxY - r.minY, boxes = pieces.boxes;
  for (const p of near) {
    if (!isLongPiece(pieces, p)) continue;
    const b = 4 * p;
    if (boxes[b + 2] - boxes[b] > 3 * w || boxes[b + 3] - boxes[b + 1] > 3 * h) return true;
  }
  return false;
}

/** Whether piece `p` has LONG_PART positions or more (a tissue outline, not a speck): the tiler ranks it once per thread. */
export function isLongPiece({ starts }: Pieces, p: number): boolean {
  return starts[p + 1] - starts[p] >= 2 * LONG_PART;
}

/** Whether a feature's centroid (`lod`'s) lies in `r`: a cell holding it stores the whole feature, a unit reads it whole. */
export function centroidIn(lod: readonly number[], r: Rect): boolean {
  return lod[4] >= r.minX && lod[4] <= r.maxX && lod[5] >= r.minY && lod[5] <= r.maxY;
}

/** The lod stored after the geometry stream that starts at number `base` of `f` (a record flagged LOD). */
export function lodAfter(f: Float64Array, base: number): number[] {
  const r = new StreamReader(f, base, []);
  r.extend();
  return sixFrom(f, r.i);
}

/**
 * `lod` (six numbers) as a plain array of doubles. Read one by one: `Array.from` of a typed array view made a view and
 * went through the iterator protocol, for every record read.
 */
export function sixFrom(f: Float64Array, i: number): number[] {
  return [f[i], f[i + 1], f[i + 2], f[i + 3], f[i + 4], f[i + 5]];
}

export class StreamReader {
  /**
   * The reach of a unit that reads a feature not its own, whose lod is known: a polygon's holes beyond it are left out
   * as they are read. Every tile of the unit would clip them to nothing, and the rest of the unit looks only at
   * exteriors (thinning, the polygons near a tile) and at the lod. A tissue outline of a class mask holds hundreds of
   * thousands of vertices in holes across the slide, and each unit near its exterior read and simplified them all.
   */
  holesBeyond: Rect | undefined;
  /** How many holes `holesBeyond` left out. */
  holesLeftOut = 0;
  private readonly box = new Float64Array(4);

  constructor(private readonly f: Float64Array, public i: number, private readonly meshes: Mesh[]) {}

  /**
   * The pieces of the multi-geometry at `i` whose boxes meet `near`, given its `pieces`, in their order, with their
   * places in it; `i` then past the stream.
   */
  piecesNear(pieces: Pieces, near: Rect): { geom: TileGeometry; places: number[] } {
    const { code, starts } = pieces;
    const places = piecesNear(pieces, near);
    const read = (p: number, item: () => Flat | Flat[]) => { this.i = starts[p]; return item(); };
    let geom: TileGeometry;
    if (code === G.MultiPoint) {
      const xy = new Array<number>(2 * places.length);
      places.forEach((p, k) => { xy[2 * k] = this.f[starts[p]]; xy[2 * k + 1] = this.f[starts[p] + 1]; });
      geom = { k: 'points', type: 'MultiPoint', xy };
    } else if (code === G.MultiLineString) {
      geom = { k: 'lines', type: 'MultiLineString', parts: places.map((p) => read(p, () => this.flat()) as Flat) };
    } else {
      geom = { k: 'polygons', type: 'MultiPolygon', polys: places.map((p) => read(p, () => this.polygon())) as Flat[][] };
    }
    this.i = starts[starts.length - 1];
    return { geom, places };
  }

  private flat(): Flat {
    const n = this.f[this.i++];
    const out = new Array<number>(n);
    for (let k = 0; k < n; k++) out[k] = this.f[this.i + k];
    this.i += n;
    return out;
  }

  /** A polygon's rings, its holes beyond `holesBeyond` left out. */
  private polygon(): Flat[] {
    const r = this.holesBeyond;
    if (r === undefined) return this.list(() => this.flat());
    const rings = this.f[this.i++];
    const out: Flat[] = [];
    for (let k = 0; k < rings; k++) {
      const n = this.f[this.i];
      if (k > 0 && !this.meets(this.i + 1, n, r)) { this.i += n + 1; this.holesLeftOut++; continue; }
      out.push(this.flat());
    }
    return out;
  }

  /** Whether the box of the `n` numbers (positions) from `at` meets `r`. */
  private meets(at: number, n: number, r: Rect): boolean {
    const box = emptyBox(this.box);
    growBox(box, this.f.subarray(at, at + n));
    return boxMeets(box, r);
  }

  private list<T>(item: () => T): T[] {
    const n = this.f[this.i++];
    const out = new Array<T>(n);
    for (let k = 0; k < n; k++) out[k] = item();
    return out;
  }

  /** Grows `b` by the positions of the geometry at `i` (as `geometry()` would read it), moving `i` past it; without `b`, only moves. */
  extend(b?: Float64Array): void {
    const code = this.f[this.i++] as G;
    const flat = () => { const n = this.f[this.i++]; if (b !== undefined) growBox(b, this.f.subarray(this.i, this.i + n)); this.i += n; };
    const times = (each: () => void) => { const n = this.f[this.i++]; for (let k = 0; k < n; k++) each(); };
    switch (code) {
      case G.Point: case G.MultiPoint: flat(); return;
      case G.LineString: case G.MultiLineString: times(flat); return;
      case G.Polygon: case G.MultiPolygon: times(() => times(flat)); return;
      case G.Mesh: if (b !== undefined) growBox(b, this.f.subarray(this.i + 1, this.i + 5)); this.i += 5; return;
      case G.Collection: times(() => this.extend(b)); return;
      default: throw new Error(`corrupt unit record: geometry code ${String(code)}`);
    }
  }

  geometry(): TileGeometry {
    const code = this.f[this.i++] as G;
    switch (code) {
      case G.Point: case G.MultiPoint: return { k: 'points', type: code === G.Point ? 'Point' : 'MultiPoint', xy: this.flat() };
      case G.LineString: case G.MultiLineString:
        return { k: 'lines', type: code === G.LineString ? 'LineString' : 'MultiLineString', parts: this.list(() => this.flat()) };
      case G.Polygon: case G.MultiPolygon:
        return { k: 'polygons', type: code === G.Polygon ? 'Polygon' : 'MultiPolygon', polys: this.list(() => this.polygon()) };
      case G.Mesh: {
        const geometry = this.meshes[this.f[this.i]];
        const i = this.i + 1, f = this.f;
        const box = [f[i], f[i + 1], f[i + 2], f[i + 3]];
        this.i += 5;
        return { k: 'mesh', geometry, box };
      }
      case G.Collection: return { k: 'collection', members: this.list(() => this.geometry()) };
      default: throw new Error(`corrupt unit record: geometry code ${String(code)}`);
    }
  }
}
