// Reduction for the level above: a unit's feature simplified (or made its centroid) for every zoom up to a given one.
import { hasExtent, hasMesh, lodOf, pieceCount, withGeometry, type Flat, type FlatFeature, type TileGeometry } from '../../tiling/flat.js';
import { Simplifier } from '../../tiling/simplify.js';
import { zoomContext, type TileSpec } from './spec.js';

/**
 * The geometry simplified in pixels with `sqTol`, parts that collapse dropped; the same object when nothing
 * changes (so an unchanged feature is passed on as it is), null when everything collapses.
 */
function reduceGeometry(g: TileGeometry, sqTol: number, s: Simplifier): TileGeometry | null {
  switch (g.k) {
    case 'points': case 'mesh': return g;
    case 'lines': {
      // A line never collapses in simplification: its end points stay.
      const parts = g.parts.map((p) => s.simplify(p, sqTol, false) as Flat);
      return parts.every((p, i) => p === g.parts[i]) ? g : { k: 'lines', type: g.type, parts };
    }
    case 'polygons': {
      const polys: Flat[][] = [];
      let changed = false;
      for (const poly of g.polys) {
        const rings: Flat[] = [];
        for (let i = 0; i < poly.length; i++) {
          const r = s.simplify(poly[i], sqTol, true) as Flat | null;
          if (r !== poly[i]) changed = true;
          if (r === null) { if (i === 0) break; continue; }
          rings.push(r);
        }
        if (rings.length > 0) polys.push(rings);
      }
      if (polys.length === 0) return null;
      return changed ? { k: 'polygons', type: g.type, polys } : g;
    }
    case 'collection': {
      const members: TileGeometry[] = [];
      for (const m of g.members) { const r = reduceGeometry(m, sqTol, s); if (r !== null) members.push(r); }
      if (members.length === 0) return null;
      return members.length === g.members.length && members.every((m, i) => m === g.members[i]) ? g : { k: 'collection', members };
    }
  }
}

/**
 * The feature for zooms <= `zoom` (all below the finest zoom): geometry simplified with that zoom's tolerance,
 * or its centroid Point when sub-pixel there (lod 'auto'); null when nothing is left. Tiling the result at any
 * zoom <= `zoom` gives the same tiles as tiling the original: simplification nests (see `Simplifier.simplify`),
 * and the original bbox and centroid ride along in `lod` for the sub-pixel test and the centroid. `simplifier`:
 * scratch space, one for all the features a unit reduces.
 */
export function reduceForZoom(f: FlatFeature, spec: Pick<TileSpec, 'side' | 'lod'>, zoom: number, simplifier = new Simplifier()): FlatFeature | null {
  const g = f.geom;
  if (hasMesh(g) || (g.k === 'points' && g.type === 'Point')) return f;
  const lod = f.lod ?? lodOf(g);
  if (lod === null) return f;
  const zc = zoomContext({ side: spec.side, finestZoom: Infinity }, zoom);
  // The reduced feature keeps everything but its geometry (members, or their record bytes) and notes the original:
  // its box and centroid, and, of a feature of many pieces, how many it had (the share a zoom draws counts them).
  const pieces = f.many === true ? f.pieces ?? pieceCount(g) : undefined;
  const point = (): FlatFeature => withGeometry(f, { k: 'points', type: 'Point', xy: [lod[4], lod[5]] }, lod, pieces);
  if (spec.lod === 'auto' && lod[2] - lod[0] < zc.subPixel && lod[3] - lod[1] < zc.subPixel) return point();
  const reduced = reduceGeometry(g, zc.sqTol, simplifier);
  if (reduced === null) return spec.lod === 'auto' && hasExtent(g) ? point() : null;
  return reduced === g ? f : withGeometry(f, reduced, lod, pieces);
}
