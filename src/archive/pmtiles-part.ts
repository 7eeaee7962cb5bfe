// A part of an archive on disk: tiles appended as records in the order they come, readable back into a TileIndex.
import fs from 'node:fs';
import { InputError, WorkStateError, describeFsError } from '../report/errors.js';
import { zxyToTileId } from './pmtiles-format.js';
import { HASH_BYTES, TileIndexBuilder, tileHash, type TileIndex } from './pmtiles-layout.js';

/**
 * File layout: `MUDMPRT1` (`MARK`) and a u64 at `FLUSHED_AT`: the part's size after its last flush (0: unknown), then one
 * record per write: u32 length, u32 epoch (`TileIndex.epoch`), f64 tile id, HASH_BYTES of content hash, then
 * `length` tile bytes (all little-endian). A record of length 0 removes the tile. The records say everything, so a
 * part killed while writing is read back up to its last whole record (`--resume`), and a finished part needs no
 * separate index file; the flushed size says whether records a unit's marker counts on were lost since (a part cut
 * short on disk). Records wait in a buffer until `flush` (one write call per megabyte, not per tile: a tenth of the
 * time at a million tiles).
 */
const MARK = Buffer.from('MUDMPRT1', 'latin1');
/** Where the flushed size lies, after the mark; the records start after it. */
const FLUSHED_AT = MARK.length;
const PART_HEAD = FLUSHED_AT + 8;
const RECORD_HEAD = 16 + HASH_BYTES;
const SCAN_CHUNK = 4 << 20;
const NO_HASH = new Uint8Array(HASH_BYTES);
const WRITE_BUFFER = 1 << 20;

export class TilePart {
  private readonly records = new TileIndexBuilder();
  private readonly pending = Buffer.allocUnsafe(WRITE_BUFFER);
  /** Bytes of `pending` in use: the last `fill` bytes of the part's `size`. */
  private fill = 0;
  /** The flushed size as written into the head (once per unit flushed: not a new buffer each time). */
  private readonly flushedBytes = Buffer.alloc(8);

  private constructor(readonly path: string, private fd: number | undefined, private size: number) {}

  /** Starts an empty part at `path`, replacing what is there. */
  static create(path: string): TilePart {
    try {
      const fd = fs.openSync(path, 'w+');
      fs.writeSync(fd, Buffer.concat([MARK, Buffer.alloc(PART_HEAD - MARK.length)]));
      return new TilePart(path, fd, PART_HEAD);
    } catch (err) {
      throw describeFsError(err, path);
    }
  }

  /** Continues the part at `path` after its last whole record (a record cut short by a kill is dropped), or starts one. */
  static resume(path: string): TilePart {
    if (!fs.existsSync(path)) return TilePart.create(path);
    let fd: number | undefined;
    try {
      fd = fs.openSync(path, 'r+');
      const part = new TilePart(path, fd, 0);
      part.size = scan(fd, path, (id, offset, length, hash, epoch) => part.records.add(id, offset, length, hash, epoch));
      // Units were marked done after their records reached the flushed size: records missing below it are tiles lost.
      const lost = lostRecords(fd, path, part.size);
      if (lost) throw new WorkStateError(`${lost} or damaged since, and the units marked done would lose tiles; start over with --force`, path);
      fs.ftruncateSync(fd, part.size);
      return part;
    } catch (err) {
      if (fd !== undefined) fs.closeSync(fd);
      throw err instanceof InputError || err instanceof WorkStateError ? err : describeFsError(err, path);
    }
  }

  /** Appends tile z/x/y (a later add of the same tile replaces it), written at `epoch` (`TileIndex.epoch`). */
  add(z: number, x: number, y: number, bytes: Uint8Array, epoch = 0): void {
    // PMTiles entries need a length above 0, and 0 marks a removal here.
    if (bytes.length === 0) throw new InputError(`tile ${z}/${x}/${y} is empty; an archive cannot hold an empty tile`);
    this.append(zxyToTileId(z, x, y), bytes, tileHash(bytes), epoch);
  }

  remove(z: number, x: number, y: number, epoch = 0): void {
    this.append(zxyToTileId(z, x, y), new Uint8Array(0), NO_HASH, epoch);
  }

  /** The bytes last written for tile z/x/y, or undefined (never written, or removed). */
  read(z: number, x: number, y: number): Uint8Array | undefined {
    const id = zxyToTileId(z, x, y);
    this.flush();
    const ix = this.records.view();
    for (let i = ix.count - 1; i >= 0; i--) {
      if (ix.tileId[i] !== id) continue;
      if (ix.length[i] === 0) return undefined;
      const out = Buffer.alloc(ix.length[i]);
      try {
        fs.readSync(this.openFd(), out, 0, out.length, ix.offset[i]);
      } catch (err) {
        throw describeFsError(err, this.path);
      }
      return out;
    }
    return undefined;
  }

  /** The records written so far (offsets into this part's file). */
  get index(): TileIndex {
    return this.records.view();
  }

  /** Writes the buffered records: from here on they survive the process being killed. */
  flush(): void {
    if (this.fill === 0) return;
    this.writeAt(this.pending.subarray(0, this.fill), this.size - this.fill);
    this.fill = 0;
    this.markFlushed();
  }

  /** Writes the part's size into its head, after the records it covers. */
  private markFlushed(): void {
    this.flushedBytes.writeBigUInt64LE(BigInt(this.size));
    this.writeAt(this.flushedBytes, FLUSHED_AT);
  }

