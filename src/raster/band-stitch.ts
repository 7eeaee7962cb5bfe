// Pieces of a label mask crossing the cuts between bands of rows: their outlines cut into chains there, joined into the rings a whole trace gives.
import type { PieceShape } from './label-pieces.js';
import { pack, packedSize, unpack } from './outline-pack.js';
import { closeWalk, IN_X, IN_Y, leaving, OUT_X, OUT_Y, RingTable, type LabelRings } from './trace.js';


/** A ring of a piece, packed (`pack`): its vertices, twice its signed area, and where a whole trace adds it (`order`). */
export interface HeldRing { data: Int32Array; at: number; n: number; area2: number; ky: number; kx: number; sub: number }

/** A piece, whole, its rings packed: its outer ring first, then its holes in the order a whole trace adds them. */
export interface HeldPiece { label: number; top: number; left: number; rings: HeldRing[] }

/** A band of rows [a, b) of a mask `W` wide and `H` high: its pixels, and the rows just above and below it. */
export interface BandRows { W: number; H: number; a: number; b: number; data: ArrayLike<number>; prev?: ArrayLike<number>; next?: ArrayLike<number> }

/** The label of pixel (x, y), −1 outside the mask or the rows held. */
function pixel(r: BandRows, x: number, y: number): number {
  if (x < 0 || x >= r.W) return -1;
  if (y >= r.a && y < r.b) return r.data[(y - r.a) * r.W + x];
  if (y === r.a - 1 && r.prev !== undefined) return r.prev[x];
  if (y === r.b && r.next !== undefined) return r.next[x];
  return -1;
}

/** A run of vertices of an outline: full x, y (transient, in a band) or packed (held across bands). */
class Link {
  /** The edge into its first vertex runs on in the same direction (the vertex is dropped); it is a saddle corner. */
  straight = false;
  saddle = false;
  constructor(public data: Int32Array, public at: number, public n: number, public packed: boolean) {}
}

/** The pieces of a label joined so far (union-find): one once the bands have given all of it. */
class Group {
  parent: Group = this;
  /** Chains of it still open at the last cut. */
  open = 0;
  rings: HeldRing[] = [];
  constructor(readonly label: number, public top: number, public left: number) {}
}

function root(g: Group): Group {
  while (g.parent !== g) { g.parent = g.parent.parent; g = g.parent; }
  return g;
}

function union(x: Group, y: Group): Group {
  let a = root(x), b = root(y);
  if (a === b) return a;
  if (a.rings.length < b.rings.length) [a, b] = [b, a];
  b.parent = a;
  for (const r of b.rings) a.rings.push(r);
  b.rings = [];
  if (b.top < a.top || (b.top === a.top && b.left < a.left)) { a.top = b.top; a.left = b.left; }
  return a;
}

/** A path along an outline between corners where it is cut: from (sx, sy) leaving in direction sd to (ex, ey) arriving in ed. */
interface Chain { group: Group; links: Link[]; sx: number; sy: number; sd: number; ex: number; ey: number; ed: number }

function direction(x0: number, y0: number, x1: number, y1: number): number {
  return x1 > x0 ? 0 : y1 > y0 ? 1 : x1 < x0 ? 2 : 3;
}

function chainOf(group: Group, data: Int32Array, at: number, n: number): Chain {
  const o = 2 * at, e = 2 * (at + n - 1);
  return {
    group, links: [new Link(data, at, n, false)],
    sx: data[o], sy: data[o + 1], sd: direction(data[o], data[o + 1], data[o + 2], data[o + 3]),
    ex: data[e], ey: data[e + 1], ed: direction(data[e - 2], data[e - 1], data[e], data[e + 1]),
  };
}

/** True when L holds two diagonally opposite pixels of the 2 × 2 block around corner (x, y), and not the other two. */
function saddle(r: BandRows, L: number, x: number, y: number): boolean {
  const tl = pixel(r, x - 1, y - 1) === L, tr = pixel(r, x, y - 1) === L, bl = pixel(r, x - 1, y) === L, br = pixel(r, x, y) === L;
  return tl === br && tr === bl && tl !== tr;
}

