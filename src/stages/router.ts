// The record router: each feature's record into the cells of a level it meets, handed out per cell for the unit store.
import { grown } from '../bytes.js';
import { partialRecord, recordPieces, setHome } from './record.js';
import { centroidIn, isLongPiece, nearFarReaching, piecesNear, type Pieces } from './record-stream.js';
import type { Rect } from '../tiling/clip.js';
import { withinReach } from '../tiling/reach.js';
import { cellKey } from './unit-key.js';

/** Records of this many bytes or more placed in several cells are shared between them (`RecordRouter.take`). */
export const SHARED_RECORD = 64 << 10;

/** Flags of a placement: the record's home cell; a large record, kept apart (`RecordRouter.large`). */
const HOME_PLACE = 1, LARGE_PLACE = 2;

/**
 * Routes records to the cells they meet, then hands out each cell's records in a buffer of its own (transferable).
 * A record is kept once in a scratch buffer the router reuses from batch to batch, whatever the number of cells it
 * meets; a cell's buffer is made once, at its size. Growing a buffer per cell and copying it out at the end faulted in
 * about three times the records' bytes of fresh memory per batch, in every worker. A large record (SHARED_RECORD
 * bytes or more) is kept in a buffer of its own instead, handed out as it is: a class of a class mask and its pieces
 * for a hundred cells (345 MB) were copied into a scratch that doubled to 512 MB, then out again, 1.2 GB at once.
 */
export class RecordRouter {
  /** What the scratch keeps between tasks at most: a task with a huge record does not hold its memory for the rest. */
  private static readonly KEPT = 8 << 20;
  private scratch = new Uint8Array(1 << 16);
  /** The scratch's numbers (records in it start 8-byte aligned): where a large multi-geometry's pieces are read. */
  private f64 = new Float64Array(this.scratch.buffer);
  private used = 0;
  /**
   * Per placement, four numbers: the cell's index in `keys`, where the record is in `scratch` (a large one: its index
   * in `large`), its length, and flags (HOME_PLACE, LARGE_PLACE).
   */
  private places = new Uint32Array(1 << 14);
  /** The batch's large records, each in a buffer of its own. */
  private large: Uint8Array[] = [];
  /** Long pieces placed as records of their own (`placeShared`), by `${large record}/${piece}`: their index in `large`. */
  private readonly alone = new Map<string, number>();
  private placed = 0;
  private readonly keys = new Map<string, number>();

  /**
   * Adds one feature's record to every cell (of side `cell` pixels, indexes 0..last) of the plane whose unit-key
   * prefix is `prefix` that its bbox plus `pad` meets, or that lies within `round` of the bbox (a point's circle:
   * `circlePad`); the cell holding the bbox centre is its home, where it is counted once. Returns how many cells the
   * box grown by the larger of the two meets; beyond `maxCells` the record goes to none of them.
   */
  route(prefix: string, record: Uint8Array, b: ArrayLike<number>, cell: number, pad: number, last = Infinity, maxCells = Infinity, round = 0): number {
    const hx = homeCell(b[0], b[2], cell, last), hy = homeCell(b[1], b[3], cell, last);
    // A circle adds the cells its distance reaches, not those of pad + radius: records no unit would place.
    const far = Math.max(pad, round), disc = round > pad;
    const x0 = Math.max(0, Math.floor((b[0] - far) / cell)), x1 = Math.min(last, Math.floor((b[2] + far) / cell));
    const y0 = Math.max(0, Math.floor((b[1] - far) / cell)), y1 = Math.min(last, Math.floor((b[3] + far) / cell));
    if (x0 > x1 || y0 > y1) return 0;
    const cells = (x1 - x0 + 1) * (y1 - y0 + 1);
    if (cells > maxCells) return cells;
    const big = record.length >= SHARED_RECORD;
    const at = big ? this.large.push(record.slice()) - 1 : this.keep(record);
    const own = big ? new Float64Array(this.large[at].buffer) : undefined;
    const pieces = cells > 1 ? recordPieces(own ?? this.f64, own ? 0 : at) : null;
    for (let cy = y0; cy <= y1; cy++) {
      for (let cx = x0; cx <= x1; cx++) {
        if (disc && !withinReach(b, { minX: cx * cell, minY: cy * cell, maxX: (cx + 1) * cell, maxY: (cy + 1) * cell }, pad, round)) continue;
        const key = cellKey(prefix, cx, cy);
        let k = this.keys.get(key);
        if (k === undefined) this.keys.set(key, (k = this.keys.size));
        const home = cx === hx && cy === hy;
        if (pieces === null || home) this.place(k, at, record.length, home, big);
        else this.placeNear(k, at, own, record.length, pieces, { minX: cx * cell - far, minY: cy * cell - far, maxX: (cx + 1) * cell + far, maxY: (cy + 1) * cell + far });
      }
    }
    return cells;
  }

