// A label mask too large to hold whole, cut into bands of rows: each label traced in the one band its top row is in.

/** Rows [top, end) traced together, giving the labels whose top row is in [top, to): each lies within the rows. */
export interface MaskBand { top: number; to: number; end: number }

/** Labels up to this are counted in arrays; larger ones (random 32-bit labels) in a map. */
const DENSE = 1 << 24;
const NONE = 0xffffffff;

/**
 * The first and last row of every label, gathered band by band in one pass over a mask: what decides which band
 * traces a label and how far down that band must read so that the label is whole in it.
 */
export class LabelRows {
  private first = new Uint32Array(1024).fill(NONE);
  private last = new Uint32Array(1024);
  private readonly sparse = new Map<number, [first: number, last: number]>();

  /** Adds rows [top, top + data.length / width) of the mask. */
  add(data: ArrayLike<number>, width: number, top: number): void {
    for (let i = 0, y = top; i < data.length; y++) {
      // A label's pixels come in runs along a row: one look per run.
      let prev = 0;
      for (const end = i + width; i < end; i++) {
        const L = data[i];
        if (L === prev || L === 0) continue;
        prev = L;
        if (L < DENSE) this.seenDense(L, y); else this.seenSparse(L, y);
      }
    }
  }

  private seenDense(L: number, y: number): void {
    if (L >= this.first.length) {
      let cap = this.first.length * 2;
      while (cap <= L) cap *= 2;
      const f = new Uint32Array(cap).fill(NONE), l = new Uint32Array(cap);
      f.set(this.first); l.set(this.last);
      this.first = f; this.last = l;
    }
    if (this.first[L] === NONE) this.first[L] = y;
    this.last[L] = y;
  }

  private seenSparse(L: number, y: number): void {
    const rows = this.sparse.get(L);
    if (rows === undefined) this.sparse.set(L, [y, y]); else rows[1] = y;
  }

  /** The label's top row (rows must have been added). */
  topRow(L: number): number {
    return L < DENSE ? this.first[L] : (this.sparse.get(L)?.[0] ?? NONE);
  }

  /**
   * The bands of `rows` rows that own a label, each reading down to its owned labels' lowest row. Where these would
   * read the mask more than twice over in all (labels reaching down from band after band, as a class mask's do),
   * one band of the whole mask: reading that is no worse.
   */
  bands(height: number, rows: number): MaskBand[] {
    const count = Math.ceil(height / rows);
    const end = new Float64Array(count).fill(-1);
    const own = (first: number, last: number) => {
      const b = Math.floor(first / rows);
      end[b] = Math.max(end[b], last + 1);
    };
    for (let L = 1; L < this.first.length; L++) if (this.first[L] !== NONE) own(this.first[L], this.last[L]);
    for (const [first, last] of this.sparse.values()) own(first, last);
    const out: MaskBand[] = [];
    let read = 0;
    for (let b = 0; b < count; b++) {
      if (end[b] < 0) continue;
      out.push({ top: b * rows, to: Math.min(height, (b + 1) * rows), end: end[b] });
      read += end[b] - b * rows;
    }
    return read > 2 * height ? [{ top: 0, to: height, end: height }] : out;
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