/**
 * Stitches the pieces of a mask traced band by band (`band`), the bands in order from its top. A piece that crosses
 * a cut between two bands (label L on both sides of it in some column) has its rings cut there, and at its saddle
 * corners, into chains; at each cut the chains of both bands are joined as the trace's walk turns (around its own
 * pixel at a saddle: 4-connectivity), and each closed walk is started at its first corner in raster order and cut at
 * the saddle corners it passes twice (`closeWalk`), as a whole trace does. Chains still open at a band's last row are
 * held packed, 4 bytes a vertex, until the next band; no pixels are held but the band's and the rows beside it.
 */
export class BandStitch {
  private open: Chain[] = [];

  /**
   * Takes a band's traced rings (y from row `rows.a`) and pieces: gives the pieces that lie in it alone (`whole`), the
   * crossing pieces it has completed (`done`), and the top row of the first piece still open (Infinity if none).
   */
  band(rings: LabelRings, shapes: readonly PieceShape[], rows: BandRows): { whole: PieceShape[]; done: HeldPiece[]; frontier: number } {
    const whole: PieceShape[] = [];
    const chains: Chain[] = [...this.open];
    const touched: Group[] = this.open.map((c) => c.group);
    for (const p of shapes) {
      if (!this.crosses(rings, p, rows)) { whole.push(p); continue; }
      const g = new Group(p.label, p.top + rows.a, p.left);
      touched.push(g);
      for (const r of p.polygon) this.chop(rings, r, g, rows, chains);
    }
    this.open = this.join(chains, rows);
    const roots = new Set<Group>();
    for (const g of touched) { const t = root(g); t.open = 0; roots.add(t); }
    for (const c of this.open) { c.group = root(c.group); c.group.open++; }
    const done: HeldPiece[] = [];
    let frontier = Infinity;
    for (const g of roots) {
      if (g.open > 0) frontier = Math.min(frontier, g.top);
      else done.push(pieceOf(g));
    }
    this.packOpen();
    return { whole, done, frontier };
  }

  /** Whether a piece of the band has label L on both sides of one of the band's cuts, in a column of its outer ring. */
  private crosses(rings: LabelRings, p: PieceShape, rows: BandRows): boolean {
    const h = rows.b - rows.a;
    const top = rows.a > 0 && p.top === 0, bottom = rows.b < rows.H && p.bottom === h;
    if (!top && !bottom) return false;
    const r = p.polygon[0], s = rings.start[r], n = rings.length[r], xy = rings.xy, L = p.label;
    for (let i = 0; i < n; i++) {
      const j = i + 1 < n ? i + 1 : 0, y = xy[2 * (s + i) + 1];
      if (y !== xy[2 * (s + j) + 1] || !((top && y === 0) || (bottom && y === h))) continue;
      const other = y === 0 ? rows.prev : rows.next;
      if (other === undefined) continue;
      const x0 = Math.min(xy[2 * (s + i)], xy[2 * (s + j)]), x1 = Math.max(xy[2 * (s + i)], xy[2 * (s + j)]);
      for (let x = x0; x < x1; x++) if (other[x] === L) return true;
    }
    return false;
  }