  /** Copies a record into the scratch buffer; returns where it is. */
  private keep(record: Uint8Array): number {
    const at = this.used;
    if (at + record.length > this.scratch.length) {
      this.scratch = grown(this.scratch, at, record.length) as Uint8Array<ArrayBuffer>;
      this.f64 = new Float64Array(this.scratch.buffer);
    }
    this.scratch.set(record, at);
    this.used = at + record.length;
    return at;
  }

  /**
   * Places in cell `k`, which is not its home, what its stored cell and buffer `r` hold of a large multi-geometry
   * (the whole at `at` in the scratch, `pieces` from `recordPieces`): its pieces that meet `r`, or nothing when none
   * does. The whole when its centroid lies in `r` (were every piece to collapse, the point standing for it there
   * would need them all), when every piece meets `r`, or when a long piece near it reaches far beyond (copied into
   * every cell it meets, it multiplied: `nearFarReaching`). Each piece goes where it would go as a feature of its own,
   * so a unit gathering cells finds every one its tiles reach. `own`: the whole's numbers when it is large (`large[at]`).
   */
  private placeNear(k: number, at: number, own: Float64Array | undefined, length: number, pieces: Pieces, r: Rect): void {
    const big = own !== undefined;
    if (centroidIn(pieces.lod, r)) { this.place(k, at, length, false, big); return; }
    let near = piecesNear(pieces, r);
    if (near.length === 0) return;
    if (4 * near.length === pieces.boxes.length) { this.place(k, at, length, false, big); return; }
    if (own !== undefined && nearFarReaching(pieces, near, r)) {
      // Each long piece near: a record of it alone, one buffer every cell near it shares. The whole in each such cell
      // made every unit of a class mask's slide tile all of a tissue class's specks too: work that grew with the
      // square of the slide's side.
      for (const p of near) if (isLongPiece(pieces, p)) this.placeShared(k, at, p, own, pieces);
      near = near.filter((p) => !isLongPiece(pieces, p));
      if (near.length === 0) return;
    }
    const part = partialRecord(own ?? this.f64, own ? 0 : at, pieces, near);
    // Made in a buffer of its own: a large one stays there.
    if (part.length >= SHARED_RECORD) this.place(k, this.large.push(part) - 1, part.length, false, true);
    else this.place(k, this.keep(part), part.length, false, false);
  }

  /** Places in cell `k` piece `p` of the large record `at` (numbers `own`) as a record of its own, made once and shared. */
  private placeShared(k: number, at: number, p: number, own: Float64Array, pieces: Pieces): void {
    const key = `${at}/${p}`;
    let i = this.alone.get(key);
    if (i === undefined) this.alone.set(key, (i = this.large.push(partialRecord(own, 0, pieces, [p])) - 1));
    this.place(k, i, this.large[i].length, false, true);
  }

