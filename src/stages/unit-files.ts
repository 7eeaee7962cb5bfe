// Reads unit record files: whole, or a slice of whole records at a time, pointers to shared records resolved.
import fs from 'node:fs';
import path from 'node:path';
import { resolvePointers, SHARED_FILE } from './shared-records.js';
import { WorkStateError } from '../report/errors.js';

/**
 * Reads the shared records a unit file's pointers lead to (shared-records.ts), from SHARED_FILE beside it; opened on
 * the first pointer, closed by `close`.
 */
class SharedReader {
  private fd = -1;
  private readonly file: string;

  constructor(unitFile: string) {
    this.file = path.join(path.dirname(unitFile), SHARED_FILE);
  }

  readonly read = (offset: number, length: number): Uint8Array => {
    if (this.fd < 0) this.fd = openRecords(this.file);
    const out = new Uint8Array(length);
    const got = fs.readSync(this.fd, out, 0, length, offset);
    if (got !== length) throw new WorkStateError(`corrupt unit records: ${this.file} ends before the shared record at byte ${offset} (${length} bytes)`, this.file);
    return out;
  };

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
  }
}

/**
 * Opens a record file. One gone, or cut short (`truncated`), since it was written (a plan's, changed after the step
 * checked it) is a WorkStateError naming it, which the worker reports as such: the step ends with exit 4.
 */
function openRecords(file: string): number {
  try {
    return fs.openSync(file, 'r');
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ENOENT') throw err;
    throw new WorkStateError(`cannot read unit records: ${file} is missing`, file);
  }
}

function truncated(file: string, bytes: number): WorkStateError {
  return new WorkStateError(`corrupt unit records in ${file}: ${bytes} bytes of a truncated record at the end`, file);
}

/** A record's byte length, its first field. */
const lengthAt = (buf: Uint8Array, at: number) => buf[at] | (buf[at + 1] << 8) | (buf[at + 2] << 16) | (buf[at + 3] * 2 ** 24);

/** Where the whole records at the start of `buf` (its first `have` bytes) end. */
function wholeRecords(buf: Uint8Array, have: number): number {
  let end = 0;
  while (end + 4 <= have && lengthAt(buf, end) > 0 && end + lengthAt(buf, end) <= have) end += lengthAt(buf, end);
  return end;
}

/** A unit file's records, its pointers replaced by the records they lead to (`resolvePointers`' chunks). */
export function readUnitFile(file: string): Uint8Array[] {
  const fd = openRecords(file);
  const shared = new SharedReader(file);
  try {
    // Nothing else walks the lengths of a file read whole: a last record cut short would be decoded past its end.
    const bytes = fs.readFileSync(fd);
    const end = wholeRecords(bytes, bytes.byteLength);
    if (end < bytes.byteLength) throw truncated(file, bytes.byteLength - end);
    return resolvePointers(bytes, shared.read);
  } finally {
    fs.closeSync(fd);
    shared.close();
  }
}

/** A file's records a slice at a time: whole records, about SLICE bytes (a larger record alone); each valid until the next. */
export function* recordSlices(file: string): Generator<Uint8Array> {
  const fd = openRecords(file);
  const shared = new SharedReader(file);
  try {
    let buf = new Uint8Array(SLICE);
    let have = 0;
    for (;;) {
      // A record longer than the buffer: room for all of it.
      if (have >= 4 && lengthAt(buf, 0) > buf.length) {
        const b = new Uint8Array(lengthAt(buf, 0));
        b.set(buf.subarray(0, have));
        buf = b;
      }
      const got = fs.readSync(fd, buf, have, buf.length - have, null);
      have += got;
      const end = wholeRecords(buf, have);
      if (end > 0) {
        yield* resolvePointers(buf.subarray(0, end), shared.read);
        buf.copyWithin(0, end, have);
        have -= end;
      }
      if (got === 0) {
        if (have > 0) throw truncated(file, have);
        return;
      }
    }
  } finally {
    fs.closeSync(fd);
    shared.close();
  }
}

const SLICE = 4 << 20;
