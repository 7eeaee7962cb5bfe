// Partition stage: work-unit records grouped by key, held in memory below a budget and spilled to files above it.
import fs from 'node:fs';
import path from 'node:path';
import { grown } from '../bytes.js';
import { appendParts, makeDirectory } from '../io/dirs.js';
import { describeFsError } from '../report/errors.js';
import { largeRecords, partialRecord, recordPieces, setHome } from './record.js';
import { centroidIn, nearFarReaching, piecesNear, type Pieces } from './record-stream.js';
import type { Rect } from '../tiling/clip.js';
import { withinReach } from '../tiling/reach.js';
import { pointerRecord, SHARED_FILE } from './shared-records.js';
import { cellKey, compareUnitKeys, unitFileName, unitKeyOfFileName } from './unit-key.js';

/**
 * Records of work units (see record.ts). Appends arrive in a fixed order (input order), so a unit's records are in
 * sequence order. A spilled unit is handed to a worker as a file path; an in-memory one as its chunks of bytes.
 */
export type UnitSource = { path: string } | { chunks: Uint8Array[] };

export interface UnitStore {
  append(key: string, bytes: Uint8Array): void;
  /** Keys in sorted order. */
  keys(): string[];
  /** Where a unit's records are: a file to read, or the bytes themselves, which then leave the store. */
  take(key: string): UnitSource;
  /** Like take, but the records stay (another unit reads them too). */
  peek(key: string): UnitSource;
  close(): void;
}

/**
 * Spilled records wait in memory up to this many bytes, then go to their files together: appending each batch's
 * records to each unit's file opened and closed that file 190,000 times at 1,000,000 cells. Small beside the
 * budget, as every spilled store of a build (one per level) may hold this much.
 */
const SPILL_WRITES = 8 << 20;

/**
 * Keeps records in memory until they pass `budget` bytes, then moves everything to `dir` and appends there.
 * The switch happens once: mixing would make the reading side depend on timing.
 */
export class SpillingStore implements UnitStore {
  private mem = new Map<string, Uint8Array[]>();
  /** Spilled records not yet in their files (at most SPILL_WRITES bytes). */
  private pending = new Map<string, Uint8Array[]>();
  private pendingBytes = 0;
  private sizes = new Map<string, number>();
  private bytes = 0;
  private spilled = false;
  private readonly known = new Set<string>();
  /** Bytes appended per key, in memory or spilled: how heavy each unit's records are. */
  private readonly totals = new Map<string, number>();
  /** Bytes appended to each unit's file, pointers in place of shared records: what the file holds once flushed. */
  private readonly written = new Map<string, number>();
  /**
   * Records appended under more than one key (`RecordRouter.take`'s shared records): spilled once, to SHARED_FILE (at
   * the offset kept here), with a pointer in each unit's file; `take` hands out copies.
   */
  private readonly appended = new WeakSet<Uint8Array>();
  private readonly shared = new WeakSet<Uint8Array>();
  private readonly sharedAt = new WeakMap<Uint8Array, number>();
  private sharedBytes = 0;
  /** Per key, its records of SHARED_RECORD bytes or more: bytes and the larger side of the box (`wideBytesOf`). */
  private readonly large = new Map<string, Array<[number, number]>>();
  private readonly largeIn = new WeakMap<Uint8Array, Array<[number, number]>>();

