// Douglas–Peucker simplification, quantisation and ring measures on flat coordinate arrays (x, y pairs).
import { FarthestSearch } from './farthest.js';
import { take, type Coords, type Flat } from './flat.js';

/**
 * For each vertex, the largest squared tolerance at which Douglas–Peucker (as the tiler runs it: farthest vertex,
 * first on ties, kept when strictly beyond) still keeps it: its split distance, capped by those of the splits above
 * it. Simplifying at a tolerance keeps exactly the vertices whose value exceeds it, so one pass serves every zoom.
 * One ranker per caller: it keeps its split stack from call to call (the tile sketch ranks every ring read; a number
 * array as the stack made this twice as slow).
 */
export class Ranker {
  private spans = new Int32Array(256);
  private caps = new Float64Array(128);
  /** Finds each split's vertex; its `work` is what a test counts. */
  readonly search = new FarthestSearch();

  /** The ranks of `xy`'s vertices, written into `out` from index `at`. */
  rank(xy: Coords, out: Float64Array, at = 0): Float64Array {
    const n = xy.length >> 1;
    out.fill(Infinity, at, at + n);
    if (n < 3) return out;
    if (this.caps.length < n) { this.spans = new Int32Array(4 * n); this.caps = new Float64Array(2 * n); }
    const spans = this.spans, caps = this.caps, search = this.search;
    search.prepare(xy);
    spans[0] = 0; spans[1] = n - 1; caps[0] = Infinity;
    let sp = 1;
    while (sp > 0) {
      sp--;
      const first = spans[sp * 2], last = spans[sp * 2 + 1], cap = caps[sp];
      const index = search.find(first, last, -1);
      if (index < 0) continue;
      const rank = Math.min(search.maxD, cap);
      out[at + index] = rank;
      // At most one span per vertex is waiting at any time, so n slots suffice.
      if (last - index > 1) { spans[sp * 2] = index; spans[sp * 2 + 1] = last; caps[sp++] = rank; }
      if (index - first > 1) { spans[sp * 2] = first; spans[sp * 2 + 1] = index; caps[sp++] = rank; }
    }
    return out;
  }
}

/** What is kept of one long part: its Douglas–Peucker ranks, and what the tiler made of it at each zoom (`Quantiser`). */
export interface KeptPart {
  readonly ranks: Float64Array;
  /** By `Quantiser`'s key of the zoom and the part's kind. */
  readonly results: Map<number, Flat | null>;
}

interface MemoEntry { hash: number; xy: Float64Array; part: KeptPart; size: number; call: number }

/**
 * Long parts, kept for the next call that meets the same coordinates: a feature across many work units (an outline
 * across a slide) is read by each, and ranking it anew in each took most of their time, then putting it on each zoom's
 * grid most of the rest. Holds at most `limit` numbers (coordinates and results), the least recently used part going
 * first, but never one the current call (`begin`) has used: units of a class mask read the same long parts in the same
 * order, more of them than fit, and evicting the least recently used then evicted each just before it was asked for
 * again (no unit found any). A part that does not fit is ranked and used, not kept. A part is found by a hash, then
 * compared in full; a tissue outline's thousands of holes are parts too, so nothing here walks every entry.
 */
export class RankMemo {
  private readonly ranker = new Ranker();
  private readonly byHash = new Map<number, MemoEntry[]>();
  /** Entries, least recently used first (a Set keeps the order things were added in). */
  private readonly order = new Set<MemoEntry>();
  private readonly entryOf = new WeakMap<KeptPart, MemoEntry>();
  private held = 0;
  private call = 0;

  constructor(private readonly limit = 2 ** 23) {}

  /** A new tiling call: the parts it uses are kept through it. */
  begin(): void {
    this.call++;
  }

  part(c: Coords): KeptPart {
    const n = c.length;
    // A hash of about 64 of its numbers (an odd stride takes xs and ys): the full comparison then tells parts apart.
    // Hashing every number of every long part each unit reads was a tenth of a class mask's build.
    let hash = n;
    for (let i = 0, step = Math.floor(n / 64) | 1; i < n; i += step) hash = Math.imul(hash ^ ((c[i] * 256) | 0), 16777619);
    const same = this.byHash.get(hash);
    if (same !== undefined) {
      for (const x of same) {
        if (x.xy.length !== n) continue;
        let i = 0;
        while (i < n && x.xy[i] === c[i]) i++;
        if (i < n) continue;
        this.order.delete(x);
        this.order.add(x);
        x.call = this.call;
        return x.part;
      }
    }
    const xy = Float64Array.from(c);
    const part = { ranks: this.ranker.rank(xy, new Float64Array(n >> 1)), results: new Map<number, Flat | null>() };
    if (this.room(n)) {
      const entry = { hash, xy, part, size: n, call: this.call };
      if (same === undefined) this.byHash.set(hash, [entry]);
      else same.push(entry);
      this.order.add(entry);
      this.entryOf.set(part, entry);
      this.held += n;
    }
    return part;
  }

