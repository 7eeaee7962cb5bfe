// Thinning a multi-geometry of many pieces piece by piece: a zoom that keeps a share of the features keeps that share of
// a gene's transcripts, a track's lines or a class mask's polygons, instead of all or none of them.
import { hasExtent, type TileGeometry } from '../../tiling/flat.js';
import { thinningPriority, wideEnough } from '../thinning.js';

/**
 * Thinning priorities of pieces, from the feature's sequence number and the piece's first position: reduction keeps a
 * line's and a ring's ends, and partial records and their joins keep pieces whole, so every unit and level that holds a
 * piece gives it the same priority. It owns the scratch that reads a position's bits.
 */
export class PieceKeys {
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

/** The pieces of `g` whose priorities reach `threshold` (all at 0), `g` itself when all do; null when none does. */
export function keptPieces(g: TileGeometry, threshold: number, seq: number, keys: PieceKeys): TileGeometry | null {
  if (threshold === 0) return g;
  const kept = (x: number, y: number) => keys.priority(seq, x, y) >= threshold;
  switch (g.k) {
    case 'points': {
      const xy: number[] = [];
      for (let i = 0; i + 1 < g.xy.length; i += 2) if (kept(g.xy[i], g.xy[i + 1])) xy.push(g.xy[i], g.xy[i + 1]);
      return xy.length === g.xy.length ? g : xy.length > 0 ? { k: 'points', type: g.type, xy } : null;
    }
    case 'lines': {
      const parts = g.parts.filter((p) => kept(p[0], p[1]));
      return parts.length === g.parts.length ? g : parts.length > 0 ? { k: 'lines', type: g.type, parts } : null;
    }
    case 'polygons': {
      const polys = g.polys.filter((poly) => kept(poly[0][0], poly[0][1]));
      return polys.length === g.polys.length ? g : polys.length > 0 ? { k: 'polygons', type: g.type, polys } : null;
    }
    default: return g;
  }
}

/**
 * What a zoom draws of a feature of many pieces (thinning.ts `drawn`, piece by piece): the whole where the zoom spares
 * a line or polygon as wide as its original box (`box`), else the pieces whose priorities reach the threshold.
 */
export function drawnPieces(threshold: number, seq: number, spares: boolean, g: TileGeometry, box: () => ArrayLike<number> | null, pixel: number, keys: PieceKeys): TileGeometry | null {
  if (spares && hasExtent(g) && wideEnough(box(), pixel)) return g;
  return keptPieces(g, threshold, seq, keys);
}
