// A part unit reads a stored cell's file a slice of whole records at a time, records larger than a slice included.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkStateError } from '../../src/report/errors.js';
import { recordSlices } from '../../src/stages/unit-files.js';
import { refusal } from '../helpers/errors.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mudm-slices-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A fake record of `n` bytes (a multiple of 8): its length first, then a byte that says which it is. */
function record(n: number, tag: number): Uint8Array {
  const r = new Uint8Array(n);
  new DataView(r.buffer).setUint32(0, n, true);
  r.fill(tag, 4);
  return r;
}

describe('recordSlices', () => {
  it('yields whole records, in order, every byte once, with records larger than a slice alone', () => {
    const records = [record(24, 1), record(5 << 20, 2), record(48, 3), record(9 << 20, 4), record(4 << 20, 5), record(32, 6)];
    const file = path.join(dir, 'cell.rec');
    fs.writeFileSync(file, Buffer.concat(records));
    const seen: number[] = [];
    let bytes = 0;
    for (const slice of recordSlices(file)) {
      const view = new DataView(slice.buffer, slice.byteOffset, slice.byteLength);
      for (let at = 0; at < slice.length;) {
        const n = view.getUint32(at, true);
        expect(at + n).toBeLessThanOrEqual(slice.length);
        seen.push(slice[at + 4]);
        at += n;
      }
      bytes += slice.length;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(bytes).toBe(records.reduce((n, r) => n + r.length, 0));
  });

  it('says so when a file ends inside a record, naming it (a WorkStateError, exit 4, as a worker reports it)', () => {
    const file = path.join(dir, 'cut.rec');
    fs.writeFileSync(file, record(64, 1).subarray(0, 40));
    expect(refusal(() => [...recordSlices(file)], WorkStateError, 4)).toBe(`corrupt unit records in ${file}: 40 bytes of a truncated record at the end`);
  });

  it('names a file gone since it was written (a WorkStateError, exit 4), not an internal error', () => {
    const file = path.join(dir, 'gone.rec');
    expect(refusal(() => [...recordSlices(file)], WorkStateError, 4)).toBe(`cannot read unit records: ${file} is missing`);
  });
});
