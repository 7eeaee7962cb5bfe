// Derived helpers over inline coordinates: bounding box and centroid, in 3D where positions have a third number.
import type { Geometry, Position } from './geometry.js';
import type { Feature } from './feature.js';

/** `[minX, minY, minZ, maxX, maxY, maxZ]`; z bounds are 0 when every position is 2D. */
export type BBox3 = [number, number, number, number, number, number];

/** Extends `b` by nested coordinate arrays of any depth; returns how many positions were seen. Runs per feature: no closures. */
function extend(c: unknown, b: BBox3): number {
  if (!Array.isArray(c) || c.length === 0) return 0;
  if (typeof c[0] === 'number') {
    const x = c[0] as number, y = c[1] as number, z = c.length > 2 ? (c[2] as number) : 0;
    if (x < b[0]) b[0] = x;
    if (y < b[1]) b[1] = y;
    if (z < b[2]) b[2] = z;
    if (x > b[3]) b[3] = x;
    if (y > b[4]) b[4] = y;
    if (z > b[5]) b[5] = z;
    return 1;
  }
  let n = 0;
  for (let i = 0; i < c.length; i++) n += extend(c[i], b);
  return n;
}

/** Bounding box over every inline position, or null when there is none (a mesh given only by `tiles`, empty coordinates). */
export function bbox(g: Geometry | null): BBox3 | null {
  if (g === null) return null;
  const b: BBox3 = [Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity];
  let n = 0;
  if (g.type === 'GeometryCollection') {
    for (const m of g.geometries) {
      const mb = bbox(m);
      if (mb === null) continue;
      n++;
      for (let i = 0; i < 3; i++) { if (mb[i] < b[i]) b[i] = mb[i]; if (mb[i + 3] > b[i + 3]) b[i + 3] = mb[i + 3]; }
    }
  } else {
    n = extend(g.coordinates, b);
  }
  return n === 0 ? null : b;
}

/**
 * Centroid as the mean of the distinct vertices (closing positions of rings counted once), in 3D; null when the
 * geometry has no inline positions. A vertex mean is what a mesh of faces or a cloud of points can honestly give.
 */
export function centroid(g: Geometry | null): [number, number, number] | null {
  if (g === null) return null;
  let n = 0, sx = 0, sy = 0, sz = 0;
  const add = (p: Position) => { n++; sx += p[0]; sy += p[1]; sz += p.length > 2 ? (p[2] as number) : 0; };
  const ring = (r: Position[]) => {
    const closed = r.length > 1 && r[0][0] === r[r.length - 1][0] && r[0][1] === r[r.length - 1][1] && r[0][2] === r[r.length - 1][2];
    for (let i = 0; i < r.length - (closed ? 1 : 0); i++) add(r[i]);
  };
  const visit = (m: Geometry): void => {
    switch (m.type) {
      case 'Point': add(m.coordinates); return;
      case 'MultiPoint': case 'LineString': m.coordinates.forEach(add); return;
      case 'MultiLineString': m.coordinates.forEach((l) => l.forEach(add)); return;
      case 'Polygon': m.coordinates.forEach(ring); return;
      case 'MultiPolygon': case 'PolyhedralSurface': case 'TIN': for (const poly of m.coordinates ?? []) poly.forEach(ring); return;
      case 'GeometryCollection': m.geometries.forEach(visit); return;
    }
  };
  visit(g);
  return n === 0 ? null : [sx / n, sy / n, sz / n];
}

/** The positions of a made feature's polygons (a traced label's), counted by ring: what its batch holds of it. */
export function polygonVertices(f: Feature): number {
  const g = f.geometry;
  let n = 0;
  if (g?.type === 'Polygon') for (const r of g.coordinates) n += r.length;
  else if (g?.type === 'MultiPolygon') for (const p of g.coordinates) for (const r of p) n += r.length;
  return n;
}
