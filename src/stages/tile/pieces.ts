// Thinning a multi-geometry of many pieces piece by piece: a zoom that keeps a share of the features keeps that share of
// a gene's transcripts, a track's lines or a class mask's polygons, instead of all or none of them.
import { hasExtent, pieceCount, type Coords, type FlatFeature, type TileGeometry } from '../../tiling/flat.js';
import { Simplifier } from '../../tiling/simplify.js';
import { keeps, PRIORITY_RANGE, thinningPriority } from '../thinning.js';

/**
 * Thinning priorities of pieces, from the feature's sequence number and the piece's first position: reduction keeps a
 * line's and a ring's ends, and partial records and their joins keep pieces whole, so every unit and level that holds a
 * piece gives it the same priority. It owns the scratch that reads a position's bits, and a simplifier for `drawnMany`.
 */
export class PieceKeys {
  readonly simplifier = new Simplifier();
  private readonly f64 = new Float64Array(2);
  private readonly u32 = new Uint32Array(this.f64.buffer);

  priority(seq: number, x: number, y: number): number {
    this.f64[0] = x; this.f64[1] = y;
    const u = this.u32;
    let h = thinningPriority(seq);
    for (let i = 0; i < 4; i++) { h = Math.imul(h ^ u[i], 0x9e3779b1); h ^= h >>> 15; }
    h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16;
    return h >>> 0;
  }
}

/**
 * The pieces of `g` whose priorities reach `threshold` (all at 0), and the lines and rings at least `width` pixels
 * across as simplified with `sqTol` (`wideAt`; Infinity: none is spared); `g` itself when all are; null when none is.
 */
export function keptPieces(g: TileGeometry, threshold: number, seq: number, keys: PieceKeys, width = Infinity, sqTol = -1): TileGeometry | null {
  if (threshold === 0) return g;
  const s = keys.simplifier;
  const kept = (x: number, y: number, c?: Coords, ring = false) => keys.priority(seq, x, y) >= threshold || (c !== undefined && wideAt(c, width, sqTol, ring, s));
  switch (g.k) {
    case 'points': {
      const xy: number[] = [];
      for (let i = 0; i + 1 < g.xy.length; i += 2) if (kept(g.xy[i], g.xy[i + 1])) xy.push(g.xy[i], g.xy[i + 1]);
      return xy.length === g.xy.length ? g : xy.length > 0 ? { k: 'points', type: g.type, xy } : null;
    }
    case 'lines': {
      const parts = g.parts.filter((p) => kept(p[0], p[1], p));
      return parts.length === g.parts.length ? g : parts.length > 0 ? { k: 'lines', type: g.type, parts } : null;
    }
    case 'polygons': {
      const polys = g.polys.filter((poly) => kept(poly[0][0], poly[0][1], poly[0], true));
      return polys.length === g.polys.length ? g : polys.length > 0 ? { k: 'polygons', type: g.type, polys } : null;
    }
    default: return g;
  }
}

/**
 * Whether a line or a polygon's exterior is at least `width` pixels across as a zoom draws it, simplified with its
 * `sqTol`: simplification nests (`Simplifier.simplify`), so every unit and level finds the same whatever record of the
 * piece it holds (reduce.ts simplified it for a finer zoom), and a finer zoom, which keeps more of its vertices, finds
 * it at least as wide. Only a piece that wide as it is needs simplifying.
 */
function wideAt(c: Coords, width: number, sqTol: number, ring: boolean, s: Simplifier): boolean {
  // Where the zoom spares nothing (Infinity), no piece's positions are looked at.
  if (width === Infinity || !spans(c, width)) return false;
  const d = s.simplify(c, sqTol, ring);
  return d !== null && (d === c || spans(d, width));
}

function spans(c: Coords, width: number): boolean {
  if (c.length < 2) return false;
  let x0 = c[0], y0 = c[1], x1 = x0, y1 = y0;
  for (let i = 2; i + 1 < c.length; i += 2) {
    const x = c[i], y = c[i + 1];
    if (x < x0) x0 = x; else if (x > x1) x1 = x;
    if (y < y0) y0 = y; else if (y > y1) y1 = y;
  }
  return Math.max(x1 - x0, y1 - y0) >= width;
}

/** Whether `g` has a piece that stays in simplification with `sqTol`: a point, a line, a polygon whose exterior does (reduce.ts drops the others). */
function someStays(g: TileGeometry, sqTol: number, s: Simplifier): boolean {
  if (g.k === 'points') return g.xy.length > 0;
  if (g.k === 'lines') return g.parts.length > 0;
  return g.k === 'polygons' && g.polys.some((poly) => s.simplify(poly[0], sqTol, true) !== null);
}

