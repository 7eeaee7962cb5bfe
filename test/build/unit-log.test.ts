// Unit markers in the work directory's logs: written and read back with their records and preview patches, removed
// and written again across runs, and a log cut by a kill keeps every marker before the cut, on disk and in memory.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UnitLog, type UnitMarker } from '../../src/build/unit-log.js';
import { DiskWorkDir, type WorkDir } from '../../src/io/workdir.js';
import { MemoryWorkDir } from '../../src/io/workdir-memory.js';
import { EXIT_OUTPUT, WorkStateError } from '../../src/report/errors.js';
import type { UnitSource, UnitStore } from '../../src/stages/partition.js';
import { tmpDir } from '../helpers/pyramid.js';
import { refusal as refuse } from '../helpers/errors.js';

const refusal = (f: () => unknown) => refuse(f, WorkStateError, EXIT_OUTPUT);

/** Records appended to a unit store, in order (the in-memory view of what a marker hands on). */
class ListStore implements UnitStore {
  readonly appended: [string, number[]][] = [];
  append(key: string, bytes: Uint8Array): void { this.appended.push([key, [...bytes]]); }
  keys(): string[] { return [...new Set(this.appended.map(([k]) => k))].sort(); }
  take(): UnitSource { return { chunks: [] }; }
  peek(): UnitSource { return { chunks: [] }; }
  close(): void {}
}

const marker = (key: string, next: [string, number][] = [], needs: number[] = []): UnitMarker => (
  { key, byZoom: {}, largest: null, pointified: [], kept: [], offered: [], needs, unspare: -1, coarse: [`5/${key.length}/1.pbf`], notInPbf: 0, next }
);

const twins: Array<[string, () => WorkDir]> = [
  ['on disk', () => new DiskWorkDir(path.join(tmpDir('mudm-unit-log'), 'w'))],
  ['in memory', () => new MemoryWorkDir()],
];

/** The newest log file of a work directory: the generation made last. */
function newestLog(work: WorkDir): string {
  const logs = work.list('units').filter((n) => n.endsWith('.log')).sort();
  return `units/${logs[logs.length - 1]}`;
}

/** The one log file a work directory holds. */
function onlyLog(work: WorkDir): string {
  const logs = work.list('units').filter((n) => n.endsWith('.log'));
  expect(logs).toHaveLength(1);
  return `units/${logs[0]}`;
}

