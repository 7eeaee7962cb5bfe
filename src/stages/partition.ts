// Partition stage: work-unit records grouped by key, held in memory below a budget and spilled to files above it.
import fs from 'node:fs';
import path from 'node:path';
import { appendParts, makeDirectory } from '../io/dirs.js';
import { describeFsError } from '../report/errors.js';
import { largeRecords } from './record.js';
import { SHARED_RECORD } from './router.js';
import { pointerRecord, SHARED_FILE } from './shared-records.js';
import { compareUnitKeys, unitFileName, unitKeyOfFileName } from './unit-key.js';

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
