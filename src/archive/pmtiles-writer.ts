// Writes PMTiles archives: tiles in any order into a part, then one pass assembling header, directories and data under a temporary name, renamed when whole.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DataError, InputError, OutputError, describeFsError } from '../report/errors.js';
import type { PmtilesHeader } from './pmtiles-format.js';
import { concatIndexes, layoutArchive, type ArchiveLayout, type ArchiveOptions, type TileIndex } from './pmtiles-layout.js';
import { TilePart, readPartIndex } from './pmtiles-part.js';

/** A part's file and its records (from `TilePart.index` or `readPartIndex`). */
export interface ArchivePart {
  path: string;
  index: TileIndex;
}

export interface ArchiveSummary {
  header: PmtilesHeader;
  /** Size of the archive file. */
  bytes: number;
}

/**
 * Tiles move from parts to the archive a window of this many archive bytes at a time (a buffer of twice that: what lies
 * in the parts, gaps included; written from there in the archive's order). Reading whole parts of up to 256 MiB instead (one read)
 * was slower at 100,000 cells and held the part in memory: wall x1.06, 50 MiB more at the peak. A window of 16 MiB
 * faulted in its 32 MiB buffer page by page: 2 MiB took the build from 132,000–147,000 page faults to 128,000–129,000,
 * and its assembly from 207–300 ms to 166–175 ms (three runs each).
 */
const WINDOW = 2 << 20;

/** A read goes on over a gap up to this long to the next tile it needs: a part has a record head between two tiles. */
const MAX_GAP = 4096;

/** A temporary beside `file`: `NAME.tmp-TAG`, or `NAME.tmp-TAG.part` (a writer's own part). */
function temporaryName(file: string, suffix = ''): string {
  return `${file}.tmp-${randomBytes(4).toString('hex')}${suffix}`;
}

/**
 * Writes the archive of the given parts to `file`: tile bytes copied as stored (never re-encoded) in tile-id
 * order, under a temporary name (`temporary`, else `NAME.tmp-TAG` beside it), given the name `file` only once
 * complete; on failure the temporary is removed and `file` untouched. The bytes depend only on the tiles, not on
 * how they were split into parts nor in which order.
 */
export function assembleArchive(
  parts: readonly ArchivePart[], file: string, metadata: object, options: ArchiveOptions, temporary?: string, window = WINDOW,
): ArchiveSummary {
  if (parts.length > 0xffff) throw new OutputError(`cannot assemble ${parts.length} parts into one archive (at most 65535)`, file);
  const index = concatIndexes(parts.map((p) => p.index));
  let layout: ArchiveLayout;
  try {
    layout = layoutArchive(index, metadata, options);
  } catch (err) {
    throw err instanceof DataError ? new DataError(`${file}: ${err.message}`) : err;
  }
  const tmp = temporary ?? temporaryName(file);
  const fds: (number | undefined)[] = parts.map(() => undefined);
  let out: number | undefined;
  try {
    out = fs.openSync(tmp, 'wx');
    writeAll(out, layout.head, layout.head.length);
    const read = (k: number, into: Uint8Array, at: number, length: number, position: number): void => {
      readAll(fds[k] ??= openPart(parts[k].path), into, at, length, position, parts[k].path);
    };
    copyTiles(index, layout.data, read, out, window);
    // On disk before it is named: after a power loss too, a file of that name is whole (30 ms for 64 MB here).
    fs.fsyncSync(out);
    fs.closeSync(out);
    out = undefined;
    publish(tmp, file);
    // A file system that cannot sync a directory (EINVAL, EISDIR) is left to its own ordering.
    syncPath(path.dirname(file), true);
  } catch (err) {
    if (out !== undefined) fs.closeSync(out);
    fs.rmSync(tmp, { force: true });
    throw err instanceof OutputError || err instanceof InputError ? err : describeFsError(err, file);
  } finally {
    for (const fd of fds) if (fd !== undefined) fs.closeSync(fd);
  }
  return { header: layout.header, bytes: layout.header.tileDataOffset + layout.header.tileDataLength };
}

/**
 * Gives the finished archive its name, never over a file: the build removed what it replaces when it began, so a
 * file there now appeared while it ran (another build, a user's copy), and is left as it is. A hard link fails
 * atomically when the name is taken; where links are not supported, the name is looked at just before the rename.
 */
