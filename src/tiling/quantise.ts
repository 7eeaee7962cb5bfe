// Flat geometry onto a zoom's integer grid: simplify and quantise, orient rings, clip to a buffered tile.
import { Clipper, boxInside, boxMeets, clipPoints, type Rect } from './clip.js';
import { emptyBox, exteriorBoxes, growBox, type Coords, type Flat, type TileGeometry } from './flat.js';
import { RankMemo, reverseRing, type KeptPart, ringArea2, ringUsable, Simplifier, quantisePoints } from './simplify.js';
import { LONG_PART, PartTree } from './collapse.js';

/**
 * Orientation shared by JSON and PBF: exterior rings have positive signed area on the raw numbers
 * (Σ x_i·y_{i+1} − x_{i+1}·y_i > 0), holes negative. Read in y-up axes that is RFC 7946's counter-clockwise
 * exterior; drawn on the y-down image it is clockwise, which is exactly MVT's rule for tile coordinates.
 * Returns false for a ring with zero area (dropped).
 */
export function orient(r: Flat, exterior: boolean): boolean {
  const a = ringArea2(r);
  if (a === 0) return false;
  if ((a > 0) !== exterior) reverseRing(r);
  return true;
}

/** A centroid `[.., .., .., .., cx, cy]` (see `lodOf`) as a Point in zoom-global tile units; `box` becomes its box. */
export function centroidPoint(lod: readonly number[], scale: number, box: Float64Array): TileGeometry {
  const xy = [Math.round(lod[4] * scale), Math.round(lod[5] * scale)];
  box[0] = xy[0]; box[1] = xy[1]; box[2] = xy[0]; box[3] = xy[1];
  return { k: 'points', type: 'Point', xy };
}

/** What a part is to `Quantiser.part`: a line, or a polygon's exterior ring or hole. */
const LINE = 0, EXTERIOR = 1, HOLE = 2;
/** Polygons in one geometry from which their exteriors' boxes are kept for clipping to each tile. */
const MANY_POLYGONS = 64;
type PartKind = typeof LINE | typeof EXTERIOR | typeof HOLE;

/**
 * Puts geometry on a zoom's grid and cuts it to tiles. It owns the scratch space this reuses for every ring of every
 * feature (simplification marks, clipping passes, a ring's box); a thread reuses one from call to call.
 *
 * A long part (LONG_PART positions or more: an outline across a whole slide) is put on every zoom of a unit and cut
 * to each of its tiles: its Douglas–Peucker ranks (each zoom then keeps those above its tolerance) and what it is on
 * each zoom's grid are worked out once per thread (`RankMemo`), its box once, and its cut-down copies for blocks of a
 * unit's tiles (`PartTree`) once per unit, so a tile clips only what lies near it. Same results as the plain path:
 * only the work differs.
 */
export class Quantiser {
  private readonly simplifier = new Simplifier();
  private readonly clipper = new Clipper();
  private readonly ringBox = new Float64Array(4);
  private readonly memo = new RankMemo();
  // Keyed by the part itself: entries go with the features a tiling call drops.
  private readonly kept = new WeakMap<Flat, KeptPart>();
  private readonly boxes = new WeakMap<Flat, Float64Array>();
  private readonly polygonBoxes = new WeakMap<Flat[][], Float64Array>();
  private readonly trees = new WeakMap<Flat, PartTree>();
  /**
   * Results of `part` that units share (`RankMemo`): a tissue outline's short holes among them, whose boxes are then
   * worked out once, not for every tile the outline's box meets.
   */
  private readonly shared = new WeakSet<Flat>();
  // Zoom keys (`zoomKey`), and the last one asked for: a string per ring per zoom was a fifth of a class mask's tiling.
  private readonly zoomKeys = new Map<string, number>();
  private lastTol = NaN;
  private lastScale = NaN;
  private lastKey = 0;
  // The tiles being cut to (`setBlock`), for the trees of long parts.
  private bx0 = 0;
  private by0 = 0;
  private bx1 = -1;
  private by1 = -1;

  /**
   * `long`: the positions from which a part takes the paths for long parts; `many`: the polygons from which a geometry's
   * exteriors' boxes are kept for clipping (tests give Infinity: never).
   */
  constructor(private readonly long = LONG_PART, private readonly many = MANY_POLYGONS) {}

  /** A new tiling call (a unit): the long parts it uses stay kept through it (`RankMemo.begin`). */
  begin(): void {
    this.memo.begin();
  }

  /** The tiles x0..x1 × y0..y1 of the zoom that `clip` will be asked for by tile. */
  setBlock(x0: number, y0: number, x1: number, y1: number): void {
    this.bx0 = x0; this.by0 = y0; this.bx1 = x1; this.by1 = y1;
  }