  /**
   * Cuts ring r of a crossing piece into chains at its corners on a cut and its saddle corners, its edges along a cut
   * where L lies on both sides left out. A ring with no such corner (a hole away from both) is whole as it is.
   */
  private chop(rings: LabelRings, r: number, g: Group, rows: BandRows, out: Chain[]): void {
    const { a, b, H } = rows, L = g.label;
    const s = rings.start[r], n = rings.length[r], xy = rings.xy;
    const onCut = (y: number) => (y === a && a > 0) || (y === b && b < H);
    const cutAt = (i: number) => {
      const x = xy[2 * (s + i)], y = xy[2 * (s + i) + 1] + a;
      return onCut(y) || (y > a && y < b && saddle(rows, L, x, y));
    };
    let i0 = -1;
    for (let i = 0; i < n && i0 < 0; i++) if (cutAt(i)) i0 = i;
    if (i0 < 0) {
      const data = new Int32Array(packedSize(n));
      pack(xy, s, n, a, data, 0);
      g.rings.push({ data, at: 0, n, area2: rings.area2[r], ky: xy[2 * s + 1] + a, kx: xy[2 * s], sub: 0 });
      return;
    }
    // The ring from corner i0 round to it again, y from the mask's top.
    const v = new Int32Array(2 * (n + 1));
    for (let k = 0; k <= n; k++) {
      const i = (i0 + k) % n;
      v[2 * k] = xy[2 * (s + i)];
      v[2 * k + 1] = xy[2 * (s + i) + 1] + a;
    }
    let start = 0;
    for (let k = 1; k <= n; k++) {
      const px = v[2 * k - 2], y = v[2 * k - 1], qx = v[2 * k];
      if (y === v[2 * k + 1] && onCut(y)) {
        if (k - 1 > start) out.push(chainOf(g, v, start, k - start));
        keptRuns(rows, L, px, qx, y, g, out);
        start = k;
      } else if (k === n || cutAt((i0 + k) % n)) {
        out.push(chainOf(g, v, start, k - start + 1));
        start = k;
      }
    }
  }

  /**
   * Joins every chain whose end is not on the band's last cut to the chain its walk goes on to; gives the paths still
   * open there, and adds each closed walk's rings to its group.
   */
  private join(chains: Chain[], rows: BandRows): Chain[] {
    const { W, b, H } = rows, m = chains.length;
    const key = (x: number, y: number, d: number) => (y * (W + 1) + x) * 4 + d;
    const byStart = new Map<number, number>();
    for (let c = 0; c < m; c++) byStart.set(key(chains[c].sx, chains[c].sy, chains[c].sd), c);
    const next = new Int32Array(m).fill(-1), hasPrev = new Uint8Array(m);
    for (let c = 0; c < m; c++) {
      const { ex, ey, ed, group } = chains[c];
      if (ey === b && b < H) continue;
      const L = group.label;
      const inL = pixel(rows, ex + IN_X[ed], ey + IN_Y[ed]) === L, outL = pixel(rows, ex + OUT_X[ed], ey + OUT_Y[ed]) === L;
      const nd = leaving(ed, inL, outL);
      const d = byStart.get(key(ex, ey, nd));
      if (d === undefined) throw new Error(`band stitch: no outline of label ${L} leaves corner (${ex}, ${ey}) in direction ${nd}`);
      next[c] = d;
      hasPrev[d] = 1;
      const first = chains[d].links[0];
      first.straight = nd === ed;
      first.saddle = !inL && outL;
      union(group, chains[d].group);
    }
    const seen = new Uint8Array(m), open: Chain[] = [];
    for (let c = 0; c < m; c++) {
      if (hasPrev[c] || seen[c]) continue;
      const head = chains[c], links: Link[] = [];
      let t = c;
      for (;;) { seen[t] = 1; for (const l of chains[t].links) links.push(l); if (next[t] < 0) break; t = next[t]; }
      const tail = chains[t];
      open.push({ group: head.group, links, sx: head.sx, sy: head.sy, sd: head.sd, ex: tail.ex, ey: tail.ey, ed: tail.ed });
    }
    for (let c = 0; c < m; c++) {
      if (seen[c]) continue;
      const links: Link[] = [];
      for (let t = c; !seen[t]; t = next[t]) { seen[t] = 1; for (const l of chains[t].links) links.push(l); }
      closeCycle(root(chains[c].group), links, H);
    }
    return open;
  }

