// Pixel space ↔ tile maths, tile paths and URL templates: the one module that knows how the world is cut.

/** Tile-local coordinate range of a PBF tile and the buffer around it, in tile units (MVT conventions). */
export const EXTENT = 4096;
export const BUFFER = 64;
/** The finest tile spans at most this many image pixels by default. */
export const FINEST_TILE_PIXELS = 512;
/** The finest zoom TileJSON allows (and a pyramid may have: tile coordinates stay exact integers well beyond it). */
export const MAX_ZOOM = 30;
/**
 * Side of the largest world: the one whose tiles at MAX_ZOOM span FINEST_TILE_PIXELS (2^39 pixels). Features beyond
 * it are outside any world; a world from the data is never larger.
 */
export const MAX_WORLD_SIDE = FINEST_TILE_PIXELS * 2 ** MAX_ZOOM;
/** Display pixels across a tile: a feature smaller than S / 2^z / DISPLAY_TILE pixels is sub-pixel at zoom z. */
export const DISPLAY_TILE = 256;

export type Dim = 't' | 'c' | 'z';
export const DIMS: readonly Dim[] = ['t', 'c', 'z'];

/** A (t, c, z) plane; dimensions the build does not use are 0. */
export interface Plane { t: number; c: number; z: number }

/** The pixel world: a square of side `side` (a power of two) anchored at the image origin. */
export interface World {
  side: number;
  /** Image (or data) extent in pixels, for bounds. */
  width: number;
  height: number;
}

/** Side of the smallest power-of-two square covering a width × height image. */
export function worldSide(width: number, height: number): number {
  return 2 ** sideExponent(width, height);
}

/** Finest zoom such that a tile spans at most FINEST_TILE_PIXELS image pixels, within what TileJSON allows. */
export function defaultMaxZoom(side: number): number {
  return Math.min(MAX_ZOOM, Math.max(0, Math.ceil(Math.log2(side / FINEST_TILE_PIXELS))));
}

/** The exponent of the world side a feature reaching `maxX`, `maxY` needs (worldSide = 2^exponent). */
export function sideExponent(maxX: number, maxY: number): number {
  return Math.ceil(Math.log2(Math.max(1, Math.ceil(maxX), Math.ceil(maxY))));
}

/** Side in pixels of one tile at zoom z. */
export function tileSize(side: number, z: number): number {
  return side / 2 ** z;
}

/**
 * How far beyond a tile of side `ts` pixels a feature may lie and still be placed in it, in pixels: its buffer and one
 * tile unit more (the tiler places features by their quantised box, which rounding may move that far).
 */
export function tilePad(ts: number): number {
  return (ts * (BUFFER + 1)) / EXTENT;
}

/**
 * How far from a tile of side `ts` pixels (any finer tile inside it too) a point drawn as its circle of radius `reach`
 * pixels may have its centre and still be placed in it: the radius and one tile unit, which the centre may move in
 * rounding to the grid (placement.ts works on it quantised); 0 without a radius. It is a distance from the tile, a
 * disc around each of its corners: what the buffer holds is `tilePad`'s square, whichever is larger.
 */
export function circlePad(ts: number, reach: number): number {
  return reach > 0 ? reach + ts / EXTENT : 0;
}

/**
 * Inclusive range of tiles at zoom z whose buffered area meets the pixel box, edges included as clipping includes
 * them; null when it lies outside the world. A box starting exactly on a tile's buffered edge meets that tile: a point
 * there is in it (clipPoints), as it was when it came in a MultiPoint whose box reached further, and not when alone.
 */
export function tileRange(
  side: number, z: number, minX: number, minY: number, maxX: number, maxY: number, bufferPixels = 0,
): { x0: number; y0: number; x1: number; y1: number } | null {
  const n = 2 ** z;
  const ts = side / n;
  const x0 = Math.max(0, Math.ceil((minX - bufferPixels) / ts) - 1);
  const y0 = Math.max(0, Math.ceil((minY - bufferPixels) / ts) - 1);
  const x1 = Math.min(n - 1, Math.floor((maxX + bufferPixels) / ts));
  const y1 = Math.min(n - 1, Math.floor((maxY + bufferPixels) / ts));
  return x0 > x1 || y0 > y1 ? null : { x0, y0, x1, y1 };
}

/** Global pixel coordinate of a tile-local coordinate (inverse of the PBF quantisation). */
export function tileToPixel(side: number, z: number, tileIndex: number, local: number): number {
  const ts = side / 2 ** z;
  return tileIndex * ts + (local * ts) / EXTENT;
}

/** The plane dimensions a build uses, in path order. */
export function usedDims(dims: Iterable<Dim>): Dim[] {
  const set = new Set(dims);
  return DIMS.filter((d) => set.has(d));
}

/** Path of a tile relative to the pyramid root: `{zlvl}/{t}/{c}/{z}/{x}/{y}.{ext}` with only the used dimensions. */
/** Whether a value read from a descriptor or an archive can be a plane's index (a path segment of its tiles). */
export function isPlaneIndex(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}

export function tilePath(z: number, x: number, y: number, plane: Plane, dims: readonly Dim[], ext: string): string {
  let p = `${z}`;
  for (const d of dims) p += `/${plane[d]}`;
  return `${p}/${x}/${y}.${ext}`;
}

/** URL template of the pyramid: `{zlvl}/{t}/{c}/{z}/{x}/{y}.{ext}` with only the used dimensions, after a prefix. */
export function urlTemplate(dims: readonly Dim[], ext: string, prefix = ''): string {
  return `${prefix}{zlvl}${dims.map((d) => `/{${d}}`).join('')}/{x}/{y}.${ext}`;
}

/** Stable key of a plane, used to order and name planes. */
export function planeKey(plane: Plane): string {
  return `${plane.t}/${plane.c}/${plane.z}`;
}

export function comparePlanes(a: Plane, b: Plane): number {
  return a.t - b.t || a.c - b.c || a.z - b.z;
}
