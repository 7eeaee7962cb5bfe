// A label's pieces, traced band by band, gathered into its one feature and given in the order of the mask traced whole.
import type { LabelParts } from './features.js';
import type { PieceShape } from './label-pieces.js';
import { pack, packedSize, unpack } from './outline-pack.js';
import type { LabelRings } from './trace.js';

/** A label's feature as the mask source gives it: rings, the label's parts of them, and the row to add to their y. */
export type GatheredLabel = [LabelRings, LabelParts, number];

/**
 * Where outlines held past the gather's budget go (a file in the build's spill folder: src/io/outline-spill.ts): a
 * band's outlines are written once, whole, and read back one label's part at a time as that label is given.
 */
export interface OutlineSpill {
  /** Writes `data` after what was written before; returns the byte it starts at. */
  write(data: Int32Array): number;
  /** Fills `into` with the numbers written from byte `at` on. */
  read(at: number, into: Int32Array): void;
  /** Lets go of what was written (a file is removed). */
  close(): void;
}

/** Outlines held past `bytes` go to the spill `open` makes, the first time they do. */
export interface OutlineBudget { bytes: number; open(): OutlineSpill }

/** The outlines of one band's pieces of labels open past it: in memory, or in the spill from byte `at`. */
class Band {
  /** Labels with pieces here, not given yet: once none, the band is let go. */
  refs = 0;
  at = -1;
  constructor(public data: Int32Array | undefined) {}
}

/** A ring's twice-area kept as the two halves of its float64, so a spilled ring reads back the very number. */
const AREA = new Float64Array(1), AREA_HALVES = new Int32Array(AREA.buffer);
/** Numbers a kept ring takes before its packed vertices (`pack`): its vertex count and its twice-area. */
const RING_HEAD = 3;

/** The most numbers of a spilled band's part read back into the one array kept for them (4 MiB). */
const SCRATCH_KEPT = 1 << 20;

/** Where a label's part of a band is to be read: the numbers, and the first of them. */
type Chunk = [Int32Array, number];

/**
 * The pieces of a label given so far: those of the band being given as its rings' indexes (`given`), those of bands
 * before copied (`keep`) into their band's store, as the band's rings are let go once it is given. A ring is kept as
 * its vertex count, its twice-area, then its vertices packed (`pack`: 4 bytes a vertex, y from the mask's top). A label's rings of one band lie
 * together, so it holds three numbers a band it reaches (`bands`, `at`, `ints`), not four a ring: a mask numbered
 * afresh in each tile of a whole slide holds nine million rings.
 */
