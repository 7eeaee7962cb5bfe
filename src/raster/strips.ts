// A label mask too large to hold whole, cut into bands of rows: where its labels and its pieces begin and end.

/** Rows [top, end) traced together, giving the pieces whose top row is in [top, to): each lies within the rows. */
export interface MaskBand { top: number; to: number; end: number }

/** Labels up to this are counted in arrays; larger ones (random 32-bit labels) in a map. */
const DENSE = 1 << 24;
const NONE = 0xffffffff;

/**
 * The last row of every label, gathered band by band in one pass over a mask: once the bands of pieces have given the
 * rows down to a label's last, every piece of it has been given (`LabelGather`).
 */
export class LabelRows {
  private last = new Uint32Array(1024).fill(NONE);
  private readonly sparse = new Map<number, number>();

  /** Adds rows [top, top + data.length / width) of the mask. */
  add(data: ArrayLike<number>, width: number, top: number): void {
    for (let i = 0, y = top; i < data.length; y++) {
      // A label's pixels come in runs along a row: one look per run.
      let prev = 0;
      for (const end = i + width; i < end; i++) {
        const L = data[i];
        if (L === prev || L === 0) continue;
        prev = L;
        if (L < DENSE) this.seenDense(L, y); else this.sparse.set(L, y);
      }
    }
  }

  private seenDense(L: number, y: number): void {
    if (L >= this.last.length) {
      let cap = this.last.length * 2;
      while (cap <= L) cap *= 2;
      const l = new Uint32Array(cap).fill(NONE);
      l.set(this.last);
      this.last = l;
    }
    this.last[L] = y;
  }

  /** The label's last row (rows must have been added): where a mask read in bands has given every piece of it. */
  lastRow(L: number): number {
    return L < DENSE ? this.last[L] : (this.sparse.get(L) ?? NONE);
  }
}