/** `g` without its pieces: a feature only its centroid stands for (it quantises to nothing). */
function emptied(g: TileGeometry): TileGeometry {
  return g.k === 'points' ? { k: 'points', type: g.type, xy: [] } : g.k === 'lines' ? { k: 'lines', type: g.type, parts: [] } : g.k === 'polygons' ? { k: 'polygons', type: g.type, polys: [] } : g;
}

/**
 * What a zoom draws of a feature of many pieces (thinning.ts `drawn`, piece by piece), null for nothing: the pieces
 * whose priorities reach the threshold and, where the zoom spares (`spares`), the lines and rings as wide as its
 * sparing size (`width`, `wideAt`), or none; where nothing of what it gets is left on the zoom's grid, its centroid
 * stands for it. Spared by piece, not by the whole's box: a class mask's label spans the slide, and spared whole it
 * took every tile's budget, so the plan stopped sparing there and its large regions went with the specks.
 * It is drawn where its own priority (`keeps`) says, as before it was thinned by piece, and, not below a display
 * pixel, where a piece it keeps stays in simplification at the zoom (`sqTol`). Not where any piece it keeps does: a
 * record reduced for coarser zooms (reduce.ts) has dropped the polygons that collapse there, and is its centroid where
 * all do or the whole is below a display pixel, so a unit given it could not tell what a unit given the whole would
 * draw (a gene of 100 spots in 8 px, a label's sub-pixel squares). Each condition nests, so what a zoom draws of it
 * every finer zoom draws. A Point is the centroid reduce.ts made of it, wide only where its polygons were.
 */
export function drawnMany(threshold: number, seq: number, spares: boolean, g: TileGeometry, box: () => ArrayLike<number> | null, pixel: number, width: number, sqTol: number, keys: PieceKeys): TileGeometry | null {
  const point = g.k === 'points' && g.type === 'Point';
  const own = keeps(threshold, seq);
  const b = box();
  if (point || (b !== null && b[2] - b[0] < pixel && b[3] - b[1] < pixel)) return own ? g : null;
  const kept = keptPieces(g, threshold, seq, keys, spares && hasExtent(g) ? width : Infinity, sqTol);
  if (kept !== null && (own || someStays(kept, sqTol, keys.simplifier))) return kept;
  return own ? emptied(g) : null;
}

/** The pieces of a feature of many pieces as read: those a reduction left it (`FlatFeature.pieces`), else its geometry's. */
export function wholePieces(f: Pick<FlatFeature, 'geom' | 'pieces'>): number {
  return f.pieces ?? pieceCount(f.geom);
}

/**
 * How many of the `whole` pieces (as read) of a feature of many pieces of geometry `g` a zoom draws, where `drawnMany`
 * (same arguments) gave `drawn`: none where it draws nothing; all where it draws the whole (below a display pixel: its
 * centroid); else those spared or whose priorities reach the threshold among the pieces that stay on the zoom's grid,
 * and of those that do not (left out, or all of them where its centroid stands for them) the threshold's share: a
 * collapsed piece counts as drawn as an ordinary feature drawn as a point does, but a coarser level's record has
 * dropped such pieces (reduce.ts), so their priorities are not known there. Counted so, every level and unit cut gives
 * one count. Never 0 where something is drawn.
 */
export function piecesDrawn(drawn: TileGeometry | null, threshold: number, seq: number, spares: boolean, g: TileGeometry, box: () => ArrayLike<number> | null, pixel: number, width: number, sqTol: number, keys: PieceKeys, whole: number): number {
  if (drawn === null) return 0;
  if (threshold === 0) return whole;
  const point = g.k === 'points' && g.type === 'Point';
  const b = box();
  if (b !== null && b[2] - b[0] < pixel && b[3] - b[1] < pixel) return whole;
  // A Point not below a pixel: reduction made it the centroid of pieces that all collapse.
  let stay = 0, kept = 0;
  const s = keys.simplifier, w = spares ? width : Infinity;
  const see = (x: number, y: number, spared = false) => { stay++; if (spared || keys.priority(seq, x, y) >= threshold) kept++; };
  if (g.k === 'points' && !point) for (let i = 0; i + 1 < g.xy.length; i += 2) see(g.xy[i], g.xy[i + 1]);
  else if (g.k === 'lines') for (const p of g.parts) see(p[0], p[1], wideAt(p, w, sqTol, false, s));
  else if (g.k === 'polygons') for (const poly of g.polys) if (s.simplify(poly[0], sqTol, true) !== null) see(poly[0][0], poly[0][1], wideAt(poly[0], w, sqTol, true, s));
  const share = 1 - threshold / PRIORITY_RANGE;
  return Math.max(1, kept + Math.round(Math.max(0, whole - stay) * share));
}