  /**
   * Simplifies (when sqTol >= 0) in pixels, quantises to zoom-global tile units with `scale`, drops what
   * degenerates and orients rings. `box` is set to the box of what is left (a polygon by all its rings);
   * null when nothing is.
   */
  quantise(g: TileGeometry, scale: number, sqTol: number, box: Float64Array): TileGeometry | null {
    emptyBox(box);
    return this.quantiseInto(g, scale, sqTol, box);
  }

  private quantiseInto(g: TileGeometry, scale: number, sqTol: number, box: Float64Array): TileGeometry | null {
    switch (g.k) {
      case 'points': {
        if (g.xy.length === 0) return null;
        const xy = quantisePoints(g.xy, scale);
        growBox(box, xy);
        return { k: 'points', type: g.type, xy };
      }
      // Arrays are sized up front and trimmed: an empty literal grown by push reserves 17 slots, and these are
      // made for every feature at every zoom.
      case 'lines': {
        const parts = new Array<Flat>(g.parts.length);
        let n = 0;
        for (const p of g.parts) {
          const q = this.part(p, sqTol, scale, LINE, false);
          if (q !== null) { parts[n++] = q; this.grow(box, q); }
        }
        parts.length = n;
        return n > 0 ? { k: 'lines', type: g.type, parts } : null;
      }
      case 'polygons': {
        const polys = new Array<Flat[]>(g.polys.length);
        let np = 0;
        for (const poly of g.polys) {
          const rings = new Array<Flat>(poly.length);
          let nr = 0;
          const long = this.isLong(poly);
          for (let i = 0; i < poly.length; i++) {
            const q = this.part(poly[i], sqTol, scale, i === 0 ? EXTERIOR : HOLE, long);
            if (q === null) {
              if (i === 0) break; // no exterior, no polygon: its holes go with it
              continue;
            }
            rings[nr++] = q;
          }
          rings.length = nr;
          if (nr === 0) continue;
          polys[np++] = rings;
          // Holes too: one beyond its exterior (invalid, warned of) must still be clipped where the exterior is not.
          for (let i = 0; i < nr; i++) this.grow(box, rings[i]);
        }
        polys.length = np;
        return np > 0 ? { k: 'polygons', type: g.type, polys } : null;
      }
      case 'mesh':
        growBox(box, [g.box[0] * scale, g.box[1] * scale, g.box[2] * scale, g.box[3] * scale]);
        return g;
      case 'collection': {
        const members: TileGeometry[] = [];
        for (const m of g.members) { const q = this.quantiseInto(m, scale, sqTol, box); if (q !== null) members.push(q); }
        return members.length > 0 ? { k: 'collection', members } : null;
      }
    }
  }

  /**
   * A line (`LINE`) or ring simplified and quantised, null when nothing drawable is left: a line of fewer than two
   * positions, a ring that collapses or encloses nothing; a ring oriented as an exterior or a hole. The result for a
   * long part, or any ring of a long polygon (`inLong`: a tissue outline's holes), is kept for every unit that reads the
   * same coordinates (`RankMemo`), so it is made once per zoom and thread: every caller treats it as read-only.
   */
  private part(c: Flat, sqTol: number, scale: number, kind: PartKind, inLong: boolean): Flat | null {
    if (!inLong && c.length < 2 * this.long) return this.make(c, sqTol, scale, kind, undefined);
    let kept = this.kept.get(c);
    if (kept === undefined) { kept = this.memo.part(c); this.kept.set(c, kept); }
    const key = 3 * this.zoomKey(sqTol, scale) + kind;
    const known = kept.results.get(key);
    if (known !== undefined) return known;
    const q = this.make(c, sqTol, scale, kind, sqTol < 0 ? undefined : kept.ranks);
    this.memo.remember(kept, key, q);
    if (q !== null) this.shared.add(q);
    return q;
  }

  /** A number for the pair (a zoom's tolerance and scale), the same for the life of this quantiser and its memo. */
  private zoomKey(sqTol: number, scale: number): number {
    if (sqTol !== this.lastTol || scale !== this.lastScale) {
      const name = `${sqTol}/${scale}`;
      let k = this.zoomKeys.get(name);
      if (k === undefined) this.zoomKeys.set(name, (k = this.zoomKeys.size));
      this.lastTol = sqTol; this.lastScale = scale; this.lastKey = k;
    }
    return this.lastKey;
  }

  /** Whether a polygon is long (LONG_PART positions or more in all its rings): each of its rings is then kept. */
  private isLong(poly: readonly Flat[]): boolean {
    let n = 0;
    for (const r of poly) n += r.length;
    return n >= 2 * this.long;
  }

  /** Grows `box` by a part: a long one by its box, worked out once. */
  private grow(box: Float64Array, c: Flat): void {
    growBox(box, c.length < 2 * this.long ? c : this.boxOf(c));
  }

  private make(c: Flat, sqTol: number, scale: number, kind: PartKind, ranks: Float64Array | undefined): Flat | null {
    const q = this.simplifier.simplifyQuantise(c, sqTol, kind !== LINE, scale, ranks);
    if (kind === LINE) return q !== null && q.length >= 4 ? q : null;
    return q === null || !ringUsable(q) || !orient(q, kind === EXTERIOR) ? null : q;
  }

