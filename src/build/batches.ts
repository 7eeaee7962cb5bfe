// Parse batches of a build's read stage: features gathered into batches for the workers, their text in buffers reused.
import { ByteArena } from '../bytes.js';
import type { PlaneRule } from '../stages/assign.js';
import { META, type RawBatch } from '../stages/parse.js';
import { SKETCH_BLOCK } from '../stages/number-ids.js';
import type { Issue } from '../validate/issue.js';

/** A parse batch closes at 4 MiB of JSON or 4,096 features, whichever comes first (then at a sketch block's end: `full`). */
const BATCH_BYTES = 4 << 20, BATCH_FEATURES = 4096;
/** A batch's text buffer: room for a batch and the features that close it (a longer one grows it). */
const BATCH_CAPACITY = BATCH_BYTES + (BATCH_BYTES >> 2);
/** A batch of values (parsed here as soon as it closes) closes at 64: it bounds how many huge traced polygons are held. */
const BATCH_VALUES = 64;
/** A batch of values closes sooner once they hold this many vertices: 64 traced labels of a noise mask were gigabytes. */
const BATCH_VALUE_VERTICES = 1 << 20;

export interface Batch { file: string; layer: string; rule: PlaneRule; raw: RawBatch; count: number; seq0: number }

/**
 * Gathers one input's features into parse batches. JSON text goes into a buffer that moves to the worker whole, and
 * the worker hands it back with the batch's result for a later batch (`Spares`): a copy of each batch into a fresh
 * buffer cost the reading thread a copy of the whole input and a page fault per 4 KiB of it. Values (features made in
 * memory, whole-file documents) stay as they are.
 */
export class BatchBuilder {
  private readonly bytes: ByteArena;
  /** A feature of a batch size or more, alone in its batch: it moves to the worker as it is, never copied into `bytes`. */
  private alone: Uint8Array | undefined;
  private values: unknown[] = [];
  private valueVertices = 0;
  private found: Issue[][] = [];
  private meta: number[] = [];

  constructor(private readonly head: Pick<Batch, 'file' | 'layer' | 'rule'>, private readonly seq: { next: number }, private readonly spares: Spares) {
    this.bytes = new ByteArena(spares.take());
  }

  /** Past its size, text closes where a thinning sketch block ends, so no block is split by bytes (past 4×, anywhere). */
  get full(): boolean {
    const n = this.meta.length / META;
    if (this.alone !== undefined || this.values.length >= BATCH_VALUES || this.valueVertices >= BATCH_VALUE_VERTICES || this.bytes.pos >= 4 * BATCH_BYTES) return true;
    return (this.bytes.pos >= BATCH_BYTES || n >= BATCH_FEATURES) && (this.seq.next + n) % SKETCH_BLOCK === 0;
  }

  get empty(): boolean {
    return this.meta.length === 0;
  }

  /** True when a feature of this kind (text or value) cannot join the batch: take it first. */
  mixes(value: boolean): boolean {
    return !this.empty && value !== (this.values.length > 0);
  }

  addText(bytes: Uint8Array, index: number, line: number, column: number, strings: number): void {
    if (this.empty && bytes.length >= BATCH_BYTES) {
      // Its own buffer when it spans chunks; a view into a chunk (which the source may reuse) is copied once.
      this.alone = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
      this.meta.push(index, line, column, 0, bytes.length, strings);
      return;
    }
    const start = this.bytes.addBytes(bytes);
    this.meta.push(index, line, column, start, this.bytes.pos, strings);
  }

  addValue(value: unknown, index: number, line: number, column: number, found: Issue[] = [], vertices = 0): void {
    this.values.push(value);
    this.valueVertices += vertices;
    this.found.push(found);
    this.meta.push(index, line, column, 0, 0, -1);
  }

  take(): Batch {
    const meta = Float64Array.from(this.meta);
    const raw: RawBatch = this.values.length > 0 ? { values: this.values, found: this.found, meta } : { bytes: this.alone ?? this.textOut(), meta };
    this.alone = undefined;
    const b = { ...this.head, raw, count: this.meta.length / META, seq0: this.seq.next };
    this.seq.next += b.count;
    this.bytes.pos = 0;
    this.values = [];
    this.valueVertices = 0;
    this.found = [];
    this.meta = [];
    return b;
  }

  /** The batch's text, a view of a buffer that now belongs to the batch; the builder goes on in a spare one. */
  private textOut(): Uint8Array {
    const text = this.bytes.buf.subarray(0, this.bytes.pos);
    this.bytes.buf = this.spares.take();
    return text;
  }
}

/**
 * Text buffers of parse batches that workers handed back, for the next batches. At most `max` are kept (the batches
 * in flight plus the one being filled), so what a build holds never grows with its input.
 */
export class Spares {
  private readonly free: Uint8Array[] = [];
  constructor(private readonly max: number) {}

  take(): Uint8Array {
    return this.free.pop() ?? new Uint8Array(BATCH_CAPACITY);
  }

  give(buf: Uint8Array): void {
    if (buf.length >= BATCH_CAPACITY && this.free.length < this.max) this.free.push(buf);
  }
}