describe.each(twins)('unit log %s', (_, make) => {
  it('hands a marker\'s records for the level above to the store in marker order, then drops them from the marker', () => {
    const work = make();
    new UnitLog(work).write(0, marker('0/0/0/1/1', [['0/0/0/0/0', 2], ['0/0/0/0/1', 3]], [0, 7]), [Uint8Array.of(1, 2), Uint8Array.of(3, 4, 5)]);
    const log = new UnitLog(work);
    expect(log.has(0, '0/0/0/1/1')).toBe(true);
    expect(log.has(1, '0/0/0/1/1')).toBe(false);
    const store = new ListStore();
    const m = log.read(0, '0/0/0/1/1', store);
    expect(store.appended).toEqual([['0/0/0/0/0', [1, 2]], ['0/0/0/0/1', [3, 4, 5]]]);
    expect(m).toEqual(marker('0/0/0/1/1', [], [0, 7]));
  });

  it('writes a record several cells of the level above share once, and hands the same bytes to each of them', () => {
    const work = make();
    const shared = Uint8Array.of(7, 7, 7, 7, 7);
    new UnitLog(work).write(0, marker('u', [['a', 5], ['b', 1], ['c', 5], ['d', 5]]), [shared, Uint8Array.of(1), shared, shared], Uint8Array.of(9, 8));
    // The data file: the shared record once, the other record, the preview patch.
    const data = work.list('units').filter((n) => n.endsWith('.data'));
    expect(data).toHaveLength(1);
    expect(work.size(`units/${data[0]}`)).toBe(8);
    expect([...(work.readRange(`units/${data[0]}`, 0, 8) ?? [])]).toEqual([7, 7, 7, 7, 7, 1, 9, 8]);
    const views: Uint8Array[] = [];
    const store = new ListStore();
    const log = new UnitLog(work);
    log.read(0, 'u', { append: (key, bytes) => { views.push(bytes); store.append(key, bytes); } });
    expect(store.appended).toEqual([['a', [7, 7, 7, 7, 7]], ['b', [1]], ['c', [7, 7, 7, 7, 7]], ['d', [7, 7, 7, 7, 7]]]);
    // One view for the three cells, as the store was handed one buffer when the unit finished.
    expect(views[2]).toBe(views[0]);
    expect(views[3]).toBe(views[0]);
    expect([...log.preview('u')]).toEqual([9, 8]);
  });

  it('keeps preview patches after the records, per unit', () => {
    const work = make();
    const log = new UnitLog(work);
    log.write(0, marker('a', [['b', 2]]), [Uint8Array.of(9, 9)], Uint8Array.of(1, 2, 3, 4));
    log.write(0, marker('c'), [], Uint8Array.of(5, 6, 7, 8));
    const again = new UnitLog(work);
    expect([...again.preview('a')]).toEqual([1, 2, 3, 4]);
    expect([...again.preview('c')]).toEqual([5, 6, 7, 8]);
    expect(refusal(() => again.preview('b'))).toMatch(/^the preview patch of unit b is missing from /);
  });

  it('a later run\'s removals and markers override an earlier run\'s', () => {
    const work = make();
    const first = new UnitLog(work);
    for (const k of ['a', 'b', 'c']) first.write(1, marker(k), []);
    const second = new UnitLog(work);
    second.remove([[1, 'a'], [1, 'b']]);
    second.write(1, marker('b', [], [3]), []);
    const third = new UnitLog(work);
    expect([third.has(1, 'a'), third.has(1, 'b'), third.has(1, 'c')]).toEqual([false, true, true]);
    expect(third.read(1, 'b').needs).toEqual([3]);
    expect(third.count(1)).toBe(2);
    expect(third.count(0)).toBe(0);
  });

  it('a log cut in its last frame keeps every marker before the cut; a foreign frame ends the log', () => {
    const work = make();
    const log = new UnitLog(work);
    log.write(0, marker('a'), [Uint8Array.of(1)]);
    log.write(0, marker('b'), [Uint8Array.of(2)]);
    const file = onlyLog(work);
    const whole = work.readBytes(file) as Uint8Array;
    work.writeBytes(file, [whole.subarray(0, whole.byteLength - 3)]);
    const cut = new UnitLog(work);
    expect([cut.has(0, 'a'), cut.has(0, 'b')]).toEqual([true, false]);
    // The resumed run tiles b again; its marker goes into a log of its own, after the cut one.
    cut.write(0, marker('b'), [Uint8Array.of(2)]);
    expect(new UnitLog(work).count(0)).toBe(2);
    work.removeFolder(newestLog(work));
    // A frame whose JSON does not match its check: zeros or garbage a cut write may leave.
    const garbled = Uint8Array.from(whole);
    garbled[whole.byteLength - 2] ^= 0xff;
    work.writeBytes(file, [garbled]);
    expect(new UnitLog(work).count(0)).toBe(1);
  });

  it('passes over the markers and removals of another plan, whatever their generation, and keeps logs that name none', () => {
    const work = make();
    new UnitLog(work, 'plan-a').write(0, marker('a', [['n', 1]]), [Uint8Array.of(1)]);
    new UnitLog(work, 'plan-a').write(0, marker('b'), []);
    // A log of another plan copied in later (a higher generation): its marker of `a`, with other records, and its
    // removal of `b` are not this plan's.
    const other = new UnitLog(work, 'plan-b');
    other.write(0, marker('a', [['n', 1]]), [Uint8Array.of(9)]);
    other.write(0, marker('c'), []);
    other.remove([[0, 'b']]);
    const mine = new UnitLog(work, 'plan-a');
    expect([mine.has(0, 'a'), mine.has(0, 'b'), mine.has(0, 'c')]).toEqual([true, true, false]);
    const store = new ListStore();
    mine.read(0, 'a', store);
    expect(store.appended).toEqual([['n', [1]]]);
    // The other plan sees its own markers only; a log of an earlier version, which names no plan, counts for both.
    const theirs = new UnitLog(work, 'plan-b');
    expect([theirs.has(0, 'a'), theirs.has(0, 'b'), theirs.has(0, 'c')]).toEqual([true, false, true]);
    new UnitLog(work).write(0, marker('d'), []);
    expect([new UnitLog(work, 'plan-a').has(0, 'd'), new UnitLog(work, 'plan-b').has(0, 'd')]).toEqual([true, true]);
  });

  it('a missing marker or missing records are refused, naming the unit and level', () => {
    const work = make();
    expect(refusal(() => new UnitLog(work).read(2, '0/1/0/3/4'))).toMatch(
      /^the marker of unit 0\/1\/0\/3\/4 \(level 2\) is missing from .*: the unit is not finished; run the build \(or its shard\) again$/,
    );
    new UnitLog(work).write(0, marker('0/0/0/1/1', [['0/0/0/0/0', 2]]), [Uint8Array.of(1, 2)]);
    const data = work.list('units').filter((n) => n.endsWith('.data'));
    work.removeFolder(`units/${data[0]}`);
    expect(refusal(() => new UnitLog(work).read(0, '0/0/0/1/1', new ListStore()))).toMatch(
      /^the records of unit 0\/0\/0\/1\/1 \(level 0\) for the level above are missing from /,
    );
  });
});

it('each process appends to a log of its own, after those it found', () => {
  const root = path.join(tmpDir('mudm-unit-log'), 'w');
  const work = new DiskWorkDir(root);
  new UnitLog(work).write(0, marker('a'), []);
  new UnitLog(work).write(0, marker('b'), [Uint8Array.of(1)]);
  const names = fs.readdirSync(path.join(root, 'units')).sort();
  expect(names.map((n) => n.replace(/-[0-9a-f]{8}\./, '-TAG.'))).toEqual(['000000-TAG.log', '000001-TAG.data', '000001-TAG.log']);
});
