// A label mask too large to hold whole, read a band of rows at a time: where each label ends, and which recur far apart.
import { CLASS_VALUES, classMask, SCATTERED_LABELS, SCATTERED_SPREAD } from './scattered.js';

/** Labels up to this are counted in arrays; larger ones (random 32-bit labels) in a map. */
const DENSE = 1 << 24;
const NONE = 0xffffffff;
/** The first row of a label already counted as recurring. */
const COUNTED = NONE - 1;

/** Labels seen again far below where their rows had ended: how many, and the first (its rows, and the row it came back in). */
export interface Recurring { labels: number; first: { label: number; top: number; bottom: number; again: number } }

/**
 * The last row of every label, gathered band by band in one pass over a mask: once the bands of pieces have given the
 * rows down to a label's last, every piece of it has been given (`LabelGather`). It sees too which labels come back
 * far below rows of theirs (`recurring`): a piece's rows follow one another, so a label seen again after rows
 * without it, SCATTERED_SPREAD times as many as it had, is in pieces far apart, as a mask numbered afresh in each tile
 * of its segmentation has nearly all its labels, and as the classes of a class mask in specks do, which it tells
 * apart (`classMask`) by the rows its first CLASS_VALUES labels lie in.
 */
export class LabelRows {
  private last = new Uint32Array(1024).fill(NONE);
  private first = new Uint32Array(1024).fill(NONE);
  private readonly sparse = new Map<number, number>();
  private recurred = 0;
  private firstRecurring: Recurring['first'] | undefined;
  /** Labels below DENSE seen, rows holding any label, and the rows of each label while there are CLASS_VALUES or fewer. */
  private values = 0;
  private labelled = 0;
  private rowsOf: Map<number, number> | undefined = new Map();

  /** Adds rows [top, top + data.length / width) of the mask. */
  add(data: ArrayLike<number>, width: number, top: number): void {
    for (let i = 0, y = top; i < data.length; y++) {
      // A label's pixels come in runs along a row: one look per run.
      let prev = 0, any = false;
      for (const end = i + width; i < end; i++) {
        const L = data[i];
        if (L === prev || L === 0) continue;
        prev = L;
        any = true;
        if (L < DENSE) this.seenDense(L, y); else this.sparse.set(L, y);
      }
      if (any) this.labelled++;
    }
  }

  private seenDense(L: number, y: number): void {
    if (L >= this.last.length) {
      let cap = this.last.length * 2;
      while (cap <= L) cap *= 2;
      const l = new Uint32Array(cap).fill(NONE), f = new Uint32Array(cap).fill(NONE);
      l.set(this.last);
      f.set(this.first);
      this.last = l;
      this.first = f;
    }
    const last = this.last[L], first = this.first[L];
    if (last === NONE) {
      this.first[L] = y;
      // Past CLASS_VALUES labels the mask is no class mask: the rows of each no longer matter.
      if (++this.values > CLASS_VALUES) this.rowsOf = undefined;
    } else if (first !== COUNTED && y - last > SCATTERED_SPREAD * (last - first + 1)) {
      this.recurred++;
      this.firstRecurring ??= { label: L, top: first, bottom: last, again: y };
      this.first[L] = COUNTED;
    }
    if (last !== y && this.rowsOf) this.rowsOf.set(L, (this.rowsOf.get(L) ?? 0) + 1);
    this.last[L] = y;
  }

  /**
   * The labels seen again far below their rows so far, once there are SCATTERED_LABELS of them (labels up to 2^24),
   * unless the rows so far are a class mask's (`classMask`).
   */
  recurring(): Recurring | undefined {
    if (this.recurred < SCATTERED_LABELS || !this.firstRecurring) return undefined;
    if (this.rowsOf && classMask(this.values + this.sparse.size, Math.max(0, ...this.rowsOf.values()), this.labelled)) return undefined;
    return { labels: this.recurred, first: this.firstRecurring };
  }

  /** The label's last row (rows must have been added): where a mask read in bands has given every piece of it. */
  lastRow(L: number): number {
    return L < DENSE ? this.last[L] : (this.sparse.get(L) ?? NONE);
  }
}
