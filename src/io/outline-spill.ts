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
 * back at their offsets; `close` removes the file and the folders it made, nothing else.
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

  /** Removes the folders made for the file, innermost first: the spill folder above may hold records, or be --tmp-dir. */
  private removeMade(): void {
    const made = this.made;
    this.made = undefined;
    try {
      for (let d = path.resolve(this.dir); made !== undefined; d = path.dirname(d)) {
        fs.rmdirSync(d);
        if (d === made) break;
      }
    } catch {
      // Not empty (something else was put there), or gone: left as it is.
    }
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
