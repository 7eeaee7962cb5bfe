// Encoded bytes of a feature's geometry at each tile size, as the tiler would write it: what the thinning estimates add up.
import type { Flat, PbfValue, TileGeometry } from '../tiling/flat.js';
import { Ranker } from '../tiling/simplify.js';

export const varintBytes = (n: number): number => (n < 128 ? 1 : n < 16384 ? 2 : n < 2097152 ? 3 : n < 268435456 ? 4 : 5);
const zz = (n: number): number => (n < 0 ? -2 * n - 1 : 2 * n);

/** Encoded size of a value message in a PBF layer's value table. */
export function pbfValueBytes(v: PbfValue): number {
  if (typeof v === 'boolean') return 4;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? 3 + (v < 0 ? varintBytes(-2 * v) : varintBytes(v)) : 11;
  const n = Buffer.byteLength(v);
  return 3 + n + varintBytes(n) + varintBytes(n + 1 + varintBytes(n));
}

/**
 * Encoded bytes of a feature's geometry at one tile size, simplified and quantised as the tiler does it: Douglas–Peucker
 * ranks of every line and ring computed once (`rank`), then per size a walk that keeps the vertices ranked above the
 * tolerance and counts their varint deltas (PBF) or their text (JSON). Clipping at tile edges is not seen.
 */
export class GeometrySizer {
  private ranks = new Float64Array(1024);
  private readonly ranker = new Ranker();
  private at = 0;
  /** Whether the last `bytes` call left anything (a mesh counts, though it has no PBF bytes). */
  left = false;

  /** `leafBytes`: an MVT feature's bytes with `geom` bytes of geometry. */
  constructor(private readonly json: boolean, readonly leafBytes: (geom: number) => number) {}

  rank(g: TileGeometry): void {
    this.at = 0;
    this.rankParts(g);
  }

  private rankParts(g: TileGeometry): void {
    if (g.k === 'lines') for (const p of g.parts) this.rankPart(p);
    else if (g.k === 'polygons') for (const poly of g.polys) for (const r of poly) this.rankPart(r);
    else if (g.k === 'collection') for (const m of g.members) this.rankParts(m);
  }

  private rankPart(c: Flat): void {
    const n = c.length >> 1;
    if (this.ranks.length < this.at + n) { const r = new Float64Array((this.at + n) * 2); r.set(this.ranks); this.ranks = r; }
    this.ranker.rank(c, this.ranks, this.at);
    this.at += n;
  }

  /** Bytes of every MVT feature (PBF) or of the geometry's text (JSON) at a squared tolerance and scale. */
  bytes(g: TileGeometry, sqTol: number, scale: number): number {
    this.at = 0;
    this.left = false;
    return this.leaves(g, sqTol, scale);
  }

  private leaves(g: TileGeometry, sqTol: number, scale: number): number {
    const json = this.json;
    let geom = 0;
    switch (g.k) {
      case 'points': this.left = true; geom = json ? 18 * (g.xy.length >> 1) : 1 + 2 * g.xy.length; break;
      case 'mesh': this.left = true; return json ? 18 * 64 : 0;
      case 'collection': { let sum = 0; for (const m of g.members) sum += this.leaves(m, sqTol, scale); return sum; }
      case 'lines': for (const p of g.parts) geom += Math.max(0, this.part(p, false, sqTol, scale)); break;
      case 'polygons': for (const poly of g.polys) geom += this.polygon(poly, sqTol, scale); break;
    }
    if (geom === 0) return 0;
    this.left = true;
    return json ? geom : this.leafBytes(geom);
  }

  /**
   * Geometry bytes of each piece of the multi-geometry `g` (`pieceCount` of them; lines and polygons ranked by `rank`)
   * at a squared tolerance and scale, in `out` (0 where one collapses): a feature of many pieces is counted in each
   * tile by the pieces there (`TileSketch.add`).
   */
  pieceBytes(g: TileGeometry, sqTol: number, scale: number, out: Float64Array): void {
    this.at = 0;
    if (g.k === 'polygons') for (let k = 0; k < g.polys.length; k++) out[k] = this.polygon(g.polys[k], sqTol, scale);
    else if (g.k === 'lines') for (let k = 0; k < g.parts.length; k++) out[k] = Math.max(0, this.part(g.parts[k], false, sqTol, scale));
    // A point of a MultiPoint: its two varint deltas (the command is the whole's), or its text.
    else if (g.k === 'points') out.fill(this.json ? 18 : 4, 0, g.xy.length >> 1);
  }

  /** Geometry bytes of one polygon: a ring that collapses drops out; an exterior that collapses takes its holes with it. */
  private polygon(poly: Flat[], sqTol: number, scale: number): number {
    const exterior = this.part(poly[0], true, sqTol, scale);
    let geom = 0;
    for (let i = 1; i < poly.length; i++) {
      const hole = exterior < 0 ? -1 : this.part(poly[i], true, sqTol, scale);
      if (exterior < 0) this.at += poly[i].length >> 1;
      if (hole > 0) geom += hole;
    }
    return exterior > 0 ? geom + exterior : geom;
  }

  /** Bytes of one part (PBF: commands and varint deltas; JSON: text), or -1 when it collapses. */
  private part(c: Flat, ring: boolean, sqTol: number, scale: number): number {
    const n = c.length >> 1, ranks = this.ranks, base = this.at;
    this.at += n;
    let kept = 0, bytes = 0, px = NaN, py = NaN;
    for (let i = 0; i < n; i++) {
      if (!(ranks[base + i] > sqTol)) continue;
      const x = Math.round(c[i * 2] * scale), y = Math.round(c[i * 2 + 1] * scale);
      if (x === px && y === py) continue;
      bytes += this.json ? 18 : kept === 0 ? 4 : varintBytes(zz(x - px)) + varintBytes(zz(y - py));
      kept++; px = x; py = y;
    }
    if (ring ? kept < 4 : kept < 2) return -1;
    if (this.json) return bytes + 2;
    // MoveTo, LineTo with its count, ClosePath; a ring's closing position is not written.
    return ring ? bytes - 2 + 2 + varintBytes(((kept - 2) << 3) | 2) : bytes + 1 + varintBytes(((kept - 1) << 3) | 2);
  }
}

