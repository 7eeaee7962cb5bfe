// A label's pieces, traced band by band, gathered into its one feature and given in the order of the mask traced whole.
import type { LabelParts } from './features.js';
import type { PieceShape } from './label-pieces.js';
import type { LabelRings } from './trace.js';

/** A label's feature as the mask source gives it: rings, the label's parts of them, and the row to add to their y. */
export type GatheredLabel = [LabelRings, LabelParts, number];

/**
 * The pieces of a label given so far: those of the band being given as its rings' indexes (`given`), those of bands
 * before copied (`keep`) into their band's store, as the band's rings are let go once it is given. A ring is kept as
 * its first vertex (y from the mask's top), whether its first edge runs along x (1) or y (0), then the coordinate each
 * further vertex changes: outlines run along pixel edges, turning at every vertex, so half of its numbers are the ones
 * before them (4 bytes a vertex, not 8).
 */
class Held {
  private given: number[][] = [];
  private rings: LabelRings | undefined;
  private from = 0;
  private readonly store: Int32Array[] = [];
  private readonly at: number[] = [];
  private readonly length: number[] = [];
  private readonly area2: number[] = [];
  /** Vertices kept. */
  private copied = 0;

  constructor(readonly label: number, readonly top: number, readonly last: number) {}

  /** Adds a piece of the band traced from row `from`; true for the band's first. */
  add(rings: LabelRings, polygon: number[], from: number): boolean {
    const first = this.rings !== rings;
    if (first) this.given = [];
    this.rings = rings;
    this.from = from;
    this.given.push(polygon);
    return first;
  }

  /** Numbers the pieces of the band given last take kept. */
  size(): number {
    const rings = this.rings;
    let n = 0;
    if (rings !== undefined) for (const polygon of this.given) for (const r of polygon) n += rings.length[r] + 2;
    return n;
  }

  /** Keeps the pieces of the band given last in `store` from `at` (`size` numbers). */
  keep(store: Int32Array, at: number): void {
    const rings = this.rings;
    if (rings === undefined) return;
    const { xy } = rings;
    let vertices = 0;
    for (const polygon of this.given) {
      for (const r of polygon) {
        const s = 2 * rings.start[r], n = rings.length[r];
        this.store.push(store);
        this.at.push(at);
        this.length.push(n);
        this.area2.push(rings.area2[r]);
        const along = xy[s + 3] === xy[s + 1] ? 1 : 0;
        store[at++] = xy[s];
        store[at++] = xy[s + 1] + this.from;
        store[at++] = along;
        // Vertex i changes x when the edge into it runs along x: every other one, from the first edge's way.
        for (let i = 1; i < n; i++) store[at++] = (i & 1) === along ? xy[s + 2 * i] : xy[s + 2 * i + 1] + this.from;
        vertices += n;
      }
    }
    this.given = [];
    this.rings = undefined;
    this.copied += vertices;
  }

  /** The label's feature, given once: on the band's rings when it lies in that band alone, else on the kept rings. */
  feature(): GatheredLabel {
    if (this.store.length === 0 && this.rings !== undefined) {
      const rings = this.rings;
      this.rings = undefined;
      return [rings, partsOf(rings, this.label, this.given), this.from];
    }
    const rest = this.size();
    if (rest > 0) this.keep(new Int32Array(rest), 0);
    const count = this.store.length;
    const start = new Float64Array(count), xy = new Int32Array(2 * (this.copied));
    const polygons: number[][] = [];
    for (let k = 0, o = 0; k < count; k++) {
      const store = this.store[k], n = this.length[k];
      let at = this.at[k], x = store[at++], y = store[at++];
      const along = store[at++];
      start[k] = o / 2;
      xy[o++] = x; xy[o++] = y;
      for (let i = 1; i < n; i++) {
        if ((i & 1) === along) x = store[at++]; else y = store[at++];
        xy[o++] = x; xy[o++] = y;
      }
      // An outer ring starts each polygon, its holes follow it.
      if (this.area2[k] > 0) polygons.push([k]); else polygons[polygons.length - 1].push(k);
    }
    const rings: LabelRings = {
      count,
      label: new Uint32Array(count).fill(this.label),
      start,
      length: Uint32Array.from(this.length),
      area2: Float64Array.from(this.area2),
      xy,
    };
    // Let go of the band stores (a store is shared by the labels open in its band), whatever still holds this label.
    this.store.length = 0;
    return [rings, partsOf(rings, this.label, polygons), 0];
  }
}

/** The label's parts: its polygons as given, its pixel count and vertices as `labelParts` counts them. */
function partsOf(rings: LabelRings, label: number, polygons: number[][]): LabelParts {
  let area2 = 0, vertices = 0;
  for (const polygon of polygons) for (const r of polygon) { area2 += rings.area2[r]; vertices += rings.length[r]; }
  return { label, polygons, area: area2 / 2, vertices };
}

/**
 * Gathers the pieces of a mask read in bands (`pieceBands`, src/io/mask-bands.ts) into one feature per label, given
 * as `labelsOf` gives them from the mask traced whole: by top row, then label; polygons in raster order of their first
 * pixels (the order a whole trace finds their outer rings in), each its outer ring, then its holes as that band's
 * trace gives them. A label is given once the bands have reached past its last row (`lastRow`, from a scan of the
 * mask's rows before) and every label before it has been: a class mask's classes, reaching from its top to its
 * bottom, are held as outlines (copied out of their bands) to its end, and so is every label after them, which is
 * what holding them costs: their vertices, not the mask's pixels.
 */
export class LabelGather {
  private readonly open = new Map<number, Held>();
  private queue: Held[] = [];
  private head = 0;

  constructor(private readonly lastRow: (label: number) => number, private readonly height: number) {}

  /**
   * Takes a band's pieces (in raster order of first pixels, their rings traced from row `from`, their top rows in
   * the rows up to `to`) and gives the labels that are then whole and next in order.
   */
  *band(rings: LabelRings, pieces: readonly PieceShape[], from: number, to: number): Generator<GatheredLabel, void, undefined> {
    const touched: Held[] = [], fresh: Held[] = [];
    for (const p of pieces) {
      let h = this.open.get(p.label);
      if (h === undefined) {
        // A label's first piece given is its top one: pieces come in raster order across the bands.
        h = new Held(p.label, p.top + from, this.lastRow(p.label));
        this.open.set(p.label, h);
        fresh.push(h);
      }
      if (h.add(rings, p.polygon, from)) touched.push(h);
    }
    // Labels first given in this band have their top rows below those of every label before.
    fresh.sort((a, b) => a.top - b.top || a.label - b.label);
    for (const h of fresh) this.queue.push(h);
    while (this.head < this.queue.length && (this.queue[this.head].last < to || to === this.height)) {
      const h = this.queue[this.head++];
      this.open.delete(h.label);
      yield h.feature();
    }
    // The labels given are let go from the queue: at once when all are, else once they are half of it.
    if (this.head === this.queue.length || (this.head > 1024 && 2 * this.head > this.queue.length)) { this.queue = this.queue.slice(this.head); this.head = 0; }
    // The band's pieces of labels still open, kept in one store: a mask numbered afresh has a million pieces held.
    const keep = touched.filter((h) => this.open.get(h.label) === h);
    const sizes = keep.map((h) => h.size());
    const store = new Int32Array(sizes.reduce((n, size) => n + size, 0));
    for (let k = 0, at = 0; k < keep.length; at += sizes[k++]) keep[k].keep(store, at);
  }
}