  /**
   * `fresh` starts from nothing (records an interrupted run left would otherwise be appended to); `existing` reads the
   * unit files another process planned, never appending to or removing them. `measureWide`: level 0's store, whose
   * large records the plan weighs (`wideBytesOf`); the levels above are never asked.
   */
  constructor(private readonly dir: string, private readonly budget: number, private readonly mode: 'fresh' | 'existing' = 'fresh', private readonly measureWide = false) {
    if (mode === 'existing') {
      this.spilled = true;
      for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) if (f.endsWith('.rec')) this.known.add(unitKeyOfFileName(f.slice(0, -4)));
      return;
    }
    spillIo(dir, () => fs.rmSync(dir, { recursive: true, force: true }));
    if (budget <= 0) this.spill();
  }

  get isSpilled(): boolean { return this.spilled; }

  /** Bytes written to SHARED_FILE so far. */
  get sharedSize(): number { return this.sharedBytes; }

  append(key: string, bytes: Uint8Array): void {
    this.known.add(key);
    this.totals.set(key, (this.totals.get(key) ?? 0) + bytes.byteLength);
    if (this.appended.has(bytes)) this.shared.add(bytes); else this.appended.add(bytes);
    if (this.measureWide && bytes.byteLength >= SHARED_RECORD) {
      let found = this.largeIn.get(bytes);
      if (found === undefined) this.largeIn.set(bytes, (found = largeRecords(bytes, SHARED_RECORD)));
      for (const r of found) pushTo(this.large, key, r);
    }
    if (this.spilled) {
      pushTo(this.pending, key, bytes);
      this.pendingBytes += bytes.byteLength;
      if (this.pendingBytes > SPILL_WRITES) this.flush();
      return;
    }
    pushTo(this.mem, key, bytes);
    this.sizes.set(key, (this.sizes.get(key) ?? 0) + bytes.byteLength);
    this.bytes += bytes.byteLength;
    if (this.bytes > this.budget) this.spill();
  }

  /** Moves every in-memory unit to its file. */
  spill(): void {
    if (this.spilled) return;
    spillIo(this.dir, () => makeDirectory(this.dir));
    this.pending = this.mem;
    this.flush();
    this.mem = new Map();
    this.sizes.clear();
    this.bytes = 0;
    this.spilled = true;
  }

  keys(): string[] {
    return [...this.known].sort(compareUnitKeys);
  }

  /** Bytes of the records under `key` (0 for an unknown key). */
  bytesOf(key: string): number {
    const known = this.totals.get(key);
    if (known !== undefined) return known;
    // Records another process planned: their file says.
    try { return fs.statSync(this.file(key)).size; } catch { return 0; }
  }

  /**
   * Bytes of the records under `key` whose box is `side` or more across (of those of SHARED_RECORD bytes or more):
   * a class of a class mask across the slide, which every finer unit of the cell would read whole.
   */
  wideBytesOf(key: string, side: number): number {
    let n = 0;
    for (const [bytes, across] of this.large.get(key) ?? []) if (across >= side) n += bytes;
    return n;
  }

  /** Bytes of the file of `key`'s records as this store wrote it, after `flush` (0 for a key it wrote nothing for). */
  fileBytesOf(key: string): number {
    return this.written.get(key) ?? 0;
  }

  /**
   * Appends the spilled records waiting in memory to their units' files (one open per unit and flush, not one per
   * batch that sent it records): past SPILL_WRITES, before a read, and for another process (`plan`, then shards).
   */
  flush(): void {
    for (const [key, list] of this.pending) {
      const file = this.file(key);
      const parts = list.map((c) => (this.shared.has(c) ? this.pointerTo(c) : c));
      spillIo(file, () => appendParts(file, parts));
      this.written.set(key, parts.reduce((n, p) => n + p.byteLength, this.written.get(key) ?? 0));
    }
    this.pending = new Map();
    this.pendingBytes = 0;
  }

  /** A pointer to shared records, written to SHARED_FILE the first time. */
  private pointerTo(c: Uint8Array): Uint8Array {
    let at = this.sharedAt.get(c);
    if (at === undefined) {
      const file = path.join(this.dir, SHARED_FILE);
      spillIo(file, () => appendParts(file, [c]));
      at = this.sharedBytes;
      this.sharedBytes += c.byteLength;
      this.sharedAt.set(c, at);
    }
    return pointerRecord(at, c.byteLength);
  }

  take(key: string): UnitSource {
    if (this.spilled) {
      this.flush();
      return { path: this.file(key) };
    }
    // Taken records move to a worker: one that other units hold too goes as a copy.
    const chunks = (this.mem.get(key) ?? []).map((c) => (this.shared.has(c) ? c.slice() : c));
    this.mem.delete(key);
    this.bytes -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
    return { chunks };
  }

  peek(key: string): UnitSource {
    if (this.spilled) {
      this.flush();
      return { path: this.file(key) };
    }
    return { chunks: [...(this.mem.get(key) ?? [])] };
  }

  private file(key: string): string {
    return path.join(this.dir, recordFileName(key));
  }

  /** Drops the records, and in `fresh` mode the folder (and the one above when it is left empty: --tmp-dir's own). */
  close(): void {
    this.mem.clear();
    this.pending.clear();
    if (this.mode !== 'fresh') return;
    try {
      fs.rmSync(this.dir, { recursive: true, force: true });
      fs.rmdirSync(path.dirname(this.dir));
    } catch {
      // Cleaning up after a failure must not hide it: what is left is in a folder of the tool's own.
    }
  }
}

