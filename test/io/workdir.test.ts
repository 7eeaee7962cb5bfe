// The work directory and its in-memory twin keep the same contract: JSON and byte files, listing, removal.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiskWorkDir, MemoryWorkDir, type WorkDir } from '../../src/io/workdir.js';
import { writeParts } from '../../src/io/dirs.js';
import { tmpDir } from '../helpers/pyramid.js';

const twins: Array<[string, () => WorkDir]> = [
  ['on disk', () => new DiskWorkDir(path.join(tmpDir('mudm-work'), 'w'))],
  ['in memory', () => new MemoryWorkDir()],
];

describe.each(twins)('work directory %s', (_, make) => {
  it('writes byte parts as one file and reads them back; JSON files stay apart', () => {
    const w = make();
    w.writeBytes('units/0/a.next', [Uint8Array.of(1, 2, 3), new Uint8Array(0), Uint8Array.of(4, 5)]);
    w.writeJson('units/0/a.json', { next: [['k', 5]] });
    expect([...(w.readBytes('units/0/a.next') ?? [])]).toEqual([1, 2, 3, 4, 5]);
    expect(w.readJson('units/0/a.json')).toEqual({ next: [['k', 5]] });
    expect(w.readBytes('units/0/missing.next')).toBeUndefined();
    expect(w.list('units/0')).toEqual(['a.json', 'a.next']);
    w.removeFolder('units');
    expect(w.readBytes('units/0/a.next')).toBeUndefined();
    expect(w.exists('units/0/a.json')).toBe(false);
  });

  it('appends parts to a file, making it and its folder, and reads ranges of it back', () => {
    const w = make();
    w.append('units/a.log', [Uint8Array.of(1, 2), Uint8Array.of(3)]);
    w.append('units/a.log', [new Uint8Array(0), Uint8Array.of(4, 5, 6)]);
    expect([...(w.readBytes('units/a.log') ?? [])]).toEqual([1, 2, 3, 4, 5, 6]);
    expect([...(w.readRange('units/a.log', 2, 3) ?? [])]).toEqual([3, 4, 5]);
    expect(w.readRange('units/a.log', 4, 3), 'past the end').toBeUndefined();
    expect(w.readRange('units/b.log', 0, 1), 'missing').toBeUndefined();
    expect(w.list('units')).toEqual(['a.log']);
    w.removeFolder('units');
    expect(w.exists('units/a.log')).toBe(false);
  });

  it('replaces a byte file whole, leaving no temporary file', () => {
    const w = make();
    w.writeBytes('x.next', [new Uint8Array(100).fill(7)]);
    w.writeBytes('x.next', [Uint8Array.of(9)]);
    expect([...(w.readBytes('x.next') ?? [])]).toEqual([9]);
    if (w.root) expect(fs.readdirSync(w.root)).toEqual(['x.next']);
    w.destroy();
    expect(w.readBytes('x.next')).toBeUndefined();
  });
});

describe('the work directory on disk', () => {
  it('keeps a file open between appends, and closes it on close, removal and destroy; appends after a close go on', () => {
    const openFds = () => fs.readdirSync('/proc/self/fd').length;
    const w = new DiskWorkDir(path.join(tmpDir('mudm-work'), 'w'));
    const before = openFds();
    w.append('units/a.log', [Uint8Array.of(1)]);
    w.append('units/a.data', [Uint8Array.of(2)]);
    w.append('units/a.log', [Uint8Array.of(3)]);
    expect(openFds()).toBe(before + 2);
    w.close();
    expect(openFds()).toBe(before);
    w.append('units/a.log', [Uint8Array.of(4)]);
    expect([...(w.readBytes('units/a.log') ?? [])]).toEqual([1, 3, 4]);
    // An append after the folder is removed makes the file anew, rather than writing to the removed one.
    w.removeFolder('units');
    expect(openFds()).toBe(before);
    w.append('units/a.log', [Uint8Array.of(5)]);
    expect([...(w.readBytes('units/a.log') ?? [])]).toEqual([5]);
    w.destroy();
    expect(openFds()).toBe(before);
    expect(fs.existsSync(w.root)).toBe(false);
  });
});

describe('writeParts', () => {
  it('writes more parts than one writev takes, empty ones included, in order', () => {
    const file = path.join(tmpDir('mudm-writev'), 'f');
    const parts = Array.from({ length: 3000 }, (_, i) => (i % 7 === 0 ? new Uint8Array(0) : new Uint8Array(i % 5 + 1).fill(i & 0xff)));
    const fd = fs.openSync(file, 'w');
    try { writeParts(fd, parts); } finally { fs.closeSync(fd); }
    expect(fs.readFileSync(file).equals(Buffer.concat(parts))).toBe(true);
  });
});
