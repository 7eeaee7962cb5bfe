// A feature a source made with its polygons already flat, as the tiler holds them: no GeoJSON positions on the way.
import type { Feature } from '../model/feature.js';
import type { TileGeometry } from './flat.js';

/** Polygons on flat x, y arrays, rings closed (the tiler's form, `flatten`'s output for a Polygon or MultiPolygon). */
export type FlatPolygons = Extract<TileGeometry, { k: 'polygons' }>;

/**
 * One feature a source made in memory with its geometry flat (a traced label of millions of vertices): as GeoJSON its
 * positions took about 70 bytes a vertex, built on the reading thread and then validated and flattened again there
 * (a class of a 20,000² px class mask: 250 MB at once). `feature` holds its members, with geometry null; `geom` is
 * valid as made (closed rings of four or more positions, holes inside their exterior, exteriors enclosing area), so
 * the build validates the members alone, and records exactly what it records of the feature with that geometry.
 */
export class FlatValue {
  constructor(readonly feature: Feature, readonly geom: FlatPolygons) {}

  /** Positions as GeoJSON would count them, each ring's closing one too (`polygonVertices`). */
  get positions(): number {
    let n = 0;
    for (const p of this.geom.polys) for (const r of p) n += r.length / 2;
    return n;
  }

  /** Rings, which `positions` counts one closing position for each. */
  get rings(): number {
    let n = 0;
    for (const p of this.geom.polys) n += p.length;
    return n;
  }
}