/** The name of the file a spilled unit's records go to (in the store's folder). */
export function recordFileName(key: string): string {
  return `${unitFileName(key)}.rec`;
}

function pushTo<T>(lists: Map<string, T[]>, key: string, item: T): void {
  const list = lists.get(key);
  if (list) list.push(item); else lists.set(key, [item]);
}

/** Runs one file-system step on spilled records; a failure (disk full, read-only, a file in the way) names the path. */
function spillIo(file: string, step: () => void): void {
  try {
    step();
  } catch (err) {
    throw describeFsError(err, file, 'spilled work units; --tmp-dir sets where they go');
  }
}

/** Records of this many bytes or more placed in several cells are shared between them (`RecordRouter.take`). */
export const SHARED_RECORD = 64 << 10;

/** Flags of a placement: the record's home cell; a large record, kept apart (`RecordRouter.large`). */
const HOME_PLACE = 1, LARGE_PLACE = 2;

/**
 * Routes records to the cells they meet, then hands out each cell's records in a buffer of its own (transferable).
 * A record is kept once in a scratch buffer the router reuses from batch to batch, whatever the number of cells it
 * meets; a cell's buffer is made once, at its size. Growing a buffer per cell and copying it out at the end faulted in
 * about three times the records' bytes of fresh memory per batch, in every worker. A large record (SHARED_RECORD
 * bytes or more) is kept in a buffer of its own instead, handed out as it is: a class of a class mask and its pieces
 * for a hundred cells (345 MB) were copied into a scratch that doubled to 512 MB, then out again, 1.2 GB at once.
 */
export class RecordRouter {
  /** What the scratch keeps between tasks at most: a task with a huge record does not hold its memory for the rest. */
  private static readonly KEPT = 8 << 20;
  private scratch = new Uint8Array(1 << 16);
  /** The scratch's numbers (records in it start 8-byte aligned): where a large multi-geometry's pieces are read. */
  private f64 = new Float64Array(this.scratch.buffer);
  private used = 0;
  /**
   * Per placement, four numbers: the cell's index in `keys`, where the record is in `scratch` (a large one: its index
   * in `large`), its length, and flags (HOME_PLACE, LARGE_PLACE).
   */
  private places = new Uint32Array(1 << 14);
  /** The batch's large records, each in a buffer of its own. */
  private large: Uint8Array[] = [];
  private placed = 0;
  private readonly keys = new Map<string, number>();

