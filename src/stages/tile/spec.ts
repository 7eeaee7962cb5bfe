// What a tiling call is asked for (TileSpec) and gives back (TileResult), and the per-zoom constants derived from it.
import { DISPLAY_TILE, EXTENT, tileSize } from '../../tiling/space.js';
import { SPARED_PIXELS } from '../thinning.js';
import type { FewFields } from '../field-filter.js';

export interface LayerInfo { id: string }

export interface TileSpec {
  /** World side in pixels (a power of two). */
  side: number;
  /** Zooms this call produces. */
  minZoom: number;
  maxZoom: number;
  /** The build's finest zoom: full detail there (no simplification, no LOD, no thinning). */
  finestZoom: number;
  /** Produce only tiles inside this cell (zooms >= cell.z); absent = the whole world. */
  cell?: { z: number; x: number; y: number };
  layers: LayerInfo[];
  formats: { json: boolean; pbf: boolean };
  lod: 'auto' | 'none';
  /**
   * Bytes of the largest tile below finestZoom (PBF; JSON when there is no PBF), with lod 'auto'. Thinning keeps the
   * budget by `thresholds`; a tile still over it reports the threshold it needs (`TileResult.need`).
   */
  tileBudget: number;
  /** Per zoom, per layer: the thinning threshold (thinning.ts `keeps`); absent or 0: every feature is drawn. */
  thresholds?: ReadonlyArray<ArrayLike<number>>;
  /**
   * With lod 'auto': the coarsest zoom that draws lines and polygons SPARED_PIXELS display pixels across whatever
   * the threshold (thinning.ts `drawn`); absent: every zoom does.
   */
  spareFrom?: number;
  /** Per zoom from `spareFrom`: the sparing size in display pixels (thinning.ts `planThresholds`); absent: SPARED_PIXELS. */
  spareSizes?: ArrayLike<number>;
  /** Copied into every JSON tile. */
  collection?: { multiscale?: unknown; properties?: unknown };
  /** `--coarse-fields`: below zoom `below`, features carry only the fields `keep` (field-filter.ts). */
  fewFields?: FewFields;
}

/**
 * The spec of each cell of `spec`'s batch, all members in one order (absent ones undefined): a spec cloned from a
 * message and then spread had its own shape per level, and the tiler's hot functions deoptimised on each. Thresholds
 * become float arrays, once for the batch: rows of small integers (0) and of thresholds past 2^31 had two number
 * representations, and code optimised for the first threw itself away on meeting the second.
 */
export function cellSpecs(spec: TileSpec): (cell: TileSpec['cell']) => TileSpec {
  const { side, minZoom, maxZoom, finestZoom, layers, formats, lod, tileBudget, collection, fewFields } = spec;
  const thresholds = spec.thresholds?.map((row) => Float64Array.from(row));
  const spareFrom = spec.spareFrom ?? 0;
  const spareSizes = spec.spareSizes === undefined ? undefined : Float64Array.from(spec.spareSizes);
  return (cell) => ({ side, minZoom, maxZoom, finestZoom, cell, layers, formats, lod, tileBudget, thresholds, spareFrom, spareSizes, collection, fewFields });
}

/** Whether a zoom's thresholds thin any layer. */
export function thins(row: ArrayLike<number> | undefined): row is ArrayLike<number> {
  if (row === undefined) return false;
  for (let i = 0; i < row.length; i++) if (row[i] > 0) return true;
  return false;
}

/**
 * One tile. `json` / `pbf` are absent when that format is off or has nothing to hold (a PBF tile of meshes only):
 * the tile is then not written, but its stats still count. `need`, on a tile over the budget, is the lowest
 * threshold at which it would fit.
 */
export interface TileResult {
  z: number; x: number; y: number; json?: Uint8Array; pbf?: Uint8Array; stats: TileStats; need?: number;
  /** The tile's spared features alone take too much of the budget: `need` thins them too, and the zoom must no longer spare. */
  unspare?: boolean;
}

export interface TileStats {
  /** Input features in the tile (after thinning). */
  features: number;
  /** Per layer: features in the tile drawn as their centroid Point (sub-pixel, or collapsed at this zoom). */
  pointified: number[];
  /** Mesh features (or mesh members of collections) kept whole in the JSON tile. */
  meshesJsonOnly: number;
  /** Features in the tile that yield no PBF feature (meshes): only counted when PBF is produced. */
  notInPbf: number;
}

/** Everything a zoom's tiles need that does not change from tile to tile. */
export interface ZoomContext {
  z: number;
  /** Zoom-global tile units per pixel. */
  scale: number;
  /** Pixels per tile unit. */
  unit: number;
  /** Below the finest zoom: simplification, LOD, thinning. */
  coarse: boolean;
  /** Squared simplification tolerance in pixels, -1 at the finest zoom. */
  sqTol: number;
  /** A display pixel, in pixels. */
  subPixel: number;
  /** The zoom draws large lines and polygons whatever its threshold (TileSpec `spareFrom`). */
  spares: boolean;
  /** Where it spares: how many pixels across they are at least (TileSpec `spareSizes`, in display pixels). */
  spareWidth: number;
  /** Its features carry only the `fewFields` (TileSpec). */
  few: boolean;
}

export function zoomContext(spec: Pick<TileSpec, 'side' | 'finestZoom'> & Partial<Pick<TileSpec, 'lod' | 'spareFrom' | 'spareSizes' | 'fewFields'>>, z: number): ZoomContext {
  const ts = tileSize(spec.side, z);
  const coarse = z < spec.finestZoom;
  const tol = (3 * ts) / EXTENT;
  const spares = spec.lod === 'auto' && z >= (spec.spareFrom ?? 0);
  const spareWidth = (spec.spareSizes?.[z] ?? SPARED_PIXELS) * (ts / DISPLAY_TILE);
  const few = spec.fewFields !== undefined && z < spec.fewFields.below;
  return { z, scale: EXTENT / ts, unit: ts / EXTENT, coarse, sqTol: coarse ? tol * tol : -1, subPixel: ts / DISPLAY_TILE, spares, spareWidth, few };
}
