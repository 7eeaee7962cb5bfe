// Which archive holds a requested tile: tile paths of the spec's URL pattern, and the PMTiles archives a descriptor lists.
import { MAX_ZOOM } from '../archive/pmtiles-format.js';
import { dimsOfTemplate } from '../inspect/layout.js';
import { isPlaneIndex, type Dim, type Plane } from '../tiling/space.js';
import { tileSegments, type TileExt } from '../tiling/tile-names.js';

/** Media type of a PMTiles archive, as descriptors name it in `assets`. */
const PMTILES_MEDIA_TYPE = 'application/vnd.pmtiles';

export type TileFormat = TileExt;

/** A tile asked for by the spec's URL pattern `{zlvl}/{t}/{c}/{z}/{x}/{y}.{ext}` (only the plane dimensions in use). */
export interface TileRequest {
  z: number;
  x: number;
  y: number;
  plane: Partial<Plane>;
  ext: TileFormat;
}

/** An archive a descriptor lists: where it is (path segments from the descriptor's folder), its tile format and plane. */
export interface ArchiveAsset {
  segments: string[];
  format: TileFormat;
  plane: Partial<Plane>;
}

/**
 * What a descriptor says about routing tiles: the plane dimensions of its tile paths, the archives it lists, and
 * where its tiles may be: zooms `minzoom..maxzoom`, planes within 10-number `bounds` (each when given).
 */
export interface TileRoutes {
  dims: Dim[];
  archives: ArchiveAsset[];
  zooms: [number, number];
  planes: { low: Partial<Plane>; high: Partial<Plane> };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The plane dimensions of a descriptor's first `tiles` template; none when it has no template. Without `{zlvl}`,
 * the first `{z}` is the zoom (the spec's 2D example `{z}/{x}/{y}`), not the z plane.
 */
function templateDims(descriptor: Record<string, unknown>): Dim[] {
  const t = Array.isArray(descriptor.tiles) ? descriptor.tiles[0] : undefined;
  if (typeof t !== 'string') return [];
  return dimsOfTemplate(t.includes('{zlvl}') ? t : t.replace('{z}', '{zlvl}'));
}

/**
 * The routes of a descriptor (parsed JSON). Archives are the `assets` with role `tiles`, media type
 * `application/vnd.pmtiles`, `format` `pbf` or `json`, and a relative `href` (no scheme, no leading `/`, no query);
 * their plane is their `t`, `c`, `z` members. Anything else in `assets` is not a route.
 */
export function tileRoutes(descriptor: unknown): TileRoutes {
  if (!isObject(descriptor)) return { dims: [], archives: [], zooms: [0, MAX_ZOOM], planes: { low: {}, high: {} } };
  const archives: ArchiveAsset[] = [];
  for (const a of Array.isArray(descriptor.assets) ? descriptor.assets : []) {
    if (!isObject(a) || a.role !== 'tiles' || a.media_type !== PMTILES_MEDIA_TYPE) continue;
    if ((a.format !== 'pbf' && a.format !== 'json') || typeof a.href !== 'string') continue;
    if (/^[a-z][a-z0-9+.-]*:|^\/|[?#]/i.test(a.href)) continue;
    // An href is a URL reference: its segments are percent-decoded to name files, as a browser resolving it does.
    const segments = decodedSegments(a.href);
    if (segments === undefined) continue;
    const plane: Partial<Plane> = {};
    for (const d of ['t', 'c', 'z'] as const) if (Number.isInteger(a[d])) plane[d] = a[d] as number;
    archives.push({ segments, format: a.format, plane });
  }
  const zoom = (v: unknown, otherwise: number) => (Number.isInteger(v) ? (v as number) : otherwise);
  const zooms: [number, number] = [zoom(descriptor.minzoom, 0), zoom(descriptor.maxzoom, MAX_ZOOM)];
  const b = descriptor.bounds;
  const planes = { low: {} as Partial<Plane>, high: {} as Partial<Plane> };
  if (Array.isArray(b) && b.length === 10 && b.every((v) => typeof v === 'number')) {
    for (const [i, d] of (['t', 'c', 'z'] as const).entries()) { planes.low[d] = b[i] as number; planes.high[d] = b[i + 5] as number; }
  }
  return { dims: templateDims(descriptor), archives, zooms, planes };
}

/**
 * The tile a request path names when the descriptor's pyramid may hold it (its layout, zooms and planes): an absent
 * one is an empty tile. Undefined for any other path, tile-shaped or not.
 */
export function pyramidTile(segments: string[], routes: TileRoutes): TileRequest | undefined {
  const tile = tileRequest(segments, routes.dims);
  if (!tile || tile.z < routes.zooms[0] || tile.z > routes.zooms[1]) return undefined;
  const { low, high } = routes.planes;
  const inside = (['t', 'c', 'z'] as const).every((d) => {
    const v = tile.plane[d];
    return v === undefined || ((low[d] === undefined || v >= low[d]) && (high[d] === undefined || v <= high[d]));
  });
  return inside ? tile : undefined;
}

/** The non-empty segments of a relative URL path, percent-decoded; undefined when one does not decode. */
function decodedSegments(href: string): string[] | undefined {
  try {
    return href.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

/** The tile a request path names under the pattern with plane dimensions `dims`, or undefined when it names none. */
export function tileRequest(segments: string[], dims: readonly Dim[]): TileRequest | undefined {
  const tile = segments.length === dims.length + 3 ? tileSegments(segments) : null;
  if (tile === null || !tile.planes.every(isPlaneIndex)) return undefined;
  const { z, x, y, ext } = tile;
  if (z > MAX_ZOOM || x >= 2 ** z || y >= 2 ** z) return undefined;
  const plane: Partial<Plane> = {};
  dims.forEach((d, i) => { plane[d] = tile.planes[i]; });
  return { z, x, y, plane, ext };
}

/** Whether a plane given by some dimensions agrees with a request's on every dimension both name. */
export function samePlane(a: Partial<Plane>, b: Partial<Plane>): boolean {
  return (['t', 'c', 'z'] as const).every((d) => a[d] === undefined || b[d] === undefined || a[d] === b[d]);
}

/** The archive of a request's plane and format among those listed. */
export function archiveFor(archives: readonly ArchiveAsset[], tile: TileRequest): ArchiveAsset | undefined {
  return archives.find((a) => a.format === tile.ext && samePlane(a.plane, tile.plane));
}

/** The plane of a one-plane descriptor: the low corner of 10-number `bounds`; empty (any plane) otherwise. */
export function descriptorPlane(descriptor: unknown): Partial<Plane> {
  const b = isObject(descriptor) ? descriptor.bounds : undefined;
  if (!Array.isArray(b) || b.length !== 10 || !b.every((v) => Number.isInteger(v))) return {};
  const dims = templateDims(descriptor as Record<string, unknown>);
  const plane: Partial<Plane> = {};
  for (const [i, d] of (['t', 'c', 'z'] as const).entries()) if (dims.includes(d)) plane[d] = b[i] as number;
  return plane;
}
