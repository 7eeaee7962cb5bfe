// Point-in-ring tests for traced label rings: even-odd ray casting, over the edges of the probe's row only for long rings.
import type { LabelRings } from './trace.js';

/**
 * Rings of this many vertices or more are tested through an index of their edges by row. A class of a class mask is
 * one outline of millions of vertices with thousands of holes: testing each hole against the whole outline took 51 s
 * of a 20,000² px mask's 73 s of reading.
 */
export const INDEXED_RING = 4096;

/**
 * Tests whether points lie inside rings of `rings` (even-odd). A long ring gets, on its first test, the list of its
 * edges per integer row they may cross (`Math.floor` of y): a probe's ray meets only edges of its own row. The edges
 * tested are the same as in a scan of the whole ring, so the answer is too.
 */
export class RingTester {
  private readonly indexes = new Map<number, RowIndex>();

  constructor(private readonly rings: LabelRings) {}

  /** Whether (px, py) is inside ring `r`; the probe must not lie on it (a half-integer point and a pixel outline). */
  contains(r: number, px: number, py: number): boolean {
    const { xy, start, length } = this.rings;
    const s = start[r], n = length[r];
    if (n < INDEXED_RING) return crossings(xy, s, n, 0, n, null, px, py);
    let index = this.indexes.get(r);
    if (index === undefined) this.indexes.set(r, (index = rowIndex(xy, s, n)));
    const row = Math.floor(py) - index.y0;
    if (row < 0 || row >= index.rows) return false;
    return crossings(xy, s, n, index.at[row], index.at[row + 1], index.edges, px, py);
  }
}

/** Per row from y0: where its edges start in `edges` (`at`, one more than rows), and each edge's first vertex. */
interface RowIndex { y0: number; rows: number; at: Int32Array; edges: Int32Array }

/** Whether the ray from (px, py) towards +x crosses the ring an odd number of times, over edges `from`..`to` (of `edges`, or all). */
function crossings(xy: Int32Array, s: number, n: number, from: number, to: number, edges: Int32Array | null, px: number, py: number): boolean {
  let inside = false;
  for (let e = from; e < to; e++) {
    const i = edges === null ? e : edges[e], j = i === 0 ? n - 1 : i - 1;
    const xi = xy[2 * (s + i)], yi = xy[2 * (s + i) + 1], xj = xy[2 * (s + j)], yj = xy[2 * (s + j) + 1];
    if ((yi > py) !== (yj > py) && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** The ring's non-horizontal edges (by their vertex i, edge i-1 → i) in every row from floor of its lower to floor of its upper y. */
function rowIndex(xy: Int32Array, s: number, n: number): RowIndex {
  let y0 = Infinity, y1 = -Infinity;
  for (let i = 0; i < n; i++) { const y = xy[2 * (s + i) + 1]; if (y < y0) y0 = y; if (y > y1) y1 = y; }
  y0 = Math.floor(y0);
  const rows = Math.floor(y1) - y0 + 1;
  const at = new Int32Array(rows + 1);
  const each = (visit: (i: number, lo: number, hi: number) => void) => {
    for (let i = 0; i < n; i++) {
      const a = xy[2 * (s + i) + 1], b = xy[2 * (s + (i === 0 ? n - 1 : i - 1)) + 1];
      if (a !== b) visit(i, Math.floor(Math.min(a, b)) - y0, Math.floor(Math.max(a, b)) - y0);
    }
  };
  each((_, lo, hi) => { for (let r = lo; r <= hi; r++) at[r + 1]++; });
  for (let r = 0; r < rows; r++) at[r + 1] += at[r];
  const fill = at.slice(0, rows);
  const edges = new Int32Array(at[rows]);
  each((i, lo, hi) => { for (let r = lo; r <= hi; r++) edges[fill[r]++] = i; });
  return { y0, rows, at, edges };
}