  /** Packs the open paths' runs of this band into one store: they are held until the next band, or many more. */
  private packOpen(): void {
    let size = 0;
    for (const c of this.open) for (const l of c.links) if (!l.packed) size += packedSize(l.n);
    const store = new Int32Array(size);
    let at = 0;
    for (const c of this.open) {
      for (const l of c.links) {
        if (l.packed) continue;
        const from = at;
        at = pack(l.data, l.at, l.n, 0, store, at);
        l.data = store; l.at = from; l.packed = true;
      }
    }
  }
}

/** Vertices [lo, n − 1) of a run into `ring` from position o; returns where they end. */
function runInto(l: Link, lo: number, ring: Int32Array, o: number): number {
  let src = l.data, at = l.at;
  if (l.packed) {
    src = new Int32Array(2 * l.n);
    unpack(l.data, l.at, l.n, src, 0);
    at = 0;
  }
  ring.set(src.subarray(2 * (at + lo), 2 * (at + l.n - 1)), 2 * o);
  return o + l.n - 1 - lo;
}

/** A closed walk, its runs in order: started at its first corner in raster order and cut at pinches into the group's rings. */
function closeCycle(g: Group, links: Link[], H: number): void {
  let n = 0;
  for (const l of links) n += l.n - 1 - (l.straight ? 1 : 0);
  const ring = new Int32Array(2 * n), marks: number[] = [];
  let o = 0;
  for (const l of links) {
    if (l.saddle && !l.straight) marks.push(o);
    o = runInto(l, l.straight ? 1 : 0, ring, o);
  }
  let first = 0;
  for (let i = 1; i < n; i++) {
    const y = ring[2 * i + 1], fy = ring[2 * first + 1];
    if (y < fy || (y === fy && ring[2 * i] < ring[2 * first])) first = i;
  }
  const walk = new Int32Array(2 * n);
  walk.set(ring.subarray(2 * first));
  walk.set(ring.subarray(0, 2 * first), 2 * (n - first));
  const saddles = Int32Array.from(marks, (i) => (i - first + n) % n);
  const table = new RingTable();
  closeWalk(table, g.label, walk, n, saddles, saddles.length, H + 1);
  const loops = table.result();
  for (let k = 0; k < loops.count; k++) {
    const data = new Int32Array(packedSize(loops.length[k]));
    pack(loops.xy, loops.start[k], loops.length[k], 0, data, 0);
    g.rings.push({ data, at: 0, n: loops.length[k], area2: loops.area2[k], ky: walk[1], kx: walk[0], sub: k });
  }
}

/** Unit edges of a ring along cut line y from px to qx, L on one side only: each unbroken run of them is a chain. */
function keptRuns(rows: BandRows, L: number, px: number, qx: number, y: number, g: Group, out: Chain[]): void {
  const step = qx > px ? 1 : -1;
  let runStart = -1;
  for (let x = px; x !== qx; x += step) {
    const c = step > 0 ? x : x - 1;
    const kept = !(pixel(rows, c, y - 1) === L && pixel(rows, c, y) === L);
    if (kept && runStart < 0) runStart = x;
    if (!kept && runStart >= 0) { out.push(chainOf(g, Int32Array.of(runStart, y, x, y), 0, 2)); runStart = -1; }
  }
  if (runStart >= 0) out.push(chainOf(g, Int32Array.of(runStart, y, qx, y), 0, 2));
}

/** The group's piece: its one outer ring, then its holes in the order a whole trace adds them. */
function pieceOf(g: Group): HeldPiece {
  const outer = g.rings.filter((r) => r.area2 > 0);
  if (outer.length !== 1) throw new Error(`band stitch: a piece of label ${g.label} has ${outer.length} outer rings`);
  const holes = g.rings.filter((r) => r.area2 <= 0).sort((p, q) => p.ky - q.ky || p.kx - q.kx || p.sub - q.sub);
  return { label: g.label, top: g.top, left: g.left, rings: [outer[0], ...holes] };
}
