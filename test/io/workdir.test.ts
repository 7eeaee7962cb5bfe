// The work directory and its in-memory twin keep the same contract: JSON and byte files, listing, removal.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DiskWorkDir, type WorkDir } from '../../src/io/workdir.js';
import { MemoryWorkDir } from '../../src/io/workdir-memory.js';
import { LEASE_MS, REFRESH_MS } from '../../src/io/owner-file.js';
import { writeParts } from '../../src/io/dirs.js';
import { WorkStateError } from '../../src/report/errors.js';
import { tmpDir } from '../helpers/pyramid.js';
import { mountTmpfs, unmountTmpfs } from '../helpers/temps.js';

afterAll(unmountTmpfs);

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
  it('once it was there, is not made again by a step whose work directory another step removed (finalize under a late shard)', () => {
    const root = path.join(tmpDir('mudm-work'), 'w');
    fs.mkdirSync(root);
    const shard = new DiskWorkDir(root);
    shard.append('units/a.log', [Uint8Array.of(1)]);
    new DiskWorkDir(root).destroy();
    const gone = `${root} was removed while this step ran (finalize, or plan --force, of this output), so`;
    expect(() => shard.writeJson('shards/1.json', {})).toThrow(`${gone} ${path.join(root, 'shards/1.json')} was not written`);
    expect(() => shard.writeJson('plan.json', {})).toThrow(`${gone} ${path.join(root, 'plan.json')} was not written`);
    shard.close();
    expect(() => shard.append('units/a.log', [Uint8Array.of(2)])).toThrow(WorkStateError);
    expect(fs.existsSync(root)).toBe(false);
  });

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

