// How far beyond its positions a feature is drawn: a point's circle of its `radius` property (spec 2.1 rule 3).
import type { Rect } from './clip.js';
import type { Coords, FeatureMembers, Flat } from './flat.js';

/** The property a point's circle is drawn by. */
export const RADIUS = 'radius';

/**
 * A radius as a viewer draws it (viewer/style.js `ownRadius`): a finite positive number, in pixels; else 0. Any other
 * value draws the point as a disc of a few screen pixels, which the tile buffer holds.
 */
export function radiusValue(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/**
 * The `radius` property of a feature (its tag of that name: no member hides it), in level-0 pixels, or 0. A point
 * drawn as that circle reaches tiles its centre's buffer does not: each of them must hold the point, or the circle is
 * cut flat along their border.
 */
export function reachOf(f: FeatureMembers): number {
  // A feature made from GeoJSON reads its properties without working out every tag.
  if (f.tags === undefined && f.head !== undefined) {
    const p = f.head.properties;
    return p !== null && typeof p === 'object' && Object.prototype.hasOwnProperty.call(p, RADIUS) ? radiusValue((p as Record<string, unknown>)[RADIUS]) : 0;
  }
  const t = f.tags;
  if (t === undefined) return 0;
  const i = t.keys.indexOf(RADIUS);
  return i < 0 ? 0 : radiusValue(t.values[i]);
}

/**
 * Whether the box `[minX, minY, maxX, maxY]` lies within `pad` of the rectangle on both axes (a buffer's square), or
 * within `round` of it (a circle's distance: `circlePad`), edges included as boxMeets includes them.
 */
export function withinReach(b: ArrayLike<number>, r: Rect, pad: number, round: number): boolean {
  return gapWithin(Math.max(0, r.minX - b[2], b[0] - r.maxX), Math.max(0, r.minY - b[3], b[1] - r.maxY), pad, round);
}

/** Whether gaps of gx and gy to a rectangle lie within `pad` on both axes, or within `round` as a distance. */
function gapWithin(gx: number, gy: number, pad: number, round: number): boolean {
  return (gx <= pad && gy <= pad) || gx * gx + gy * gy <= round * round;
}

/**
 * The points (x, y pairs) a tile of rectangle `t` holds of points drawn as circles of radius `round`: those whose
 * circle reaches into it, and those within `buffer` of it on both axes as any point is (a circle within the buffer of
 * a corner may miss the tile). A circle whose box reaches past a corner of the tile misses it where the distance to
 * that corner is over the radius: it would be drawn nowhere in it (the viewer's 16-gon lies inside the circle).
 */
export function pointsReaching(xy: Coords, t: Rect, buffer: number, round: number): Flat {
  const out: Flat = [];
  for (let i = 0; i + 1 < xy.length; i += 2) {
    const x = xy[i], y = xy[i + 1];
    if (gapWithin(Math.max(0, t.minX - x, x - t.maxX), Math.max(0, t.minY - y, y - t.maxY), buffer, round)) out.push(x, y);
  }
  return out;
}
