// The partition store: records in memory below the budget, one switch to files above it, and what each side hands out.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SpillingStore, type UnitSource } from '../../src/stages/partition.js';
import { SHARED_RECORD } from '../../src/stages/router.js';
import { RecordEncoder } from '../../src/stages/record.js';
import { flatten } from '../../src/tiling/flat.js';
import type { Position } from '../../src/model/geometry.js';
import { compareUnitKeys, unitFileName } from '../../src/stages/unit-key.js';
import { tmpDir } from '../helpers/pyramid.js';

const root = tmpDir('partition');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => path.join(root, `store-${n++}`);

const rec = (seq: number, size = 8) => new Uint8Array(size).fill(seq);
const fileOf = (key: string) => `${unitFileName(key)}.rec`;

/** The bytes of a unit, from memory or from its file. */
function bytesOf(src: UnitSource): number[] {
  if ('path' in src) return [...fs.readFileSync(src.path)];
  return src.chunks.flatMap((c) => [...c]);
}

describe('SpillingStore', () => {
  it('holds records in memory up to its budget, writing nothing to disk', () => {
    const dir = fresh();
    const s = new SpillingStore(dir, 64);
    for (let i = 0; i < 8; i++) s.append(`0/0/0/${i % 2}/0`, rec(i)); // exactly 64 bytes: not over
    expect(s.isSpilled).toBe(false);
    expect(fs.existsSync(dir)).toBe(false);
    const a = s.take('0/0/0/0/0');
    expect('chunks' in a).toBe(true);
    expect(bytesOf(a)).toEqual([0, 2, 4, 6].flatMap((i) => [...rec(i)]));
    s.close();
  });

  it('switches to files once, the moment the records pass the budget, keeping every record in order', () => {
    const dir = fresh();
    const s = new SpillingStore(dir, 64);
    for (let i = 0; i < 8; i++) s.append(`0/0/0/${i % 2}/0`, rec(i));
    s.append('0/0/0/1/0', rec(8, 1)); // 65 bytes: over
    expect(s.isSpilled).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual([fileOf('0/0/0/0/0'), fileOf('0/0/0/1/0')]);
    // After the switch, appends go to the files, behind what memory held.
    s.append('0/0/0/0/0', rec(9));
    s.append('0/0/1/0/0', rec(10));
    const a = s.take('0/0/0/0/0'), b = s.peek('0/0/0/1/0');
    expect('path' in a && 'path' in b).toBe(true);
    expect(bytesOf(a)).toEqual([0, 2, 4, 6, 9].flatMap((i) => [...rec(i)]));
    expect(bytesOf(b)).toEqual([...[1, 3, 5, 7].flatMap((i) => [...rec(i)]), 8]);
    expect(bytesOf(s.take('0/0/1/0/0'))).toEqual([...rec(10)]);
    expect(s.keys()).toEqual(['0/0/0/0/0', '0/0/0/1/0', '0/0/1/0/0']);
    s.close();
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('spills from the start with a budget of 0, and starts afresh over what an earlier run left', () => {
    const dir = fresh();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, fileOf('0/0/0/0/0')), rec(99));
    const s = new SpillingStore(dir, 0);
    expect(s.isSpilled).toBe(true);
    expect(s.keys()).toEqual([]);
    s.append('0/0/0/0/0', rec(1));
    expect(bytesOf(s.take('0/0/0/0/0'))).toEqual([...rec(1)]);
    s.close();
  });

  it('spilled records wait in memory, then reach their files in append order: on flush, before a read, or past 8 MiB', () => {
    const dir = fresh();
    const s = new SpillingStore(dir, 0);
    s.append('0/0/0/0/0', rec(1));
    s.append('0/0/0/0/1', rec(2));
    s.append('0/0/0/0/0', rec(3));
    expect(fs.readdirSync(dir), 'nothing written yet').toEqual([]);
    s.flush();
    expect(fs.readFileSync(path.join(dir, fileOf('0/0/0/0/0')))).toEqual(Buffer.concat([rec(1), rec(3)]));
    s.append('0/0/0/0/1', rec(4));
    // A read writes what waits first.
    expect(bytesOf(s.peek('0/0/0/0/1'))).toEqual([...rec(2), ...rec(4)]);
    // Past 8 MiB waiting, everything goes to the files.
    s.append('0/0/0/1/1', rec(5, 5 << 20));
    expect(fs.existsSync(path.join(dir, fileOf('0/0/0/1/1')))).toBe(false);
    s.append('0/0/0/1/2', rec(6, 5 << 20));
    expect(fs.statSync(path.join(dir, fileOf('0/0/0/1/1'))).size + fs.statSync(path.join(dir, fileOf('0/0/0/1/2'))).size).toBe(rec(5, 5 << 20).length + rec(6, 5 << 20).length);
    s.close();
  });

  it('take hands a unit\'s records over and forgets them; peek leaves them for the next reader', () => {
    const s = new SpillingStore(fresh(), 1 << 20);
    s.append('0/0/0/0/0', rec(1));
    s.append('0/0/0/0/0', rec(2));
    expect(bytesOf(s.peek('0/0/0/0/0'))).toEqual([...rec(1), ...rec(2)]);
    expect(bytesOf(s.peek('0/0/0/0/0'))).toEqual([...rec(1), ...rec(2)]);
    expect(bytesOf(s.take('0/0/0/0/0'))).toEqual([...rec(1), ...rec(2)]);
    expect(bytesOf(s.take('0/0/0/0/0'))).toEqual([]);
    // Taken bytes no longer count against the budget.
    s.append('0/0/0/1/1', rec(3, 600 << 10));
    s.take('0/0/0/1/1');
    s.append('0/0/0/2/2', rec(4, 600 << 10));
    expect(s.isSpilled).toBe(false);
    s.append('0/0/0/2/2', rec(5, 600 << 10));
    expect(s.isSpilled).toBe(true);
    s.close();
  });

  it('hands out a copy of a record appended under several keys, which moves to a worker without taking it from the others', () => {
    const s = new SpillingStore(fresh(), 1 << 20);
    const shared = rec(7, 16), own = rec(1);
    s.append('0/0/0/0/0', own);
    s.append('0/0/0/0/0', shared);
    s.append('0/0/0/1/0', shared);
    const a = s.take('0/0/0/0/0');
    if (!('chunks' in a)) throw new Error('in memory');
    expect(a.chunks[0]).toBe(own);
    expect(a.chunks[1]).not.toBe(shared);
    expect(bytesOf(a)).toEqual([...own, ...shared]);
    // Moving the copy (as a worker task does) leaves the other key's record whole.
    structuredClone(a.chunks[1], { transfer: [a.chunks[1].buffer] });
    expect(bytesOf(s.take('0/0/0/1/0'))).toEqual([...shared]);
    s.close();
  });

  it('counts per key the bytes of its large records at least a side across, shared or its own', () => {
    const enc = new RecordEncoder(false);
    /** A record of a ring of 5,000 vertices `across` px wide, at x0 (80 KB: a large record), or of a triangle. */
    const record = (seq: number, x0: number, across: number, vertices = 5000): Uint8Array => {
      const ring = Array.from({ length: vertices }, (_, i): Position => [x0 + (across * i) / vertices, (i % 2) * 10]);
      ring.push(ring[0]);
      const geom = flatten({ type: 'Polygon', coordinates: [ring] });
      if (geom === null || !enc.encode('cells', { seq, geom, head: {} })) throw new Error('no record');
      return enc.bytes().slice();
    };
    const web = record(1, 0, 30000), blob = record(2, 100, 300), small = record(3, 0, 5000, 3);
    expect(web.byteLength).toBeGreaterThanOrEqual(SHARED_RECORD);
    expect(small.byteLength).toBeLessThan(SHARED_RECORD);
    // One buffer of several records (a cell's own), and the web shared by a second cell.
    const own = new Uint8Array(blob.byteLength + web.byteLength + small.byteLength);
    own.set(blob); own.set(web, blob.byteLength); own.set(small, blob.byteLength + web.byteLength);
    const s = new SpillingStore(fresh(), 1 << 30, 'fresh', true);
    s.append('0/0/0/0/0', own);
    s.append('0/0/0/1/0', small);
    s.append('0/0/0/1/0', web);
    expect(s.wideBytesOf('0/0/0/0/0', 2048)).toBe(web.byteLength);
    expect(s.wideBytesOf('0/0/0/1/0', 2048)).toBe(web.byteLength);
    // The blob is 300 px across, the small record too small to count whatever its box.
    expect(s.wideBytesOf('0/0/0/0/0', 200)).toBe(web.byteLength + blob.byteLength);
    expect(s.wideBytesOf('0/0/0/0/0', 40000)).toBe(0);
    expect(s.wideBytesOf('0/0/1/0/0', 1)).toBe(0);
    s.close();
  });

  it('reads what another process planned without appending to it or removing it', () => {
    const dir = fresh();
    const planned = new SpillingStore(dir, 0);
    planned.append('0/0/0/1/0', rec(1));
    planned.append('0/0/0/0/2', rec(2));
    // The planning process flushes and leaves its files (as `plan` does); a shard opens them.
    planned.flush();
    const shard = new SpillingStore(dir, 0, 'existing');
    expect(shard.isSpilled).toBe(true);
    expect(shard.keys()).toEqual(['0/0/0/0/2', '0/0/0/1/0']);
    expect(bytesOf(shard.take('0/0/0/1/0'))).toEqual([...rec(1)]);
    shard.close();
    expect(fs.readdirSync(dir).sort()).toEqual([fileOf('0/0/0/0/2'), fileOf('0/0/0/1/0')]);
    expect(new SpillingStore(fresh(), 0, 'existing').keys()).toEqual([]);
  });
});

describe('compareUnitKeys', () => {
  it('orders keys part by part as numbers', () => {
    expect(['0/0/10/0/0', '0/0/2/0/0', '1/0/0/0/0', '0/0/2/0/10', '0/0/2/0/9'].sort(compareUnitKeys))
      .toEqual(['0/0/2/0/0', '0/0/2/0/9', '0/0/2/0/10', '0/0/10/0/0', '1/0/0/0/0']);
    expect(compareUnitKeys('0/1', '0/1/0')).toBeLessThan(0);
  });
});
