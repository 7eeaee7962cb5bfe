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

/**
 * How far down pieces of `labels` go from the first row given: runs of those labels in that row, followed down through
 * runs of the same label sharing a column with a followed run in the row above, until no run is followed. A piece
 * that turns up and down again below that row is found only in part (its band is read again); a label's last row
 * instead, which a mask numbered afresh in each tile has near its bottom, read one tall cell's band to the bottom.
 */
export class RunsDown {
  /** Followed runs of the last row added: start, end (exclusive) and label of each, left to right. */
  private live: number[] | undefined;
  /** The last row holding a followed run. */
  last = -1;

  constructor(private readonly labels: ReadonlySet<number>) {}

  /** Adds rows [top, top + data.length / width); false once a row holds no followed run (the pieces ended above it). */
  add(data: ArrayLike<number>, width: number, top: number): boolean {
    for (let i = 0, y = top; i < data.length; i += width, y++) {
      const prev = this.live, next: number[] = [];
      let j = 0;
      for (let x = 0; x < width;) {
        const L = data[i + x];
        let e = x + 1;
        while (e < width && data[i + e] === L) e++;
        if (L !== 0 && this.labels.has(L)) {
          if (prev === undefined) next.push(x, e, L);
          else {
            // Runs above ending at or before this one's start touch neither it nor any run right of it.
            while (j < prev.length && prev[j + 1] <= x) j += 3;
            for (let k = j; k < prev.length && prev[k] < e; k += 3) if (prev[k + 2] === L) { next.push(x, e, L); break; }
          }
        }
        x = e;
      }
      if (next.length === 0) return false;
      this.live = next;
      this.last = y;
    }
    return true;
  }
}
