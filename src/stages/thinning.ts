// Uniform thinning: tile size estimates gathered while reading (from which thresholds.ts plans each zoom's threshold),
// and the keep rule every tile applies (one decision per zoom, the same in every tile).
import { hasExtent, hasMesh, pieceBoxes, pieceCount, type FeatureTags, type TileGeometry } from '../tiling/flat.js';
import { GeometrySizer, pbfValueBytes, varintBytes } from './geometry-sizer.js';
import { NEAR_PIECES } from './record-stream.js';
import { BUFFER, DISPLAY_TILE, EXTENT } from '../tiling/space.js';
import { DistinctValues, sketchBlock } from './number-ids.js';

/** Thresholds are in [0, 2^32]: 0 keeps everything, 2^32 nothing. */
export const PRIORITY_RANGE = 4294967296;

/**
 * Deterministic thinning priority from the sequence number (murmur3's 32-bit finaliser over both halves):
 * uniform over features whatever their place or class, and never dependent on input order or timing.
 */
export function thinningPriority(seq: number): number {
  let h = (seq >>> 0) ^ Math.imul(Math.floor(seq / 4294967296) >>> 0, 0x9e3779b1);
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Whether a feature is drawn at a zoom with this threshold: its priority is at least the threshold. Thresholds never
 * fall from a zoom to a coarser one, so what a zoom draws, every finer zoom draws too.
 */
export function keeps(threshold: number, seq: number): boolean {
  return threshold === 0 || thinningPriority(seq) >= threshold;
}

/**
 * Lines and polygons at least this many display pixels across at a zoom are drawn there whatever its threshold: a
 * region annotation among a million cells is few bytes, and an overview without it misleads more than one a little
 * over the share. A feature spared at a zoom is spared at every finer zoom, so kept sets still nest.
 */
export const SPARED_PIXELS = 8;

/**
 * The share of the budget spared features may take in a tile, as the plan estimates it or a tile over the budget
 * measures it: where those SPARED_PIXELS across would take more (a zoom crowded with large outlines, a class mask's
 * regions), the zoom spares only larger ones, the smallest size that fits (`BuildPlan.spareSizes`); where none of
 * SPARE_SIZES fits, that zoom and every coarser one thin them like the rest (`BuildPlan.spareFrom`).
 */
export const SPARED_SHARE = 0.5;

/** The sparing sizes a plan chooses from: SPARED_PIXELS · 2^k display pixels for k below this (8 to 512). */
export const SPARE_SIZES = 7;

/** Whether a line or polygon with this box is at least `width` pixels across (a zoom's sparing size, in pixels). */
export function wideEnough(box: ArrayLike<number> | null, width: number): boolean {
  return box !== null && Math.max(box[2] - box[0], box[3] - box[1]) >= width;
}

/** The largest k below SPARE_SIZES for which something `extent` pixels across is SPARED_PIXELS · 2^k display pixels across where one is `pixel` wide; -1 below SPARED_PIXELS. */
export function spareClass(extent: number, pixel: number): number {
  let k = -1;
  // Doubling a power-of-two multiple of the pixel is exact: the same comparisons as `wideEnough` with a zoom's size.
  for (let w = SPARED_PIXELS * pixel; k + 1 < SPARE_SIZES && extent >= w; w *= 2) k++;
  return k;
}

/**
 * The one rule of what a zoom draws: a feature whose priority reaches the zoom's threshold, or, where the zoom spares
 * (`spares`), a line or polygon at least `width` pixels across (its sparing size). `box` is asked for only then.
 */
export function drawn(threshold: number, seq: number, spares: boolean, g: TileGeometry, box: () => ArrayLike<number> | null, width: number): boolean {
  return keeps(threshold, seq) || (spares && hasExtent(g) && wideEnough(box(), width));
}

// ───────────────────────────── estimates, gathered while reading ─────────────────────────────

/** Tiles smaller than 2^10 pixels get no estimate: a tile that small rarely nears a budget; a miss is corrected. */
export const SKETCH_MIN_LOG2 = 10;
const MAX_LOG2 = 31;
// Per tile: features, bytes (value indexes at 2 bytes), bytes², value references, values counted per feature; then
// per sparing size k (`spareClass`) the bytes, bytes² and value references of those among them of that class, which a
// zoom sparing size k or smaller draws whatever the share.
export const SPARED = 5;
const COLS = SPARED + 3 * SPARE_SIZES;

/** Per-tile sums of estimated encoded bytes, at every tile size 2^j from `minLog2` up, per plane; workers fill one per parse batch, the reading thread merges them. */
export class TileSketch {
  private readonly planes = new Map<string, SketchPlane>();
  private readonly seen = new Map<string, DistinctValues>();
  private block = -1;
  private readonly sizer: GeometrySizer;
  /** Scratch: the bytes of each piece of a feature of many (`addPieces`). */
  private pieceBytes = new Float64Array(0);
  /** Bytes of an MVT feature of the feature being added besides its geometry: id, tags, type, field headers. */
  private fixed = 0;

  constructor(readonly format: 'pbf' | 'json', readonly minLog2 = SKETCH_MIN_LOG2) {
    this.sizer = new GeometrySizer(format === 'json', (geom) => {
      const body = this.fixed + varintBytes(geom) + geom;
      return 1 + varintBytes(body) + body;
    });
  }

  /**
   * One placed feature: its plane key, flat geometry, bbox `[minX, minY, maxX, maxY]`, tags, MVT id and JSON head
   * length (used for JSON estimates only).
   */
  add(plane: string, g: TileGeometry, box: ArrayLike<number>, tags: FeatureTags, id: number, headBytes: number, seq: number): void {
    if (sketchBlock(seq) !== this.block) { this.seen.clear(); this.block = sketchBlock(seq); }
    let values = 0, counted = 0;
    for (let i = 0; i < tags.keys.length; i++) {
      let met = this.seen.get(tags.keys[i]);
      if (met === undefined) this.seen.set(tags.keys[i], (met = new DistinctValues()));
      if (!met.first(tags.values[i])) continue;
      values += pbfValueBytes(tags.values[i]);
      counted++;
    }
    const json = this.format === 'json';
    const refs = tags.keys.length;
    // Tags: a key index of 1 byte and a value index of 2 per tag (the plan corrects the value index width).
    this.fixed = 1 + varintBytes(id) + (refs > 0 ? 1 + varintBytes(refs * 3) + refs * 3 : 0) + 2 + 1;
    const pointBytes = json ? headBytes + 40 : this.sizer.leafBytes(5) + values;
    const pointable = !(g.k === 'points' && g.type === 'Point') && !hasMesh(g);
    // From tile size 2^jp on, the feature is below a display pixel: its centroid Point.
    const extent = Math.max(box[2] - box[0], box[3] - box[1]);
    const jp = pointable ? Math.max(this.minLog2, Math.floor(Math.log2(extent * DISPLAY_TILE)) + 1) : Infinity;
    // A line or polygon: what simplification ranks, and what a sparing zoom may draw whatever the share.
    const lined = hasExtent(g);
    if (jp > this.minLog2 && lined) this.sizer.rank(g);
    const cx = (box[0] + box[2]) / 2, cy = (box[1] + box[3]) / 2;
    const p = this.plane(plane);
    // A feature of many pieces is counted in each tile by its pieces there.
    const pieces = jp > this.minLog2 ? pieceCount(g) : 0;
    const many = pieces >= NEAR_PIECES ? g : undefined;
    const boxes = many && pieceBoxes(many);
    // The size doubled from one j to the next: `2 ** j` is a call to pow, per size of every feature.
    for (let j = this.minLog2, ts = 2 ** j; j <= MAX_LOG2; j++, ts *= 2) {
      let bytes = pointBytes, point = true;
      if (many && boxes && j < jp && this.addPieces(p, j, ts, many, pieces, boxes, json ? headBytes + 30 : values, refs, counted)) continue;
      if (j < jp) {
        const tol = (3 * ts) / EXTENT;
        const b = this.sizer.bytes(g, tol * tol, EXTENT / ts);
        // Collapsed at this size: the tiler keeps it visible as its centroid (when it may stand for it).
        if (this.sizer.left) { bytes = json ? headBytes + 30 + b : b > 0 ? values + b : 0; point = false; } else if (!pointable) continue;
      }
      if (bytes === 0) continue;
      const buf = (BUFFER * ts) / EXTENT;
      const tx0 = Math.max(0, Math.floor(((point ? cx : box[0]) - buf) / ts)), ty0 = Math.max(0, Math.floor(((point ? cy : box[1]) - buf) / ts));
      const tx1 = Math.floor(((point ? cx : box[2]) + buf) / ts), ty1 = Math.floor(((point ? cy : box[3]) + buf) / ts);
      // From here on the feature adds the same to tile (0, 0) at every size: counted once, for every larger size.
      if ((point || g.k === 'points') && tx1 === 0 && ty1 === 0) { addTail(p, j, bytes, refs, counted); break; }
      const spare = !point && lined ? spareClass(extent, ts / DISPLAY_TILE) : -1;
      const v = !point && lined ? this.shared(bytes, json ? headBytes + 30 : values + this.fixed, box, ts) : bytes;
      for (let ty = ty0; ty <= ty1; ty++) for (let tx = tx0; tx <= tx1; tx++) addTile(p, j, tx, ty, v, refs, counted, spare);
    }
  }

  /**
   * What one tile holds of a line or polygon of `bytes` (`own` of them its tags and header) whose box spans tiles of
   * side `ts`: beyond 2 × 2 tiles its vertices are shared among the tiles its box's edge crosses, as a piece's are
   * (`addPieces`); its tags go whole into each. Counted whole in every tile, a tissue outline of 300,000 vertices
   * 16,000 px across looked over the budget in each, and was drawn at no zoom but the finest. A tile that holds more
   * than its share (an outline crowded into one corner of its box) is measured when tiled, and its zoom corrected.
   */
  private shared(bytes: number, own: number, box: ArrayLike<number>, ts: number): number {
    const nx = Math.floor(box[2] / ts) - Math.floor(box[0] / ts) + 1, ny = Math.floor(box[3] / ts) - Math.floor(box[1] / ts) + 1;
    if (nx * ny <= 4 || bytes <= own) return bytes;
    return own + (bytes - own) / Math.min(nx * ny, 2 * (nx + ny) - 4);
  }

  /**
   * A multi-geometry of NEAR_PIECES pieces or more (`count`: a class mask's label, a gene's transcripts) at tile size
   * `ts`: each tile it reaches gets its pieces there, each as a feature of its own, since zooms that thin keep a share
   * of them (tile/pieces.ts), and its tags, `extra` and the rest of an MVT feature once. Counted whole in every tile it
   * spans, a class mask of 25,000 pieces looked 200 times a tile's budget at zoom 3 and was thinned from every zoom but
   * the finest. Its lines and polygons are spared piece by piece, each by its own size (tile/pieces.ts `drawnMany`).
   * False, with nothing added, when every piece collapses.
   */
  private addPieces(p: SketchPlane, j: number, ts: number, g: TileGeometry, count: number, boxes: Float64Array, extra: number, refs: number, counted: number): boolean {
    if (this.pieceBytes.length < count) this.pieceBytes = new Float64Array(count);
    const tol = (3 * ts) / EXTENT, buf = (BUFFER * ts) / EXTENT, bytes = this.pieceBytes;
    this.sizer.pieceBytes(g, tol * tol, EXTENT / ts, bytes);
    // Per tile: the pieces there, their bytes and the bytes' squares; then per sparing class the same of its pieces.
    const tiles = new Map<number, Float64Array>();
    const lined = hasExtent(g), pixel = ts / DISPLAY_TILE;
    for (let k = 0, b = 0; k < count; k++, b += 4) {
      const w = bytes[k];
      if (w <= 0) continue;
      const c = lined ? spareClass(Math.max(boxes[b + 2] - boxes[b], boxes[b + 3] - boxes[b + 1]), pixel) : -1;
      const tx0 = Math.max(0, Math.floor((boxes[b] - buf) / ts)), ty0 = Math.max(0, Math.floor((boxes[b + 1] - buf) / ts));
      const tx1 = Math.floor((boxes[b + 2] + buf) / ts), ty1 = Math.floor((boxes[b + 3] + buf) / ts);
      // A piece across many tiles (a class's region of half the slide) has its outline shared among the tiles its
      // box's edge crosses: counted whole in each, one such piece looked a zoom's whole budget in every tile. Not a
      // piece in the buffers of tiles it does not cross: each of those draws it whole.
      const nx = Math.floor(boxes[b + 2] / ts) - Math.floor(boxes[b] / ts) + 1, ny = Math.floor(boxes[b + 3] / ts) - Math.floor(boxes[b + 1] / ts) + 1;
      const v = w / Math.max(1, Math.min(nx * ny, 2 * (nx + ny) - 4));
      for (let ty = ty0; ty <= ty1; ty++) {
        for (let tx = tx0; tx <= tx1; tx++) {
          const key = tx * 2 ** 24 + ty;
          let sums = tiles.get(key);
          if (sums === undefined) tiles.set(key, (sums = new Float64Array(3 + 2 * SPARE_SIZES)));
          sums[0]++; sums[1] += v; sums[2] += v * v;
          if (c >= 0) { sums[3 + 2 * c] += v; sums[4 + 2 * c] += v * v; }
        }
      }
    }
    // Its tags and header go with whatever the zoom draws of it: counted with the rest.
    const fixed = extra + (this.format === 'json' ? 0 : this.sizer.leafBytes(0));
    for (const [key, sums] of tiles) {
      const tx = Math.floor(key / 2 ** 24), ty = key % 2 ** 24;
      addTile(p, j, tx, ty, fixed, refs, counted, -1);
      addSums(p, j, tx, ty, sums);
    }
    return tiles.size > 0;
  }

  private plane(key: string): SketchPlane {
    let p = this.planes.get(key);
    if (p === undefined) {
      p = { slots: new Map(), n: 0, keys: new Float64Array(64), cols: new Float64Array(64 * COLS), tail: new Float64Array(COLS * (MAX_LOG2 + 1)), lastKey: new Float64Array(MAX_LOG2 + 1).fill(-1), lastSlot: new Int32Array(MAX_LOG2 + 1) };
      this.planes.set(key, p);
    }
    return p;
  }

  /** The sums, for a worker to hand to the reading thread. */
  data(): SketchData {
    return [...this.planes].map(([plane, p]) => ({ plane, keys: p.keys.slice(0, p.n), cols: p.cols.slice(0, p.n * COLS), tail: p.tail }));
  }

  /** Adds sums gathered elsewhere (the order of merges does not change the result). */
  merge(data: SketchData): void {
    for (const d of data) {
      const p = this.plane(d.plane);
      for (let i = 0; i < d.tail.length; i++) p.tail[i] += d.tail[i];
      for (let s = 0; s < d.keys.length; s++) {
        const o = slotOf(p, d.keys[s]) * COLS;
        for (let c = 0; c < COLS; c++) p.cols[o + c] += d.cols[s * COLS + c];
      }
    }
  }

  /** Every tile of side 2^j that holds something, over all planes, as sums (the columns of `addTile`). */
  *tiles(j: number): Generator<Float64Array> {
    for (const p of this.planes.values()) {
      const origin = new Float64Array(COLS);
      for (let k = this.minLog2; k <= j; k++) for (let c = 0; c < COLS; c++) origin[c] += p.tail[k * COLS + c];
      let originSeen = false;
      for (let s = 0; s < p.n; s++) {
        const key = p.keys[s];
        if (Math.floor(key / 2 ** 48) !== j) continue;
        // A view, not a copy: a whole slide's zoom has 100,000 tiles, and copies of them all took 200 MB at once.
        const sums = p.cols.subarray(s * COLS, s * COLS + COLS);
        if (key % 2 ** 48 === 0) { originSeen = true; yield sums.map((v, c) => v + origin[c]); } else yield sums;
      }
      if (!originSeen && origin[0] > 0) yield origin;
    }
  }
}

export type SketchData = Array<{ plane: string; keys: Float64Array; cols: Float64Array; tail: Float64Array }>;

/**
 * One plane's sums: per tile key a slot of COLS sums, and per size the sums of tile (0, 0) beyond where a feature
 * reaches it whole (`tail`). `lastKey`/`lastSlot` per size: features come in input order, mostly near the one before,
 * so most land in the tile the one before did, without a lookup of its float key.
 */
interface SketchPlane { slots: Map<number, number>; n: number; keys: Float64Array; cols: Float64Array; tail: Float64Array; lastKey: Float64Array; lastSlot: Int32Array }

function slotOf(p: SketchPlane, key: number): number {
  let slot = p.slots.get(key);
  if (slot === undefined) {
    slot = p.n++;
    if (slot === p.keys.length) {
      const keys = new Float64Array(slot * 2), cols = new Float64Array(slot * 2 * COLS);
      keys.set(p.keys); cols.set(p.cols);
      p.keys = keys; p.cols = cols;
    }
    p.slots.set(key, slot);
    p.keys[slot] = key;
  }
  return slot;
}

/** A feature of `bytes` in a tile; `spare`: its sparing class (`spareClass`), -1 for none. */
function addTile(p: SketchPlane, j: number, tx: number, ty: number, bytes: number, refs: number, values: number, spare: number): void {
  const key = (j * 2 ** 24 + tx) * 2 ** 24 + ty;
  let slot = p.lastSlot[j];
  if (p.lastKey[j] !== key) { slot = slotOf(p, key); p.lastKey[j] = key; p.lastSlot[j] = slot; }
  const o = slot * COLS, c = p.cols;
  c[o]++; c[o + 1] += bytes; c[o + 2] += bytes * bytes; c[o + 3] += refs; c[o + 4] += values;
  if (spare >= 0) { const s = o + SPARED + 3 * spare; c[s] += bytes; c[s + 1] += bytes * bytes; c[s + 2] += refs; }
}

/** The pieces of one feature in a tile, without tags: count, bytes, bytes² (`sums` 0-2), then bytes and bytes² per sparing class. */
function addSums(p: SketchPlane, j: number, tx: number, ty: number, sums: Float64Array): void {
  const o = slotOf(p, (j * 2 ** 24 + tx) * 2 ** 24 + ty) * COLS, c = p.cols;
  c[o] += sums[0]; c[o + 1] += sums[1]; c[o + 2] += sums[2];
  for (let k = 0; k < SPARE_SIZES; k++) { c[o + SPARED + 3 * k] += sums[3 + 2 * k]; c[o + SPARED + 3 * k + 1] += sums[4 + 2 * k]; }
}

function addTail(p: SketchPlane, j: number, bytes: number, refs: number, values: number): void {
  const t = p.tail, o = j * COLS;
  t[o]++; t[o + 1] += bytes; t[o + 2] += bytes * bytes; t[o + 3] += refs; t[o + 4] += values;
}
