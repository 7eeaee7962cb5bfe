// Features cut to the world before routing: every geometry kind, huge coordinates, and what is left when nothing is.
import { describe, expect, it } from 'vitest';
import { Clipper, cutToRect } from '../../src/tiling/clip.js';
import { enclosesNoArea, flatten, type TileGeometry } from '../../src/tiling/flat.js';
import { findOutliers } from '../../src/stages/plan.js';
import { defaultMaxZoom, MAX_WORLD_SIDE, MAX_ZOOM } from '../../src/tiling/space.js';
import type { Geometry } from '../../src/model/geometry.js';

const world = { minX: 0, minY: 0, maxX: 100, maxY: 100 };

/** The GeoJSON geometry cut to the world, back as GeoJSON-like nested positions. */
function clipGeometry(g: Geometry, r: typeof world): unknown {
  const cut = cutToRect(flatten(g) as TileGeometry, r, new Clipper());
  return cut === null ? null : nested(cut);
}

function pairs(c: number[]): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < c.length; i += 2) out.push([c[i], c[i + 1]]);
  return out;
}

function nested(g: TileGeometry): unknown {
  switch (g.k) {
    case 'points': return { type: g.type, coordinates: g.type === 'Point' ? pairs(g.xy)[0] : pairs(g.xy) };
    case 'lines': return { type: g.type, coordinates: g.type === 'LineString' ? pairs(g.parts[0]) : g.parts.map(pairs) };
    case 'polygons': return { type: g.type, coordinates: g.type === 'Polygon' ? g.polys[0].map(pairs) : g.polys.map((p) => p.map(pairs)) };
    case 'mesh': return g.geometry;
    case 'collection': return { type: 'GeometryCollection', geometries: g.members.map(nested) };
  }
}

/** A closed ring's distinct corners to 1e-6 px (an intersection may land a rounding error off), from any start. */
const corners = (ring: number[][]) => {
  expect(ring[0]).toEqual(ring[ring.length - 1]);
  return [...new Set(ring.map((p) => p.map((v) => +v.toFixed(6)).join(',')))].sort();
};

describe('cutToRect', () => {
  it('cuts a polygon reaching 1e7 to the rectangle, dropping holes left outside', () => {
    const g: Geometry = { type: 'Polygon', coordinates: [[[0, 0], [1e7, 0], [1e7, 1e7], [0, 0]], [[500, 100], [600, 100], [600, 200], [500, 100]]] };
    const c = clipGeometry(g, world) as { type: string; coordinates: number[][][] };
    expect(c.type).toBe('Polygon');
    expect(c.coordinates).toHaveLength(1);
    expect(corners(c.coordinates[0])).toEqual(['0,0', '100,0', '100,100']);
  });

  it('cuts ±1e308 without overflowing to NaN', () => {
    const g: Geometry = { type: 'Polygon', coordinates: [[[-1e308, -1e308], [1e308, -1e308], [1e308, 1e308], [-1e308, -1e308]]] };
    const c = clipGeometry(g, world) as { coordinates: number[][][] };
    expect(c.coordinates[0].flat().every(Number.isFinite)).toBe(true);
    expect(corners(c.coordinates[0])).toEqual(['0,0', '100,0', '100,100']);
  });

  it('splits lines into the pieces inside, keeps points inside, and returns null when nothing is left', () => {
    expect(clipGeometry({ type: 'LineString', coordinates: [[-10, 50], [50, 50], [50, 500], [80, 500], [80, 50], [200, 50]] }, world)).toEqual({
      type: 'MultiLineString', coordinates: [[[0, 50], [50, 50], [50, 100]], [[80, 100], [80, 50], [100, 50]]],
    });
    expect(clipGeometry({ type: 'MultiPoint', coordinates: [[1, 1], [1e12, 1], [99, 99]] }, world)).toEqual({ type: 'MultiPoint', coordinates: [[1, 1], [99, 99]] });
    expect(clipGeometry({ type: 'Point', coordinates: [1e12, 1e12] }, world)).toBeNull();
    expect(clipGeometry({ type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [-5, 5] }, { type: 'Point', coordinates: [5, 5, 3] }] }, world))
      .toEqual({ type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [5, 5] }] });
  });

  it('keeps meshes whole, as the tiler does', () => {
    const tin: Geometry = { type: 'TIN', coordinates: [[[[0, 0, 0], [1e9, 0, 0], [0, 1e9, 0], [0, 0, 0]]]] };
    expect(clipGeometry(tin, world)).toBe(tin);
  });
});