  /**
   * Each cell's records, in the order they were routed, keys in first-seen order; the router is then empty. A cell's
   * records come in one buffer of its own, or, where it has a large record (SHARED_RECORD bytes or more), in several
   * entries under its key, the large record's buffer as it was kept; one placed in several cells (an outline across a
   * slide) the same buffer in every cell but its home, which has a copy. Copying it per cell made a 3 MB outline 1.3 GB
   * of buffers in one batch.
   */
  take(): [string, Uint8Array][] {
    const p = this.places;
    // Placements per large record: one placed more than once is shared.
    const count = new Map<number, number>();
    for (let i = 0; i < this.placed; i += 4) if (p[i + 3] & LARGE_PLACE) count.set(p[i + 1], (count.get(p[i + 1]) ?? 0) + 1);
    const isLarge = (i: number) => (p[i + 3] & LARGE_PLACE) !== 0;
    // Each cell's own bytes first, so its buffer is made once at its size; then the same counts say where to copy to.
    const fill = new Float64Array(this.keys.size);
    for (let i = 0; i < this.placed; i += 4) if (!isLarge(i)) fill[p[i]] += p[i + 2];
    const own = Array.from(fill, (n) => new Uint8Array(n));
    fill.fill(0);
    // Per cell, its entries in order: spans of its own buffer (copied out: each moves between threads whole) and shared records.
    const entries: Uint8Array[][] = Array.from({ length: this.keys.size }, () => []);
    const spanStart = new Float64Array(this.keys.size);
    for (let i = 0; i < this.placed; i += 4) {
      const k = p[i], at = p[i + 1], n = p[i + 2], home = (p[i + 3] & HOME_PLACE) !== 0;
      if (!isLarge(i)) {
        const to = fill[k];
        own[k].set(this.scratch.subarray(at, at + n), to);
        setHome(own[k], to, home);
        fill[k] = to + n;
        continue;
      }
      if (fill[k] > spanStart[k]) entries[k].push(own[k].slice(spanStart[k], fill[k]));
      spanStart[k] = fill[k];
      const record = home && (count.get(at) ?? 0) > 1 ? this.large[at].slice() : this.large[at];
      setHome(record, 0, home);
      entries[k].push(record);
    }
    const chunks: [string, Uint8Array][] = [];
    [...this.keys.keys()].forEach((key, k) => {
      // A cell without shared records hands over its whole buffer (a view of all of it moves between threads).
      if (entries[k].length === 0) { chunks.push([key, own[k]]); return; }
      if (fill[k] > spanStart[k]) entries[k].push(own[k].slice(spanStart[k], fill[k]));
      for (const e of entries[k]) chunks.push([key, e]);
    });
    this.keys.clear();
    this.alone.clear();
    this.large = [];
    this.used = 0;
    this.placed = 0;
    if (this.scratch.length > RecordRouter.KEPT) { this.scratch = new Uint8Array(1 << 16); this.f64 = new Float64Array(this.scratch.buffer); }
    if (this.places.length > RecordRouter.KEPT >> 2) this.places = new Uint32Array(1 << 14);
    return chunks;
  }

  private place(k: number, at: number, n: number, home: boolean, large: boolean): void {
    const i = this.placed;
    if (i === this.places.length) {
      const more = new Uint32Array(i * 2);
      more.set(this.places);
      this.places = more;
    }
    const p = this.places;
    p[i] = k; p[i + 1] = at; p[i + 2] = n; p[i + 3] = (home ? HOME_PLACE : 0) | (large ? LARGE_PLACE : 0);
    this.placed = i + 4;
  }
}

/**
 * The index of the cell (of side `cell`, indexes 0..last) holding the centre of the span [lo, hi] on one axis: a
 * record's home, where its feature is counted once, whichever cells it is stored in.
 */
export function homeCell(lo: number, hi: number, cell: number, last: number): number {
  return Math.min(last, Math.max(0, Math.floor((lo + hi) / 2 / cell)));
}