function publish(tmp: string, file: string): void {
  const taken = () => new OutputError(`${file} appeared while this build ran (another build, or a file put there): left as it is; this build's archive was not written`, file);
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'EEXIST') throw taken();
    if (code === 'EXDEV') {
      // Assembled on another file system (a work directory elsewhere): copied beside the archive, then named.
      const beside = temporaryName(file);
      try {
        fs.copyFileSync(tmp, beside, fs.constants.COPYFILE_EXCL);
        syncPath(beside);
        publish(beside, file);
      } finally {
        fs.rmSync(beside, { force: true });
      }
      fs.rmSync(tmp);
      return;
    }
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    // lstat: a link at the name, even one to nowhere, is a file there.
    if (fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined) throw taken();
    fs.renameSync(tmp, file);
    return;
  }
  fs.rmSync(tmp);
}

/** Makes a file's bytes, or a folder's names, durable; `bestEffort`: a failure to is no error. */
function syncPath(p: string, bestEffort = false): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(p, 'r');
    fs.fsyncSync(fd);
  } catch (err) {
    if (!bestEffort) throw err;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function openPart(file: string): number {
  try {
    return fs.openSync(file, 'r');
  } catch (err) {
    throw new InputError(`cannot read archive part ${file}: ${(err as Error).message}`, file);
  }
}

/** Assembles the archive of finished parts (one per shard) written by `TilePart`; the parts are left in place. */
export function mergeParts(partPaths: readonly string[], file: string, metadata: object, options: ArchiveOptions): ArchiveSummary {
  return assembleArchive(partPaths.map((p) => ({ path: p, index: readPartIndex(p) })), file, metadata, options);
}

/** Reads `length` bytes of part `k` at `position` into `into` at `at`. */
type ReadPart = (k: number, into: Uint8Array, at: number, length: number, position: number) => void;

/**
 * Copies the records `data` of `index` in order to `out`, a window of `window` bytes at a time: the window's tiles are
 * read in the order they lie in the parts, each run of nearby ones in one read, then written in the archive's order
 * with one gathering write (no copy into a second buffer: 16 MiB of fresh pages and a call per tile).
 * A part holds tiles in the order units finished, the archive in tile-id order: reading them in the archive's order
 * took a read per tile (396,764 at 1,000,000 cells); a unit's tiles lie together in both.
 */
function copyTiles(index: TileIndex, data: Uint32Array, read: ReadPart, out: number, window: number): void {
  const { part, offset, length } = index;
  // Tiles, and at most a window of gaps between them.
  const lying = Buffer.allocUnsafe(2 * window);
  // Where each record of the window was read to in `lying`.
  const at = new Float64Array(index.count);
  for (let i = 0; i < data.length;) {
    const first = data[i];
    if (length[first] > window) {
      for (let done = 0; done < length[first]; done += window) {
        const n = Math.min(window, length[first] - done);
        read(part[first], lying, 0, n, offset[first] + done);
        writeAll(out, lying, n);
      }
      i++;
      continue;
    }
    let end = i, bytes = 0;
    while (end < data.length && length[data[end]] <= window - bytes) bytes += length[data[end++]];
    const lie = data.slice(i, end).sort((a, b) => part[a] - part[b] || offset[a] - offset[b]);
    let fill = 0, gaps = 0;
    for (let k = 0; k < lie.length;) {
      const r = lie[k], from = offset[r];
      let to = from;
      for (; k < lie.length; k++) {
        const n = lie[k], gap = offset[n] - to;
        if (part[n] !== part[r] || gap > MAX_GAP || gaps + gap > window) break;
        gaps += gap;
        at[n] = fill + offset[n] - from;
        to = offset[n] + length[n];
      }
      read(part[r], lying, fill, to - from, from);
      fill += to - from;
    }
    const ordered: Uint8Array[] = [];
    for (let q = i; q < end; q++) {
      const r = data[q];
      if (length[r] > 0) ordered.push(lying.subarray(at[r], at[r] + length[r]));
    }
    writeAllOf(out, ordered, bytes);
    i = end;
  }
}

function readAll(fd: number, buf: Uint8Array, at: number, length: number, position: number, file: string): void {
  for (let done = 0; done < length;) {
    const n = fs.readSync(fd, buf, at + done, length - done, position + done);
    if (n === 0) throw new InputError(`archive part ${file} is shorter than its records say (byte ${position + done})`, file);
    done += n;
  }
}

function writeAll(fd: number, buf: Uint8Array, length: number): void {
  for (let done = 0; done < length;) done += fs.writeSync(fd, buf, done, length - done);
}

/** Writes `bytes` bytes held by `views`, in order, at the file position. */
function writeAllOf(fd: number, views: Uint8Array[], bytes: number): void {
  let done = fs.writevSync(fd, views);
  if (done === bytes) return;
  // libuv writes on until all is written or a write fails; after some progress it returns the count short (a disk
  // full part way): writing the rest a view at a time raises that error.
  for (const v of views) {
    const skip = Math.min(done, v.length);
    done -= skip;
    if (skip < v.length) writeAll(fd, v.subarray(skip), v.length - skip);
  }
}

export interface WriterOptions extends ArchiveOptions {
  /** Where tiles wait until `finish`; default a temporary beside the archive, removed by finish and abort. */
  partPath?: string;
  /** Continue the part at `partPath` left by a killed writer instead of starting it anew. */
  resume?: boolean;
  /** Leave the part in place after `finish` (a build removes its parts once its whole output is complete). */
  keepPart?: boolean;
  /** Finished parts of other writers (shards) whose tiles the archive holds too. */
  parts?: readonly string[];
}

/**
 * One archive written tile by tile. Memory holds about 36 bytes per tile (id, offset, length, content hash);
 * tile bytes wait in the part file. Nothing is named `file` until `finish` has written it whole.
 */
export class PmtilesWriter {
  private readonly part: TilePart;
  private readonly ownPart: boolean;

  constructor(readonly file: string, private readonly options: WriterOptions) {
    this.ownPart = options.partPath === undefined;
    const partPath = options.partPath ?? temporaryName(file, '.part');
    this.part = options.resume ? TilePart.resume(partPath) : TilePart.create(partPath);
  }

  /**
   * Adds tile z/x/y, its bytes as they are to be stored (already compressed when the archive says so), at `epoch`
   * (`TileIndex.epoch`: of parts holding the tile, the latest epoch's record stands).
   */
  add(z: number, x: number, y: number, bytes: Uint8Array, epoch = 0): void {
    this.part.add(z, x, y, bytes, epoch);
  }

  remove(z: number, x: number, y: number, epoch = 0): void {
    this.part.remove(z, x, y, epoch);
  }

  read(z: number, x: number, y: number): Uint8Array | undefined {
    return this.part.read(z, x, y);
  }

  /** Makes every tile added so far survive the process being killed (a part the caller named can then be resumed). */
  flush(): void {
    this.part.flush();
  }

  /**
   * Writes the archive with `metadata` as its JSON metadata and removes the part. On failure `file` is not
   * written, and the part is removed too unless the caller named it (so a retry can reuse it).
   */
  finish(metadata: object): ArchiveSummary {
    try {
      this.part.close();
      const others = (this.options.parts ?? []).map((p) => ({ path: p, index: readPartIndex(p) }));
      // A named part lies in its caller's work directory: the archive is assembled there too, so what a killed
      // assembly leaves goes with that directory, and nothing but the archive is ever written beside it.
      // Named at random: two assemblies at once (a finalize retried while one still runs) never write one file.
      const temporary = this.ownPart ? undefined : `${this.part.path}.archive-${randomBytes(4).toString('hex')}`;
      const summary = assembleArchive([{ path: this.part.path, index: this.part.index }, ...others], this.file, metadata, this.options, temporary);
      if (!this.options.keepPart) fs.rmSync(this.part.path, { force: true });
      return summary;
    } catch (err) {
      if (this.ownPart) fs.rmSync(this.part.path, { force: true });
      throw err;
    }
  }

  /** Closes the part and leaves it for another process to assemble (a shard's part): `file` is not written. */
  close(): void {
    this.part.close();
  }

  /** Gives up: removes the part (even one the caller named) and leaves `file` as it was. */
  abort(): void {
    try {
      this.part.close();
    } finally {
      fs.rmSync(this.part.path, { force: true });
    }
  }
}