describe('enclosesNoArea', () => {
  /** As the parse stage asks it: of the flat geometry, knowing the GeoJSON it came from. */
  const noArea = (g: Geometry) => {
    const flat = flatten(g);
    return flat !== null && enclosesNoArea(flat, g);
  };
  const flatRing: Geometry = { type: 'Polygon', coordinates: [[[10, 10], [20, 10], [30, 10], [10, 10]]] };

  it('is true for polygons of collinear or repeated positions only', () => {
    expect(noArea(flatRing)).toBe(true);
    expect(noArea({ type: 'Polygon', coordinates: [[[0.1, 0.3], [0.2, 0.6], [0.3, 0.9], [0.1, 0.3]]] })).toBe(true);
    expect(noArea({ type: 'MultiPolygon', coordinates: [[[[1, 1], [1, 1], [1, 1], [1, 1]]], [[[0, 0], [5, 0], [0, 0], [0, 0]]]] })).toBe(true);
    expect(noArea({ type: 'GeometryCollection', geometries: [flatRing, { type: 'GeometryCollection', geometries: [flatRing] }] })).toBe(true);
  });

  it('is false for a polygon with area, however small or huge, and for other geometry', () => {
    expect(noArea({ type: 'Polygon', coordinates: [[[0, 0], [0.001, 0], [0.001, 0.001], [0, 0]]] })).toBe(false);
    expect(noArea({ type: 'Polygon', coordinates: [[[-1e308, -1e308], [1e308, -1e308], [1e308, 1e308], [-1e308, -1e308]]] })).toBe(false);
    expect(noArea({ type: 'MultiPolygon', coordinates: [[[[1, 1], [1, 1], [1, 1], [1, 1]]], [[[0, 0], [5, 0], [5, 5], [0, 0]]]] })).toBe(false);
    expect(noArea({ type: 'LineString', coordinates: [[0, 0], [1, 0]] })).toBe(false);
  });

  it('takes what flattening leaves out as drawn, as the GeoJSON would be', () => {
    // An empty polygon of a MultiPolygon and an empty Polygon.
    expect(noArea({ type: 'MultiPolygon', coordinates: [[], [[[10, 10], [20, 10], [30, 10], [10, 10]]]] })).toBe(false);
    expect(noArea({ type: 'Polygon', coordinates: [] })).toBe(false);
    // A collection member held by tiles only (no inline positions), and an empty collection.
    expect(noArea({ type: 'GeometryCollection', geometries: [flatRing, { type: 'TIN', tiles: ['0/0/0'] } as unknown as Geometry] })).toBe(false);
    expect(noArea({ type: 'GeometryCollection', geometries: [] })).toBe(false);
    expect(noArea({ type: 'GeometryCollection', geometries: [flatRing, { type: 'Point', coordinates: [1, 1] }] })).toBe(false);
  });
});

describe('world limits', () => {
  it('zooms stay within what TileJSON allows, whatever the world', () => {
    expect(defaultMaxZoom(MAX_WORLD_SIDE)).toBe(MAX_ZOOM);
    expect(defaultMaxZoom(2 ** 60)).toBe(MAX_ZOOM);
    expect(defaultMaxZoom(1024)).toBe(1);
  });

  it('findOutliers: a world the bulk needs a sixteenth of, set by at most 1% of the features', () => {
    const extent: number[] = [];
    extent[9] = 50;
    extent[30] = 1;
    expect(findOutliers(extent, 2 ** 30)).toEqual({ features: 1, of: 51, side: 2 ** 30, bulkSide: 512 });
    // Within four zooms of the bulk, or more than 1% far out: a world the data needs, not outliers.
    expect(findOutliers(Object.assign([], { 9: 50, 12: 1 }), 2 ** 12)).toBeNull();
    expect(findOutliers(Object.assign([], { 9: 50, 30: 5 }), 2 ** 30)).toBeNull();
    expect(findOutliers(Object.assign([], { 30: 1 }), 2 ** 30)).toBeNull();
  });
});