  /** Keeps `result` (read-only from now on: every later unit gets this very array) under `key` for `part`. */
  remember(part: KeptPart, key: number, result: Flat | null): void {
    part.results.set(key, result);
    const entry = this.entryOf.get(part);
    if (entry === undefined || result === null) return;
    // A result that does not fit is not kept: the part's other results and its ranks are still worth keeping.
    if (!this.room(result.length)) { part.results.delete(key); return; }
    entry.size += result.length;
    this.held += result.length;
  }

  /** Makes room for `n` more numbers, evicting parts the current call has not used; whether there is room. */
  private room(n: number): boolean {
    for (const x of this.order) {
      if (this.held + n <= this.limit || x.call === this.call) break;
      this.order.delete(x);
      this.entryOf.delete(x.part);
      this.held -= x.size;
      const same = this.byHash.get(x.hash) as MemoEntry[];
      if (same.length === 1) this.byHash.delete(x.hash);
      else same.splice(same.indexOf(x), 1);
    }
    return this.held + n <= this.limit;
  }
}

/**
 * Douglas–Peucker and quantisation, reusing their scratch space from call to call (they run for every ring at every
 * zoom). One simplifier per tiling call.
 */
export class Simplifier {
  private keep = new Uint8Array(256);
  private qbuf = new Float64Array(1024);
  private stack = new Int32Array(256);
  private readonly search = new FarthestSearch();

  /**
   * Douglas–Peucker with squared tolerance `sqTol`, iterative (an explicit stack: rings of a whole-slide outline
   * have enough vertices to overflow recursion). The ends are always kept, so a closed ring stays closed. The
   * farthest vertex wins ties by its first index and is kept only when strictly beyond the tolerance: this makes
   * simplify(simplify(c, t1), t2) equal simplify(c, t2) for t2 >= t1, which lets the caller simplify a feature once
   * for a zoom and reuse it for every coarser zoom with the same result. Returns the input itself when nothing is
   * removed; with `ring`, null when fewer than 4 positions remain (the ring collapsed).
   */
  simplify(c: Coords, sqTol: number, ring: boolean): Coords | null {
    const n = c.length >> 1;
    if (n <= 2) return ring ? null : c;
    const kept = this.mark(c, sqTol);
    if (ring && kept < 4) return null;
    if (kept === n) return c;
    const keep = this.keep;
    const out = new Array<number>(kept * 2);
    let m = 0;
    for (let i = 0; i < n; i++) if (keep[i]) { out[m++] = c[i * 2]; out[m++] = c[i * 2 + 1]; }
    return out;
  }

  /**
   * `quantise(simplify(c, sqTol, ring), scale)` in one pass and one allocation (the tiler's hot path); no
   * simplification when sqTol < 0. Null when a ring collapses in simplification or nothing is left. With `ranks`
   * (`Ranker.rank` of c), the vertices ranked above sqTol are those Douglas–Peucker keeps, without running it again.
   */
  simplifyQuantise(c: Coords, sqTol: number, ring: boolean, scale: number, ranks?: Float64Array): Flat | null {
    const n = c.length >> 1;
    if (sqTol < 0 || (n <= 2 && !ring)) return n === 0 ? null : this.quantise(c, scale);
    if (n <= 2) return null;
    const kept = ranks === undefined ? this.mark(c, sqTol) : this.markRanked(ranks, n, sqTol);
    if (ring && kept < 4) return null;
    const keep = this.keep;
    const out = this.scratch(n * 2);
    let m = 0;
    for (let i = 0; i < n; i++) {
      if (!keep[i]) continue;
      const x = Math.round(c[i * 2] * scale), y = Math.round(c[i * 2 + 1] * scale);
      if (m > 0 && out[m - 2] === x && out[m - 1] === y) continue;
      out[m++] = x; out[m++] = y;
    }
    return take(out, m);
  }