describe('the work directory on a read-only volume (a step on a machine that mounts the shared volume read-only)', () => {
  const vol = mountTmpfs('1m');
  it.skipIf(!vol)(vol ? 'says so for every folder a step makes, not ENOENT' : 'SKIPPED: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)', () => {
    const root = path.join(vol as string, 'out', '.mudm-work');
    fs.mkdirSync(root, { recursive: true });
    expect(spawnSync('mount', ['-o', 'remount,ro', vol as string]).status).toBe(0);
    const w = new DiskWorkDir(root, { pid: 101, start: 's101', alive: () => false });
    const refused = (write: () => void, file: string) => expect(write).toThrow(`cannot write ${path.join(root, file)}: read-only file system`);
    refused(() => w.claimOwner('owners/shard-0.json'), 'owners/shard-0.json');
    refused(() => w.append('units/0.log', [Uint8Array.of(1)]), 'units/0.log');
    refused(() => w.writeJson('shards/0.json', {}), 'shards/0.json');
    const other = path.join(vol as string, 'other', '.mudm-work');
    expect(() => new DiskWorkDir(other, { pid: 101, alive: () => false }).claim()).toThrow(`cannot write ${other}: read-only file system`);
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

describe('claiming a step of a build in the work directory', () => {
  const root = () => path.join(tmpDir('mudm-owner'), 'w');
  /** A process `pid` on this machine, which sees the processes in `running` as alive. */
  const probe = (pid: number, running: Set<number>) => ({ pid, start: `s${pid}`, alive: (p: number) => running.has(p) });

  it('records the first claimant, refuses a second while it runs, and takes over from one that ended', () => {
    const dir = root();
    const running = new Set([101, 102]);
    const a = new DiskWorkDir(dir, probe(101, running)), b = new DiskWorkDir(dir, probe(102, running));
    expect(a.claimOwner('owners/finalize.json')).toBeUndefined();
    expect(b.claimOwner('owners/finalize.json')).toEqual({ who: 'pid 101', file: path.join(dir, 'owners/finalize.json') });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'owners/finalize.json'), 'utf8'))).toMatchObject({ pid: 101, start: 's101' });
    running.delete(101);
    expect(b.claimOwner('owners/finalize.json')).toBeUndefined();
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'owners/finalize.json'), 'utf8'))).toMatchObject({ pid: 102 });
    expect(a.claimOwner('owners/finalize.json')).toEqual({ who: 'pid 102', file: path.join(dir, 'owners/finalize.json') });
    // Nothing but the record is left in the folder: no temporary or moved-aside file.
    expect(fs.readdirSync(path.join(dir, 'owners'))).toEqual(['finalize.json']);
  });

  it('judges a record on the bytes it read: a claim made while it asked after the one before is not replaced', () => {
    const dir = root();
    const file = path.join(dir, 'owners/finalize.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ pid: 199, host: os.hostname(), start: 's199' }));
    const b = new DiskWorkDir(dir, probe(102, new Set([101, 102])));
    let claimedB: unknown = 'not yet';
    // While A asks whether 199 runs, B (which knows 199 ended) claims the step.
    const a = new DiskWorkDir(dir, { pid: 101, start: 's101', alive: (pid: number) => { if (claimedB === 'not yet') claimedB = b.claimOwner('owners/finalize.json'); return pid === 102; } });
    expect(a.claimOwner('owners/finalize.json')).toEqual({ who: 'pid 102', file });
    expect(claimedB).toBeUndefined();
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: 102 });
    expect(fs.readdirSync(path.dirname(file))).toEqual(['finalize.json']);
  });

  it('replaces a record of a process that ended under a lock: one held waits, one left by a killed takeover is removed once stale', () => {
    const dir = root();
    const file = path.join(dir, 'owners/finalize.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ pid: 199, host: os.hostname(), start: 's199' }));
    // Another process is replacing it (its lock is fresh): this one neither removes the record nor claims the step.
    fs.writeFileSync(`${file}.takeover`, JSON.stringify({ pid: 103, host: os.hostname(), start: 's103' }));
    const w = new DiskWorkDir(dir, probe(101, new Set([101, 103])));
    expect(w.claimOwner('owners/finalize.json')).toEqual({ who: 'another process, replacing the record of one that ended', file });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: 199 });
    // Its holder was killed in the middle: once the lock is stale it goes, and the step is claimed.
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(`${file}.takeover`, past, past);
    expect(w.claimOwner('owners/finalize.json')).toBeUndefined();
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: 101 });
    expect(fs.readdirSync(path.dirname(file))).toEqual(['finalize.json']);
    // A lock is not an owner record: a process asking who runs here does not read it as one.
    fs.writeFileSync(`${file}.takeover`, JSON.stringify({ pid: 103, host: os.hostname(), start: 's103' }));
    expect(new DiskWorkDir(dir, probe(102, new Set([102, 103]))).liveOwner()).toBeUndefined();
  });

  it('claims by an exclusive create where the file system has no hard links', () => {
    const dir = root();
    const running = new Set([101, 102]);
    const link = vi.spyOn(fs, 'linkSync').mockImplementation(() => { throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' }); });
    try {
      expect(new DiskWorkDir(dir, probe(101, running)).claimOwner('owners/shard-0.json')).toBeUndefined();
      expect(new DiskWorkDir(dir, probe(102, running)).claimOwner('owners/shard-0.json')).toEqual({ who: 'pid 101', file: path.join(dir, 'owners/shard-0.json') });
      // A record half written (the create made, its bytes not yet) is a claim in progress, not one to replace.
      fs.writeFileSync(path.join(dir, 'owners/shard-1.json'), '{"pid":');
      expect(new DiskWorkDir(dir, probe(102, running)).claimOwner('owners/shard-1.json')).toEqual({ who: 'another process', file: path.join(dir, 'owners/shard-1.json') });
      expect(link).toHaveBeenCalled();
    } finally {
      link.mockRestore();
    }
    expect(fs.readdirSync(path.join(dir, 'owners')).sort()).toEqual(['shard-0.json', 'shard-1.json']);
  });

  it('takes another machine\'s record as running while it is kept fresh, and as ended once it lapses', () => {
    const dir = root();
    const file = path.join(dir, 'owners/shard-0.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // A shard on another machine sharing the volume: its pid means nothing here (here no process 4242 runs).
    fs.writeFileSync(file, JSON.stringify({ pid: 4242, host: 'node-b.cluster', start: 's4242' }));
    const here = new DiskWorkDir(dir, probe(101, new Set([101])));
    const who = here.claimOwner('owners/shard-0.json')?.who ?? '';
    expect(who).toMatch(/^pid 4242 on node-b\.cluster, whose record was refreshed [0-9] s ago; a record no longer refreshed counts as ended 180 s after$/);
    expect(here.liveOwner()?.who).toBe(who);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: 4242 });
    // Its machine stopped refreshing it (a crash) longer ago than the lease: taken over.
    const past = new Date(Date.now() - LEASE_MS - 1000);
    fs.utimesSync(file, past, past);
    expect(here.liveOwner()).toBeUndefined();
    expect(here.claimOwner('owners/shard-0.json')).toBeUndefined();
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: 101, host: os.hostname() });
  });

  it('keeps its own records fresh while it works; released, they read as ended at once on another machine', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const dir = root();
      const w = new DiskWorkDir(dir, probe(101, new Set([101])));
      expect(w.claimOwner('owners/finalize.json')).toBeUndefined();
      w.own();
      const files = [path.join(dir, 'owners/finalize.json'), path.join(dir, 'owner.json')];
      const age = (f: string) => Date.now() - fs.statSync(f).mtimeMs;
      const past = new Date(Date.now() - LEASE_MS / 2);
      for (const f of files) fs.utimesSync(f, past, past);
      const before = files.map((f) => fs.readFileSync(f, 'utf8'));
      vi.advanceTimersByTime(REFRESH_MS);
      for (const f of files) expect(age(f)).toBeLessThan(5000);
      // Dated by writing a byte again (the file system's clock, not this machine's): the record itself unchanged.
      expect(files.map((f) => fs.readFileSync(f, 'utf8'))).toEqual(before);
      expect(fs.readdirSync(path.join(dir, 'owners'))).toEqual(['finalize.json']);
      w.release();
      for (const f of files) expect(fs.statSync(f).mtimeMs).toBe(0);
      vi.advanceTimersByTime(2 * REFRESH_MS);
      for (const f of files) expect(fs.statSync(f).mtimeMs).toBe(0);
      // Read from another machine (the record names this one: rewritten as another's), the step is free.
      fs.writeFileSync(files[0], JSON.stringify({ pid: 4242, host: 'node-b.cluster' }));
      fs.utimesSync(files[0], new Date(0), new Date(0));
      expect(new DiskWorkDir(dir, probe(102, new Set([102]))).claimOwner('owners/finalize.json')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a record released on another machine reads as ended from a copy that does not keep times (cp -r, a workflow\'s staging)', () => {
    const dir = root();
    const host = vi.spyOn(os, 'hostname').mockReturnValue('node-a.cluster');
    try {
      const a = new DiskWorkDir(dir, probe(101, new Set([101])));
      expect(a.claimOwner('owners/shard-0.json')).toBeUndefined();
      a.own();
      a.release();
    } finally {
      host.mockRestore();
    }
    // Staged elsewhere: the bytes copied, the dates now.
    const copy = path.join(tmpDir('mudm-owner-copy'), 'w');
    fs.cpSync(dir, copy, { recursive: true });
    const now = new Date();
    for (const f of ['owners/shard-0.json', 'owner.json']) fs.utimesSync(path.join(copy, f), now, now);
    const b = new DiskWorkDir(copy, probe(102, new Set([102])));
    expect(b.liveOwner()).toBeUndefined();
    expect(b.claimOwner('owners/shard-0.json')).toBeUndefined();
    expect(JSON.parse(fs.readFileSync(path.join(copy, 'owners/shard-0.json'), 'utf8'))).toMatchObject({ pid: 102, host: os.hostname() });
    expect(fs.readdirSync(path.join(copy, 'owners'))).toEqual(['shard-0.json']);
    // A record not released (its process killed outright) still counts as running from such a copy, for the lease.
    fs.writeFileSync(path.join(copy, 'owners/shard-1.json'), JSON.stringify({ pid: 4242, host: 'node-a.cluster', start: 's4242' }));
    expect(b.claimOwner('owners/shard-1.json')?.who).toMatch(/^pid 4242 on node-a\.cluster/);
  });

  it('a record taken over by another process while this one was stopped is not marked ended by this one', () => {
    const dir = root();
    const a = new DiskWorkDir(dir, probe(101, new Set([101])));
    expect(a.claimOwner('owners/shard-0.json')).toBeUndefined();
    const file = path.join(dir, 'owners/shard-0.json');
    const other = JSON.stringify({ pid: 4242, host: 'node-b.cluster', start: 's4242' });
    fs.writeFileSync(file, other);
    a.release();
    expect(fs.readFileSync(file, 'utf8')).toBe(other);
    expect(fs.statSync(file).mtimeMs).toBeGreaterThan(0);
  });

  it('a new build\'s work directory appears with its owner in it; a second claim is refused, and no claim is left aside', () => {
    const dir = root();
    const running = new Set([301, 302]);
    const a = new DiskWorkDir(dir, probe(301, running)), b = new DiskWorkDir(dir, probe(302, running));
    a.claim();
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'owner.json'), 'utf8'))).toMatchObject({ pid: 301, start: 's301' });
    expect(() => b.claim()).toThrow(`${dir} holds the state of another build of this output`);
    expect(fs.readdirSync(path.dirname(dir))).toEqual(['w']);
    // Running, it is not abandoned; ended before it had a plan, it is (nothing to continue); with a plan, it is not.
    expect(b.abandoned()).toBe(false);
    running.delete(301);
    expect(b.abandoned()).toBe(true);
    fs.writeFileSync(path.join(dir, 'plan.json'), '{}');
    expect(b.abandoned()).toBe(false);
    // Nor is a folder whose owner is unknown (made by an earlier version), or one holding a user's file.
    fs.rmSync(path.join(dir, 'plan.json'));
    fs.rmSync(path.join(dir, 'owner.json'));
    expect(b.abandoned()).toBe(false);
    fs.writeFileSync(path.join(dir, 'owner.json'), JSON.stringify({ pid: 301, host: os.hostname(), start: 's301' }));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    expect(b.abandoned()).toBe(false);
  });

  it('is removed whole or not at all: moved aside, then removed; what a kill left aside goes at the next claim, unless a build that runs owns it', () => {
    const dir = root();
    const running = new Set([401, 402]);
    const a = new DiskWorkDir(dir, probe(401, running));
    a.claim();
    fs.mkdirSync(path.join(dir, 'parts'));
    fs.writeFileSync(path.join(dir, 'plan.json'), '{}');
    const parent = path.dirname(dir);
    // Where a removal killed part-way leaves it: one of an ended build, one put aside while its build runs.
    fs.mkdirSync(path.join(parent, 'w.retiring-0badcafe'));
    fs.writeFileSync(path.join(parent, 'w.retiring-0badcafe', 'plan.json'), '{}');
    fs.mkdirSync(path.join(parent, 'w.retiring-00c0ffee'));
    fs.writeFileSync(path.join(parent, 'w.retiring-00c0ffee', 'owner.json'), JSON.stringify({ pid: 402, host: os.hostname(), start: 's402' }));
    // Not a work directory's: kept, by its name, or by what it holds (a file no build writes beside a plan.json).
    fs.mkdirSync(path.join(parent, 'w.retiring-mine'));
    fs.mkdirSync(path.join(parent, 'w.retiring-0000beef'));
    fs.writeFileSync(path.join(parent, 'w.retiring-0000beef', 'plan.json'), '{}');
    fs.writeFileSync(path.join(parent, 'w.retiring-0000beef', 'notes.txt'), 'mine');
    a.destroy();
    expect(fs.readdirSync(parent).sort()).toEqual(['w.retiring-0000beef', 'w.retiring-00c0ffee', 'w.retiring-0badcafe', 'w.retiring-mine']);
    new DiskWorkDir(dir, probe(403, running)).claim();
    expect(fs.readdirSync(parent).sort()).toEqual(['w', 'w.retiring-0000beef', 'w.retiring-00c0ffee', 'w.retiring-mine']);
  });

  it('sweeps what a claim killed before its rename left beside the place, but a claim under way', () => {
    const dir = root();
    const parent = path.dirname(dir);
    const running = new Set([501, 502]);
    const aside = (tag: string, owner?: number, ageMs = 0) => {
      const d = path.join(parent, `w.claiming-${tag}`);
      fs.mkdirSync(d);
      if (owner !== undefined) fs.writeFileSync(path.join(d, 'owner.json'), JSON.stringify({ pid: owner, host: os.hostname(), start: `s${owner}` }));
      const t = (Date.now() - ageMs) / 1000;
      fs.utimesSync(d, t, t);
    };
    aside('0000dead', 499); // its owner ended: swept
    aside('0000a11e', 502); // its owner runs: kept
    aside('00000e1d', undefined, 120_000); // no owner, long ago (killed between making it and writing the owner): swept
    aside('0000f1e5', undefined, 0); // no owner yet, just made (a claim under way): kept
    new DiskWorkDir(dir, probe(501, running)).claim();
    expect(fs.readdirSync(parent).sort()).toEqual(['w', 'w.claiming-0000a11e', 'w.claiming-0000f1e5']);
  });

  it('of many claims at once, lets exactly one through', async () => {
    const dir = root();
    const running = new Set(Array.from({ length: 8 }, (_, i) => 200 + i));
    // A record of a process that ended is there: every claimant sees it, only one may replace it.
    fs.mkdirSync(path.join(dir, 'owners'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'owners/finalize.json'), JSON.stringify({ pid: 199, host: os.hostname(), start: 's199' }));
    const { Worker } = await import('node:worker_threads');
    const url = new URL('../../dist/io/workdir.js', import.meta.url).href;
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      import(workerData.url).then(({ DiskWorkDir }) => {
        const running = new Set(workerData.running);
        const w = new DiskWorkDir(workerData.dir, { pid: workerData.pid, start: 's' + workerData.pid, alive: (p) => running.has(p) });
        const flag = new Int32Array(workerData.go);
        Atomics.wait(flag, 0, 0);
        parentPort.postMessage(w.claimOwner('owners/finalize.json') === undefined);
      });`;
    const go = new SharedArrayBuffer(4);
    const results = [...running].map((pid) => new Promise<boolean>((resolve, reject) => {
      const worker = new Worker(code, { eval: true, workerData: { url, dir, pid, running: [...running], go } });
      worker.once('message', (ok: boolean) => { resolve(ok); void worker.terminate(); });
      worker.once('error', reject);
    }));
    await new Promise((r) => setTimeout(r, 300));
    Atomics.store(new Int32Array(go), 0, 1);
    Atomics.notify(new Int32Array(go), 0);
    expect((await Promise.all(results)).filter(Boolean)).toHaveLength(1);
  });
});
