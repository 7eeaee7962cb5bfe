// Clipping of data-model geometry (nested positions) to a rectangle: features are cut to the world before routing.
import type { Geometry, Position } from '../model/geometry.js';
import { clipLine, clipPoints, clipRing, type Flat, type Rect } from './clip.js';

/**
 * Coordinates beyond this are scaled down by an exact power of two while clipping: an edge between ±1e308 would
 * otherwise overflow to Infinity, and the intersection point to NaN.
 */
const LARGE = 2 ** 960;
const SCALE = 2 ** -64;

function flatten(positions: readonly Position[], s: number): Flat {
  const out = new Array<number>(positions.length * 2);
  for (let i = 0; i < positions.length; i++) { out[i * 2] = positions[i][0] * s; out[i * 2 + 1] = positions[i][1] * s; }
  return out;
}

function positions(flat: Flat, s: number): Position[] {
  const out: Position[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i] / s, flat[i + 1] / s]);
  return out;
}

/** The largest absolute coordinate of nested positions (a geometry's nesting is at most four arrays deep). */
function largest(c: unknown, m: number): number {
  if (!Array.isArray(c)) return m;
  if (typeof c[0] === 'number') return Math.max(m, Math.abs(c[0] as number), Math.abs(c[1] as number));
  for (const x of c) m = largest(x, m);
  return m;
}

function extent(g: Geometry): number {
  return g.type === 'GeometryCollection' ? g.geometries.reduce((m, x) => Math.max(m, extent(x)), 0) : largest(g.coordinates, 0);
}

function clipPolygon(rings: readonly Position[][], r: Rect, s: number): Position[][] | null {
  const out: Position[][] = [];
  for (let i = 0; i < rings.length; i++) {
    const ring = clipRing(flatten(rings[i], s), r);
    // A ring reduced to fewer than 4 positions encloses nothing: an outer one leaves no polygon, a hole no hole.
    if (ring.length < 8) { if (i === 0) return null; continue; }
    out.push(positions(ring, s));
  }
  return out;
}

function clipScaled(g: Geometry, r: Rect, s: number): Geometry | null {
  switch (g.type) {
    case 'Point': {
      const p = clipPoints([g.coordinates[0] * s, g.coordinates[1] * s], r);
      return p.length ? { type: 'Point', coordinates: [p[0] / s, p[1] / s] } : null;
    }
    case 'MultiPoint': {
      const p = positions(clipPoints(flatten(g.coordinates, s), r), s);
      return p.length ? { type: 'MultiPoint', coordinates: p } : null;
    }
    case 'LineString':
    case 'MultiLineString': {
      const lines = g.type === 'LineString' ? [g.coordinates] : g.coordinates;
      const parts = lines.flatMap((l) => clipLine(flatten(l, s), r)).map((p) => positions(p, s));
      if (parts.length === 0) return null;
      return parts.length === 1 ? { type: 'LineString', coordinates: parts[0] } : { type: 'MultiLineString', coordinates: parts };
    }
    case 'Polygon': {
      const rings = clipPolygon(g.coordinates, r, s);
      return rings ? { type: 'Polygon', coordinates: rings } : null;
    }
    case 'MultiPolygon': {
      const polys = g.coordinates.map((p) => clipPolygon(p, r, s)).filter((p): p is Position[][] => p !== null);
      return polys.length ? { type: 'MultiPolygon', coordinates: polys } : null;
    }
    case 'GeometryCollection': {
      const members = g.geometries.map((m) => clipScaled(m, r, s)).filter((m): m is Geometry => m !== null);
      return members.length ? { type: 'GeometryCollection', geometries: members } : null;
    }
    default:
      // Meshes are kept whole (tiles carry them as they are), like the tiler does.
      return g;
  }
}

/**
 * The part of `g` inside the rectangle, 2D (a third coordinate is dropped: tiles are flat), or null when nothing is
 * left. Polygons are cut with Sutherland–Hodgman (their edges may run along the rectangle), lines into the pieces
 * inside, points kept or dropped; meshes are returned whole.
 */
export function clipGeometry(g: Geometry, r: Rect): Geometry | null {
  const big = extent(g) > LARGE;
  const s = big ? SCALE : 1;
  return clipScaled(g, big ? { minX: r.minX * s, minY: r.minY * s, maxX: r.maxX * s, maxY: r.maxY * s } : r, s);
}