  /**
   * Rounds `v * scale` for every coordinate and drops consecutive duplicate positions. A closed ring stays closed:
   * its first and last positions round alike, and when a duplicate run reaches the end the earlier copy closes it.
   */
  quantise(c: Coords, scale: number): Flat {
    const n = c.length >> 1;
    const out = this.scratch(n * 2);
    let m = 0;
    for (let i = 0; i < n; i++) {
      const x = Math.round(c[i * 2] * scale), y = Math.round(c[i * 2 + 1] * scale);
      if (m > 0 && out[m - 2] === x && out[m - 1] === y) continue;
      out[m++] = x; out[m++] = y;
    }
    return take(out, m);
  }

  /** The quantisation buffer, grown to hold `n` numbers. */
  private scratch(n: number): Float64Array {
    if (this.qbuf.length < n) this.qbuf = new Float64Array(n * 2);
    return this.qbuf;
  }

  /** Marks in `keep` the vertices ranked above `sqTol`; returns how many. */
  private markRanked(ranks: Float64Array, n: number, sqTol: number): number {
    if (this.keep.length < n) this.keep = new Uint8Array(n * 2);
    const keep = this.keep;
    let kept = 0;
    for (let i = 0; i < n; i++) { const k = ranks[i] > sqTol ? 1 : 0; keep[i] = k; kept += k; }
    return kept;
  }

  /** Marks in `keep` the vertices Douglas–Peucker keeps (n >= 2); returns how many. */
  private mark(c: Coords, sqTol: number): number {
    const n = c.length >> 1;
    if (this.keep.length < n) this.keep = new Uint8Array(n * 2);
    if (this.stack.length < 2 * n) this.stack = new Int32Array(4 * n);
    const keep = this.keep, stack = this.stack, search = this.search;
    search.prepare(c);
    keep.fill(0, 0, n);
    keep[0] = 1; keep[n - 1] = 1;
    let kept = 2;
    let sp = 0;
    stack[sp++] = 0; stack[sp++] = n - 1;
    while (sp > 0) {
      const last = stack[--sp], first = stack[--sp];
      // The farthest vertex only if beyond the tolerance: the search need not look at boxes within it.
      const index = search.find(first, last, sqTol);
      if (index >= 0) {
        keep[index] = 1; kept++;
        // Order does not matter for the result (marks only), but it bounds the stack by the tree depth.
        if (last - index > 1) { stack[sp++] = index; stack[sp++] = last; }
        if (index - first > 1) { stack[sp++] = first; stack[sp++] = index; }
      }
    }
    return kept;
  }
}

/** Rounds every coordinate times `scale` without dropping anything (points, where repeats are meaningful). */
export function quantisePoints(c: Coords, scale: number): Flat {
  const out = new Array<number>(c.length);
  for (let i = 0; i < c.length; i++) out[i] = Math.round(c[i] * scale);
  return out;
}

/**
 * Twice the signed area of a closed ring (shoelace Σ x_i·y_{i+1} − x_{i+1}·y_i on the raw numbers), computed
 * relative to the first vertex so that large global coordinates do not swamp small rings.
 */
export function ringArea2(c: Coords): number {
  const n = c.length >> 1;
  if (n < 3) return 0;
  const x0 = c[0], y0 = c[1];
  let s = 0;
  let px = 0, py = 0;
  for (let i = 1; i < n; i++) {
    const x = c[i * 2] - x0, y = c[i * 2 + 1] - y0;
    s += px * y - x * py;
    px = x; py = y;
  }
  return s;
}

/** Reverses a ring's vertex order in place (it stays closed). */
export function reverseRing(c: Flat): void {
  const n = c.length >> 1;
  for (let i = 0, j = n - 1; i < j; i++, j--) {
    const x = c[i * 2], y = c[i * 2 + 1];
    c[i * 2] = c[j * 2]; c[i * 2 + 1] = c[j * 2 + 1];
    c[j * 2] = x; c[j * 2 + 1] = y;
  }
}

/** Whether a quantised ring can be drawn: closed, at least 4 positions, non-zero area. */
export function ringUsable(c: Coords): boolean {
  const n = c.length >> 1;
  return n >= 4 && c[0] === c[(n - 1) * 2] && c[1] === c[(n - 1) * 2 + 1] && ringArea2(c) !== 0;
}
