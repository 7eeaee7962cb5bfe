// Pieces of a mask read in bands, given in raster order of their first pixels: held packed while a piece above them is open.
import type { HeldPiece, HeldRing } from './band-stitch.js';
import { byFirstPixel, type PieceShape } from './label-pieces.js';
import { pack, packedSize, unpack } from './outline-pack.js';
import type { LabelRings } from './trace.js';

/** Pieces given together: those whose top row is in the rows up to `to`, in raster order of first pixels, their rings' y from row `from`. */
export interface PieceBand { rings: LabelRings; from: number; to: number; pieces: PieceShape[] }

/** Vertices of held pieces made into one set of rings at most (unless one piece has more), cut where the top row changes. */
const CHUNK_VERTICES = 1 << 20;

/**
 * The pieces of bands below a piece still open (one crossing the cuts of bands to come, `BandStitch`), and those
 * open pieces once whole: held packed (4 bytes a vertex) until every piece above them has been given. A class mask
 * whose class reaches from its top to its bottom holds every piece after it, as their outlines, to its last band.
 */
export class PieceOrder {
  private held: HeldPiece[] = [];

  /** Holds crossing pieces made whole. */
  add(done: readonly HeldPiece[]): void {
    for (const p of done) this.held.push(p);
  }

  /** Holds pieces of a band traced from row `from`, packed into one store: their rings are let go with the band. */
  hold(rings: LabelRings, pieces: readonly PieceShape[], from: number): void {
    let size = 0;
    for (const p of pieces) for (const r of p.polygon) size += packedSize(rings.length[r]);
    const store = new Int32Array(size);
    let at = 0;
    for (const p of pieces) {
      const held: HeldRing[] = [];
      for (const r of p.polygon) {
        const n = rings.length[r];
        held.push({ data: store, at, n, area2: rings.area2[r], ky: 0, kx: 0, sub: 0 });
        at = pack(rings.xy, rings.start[r], n, from, store, at);
      }
      this.held.push({ label: p.label, top: p.top + from, left: p.left, rings: held });
    }
  }

  /**
   * Gives the held pieces whose top row is above `row`, in raster order of first pixels, as sets of rings with y from
   * the mask's top: each set `to` the top row of the next, the last `to` `row`.
   */
  *before(row: number): Generator<PieceBand, void, undefined> {
    if (this.held.length === 0) return;
    this.held.sort((p, q) => p.top - q.top || p.left - q.left);
    let end = 0;
    while (end < this.held.length && this.held[end].top < row) end++;
    const given = this.held.slice(0, end);
    this.held = this.held.slice(end);
    for (let k = 0; k < given.length;) {
      let e = k, vertices = 0;
      while (e < given.length && (e === k || vertices < CHUNK_VERTICES || given[e].top === given[e - 1].top)) {
        for (const r of given[e].rings) vertices += r.n;
        e++;
      }
      yield made(given.slice(k, e), e < given.length ? given[e].top : row);
      k = e;
    }
  }
}

/** Held pieces as one set of rings, y from the mask's top. */
function made(pieces: readonly HeldPiece[], to: number): PieceBand {
  let count = 0, vertices = 0;
  for (const p of pieces) for (const r of p.rings) { count++; vertices += r.n; }
  const label = new Uint32Array(count), start = new Float64Array(count), length = new Uint32Array(count);
  const area2 = new Float64Array(count), xy = new Int32Array(2 * vertices);
  const shapes: PieceShape[] = [];
  let k = 0, o = 0;
  for (const p of pieces) {
    const polygon: number[] = [];
    let bottom = -Infinity;
    for (const r of p.rings) {
      label[k] = p.label; start[k] = o; length[k] = r.n; area2[k] = r.area2;
      const end = unpack(r.data, r.at, r.n, xy, o);
      if (polygon.length === 0) for (let i = o; i < end; i++) bottom = Math.max(bottom, xy[2 * i + 1]);
      polygon.push(k++);
      o = end;
    }
    shapes.push({ label: p.label, polygon, top: p.top, left: p.left, bottom });
  }
  shapes.sort(byFirstPixel);
  return { rings: { count, label, start, length, area2, xy }, from: 0, to, pieces: shapes };
}