  /** Flushes and closes the file; the index stays readable. */
  close(): void {
    if (this.fd === undefined) return;
    this.flush();
    const fd = this.fd;
    this.fd = undefined;
    try {
      fs.closeSync(fd);
    } catch (err) {
      throw describeFsError(err, this.path);
    }
  }

  private openFd(): number {
    if (this.fd === undefined) throw new InputError(`archive part ${this.path} is closed`);
    return this.fd;
  }

  private append(id: number, bytes: Uint8Array, hash: Uint8Array, epoch: number): void {
    this.openFd();
    const want = RECORD_HEAD + bytes.length;
    if (this.fill + want > this.pending.length) this.flush();
    const head = want > this.pending.length ? Buffer.alloc(RECORD_HEAD) : this.pending.subarray(this.fill);
    head.writeUInt32LE(bytes.length, 0);
    head.writeUInt32LE(epoch, 4);
    head.writeDoubleLE(id, 8);
    head.set(hash, 16);
    const direct = want > this.pending.length;
    if (direct) {
      this.writeAt(head, this.size);
      this.writeAt(bytes, this.size + RECORD_HEAD);
    } else {
      this.pending.set(bytes, this.fill + RECORD_HEAD);
      this.fill += want;
    }
    this.records.add(id, this.size + RECORD_HEAD, bytes.length, hash, epoch);
    this.size += want;
    // A record too large for the buffer went straight to the file (the buffer was flushed first): all is on disk.
    if (direct) this.markFlushed();
  }

  private writeAt(bytes: Uint8Array, position: number): void {
    const fd = this.openFd();
    try {
      for (let done = 0; done < bytes.length;) done += fs.writeSync(fd, bytes, done, bytes.length - done, position + done);
    } catch (err) {
      throw describeFsError(err, this.path);
    }
  }
}

/** The records of a finished part, for assembling it with others; throws InputError when the part is cut short. */
export function readPartIndex(path: string): TileIndex {
  const records = new TileIndexBuilder();
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, 'r');
    const size = fs.fstatSync(fd).size;
    const end = scan(fd, path, (id, offset, length, hash, epoch) => records.add(id, offset, length, hash, epoch));
    if (end !== size) throw new InputError(`archive part ${path} ends in a partial record at byte ${end}: its writer did not finish`, path);
    // Cut at a record's end (copied short between the steps of a workflow): the records it had flushed say so.
    const lost = lostRecords(fd, path, end);
    if (lost) throw new InputError(lost, path);
    return records.view();
  } catch (err) {
    throw err instanceof InputError ? err : new InputError(`cannot read archive part ${path}: ${(err as Error).message}`, path);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Checks a part a writer left (killed, or finished and carried between steps since), dropping a record cut short at
 * its end, past what was flushed (a kill mid-append: what `resume` drops too). Returns why the part cannot be used
 * (whole records lost below its flushed size, not a part, corrupt), or undefined when it can.
 */
export function repairPart(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, 'r+');
    const end = scan(fd, path, () => undefined);
    const lost = lostRecords(fd, path, end);
    if (lost) return lost;
    if (end < fs.fstatSync(fd).size) fs.ftruncateSync(fd, end);
    return undefined;
  } catch (err) {
    return err instanceof InputError ? err.message : `cannot read archive part ${path}: ${(err as Error).message}`;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Why a part whose whole records end at `end` lost records since a flush (its size then is in its head; 0: unknown,
 * a part of an earlier version), or undefined.
 */
function lostRecords(fd: number, path: string, end: number): string | undefined {
  const head = Buffer.alloc(PART_HEAD - FLUSHED_AT);
  fs.readSync(fd, head, 0, head.length, FLUSHED_AT);
  const flushed = Number(head.readBigUInt64LE(0));
  return end < flushed ? `archive part ${path} holds ${end} bytes of whole records, but ${flushed} had been written: it was cut short` : undefined;
}

/** Receives each record; `hash` is a view into a scratch buffer, valid only during the call. */
type OnRecord = (tileId: number, offset: number, length: number, hash: Uint8Array, epoch: number) => void;

/** Reads the record heads in large chunks (not one read per tile); returns where the last whole record ends. */
function scan(fd: number, path: string, onRecord: OnRecord): number {
  const size = fs.fstatSync(fd).size;
  const buf = Buffer.alloc(SCAN_CHUNK);
  const got = fs.readSync(fd, buf, 0, PART_HEAD, 0);
  if (got < PART_HEAD || !buf.subarray(0, MARK.length).equals(MARK)) {
    throw new InputError(`${path} is not an archive part (no ${MARK.toString('latin1')} mark)`, path);
  }
  let pos = PART_HEAD;
  while (pos + RECORD_HEAD <= size) {
    const n = fs.readSync(fd, buf, 0, Math.min(SCAN_CHUNK, size - pos), pos);
    let at = 0;
    while (at + RECORD_HEAD <= n) {
      const length = buf.readUInt32LE(at);
      const id = buf.readDoubleLE(at + 8);
      // Epochs count a build's corrections (two each): far below 2^16 in any part a build wrote.
      if (!Number.isSafeInteger(id) || id < 0 || buf.readUInt32LE(at + 4) > 0xffff) {
        throw new InputError(`archive part ${path} is corrupt at byte ${pos + at}`, path);
      }
      if (pos + at + RECORD_HEAD + length > size) return pos + at;
      onRecord(id, pos + at + RECORD_HEAD, length, buf.subarray(at + 16, at + RECORD_HEAD), buf.readUInt32LE(at + 4));
      at += RECORD_HEAD + length;
    }
    pos += at;
  }
  return pos;
}