  /**
   * Adds one feature's record to every cell (of side `cell` pixels, indexes 0..last) of the plane whose unit-key
   * prefix is `prefix` that its bbox plus `pad` meets, or that lies within `round` of the bbox (a point's circle:
   * `circlePad`); the cell holding the bbox centre is its home, where it is counted once. Returns how many cells the
   * box grown by the larger of the two meets; beyond `maxCells` the record goes to none of them.
   */
  route(prefix: string, record: Uint8Array, b: ArrayLike<number>, cell: number, pad: number, last = Infinity, maxCells = Infinity, round = 0): number {
    const hx = homeCell(b[0], b[2], cell, last), hy = homeCell(b[1], b[3], cell, last);
    // A circle adds the cells its distance reaches, not those of pad + radius: records no unit would place.
    const far = Math.max(pad, round), disc = round > pad;
    const x0 = Math.max(0, Math.floor((b[0] - far) / cell)), x1 = Math.min(last, Math.floor((b[2] + far) / cell));
    const y0 = Math.max(0, Math.floor((b[1] - far) / cell)), y1 = Math.min(last, Math.floor((b[3] + far) / cell));
    if (x0 > x1 || y0 > y1) return 0;
    const cells = (x1 - x0 + 1) * (y1 - y0 + 1);
    if (cells > maxCells) return cells;
    const big = record.length >= SHARED_RECORD;
    const at = big ? this.large.push(record.slice()) - 1 : this.keep(record);
    const own = big ? new Float64Array(this.large[at].buffer) : undefined;
    const pieces = cells > 1 ? recordPieces(own ?? this.f64, own ? 0 : at) : null;
    for (let cy = y0; cy <= y1; cy++) {
      for (let cx = x0; cx <= x1; cx++) {
        if (disc && !withinReach(b, { minX: cx * cell, minY: cy * cell, maxX: (cx + 1) * cell, maxY: (cy + 1) * cell }, pad, round)) continue;
        const key = cellKey(prefix, cx, cy);
        let k = this.keys.get(key);
        if (k === undefined) this.keys.set(key, (k = this.keys.size));
        const home = cx === hx && cy === hy;
        if (pieces === null || home) this.place(k, at, record.length, home, big);
        else this.placeNear(k, at, own, record.length, pieces, { minX: cx * cell - far, minY: cy * cell - far, maxX: (cx + 1) * cell + far, maxY: (cy + 1) * cell + far });
      }
    }
    return cells;
  }

  /** Copies a record into the scratch buffer; returns where it is. */
  private keep(record: Uint8Array): number {
    const at = this.used;
    if (at + record.length > this.scratch.length) {
      this.scratch = grown(this.scratch, at, record.length) as Uint8Array<ArrayBuffer>;
      this.f64 = new Float64Array(this.scratch.buffer);
    }
    this.scratch.set(record, at);
    this.used = at + record.length;
    return at;
  }

  /**
   * Places in cell `k`, which is not its home, what its stored cell and buffer `r` hold of a large multi-geometry
   * (the whole at `at` in the scratch, `pieces` from `recordPieces`): its pieces that meet `r`, or nothing when none
   * does. The whole when its centroid lies in `r` (were every piece to collapse, the point standing for it there
   * would need them all), when every piece meets `r`, or when a long piece near it reaches far beyond (copied into
   * every cell it meets, it multiplied: `nearFarReaching`). Each piece goes where it would go as a feature of its own,
   * so a unit gathering cells finds every one its tiles reach. `own`: the whole's numbers when it is large (`large[at]`).
   */
  private placeNear(k: number, at: number, own: Float64Array | undefined, length: number, pieces: Pieces, r: Rect): void {
    const big = own !== undefined;
    if (centroidIn(pieces.lod, r)) { this.place(k, at, length, false, big); return; }
    const near = piecesNear(pieces, r);
    if (near.length === 0) return;
    if (4 * near.length === pieces.boxes.length || nearFarReaching(pieces, near, r)) { this.place(k, at, length, false, big); return; }
    const part = partialRecord(own ?? this.f64, own ? 0 : at, pieces, near);
    // Made in a buffer of its own: a large one stays there.
    if (part.length >= SHARED_RECORD) this.place(k, this.large.push(part) - 1, part.length, false, true);
    else this.place(k, this.keep(part), part.length, false, false);
  }

