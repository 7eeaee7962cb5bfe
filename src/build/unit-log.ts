// The finished units of a build in its work directory: each process appends unit markers to a log of its own (with
// the units' records for the level above and preview patches in a data file beside it), so finishing a unit costs
// two appends instead of making, renaming and later deleting three files.
import { randomBytes } from 'node:crypto';
import type { WorkDir } from '../io/workdir.js';
import type { PatchArea } from '../raster/paint.js';
import { WorkStateError } from '../report/errors.js';
import type { FormatCount } from '../report/types.js';
import type { UnitStore } from '../stages/partition.js';

/** What one finished unit leaves in the work directory: its statistics and its features reduced for the level above. */
export interface UnitMarker {
  key: string;
  byZoom: Record<string, { json: FormatCount; pbf: FormatCount; features: number }>;
  largest: { path: string; bytes: number } | null;
  pointified: number[][];
  /** Per zoom, per layer: the unit's own features that zoom draws. */
  kept: number[][];
  /** Per layer: the unit's own features, drawn or not. */
  offered: number[];
  /** Per zoom: the threshold its tiles need to fit the budget, where one does not (0: all fit). */
  needs: number[];
  /** The finest zoom where a tile's spared features alone took too much of the budget (sparing must end there), else -1. */
  unspare: number;
  /** The tiles it wrote below the finest zoom: a budget correction removes them before the unit is tiled again. */
  coarse: string[];
  notInPbf: number;
  /**
   * Next-level key → byte length of its binary records (record.ts), which lie back to back in the log's data file;
   * with a third number, the same bytes as that earlier entry's, written once (a record shared by several cells).
   */
  next: ([string, number] | [string, number, number])[];
  /** With --preview, at level 0: where its patch lies on the plane's preview grid (the pixels follow the records). */
  preview?: PatchArea;
}

/**
 * A log frame: a unit finished (its data at `at`: records, then `preview` bytes of patch), or units to tile again;
 * `plan`: the id of the plan it was written under (absent in logs of earlier versions).
 */
type Frame = ({ op: 'add'; level: number; marker: UnitMarker; at: number; preview: number } | { op: 'remove'; units: [number, string][] }) & { plan?: string };

/** Where a finished unit's marker and data are. */
interface Entry { log: string; frameAt: number; jsonLength: number; at: number; records: number; preview: number }

const DIR = 'units';
/** Frame head: magic, JSON length, FNV-1a of the JSON (a cut or foreign frame ends the log it is in). */
const MAGIC = 0x4c4d554d;
const HEAD = 12;

/**
 * The unit markers of a work directory. Logs are named `GEN-TAG`: a process appends to a new generation, after every
 * log it found, so a later run's removals and markers override an earlier one's; shards running at once share a
 * generation, and each unit has one shard. The data of a marker is appended before its frame, so a frame read back
 * means its data is whole; a kill mid-append leaves a cut frame, which ends that log (the unit is tiled again).
 * Frames of another plan (a log copied in from another build's work directory without its shard's marker) are
 * passed over: their units are not this plan's, and are tiled again rather than trusted.
 */
export class UnitLog {
  private readonly index = new Map<string, Entry>();
  private readonly name: string;
  private logSize = 0;
  private dataSize = 0;

  constructor(private readonly work: WorkDir, private readonly plan?: string) {
    const logs = work.list(DIR).filter((n) => n.endsWith('.log')).map((n) => n.slice(0, -4))
      .sort((a, b) => generation(a) - generation(b) || (a < b ? -1 : a > b ? 1 : 0));
    for (const log of logs) this.load(log);
    const gen = logs.length > 0 ? generation(logs[logs.length - 1]) + 1 : 0;
    this.name = `${String(gen).padStart(6, '0')}-${randomBytes(4).toString('hex')}`;
  }

  has(level: number, key: string): boolean {
    return this.index.has(id(level, key));
  }

  /** Finished units of `level`. */
  count(level: number): number {
    let n = 0;
    for (const k of this.index.keys()) if (k.startsWith(`${level}/`)) n++;
    return n;
  }

  /**
   * Records a finished unit: its records for the level above and its preview patch, then its marker, which therefore
   * means the unit never needs redoing. `next` are the records, in the order of `marker.next`.
   */
  write(level: number, marker: UnitMarker, next: readonly Uint8Array[], preview?: Uint8Array): void {
    // A record several cells of the level above share (the whole of a class spanning the slide) is one buffer in
    // `next`: written once, the others point at it. Written per cell, one unit's records passed 2 GiB.
    const first = new Map<Uint8Array, number>();
    const once: Uint8Array[] = [];
    next.forEach((b, i) => { if (!first.has(b)) { first.set(b, i); once.push(b); } });
    const entries = marker.next.map(([key, length], i): UnitMarker['next'][number] => {
      const same = first.get(next[i]);
      return same !== undefined && same !== i ? [key, length, same] : [key, length];
    });
    const data = preview ? [...once, preview] : once;
    const frame: Frame = { op: 'add', level, marker: { ...marker, next: entries }, at: this.dataSize, preview: preview?.byteLength ?? 0, plan: this.plan };
    if (data.length > 0) {
      this.work.append(dataFile(this.name), data);
      this.dataSize += data.reduce((n, b) => n + b.byteLength, 0);
    }
    this.record(frame);
  }

