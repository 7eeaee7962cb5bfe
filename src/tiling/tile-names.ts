// Tile file names and tile paths read back (`{zlvl}/{t}/{c}/{z}/{x}/{y}.{ext}`, as tilePath in space.ts writes them).

export type TileExt = 'json' | 'pbf';

/** A number in a tile path as tilePath writes it: decimal digits without a leading zero (`0`, `7`, never `07`). */
const NUMBER = /^(0|[1-9]\d*)$/;
const FILE = /^(0|[1-9]\d*)\.(json|pbf)$/;

/** A tile path's numbers: its zoom, its plane indexes in path order (none in 2D), its column and row, and its format. */
export interface TilePathParts {
  z: number;
  planes: number[];
  x: number;
  y: number;
  ext: TileExt;
}

/**
 * Whether a path segment is one of a tile path's folders: a zoom, a plane index or a column. `07` is not: no build
 * writes it, so a folder so named is a user's, and its files are no tiles.
 */
export function isTileNumber(segment: string): boolean {
  return NUMBER.test(segment);
}

/** A tile's file name `{y}.{ext}`: its row and format; null for any other name (`07.pbf`, `7.png`, `7.pbf.tmp-…`). */
export function tileFileName(name: string): { y: number; ext: TileExt } | null {
  const m = FILE.exec(name);
  return m === null ? null : { y: Number(m[1]), ext: m[2] as TileExt };
}

/**
 * The numbers of a tile path given as its segments (zoom, plane folders, column, file name), with any number of
 * plane folders: the caller checks them against its dimensions. Null when a segment is not a tile path's.
 */
export function tileSegments(segments: readonly string[]): TilePathParts | null {
  if (segments.length < 3) return null;
  const file = tileFileName(segments[segments.length - 1]);
  const folders = segments.slice(0, -1);
  if (file === null || !folders.every(isTileNumber)) return null;
  const n = folders.map(Number);
  return { z: n[0], planes: n.slice(1, -1), x: n[n.length - 1], y: file.y, ext: file.ext };
}

/** The numbers of a tile path relative to the pyramid root (`/`-separated), or null when it is no tile's. */
export function tilePathParts(relPath: string): TilePathParts | null {
  return tileSegments(relPath.split('/'));
}
