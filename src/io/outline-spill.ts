// Label outlines a mask read in bands holds past a share of --memory-budget: a file in the build's spill folder, or its in-memory twin.
import fs from 'node:fs';
import path from 'node:path';
import type { OutlineSpill } from '../raster/label-gather.js';
import { describeFsError } from '../report/errors.js';
import { makeDirectory, removeFile } from './dirs.js';

/** The spill file's name, in the folder the build gives it (`OUTLINES_DIR` in its spill folder). */
export const OUTLINES_FILE = 'outlines.i32';
/** The folder of the spill file in the build's spill folder (OUT/.mudm-work/spill, or --tmp-dir's). */
export const OUTLINES_DIR = 'mask-outlines';

/** What a failure names the file as: the user may not know it, and --tmp-dir moves it. */
const ROLE = 'label outlines held past a tenth of --memory-budget while a mask is read; --tmp-dir sets where they go';

/**
 * The outlines written one after another to a file made in `dir` (made too when missing) on the first write, read
 * back at their offsets; `close` removes the file, `dir` and the spill folder above it when left empty (the tool's
 * own names, which a build killed while it read a mask may have made), and the folders above them it made.
 */
export class OutlineFile implements OutlineSpill {
  readonly path: string;
  private fd: number | undefined;
  /** The first folder made for the file (undefined when `dir` was there). */
  private made: string | undefined;
  private end = 0;

  constructor(private readonly dir: string) {
    this.path = path.join(dir, OUTLINES_FILE);
  }

  write(data: Int32Array): number {
    const fd = this.fd ?? this.open();
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const at = this.end;
    try {
      for (let done = 0; done < bytes.byteLength;) done += fs.writeSync(fd, bytes, done, bytes.byteLength - done, at + done);
    } catch (err) {
      throw describeFsError(err, this.path, ROLE);
    }
    this.end += bytes.byteLength;
    return at;
  }

  read(at: number, into: Int32Array): void {
    const bytes = new Uint8Array(into.buffer, into.byteOffset, into.byteLength);
    try {
      for (let done = 0; done < bytes.byteLength;) {
        const n = fs.readSync(this.fd as number, bytes, done, bytes.byteLength - done, at + done);
        // Shorter than written: the file was cut while the build ran.
        if (n === 0) throw Object.assign(new Error(`it ends at byte ${at + done}, before the ${this.end} bytes written to it`), { code: 'ESHORT' });
        done += n;
      }
    } catch (err) {
      throw describeFsError(err, this.path, ROLE, 'read back');
    }
  }

  close(): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return;
    try {
      fs.closeSync(fd);
      removeFile(this.path);
    } catch {
      // Cleaning up after a failure must not hide it: what is left is in a folder of the tool's own.
    }
    this.removeMade();
  }

  private open(): number {
    try {
      this.made = makeDirectory(this.dir);
      this.fd = fs.openSync(this.path, 'w+');
      return this.fd;
    } catch (err) {
      this.removeMade();
      throw describeFsError(err, this.path, ROLE);
    }
  }

  /** Removes the file's folders when left empty, innermost first (rmdir: a folder something else was put in stays). */
  private removeMade(): void {
    const made = this.made;
    this.made = undefined;
    removeEmptyFolders(this.dir, made);
  }
}

/**
 * Removes what a build of the same output killed while it read a mask left in the spill folder `root`: the outlines
 * file and its folder, when they are there. Called before a mask is read afresh: a build that spills none would
 * leave an earlier one's file for good (the folder is named by the output, and --tmp-dir's outlives it).
 */
export function clearOutlines(root: string): void {
  const dir = path.join(root, OUTLINES_DIR);
  const file = path.join(dir, OUTLINES_FILE);
  try {
    if (fs.lstatSync(file).isFile()) removeFile(file);
  } catch {
    // Not there, or not to be removed: a fresh write replaces the file, and a failure to write it names it.
  }
  removeEmptyFolders(dir, undefined);
}

/**
 * Removes `dir` and the spill folder holding it when empty, then the folders above up to `made` (the outermost the
 * build made for them), stopping at the first that is not empty or not there.
 */
function removeEmptyFolders(dir: string, made: string | undefined): void {
  const inner = path.resolve(dir), spill = path.dirname(inner);
  const top = made !== undefined && made.length < spill.length ? made : spill;
  try {
    for (let d = inner; ; d = path.dirname(d)) {
      fs.rmdirSync(d);
      if (d === top || path.dirname(d) === d) break;
    }
  } catch {
    // Not empty (something else was put there), or gone: left as it is.
  }
}

/** The in-memory twin: what was written, kept as written (tests see that outlines were spilled, and how many bytes). */
export class MemoryOutlines implements OutlineSpill {
  readonly parts: Int32Array[] = [];
  private readonly at: number[] = [];
  bytes = 0;
  closed = false;

  write(data: Int32Array): number {
    this.parts.push(data.slice());
    this.at.push(this.bytes);
    const at = this.bytes;
    this.bytes += data.byteLength;
    return at;
  }

  read(at: number, into: Int32Array): void {
    let k = this.at.length - 1;
    while (this.at[k] > at) k--;
    const from = (at - this.at[k]) / 4;
    into.set(this.parts[k].subarray(from, from + into.length));
  }

  close(): void {
    this.closed = true;
  }
}