  /** Every finished unit, as [level, key]. */
  finished(): [number, string][] {
    return [...this.index.keys()].map((k) => {
      const slash = k.indexOf('/');
      return [Number(k.slice(0, slash)), k.slice(slash + 1)];
    });
  }

  /** Forgets that these units were finished, so that they are tiled again. */
  remove(units: readonly [number, string][]): void {
    if (units.length > 0) this.record({ op: 'remove', units: [...units], plan: this.plan });
  }

  /**
   * The marker of a finished unit. With a store, the unit's records for the level above go into it as the marker is
   * read, and leave the marker (`next` is emptied). A missing marker or missing records are a WorkStateError naming the unit.
   */
  read(level: number, key: string, store?: Pick<UnitStore, 'append'>): UnitMarker {
    const e = this.index.get(id(level, key));
    const json = e && this.work.readRange(logFile(e.log), e.frameAt + HEAD, e.jsonLength);
    if (e === undefined || json === undefined) {
      throw new WorkStateError(`the marker of unit ${key} (level ${level}) is missing from ${this.where()}: the unit is not finished; run the build (or its shard) again`, this.work.root);
    }
    const m = (JSON.parse(new TextDecoder().decode(json)) as Frame & { op: 'add' }).marker;
    if (store && m.next.length > 0) {
      const bytes = this.work.readRange(dataFile(e.log), e.at, e.records);
      if (bytes === undefined) throw new WorkStateError(`the records of unit ${key} (level ${level}) for the level above are missing from ${this.where()}`, this.work.root);
      // The same view for an entry that repeats another: the store keeps such a record once, as it came.
      const views: Uint8Array[] = [];
      let at = 0;
      for (const [k, length, same] of m.next) {
        const view = same === undefined ? bytes.subarray(at, (at += length)) : views[same];
        views.push(view);
        store.append(k, view);
      }
    }
    m.next = [];
    return m;
  }

  /** The preview patch of a level-0 unit whose marker has a preview area. */
  preview(key: string): Uint8Array {
    const e = this.index.get(id(0, key));
    const bytes = e && e.preview > 0 ? this.work.readRange(dataFile(e.log), e.at + e.records, e.preview) : undefined;
    if (bytes === undefined) throw new WorkStateError(`the preview patch of unit ${key} is missing from ${this.where()}`, this.work.root);
    return bytes;
  }

  /** Appends a frame to this process's log, then applies it to the index as a log read back would. */
  private record(frame: Frame): void {
    const json = new TextEncoder().encode(JSON.stringify(frame));
    const head = new Uint8Array(HEAD);
    const view = new DataView(head.buffer);
    view.setUint32(0, MAGIC, true);
    view.setUint32(4, json.byteLength, true);
    view.setUint32(8, fnv1a(json), true);
    this.work.append(logFile(this.name), [head, json]);
    this.apply(this.name, frame, this.logSize, json.byteLength);
    this.logSize += HEAD + json.byteLength;
  }

  /** Replays one log into the index, up to its first cut or unreadable frame (frames of another plan are passed over). */
  private load(log: string): void {
    const bytes = this.work.readBytes(logFile(log));
    if (bytes === undefined) return;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = 0; at + HEAD <= bytes.byteLength;) {
      const length = view.getUint32(at + 4, true);
      const end = at + HEAD + length;
      if (view.getUint32(at, true) !== MAGIC || end > bytes.byteLength) return;
      const json = bytes.subarray(at + HEAD, end);
      if (fnv1a(json) !== view.getUint32(at + 8, true)) return;
      this.apply(log, JSON.parse(new TextDecoder().decode(json)) as Frame, at, length);
      at = end;
    }
  }

  /** The index after frame `frame`, whose JSON of `jsonLength` bytes lies in `log` at `frameAt` + HEAD. */
  private apply(log: string, frame: Frame, frameAt: number, jsonLength: number): void {
    if (frame.plan !== undefined && this.plan !== undefined && frame.plan !== this.plan) return;
    if (frame.op === 'remove') {
      for (const [level, key] of frame.units) this.index.delete(id(level, key));
      return;
    }
    const records = frame.marker.next.reduce((n, [, b, same]) => n + (same === undefined ? b : 0), 0);
    this.index.set(id(frame.level, frame.marker.key), { log, frameAt, jsonLength, at: frame.at, records, preview: frame.preview });
  }

  private where(): string {
    return this.work.root ?? 'the work directory';
  }
}

function id(level: number, key: string): string {
  return `${level}/${key}`;
}

function generation(log: string): number {
  return Number.parseInt(log, 10) || 0;
}

function logFile(log: string): string {
  return `${DIR}/${log}.log`;
}

function dataFile(log: string): string {
  return `${DIR}/${log}.data`;
}

/** 32-bit FNV-1a: enough to tell a frame from the zeros or garbage a cut write may leave. */
function fnv1a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}