class Held {
  private given: number[][] = [];
  private rings: LabelRings | undefined;
  private from = 0;
  readonly bands: Band[] = [];
  private readonly at: number[] = [];
  private readonly ints: number[] = [];
  private kept = 0;
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
    if (rings !== undefined) for (const polygon of this.given) for (const r of polygon) n += RING_HEAD + packedSize(rings.length[r]);
    return n;
  }

  /** Keeps the pieces of the band given last in `band`'s store from `at` (`size` numbers). */
  keep(band: Band, at: number): void {
    const rings = this.rings, store = band.data;
    if (rings === undefined || store === undefined) return;
    const begin = at;
    let vertices = 0;
    for (const polygon of this.given) {
      for (const r of polygon) {
        const n = rings.length[r];
        AREA[0] = rings.area2[r];
        store[at++] = n;
        store[at++] = AREA_HALVES[0];
        store[at++] = AREA_HALVES[1];
        at = pack(rings.xy, rings.start[r], n, this.from, store, at);
        vertices += n;
        this.kept++;
      }
    }
    band.refs++;
    this.bands.push(band);
    this.at.push(begin);
    this.ints.push(at - begin);
    this.given = [];
    this.rings = undefined;
    this.copied += vertices;
  }

  /**
   * The label's feature, given once: on the band's rings when it lies in that band alone, else on the kept rings,
   * each band's part of them where `read` finds it.
   */
  feature(read: (band: Band, at: number, ints: number) => Chunk): GatheredLabel {
    if (this.bands.length === 0 && this.rings !== undefined) {
      const rings = this.rings;
      this.rings = undefined;
      return [rings, partsOf(rings, this.label, this.given), this.from];
    }
    const rest = this.size();
    if (rest > 0) this.keep(new Band(new Int32Array(rest)), 0);
    const count = this.kept;
    const start = new Float64Array(count), length = new Uint32Array(count), area2 = new Float64Array(count), xy = new Int32Array(2 * this.copied);
    const polygons: number[][] = [];
    for (let b = 0, k = 0, o = 0; b < this.bands.length; b++) {
      const [store, first] = read(this.bands[b], this.at[b], this.ints[b]);
      for (let at = first, end = first + this.ints[b]; at < end; k++) {
        const n = store[at++];
        AREA_HALVES[0] = store[at++];
        AREA_HALVES[1] = store[at++];
        start[k] = o;
        length[k] = n;
        area2[k] = AREA[0];
        o = unpack(store, at, n, xy, o);
        at += packedSize(n);
        // An outer ring starts each polygon, its holes follow it.
        if (area2[k] > 0) polygons.push([k]); else polygons[polygons.length - 1].push(k);
      }
    }
    const rings: LabelRings = { count, label: new Uint32Array(count).fill(this.label), start, length, area2, xy };
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
 * bottom, are held as outlines (copied out of their bands) to its end, and so is every label after them, and so is
 * nearly every label of a mask numbered afresh in each tile. Outlines held past the `budget`'s bytes go to its spill,
 * every band of them then held, and are read back as their labels are given: the features are the same.
 */
export class LabelGather {
  private readonly open = new Map<number, Held>();
  private queue: Held[] = [];
  private head = 0;
  /** The bands held in memory, and the bytes of their stores. */
  private readonly held = new Set<Band>();
  private heldBytes = 0;
  private spill: OutlineSpill | undefined;
  /** A spilled band's part read back for one label: as large as the largest read. */
  private scratch = new Int32Array(0);
  /** Bytes of outlines written to the spill. */
  spilled = 0;

  constructor(private readonly lastRow: (label: number) => number, private readonly height: number, private readonly budget?: OutlineBudget) {}

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
      const feature = h.feature((band, at, ints) => this.chunk(band, at, ints));
      // Let go of the band stores (a store is shared by the labels open in its band), whatever still holds this label.
      for (const band of h.bands) if (--band.refs === 0) this.letGo(band);
      h.bands.length = 0;
      yield feature;
    }
    // The labels given are let go from the queue: at once when all are, else once they are half of it.
    if (this.head === this.queue.length || (this.head > 1024 && 2 * this.head > this.queue.length)) { this.queue = this.queue.slice(this.head); this.head = 0; }
    // The band's pieces of labels still open, kept in one store: a mask numbered afresh has a million pieces held.
    const keep = touched.filter((h) => this.open.get(h.label) === h);
    const sizes = keep.map((h) => h.size());
    const band = new Band(new Int32Array(sizes.reduce((n, size) => n + size, 0)));
    for (let k = 0, at = 0; k < keep.length; at += sizes[k++]) keep[k].keep(band, at);
    if (band.refs === 0) return;
    this.held.add(band);
    this.heldBytes += (band.data as Int32Array).byteLength;
    if (this.budget !== undefined && this.heldBytes > this.budget.bytes) this.spillHeld(this.budget);
  }

  /** Lets go of the spill (its file removed), whatever is still open: the mask is read, or its read failed. */
  close(): void {
    this.spill?.close();
    this.spill = undefined;
  }

  /** Writes every band held to the spill, oldest first, and lets go of their stores. */
  private spillHeld(budget: OutlineBudget): void {
    const spill = (this.spill ??= budget.open());
    for (const band of this.held) {
      const data = band.data as Int32Array;
      band.at = spill.write(data);
      band.data = undefined;
      this.spilled += data.byteLength;
    }
    this.held.clear();
    this.heldBytes = 0;
  }

  /** Where a label's `ints` numbers from `at` in `band` are: its store, or read back from the spill. */
  private chunk(band: Band, at: number, ints: number): Chunk {
    if (band.data !== undefined) return [band.data, at];
    // A class's part of a band may be millions of vertices: read into numbers of its own, not kept past its feature.
    const into = ints > SCRATCH_KEPT ? new Int32Array(ints) : this.scratch.length >= ints ? this.scratch : (this.scratch = new Int32Array(Math.max(ints, 2 * this.scratch.length)));
    (this.spill as OutlineSpill).read(band.at + 4 * at, into.subarray(0, ints));
    return [into, 0];
  }

  private letGo(band: Band): void {
    if (band.data !== undefined && this.held.delete(band)) this.heldBytes -= band.data.byteLength;
    band.data = undefined;
  }
}
