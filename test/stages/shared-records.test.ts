// Shared records spilled once: pointers in the unit files, replaced by the records they lead to when a unit reads them.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SpillingStore } from '../../src/stages/partition.js';
import { pointerRecord, resolvePointers, SHARED_FILE } from '../../src/stages/shared-records.js';
import { recordSlices } from '../../src/stages/unit-files.js';
import { WorkStateError } from '../../src/report/errors.js';
import { refusal } from '../helpers/errors.js';
import { tmpDir } from '../helpers/pyramid.js';

const root = tmpDir('shared-records');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A record of `size` bytes (a multiple of 8, at least 24) as the walk sees it: its length, then `fill`. */
function rec(size: number, fill: number): Uint8Array {
  const b = new Uint8Array(size).fill(fill);
  new DataView(b.buffer).setUint32(0, size, true);
  new DataView(b.buffer).setUint32(4, 0, true);
  return b;
}
const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

describe('pointers', () => {
  it('are replaced by the records they lead to, in place, each part a chunk of its own; bytes without one come back as they are', () => {
    const store = cat(rec(32, 7), rec(40, 9));
    const read = (offset: number, length: number) => store.slice(offset, offset + length);
    const plain = cat(rec(24, 1), rec(48, 2));
    expect(resolvePointers(plain, read)).toEqual([plain]);
    expect(resolvePointers(plain, read)[0]).toBe(plain);
    const bytes = cat(rec(24, 1), pointerRecord(32, 40), rec(48, 2), pointerRecord(0, 72));
    // Each part in a chunk of its own, none joined: the unit's own records between pointers, and each pointer's records.
    expect(resolvePointers(bytes, read).map((c) => [...c])).toEqual([rec(24, 1), rec(40, 9), rec(48, 2), cat(rec(32, 7), rec(40, 9))].map((c) => [...c]));
    const last = cat(pointerRecord(0, 32), rec(24, 1));
    expect(resolvePointers(last, read).map((c) => [...c])).toEqual([rec(32, 7), rec(24, 1)].map((c) => [...c]));
  });
});

describe('a spilled store', () => {
  it('writes a record appended under several keys once, and each unit reads it back where it was appended', () => {
    const dir = path.join(root, 'store');
    const s = new SpillingStore(dir, 0);
    const big = rec(4096, 5);
    s.append('0/0/0/0/0', rec(24, 1));
    s.append('0/0/0/0/0', big);
    s.append('0/0/0/1/0', big);
    s.append('0/0/0/1/0', rec(32, 3));
    s.append('0/0/0/2/0', big);
    s.flush();
    expect(fs.statSync(path.join(dir, SHARED_FILE)).size).toBe(4096);
    const sizes = fs.readdirSync(dir).filter((f) => f.endsWith('.rec')).map((f) => fs.statSync(path.join(dir, f)).size).sort((a, b) => a - b);
    expect(sizes).toEqual([24, 48, 56]); // pointers of 24 bytes, not three copies of the record
    const read = (key: string) => {
      const src = s.take(key);
      if (!('path' in src)) throw new Error('spilled');
      return cat(...recordSlices(src.path));
    };
    expect([...read('0/0/0/0/0')]).toEqual([...cat(rec(24, 1), big)]);
    expect([...read('0/0/0/1/0')]).toEqual([...cat(big, rec(32, 3))]);
    expect([...read('0/0/0/2/0')]).toEqual([...big]);
    s.close();
  });

  it('names the shared file when it is cut short, a WorkStateError (exit 4) as a worker reports it', () => {
    const dir = path.join(root, 'short');
    const s = new SpillingStore(dir, 0);
    const big = rec(4096, 5);
    s.append('0/0/0/0/0', big);
    s.append('0/0/0/1/0', big);
    s.flush();
    fs.truncateSync(path.join(dir, SHARED_FILE), 100);
    const src = s.take('0/0/0/1/0');
    if (!('path' in src)) throw new Error('spilled');
    expect(refusal(() => [...recordSlices(src.path)], WorkStateError, 4)).toBe(`corrupt unit records: ${path.join(dir, SHARED_FILE)} ends before the shared record at byte 0 (4096 bytes)`);
    s.close();
  });
});