  /**
   * Each cell's records, in the order they were routed, keys in first-seen order; the router is then empty. A cell's
   * records come in one buffer of its own, or, where it has a large record (SHARED_RECORD bytes or more), in several
   * entries under its key, the large record's buffer as it was kept; one placed in several cells (an outline across a
   * slide) the same buffer in every cell but its home, which has a copy. Copying it per cell made a 3 MB outline 1.3 GB
   * of buffers in one batch.
   */
  take(): [string, Uint8Array][] {
    const p = this.places;
    // Placements per large record: one placed more than once is shared.
    const count = new Map<number, number>();
    for (let i = 0; i < this.placed; i += 4) if (p[i + 3] & LARGE_PLACE) count.set(p[i + 1], (count.get(p[i + 1]) ?? 0) + 1);
    const isLarge = (i: number) => (p[i + 3] & LARGE_PLACE) !== 0;
    // Each cell's own bytes first, so its buffer is made once at its size; then the same counts say where to copy to.
    const fill = new Float64Array(this.keys.size);
    for (let i = 0; i < this.placed; i += 4) if (!isLarge(i)) fill[p[i]] += p[i + 2];
    const own = Array.from(fill, (n) => new Uint8Array(n));
    fill.fill(0);
    // Per cell, its entries in order: spans of its own buffer (copied out: each moves between threads whole) and shared records.
    const entries: Uint8Array[][] = Array.from({ length: this.keys.size }, () => []);
    const spanStart = new Float64Array(this.keys.size);
    for (let i = 0; i < this.placed; i += 4) {
      const k = p[i], at = p[i + 1], n = p[i + 2], home = (p[i + 3] & HOME_PLACE) !== 0;
      if (!isLarge(i)) {
        const to = fill[k];
        own[k].set(this.scratch.subarray(at, at + n), to);
        setHome(own[k], to, home);
        fill[k] = to + n;
        continue;
      }
      if (fill[k] > spanStart[k]) entries[k].push(own[k].slice(spanStart[k], fill[k]));
      spanStart[k] = fill[k];
      const record = home && (count.get(at) ?? 0) > 1 ? this.large[at].slice() : this.large[at];
      setHome(record, 0, home);
      entries[k].push(record);
    }
    const chunks: [string, Uint8Array][] = [];
    [...this.keys.keys()].forEach((key, k) => {
      // A cell without shared records hands over its whole buffer (a view of all of it moves between threads).
      if (entries[k].length === 0) { chunks.push([key, own[k]]); return; }
      if (fill[k] > spanStart[k]) entries[k].push(own[k].slice(spanStart[k], fill[k]));
      for (const e of entries[k]) chunks.push([key, e]);
    });
    this.keys.clear();
    this.large = [];
    this.used = 0;
    this.placed = 0;
    if (this.scratch.length > RecordRouter.KEPT) { this.scratch = new Uint8Array(1 << 16); this.f64 = new Float64Array(this.scratch.buffer); }
    if (this.places.length > RecordRouter.KEPT >> 2) this.places = new Uint32Array(1 << 14);
    return chunks;
  }

  private place(k: number, at: number, n: number, home: boolean, large: boolean): void {
    const i = this.placed;
    if (i === this.places.length) {
      const more = new Uint32Array(i * 2);
      more.set(this.places);
      this.places = more;
    }
    const p = this.places;
    p[i] = k; p[i + 1] = at; p[i + 2] = n; p[i + 3] = (home ? HOME_PLACE : 0) | (large ? LARGE_PLACE : 0);
    this.placed = i + 4;
  }
}

/**
 * The index of the cell (of side `cell`, indexes 0..last) holding the centre of the span [lo, hi] on one axis: a
 * record's home, where its feature is counted once, whichever cells it is stored in.
 */
export function homeCell(lo: number, hi: number, cell: number, last: number): number {
  return Math.min(last, Math.max(0, Math.floor((lo + hi) / 2 / cell)));
}