  /**
   * Clips quantised geometry to a buffered tile rectangle (zoom-global units); null when nothing is inside. `r` is
   * tile (tx, ty)'s rectangle when they are given (and that tile lies in the block set by `setBlock`).
   */
  clip(g: TileGeometry, r: Rect, scale: number, tx = -1, ty = -1): TileGeometry | null {
    switch (g.k) {
      case 'points': {
        const xy = clipPoints(this.nearTile(g.xy, tx, ty, true), r);
        return xy.length > 0 ? { k: 'points', type: g.type, xy } : null;
      }
      case 'lines': {
        const parts: Flat[] = [];
        for (const p of g.parts) {
          const b = this.boxOf(p);
          if (boxInside(b, r)) parts.push(p);
          else if (boxMeets(b, r)) for (const c of this.clipper.line(this.nearTile(p, tx, ty), r, true)) parts.push(c);
        }
        return parts.length > 0 ? { k: 'lines', type: g.type, parts } : null;
      }
      case 'polygons': {
        const polys: Flat[][] = [];
        const boxes = g.polys.length >= this.many ? this.boxesOf(g.polys) : undefined;
        for (let k = 0; k < g.polys.length; k++) {
          // A polygon whose exterior's box misses the tile (not boxMeets) is passed over without reading its rings.
          if (boxes !== undefined && (boxes[4 * k] > r.maxX || boxes[4 * k + 2] < r.minX || boxes[4 * k + 1] > r.maxY || boxes[4 * k + 3] < r.minY)) continue;
          const poly = g.polys[k];
          const rings: Flat[] = [];
          for (let i = 0; i < poly.length; i++) {
            const ring = poly[i];
            const b = this.boxOf(ring);
            let c: Flat | null;
            if (boxInside(b, r)) c = ring;
            else if (!boxMeets(b, r)) c = null;
            else {
              c = this.clipper.ring(this.nearTile(ring, tx, ty), r, true);
              // Clipping keeps orientation, but rounding can flip or flatten a sliver: check again.
              if (!ringUsable(c) || !orient(c, i === 0)) c = null;
              // A hole over the whole tile leaves nothing of its polygon here (clipped, it is the tile, as the exterior is).
              else if (i > 0 && b[0] <= r.minX && b[1] <= r.minY && b[2] >= r.maxX && b[3] >= r.maxY
                && Math.abs(ringArea2(c)) >= 2 * (r.maxX - r.minX) * (r.maxY - r.minY)) { rings.length = 0; break; }
            }
            if (c === null) { if (i === 0) break; continue; }
            rings.push(c);
          }
          if (rings.length > 0) polys.push(rings);
        }
        return polys.length > 0 ? { k: 'polygons', type: g.type, polys } : null;
      }
      case 'mesh':
        return boxMeets([g.box[0] * scale, g.box[1] * scale, g.box[2] * scale, g.box[3] * scale], r) ? g : null;
      case 'collection': {
        const members: TileGeometry[] = [];
        for (const m of g.members) { const c = this.clip(m, r, scale, tx, ty); if (c !== null) members.push(c); }
        return members.length > 0 ? { k: 'collection', members } : null;
      }
    }
  }

  /**
   * The boxes of a MultiPolygon's exteriors, `[minX, minY, maxX, maxY]` each, worked out once: a label of a class
   * mask is one feature of thousands of polygons, and each tile read all their rings to find the few near it (a
   * 0/255 mask of 8,000 × 8,000 px took 37 s to tile, of 20,000 × 20,000 px hours).
   */
  private boxesOf(polys: Flat[][]): Float64Array {
    let b = this.polygonBoxes.get(polys);
    if (b === undefined) { b = exteriorBoxes(polys); this.polygonBoxes.set(polys, b); }
    return b;
  }

  /** The box of a part or ring: a short one's in the reused scratch box (valid until the next call). */
  private boxOf(c: Flat): Float64Array {
    if (c.length < 2 * this.long && !this.shared.has(c)) {
      const b = emptyBox(this.ringBox);
      growBox(b, c);
      return b;
    }
    let b = this.boxes.get(c);
    if (b === undefined) { b = emptyBox(new Float64Array(4)); growBox(b, c); this.boxes.set(c, b); }
    return b;
  }

  /** What clipping `c` (`points`, or a line or ring) to tile (tx, ty) needs of it: a long one cut down for the tile's block, else `c`. */
  private nearTile(c: Flat, tx: number, ty: number, points = false): Coords {
    if (tx < 0 || c.length < 2 * this.long || tx < this.bx0 || tx > this.bx1 || ty < this.by0 || ty > this.by1) return c;
    let t = this.trees.get(c);
    if (t === undefined || !t.holds(tx, ty)) { t = new PartTree(c, this.bx0, this.by0, this.bx1, this.by1, points); this.trees.set(c, t); }
    return t.at(tx, ty);
  }
}
