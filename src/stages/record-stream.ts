// The geometry stream of a unit record (record.ts): read whole, as a box, or as the polygons of a large MultiPolygon near a unit.
import type { Mesh } from '../model/geometry.js';
import type { Rect } from '../tiling/clip.js';
import { LodSums, emptyBox, growBox, type Flat, type TileGeometry } from '../tiling/flat.js';

export const enum G { Point = 1, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon, Mesh, Collection }

/**
 * Polygons in a MultiPolygon from which the cells it reaches that are not its home store only the polygons near them
 * (`RecordRouter.route`): a label of a class mask is one feature of thousands of pieces across the slide, and every
 * unit it reached read all of them, put them on each zoom's grid and let go of them (its tiling grew with the square
 * of the mask: 125 s at 12,000 × 12,000 px).
 */
export const NEAR_PIECES = 64;

/** A large MultiPolygon's stream: where each polygon starts (and, last, where the stream ends), each exterior's box, the whole's lod. */
export interface Pieces { starts: Uint32Array; boxes: Float64Array; lod: number[] }

/**
 * The pieces of the MultiPolygon of NEAR_PIECES polygons or more whose stream starts at `start` in `f`, with its lod:
 * the one stored after the stream when `stored` (a record reduced for a coarser level keeps its original's), else
 * worked out as `lodOf` does. Null for any other geometry.
 */
export function piecesOf(f: Float64Array, start: number, stored: boolean): Pieces | null {
  const n = f[start + 1];
  if (f[start] !== G.MultiPolygon || !(n >= NEAR_PIECES)) return null;
  const sums = new LodSums();
  const starts = new Uint32Array(n + 1), boxes = new Float64Array(4 * n);
  let j = start + 2;
  for (let p = 0; p < n; p++) {
    starts[p] = j;
    const box = emptyBox(boxes.subarray(4 * p, 4 * p + 4));
    for (let r = f[j++], first = true; r > 0; r--, first = false) {
      const len = f[j++];
      if (first) growBox(box, f.subarray(j, j + len));
      if (!stored) sums.addRange(f, true, j, j + len);
      j += len;
    }
  }
  starts[n] = j;
  const lod = stored ? [f[j], f[j + 1], f[j + 2], f[j + 3], f[j + 4], f[j + 5]] : sums.lod();
  return lod === null ? null : { starts, boxes, lod };
}

/** The indexes of the pieces whose exteriors' boxes meet `r`, ascending: what a cell or unit away from the home keeps. */
export function piecesNear({ boxes }: Pieces, r: Rect): number[] {
  const near: number[] = [];
  for (let p = 0, b = 0; b < boxes.length; p++, b += 4) {
    if (boxes[b] <= r.maxX && boxes[b + 2] >= r.minX && boxes[b + 1] <= r.maxY && boxes[b + 3] >= r.minY) near.push(p);
  }
  return near;
}

/** Whether a feature's centroid (`lod`'s) lies in `r`: a cell holding it stores the whole feature, a unit reads it whole. */
export function centroidIn(lod: readonly number[], r: Rect): boolean {
  return lod[4] >= r.minX && lod[4] <= r.maxX && lod[5] >= r.minY && lod[5] <= r.maxY;
}

export class StreamReader {
  constructor(private readonly f: Float64Array, public i: number, private readonly meshes: Mesh[]) {}

  /**
   * The polygons of the MultiPolygon at `i` whose exteriors' boxes meet `near`, given its `pieces`, in their order,
   * with their places in it; `i` then past the stream.
   */
  polygonsNear(pieces: Pieces, near: Rect): { geom: TileGeometry; places: number[] } {
    const { starts } = pieces;
    const places = piecesNear(pieces, near);
    const polys = places.map((p) => { this.i = starts[p]; return this.list(() => this.flat()); });
    this.i = starts[starts.length - 1];
    return { geom: { k: 'polygons', type: 'MultiPolygon', polys }, places };
  }

  private flat(): Flat {
    const n = this.f[this.i++];
    const out = new Array<number>(n);
    for (let k = 0; k < n; k++) out[k] = this.f[this.i + k];
    this.i += n;
    return out;
  }

  private list<T>(item: () => T): T[] {
    const n = this.f[this.i++];
    const out = new Array<T>(n);
    for (let k = 0; k < n; k++) out[k] = item();
    return out;
  }

  /** Grows `b` by the positions of the geometry at `i` (as `geometry()` would read it), moving `i` past it. */
  extend(b: Float64Array): void {
    const code = this.f[this.i++] as G;
    const flat = () => { const n = this.f[this.i++]; growBox(b, this.f.subarray(this.i, this.i + n)); this.i += n; };
    const times = (each: () => void) => { const n = this.f[this.i++]; for (let k = 0; k < n; k++) each(); };
    switch (code) {
      case G.Point: case G.MultiPoint: flat(); return;
      case G.LineString: case G.MultiLineString: times(flat); return;
      case G.Polygon: case G.MultiPolygon: times(() => times(flat)); return;
      case G.Mesh: growBox(b, this.f.subarray(this.i + 1, this.i + 5)); this.i += 5; return;
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
        return { k: 'polygons', type: code === G.Polygon ? 'Polygon' : 'MultiPolygon', polys: this.list(() => this.list(() => this.flat())) };
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
