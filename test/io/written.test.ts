// The record of what builds wrote: journals survive a kill mid-line, removal takes only what the record lists.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySink, MemorySink } from '../../src/io/sink.js';
import { Journal, RECORD_DIR, makeJournaledDirectory, readRecord, removeRecorded } from '../../src/io/written.js';
import { TileFiles } from '../../src/io/tile-files.js';
import { writeFailure } from '../../src/io/dirs.js';
import { OutputError } from '../../src/report/errors.js';

const temps: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'mudm-written-'));
  temps.push(d);
  return d;
}
afterAll(() => { for (const d of temps) fs.rmSync(d, { recursive: true, force: true }); });

function files(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r); else out.push(r);
    }
  };
  walk('');
  return out.sort();
}

describe('DirectorySink record', () => {
  it('journals directories it creates and files it writes elsewhere; removal keeps the rest', async () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, '0'));
    fs.writeFileSync(path.join(root, '0', 'data.csv'), 'mine');
    const sink = new DirectorySink(root);
    await sink.initialize({ force: true, resume: false });
    await sink.begin({ force: true, resume: false });
    await sink.write('0/0/0.pbf', 'tile');
    await sink.write('0/1.json', 'tile in a folder the user made');
    await sink.write('3/1/2.json', 'tile');
    await sink.write('tileset.json', '{}');
    const record = readRecord(root);
    expect([...record.dirs].sort()).toEqual(['0/0', '3', '3/1']);
    expect([...record.files].sort()).toEqual(['0/1.json', 'tileset.json']);
    // A user's file in a directory the build created, a tile-named one in the user's folder: both stay.
    fs.writeFileSync(path.join(root, '3', 'readme'), 'mine');
    fs.writeFileSync(path.join(root, '0', '5.json'), 'mine');
    await sink.finish();
    expect(fs.readdirSync(path.join(root, RECORD_DIR))).toEqual(['manifest.json']);
    const removal = removeRecorded(root, readRecord(root));
    expect(files(root)).toEqual(['0/5.json', '0/data.csv', '3/readme']);
    expect(removal).toMatchObject({ files: 4, dirs: 2, kept: ['3/readme'], keptCount: 1 });
  });

  it('removes tileset.json first: a removal that fails part-way leaves no descriptor beside what it took, and names the file', () => {
    const root = tempDir();
    // An archive that cannot be unlinked (here a folder in its place: EISDIR, whoever runs this; a user's immutable
    // or sticky-folder file in life), listed before the descriptor.
    fs.mkdirSync(path.join(root, 'a.pmtiles'));
    fs.writeFileSync(path.join(root, 'build-report.json'), '{}');
    fs.writeFileSync(path.join(root, 'tileset.json'), '{}');
    const record = { dirs: new Set<string>(), files: new Set(['a.pmtiles', 'build-report.json', 'tileset.json']) };
    expect(() => removeRecorded(root, record)).toThrow(`cannot remove ${path.join(root, 'a.pmtiles')}, which an earlier build wrote: it is a folder now, which no build made`);
    expect(fs.existsSync(path.join(root, 'tileset.json'))).toBe(false);
  });

  it('never reaches outside OUT: a planted record naming ../ paths, or a folder now a link out, is passed over', () => {
    const parent = tempDir();
    const root = path.join(parent, 'out'), victim = path.join(parent, 'victim');
    fs.mkdirSync(path.join(root, RECORD_DIR), { recursive: true });
    fs.mkdirSync(path.join(victim, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(victim, 'important.txt'), 'keep');
    fs.writeFileSync(path.join(victim, 'sub', '5.pbf'), 'keep');
    fs.writeFileSync(path.join(root, RECORD_DIR, 'manifest.json'), JSON.stringify({
      'written-by': 'mudm-tiles', version: 1, dirs: ['../victim/sub', '..', '', '/tmp', 'a/./b', '7'], files: ['../victim/important.txt', 'tileset.json'],
    }));
    // A recorded folder the user has since replaced by a link to their own data.
    fs.symlinkSync(path.join(victim, 'sub'), path.join(root, '7'));
    const record = readRecord(root);
    expect([...record.dirs]).toEqual(['7']);
    expect([...record.files]).toEqual(['tileset.json']);
    fs.mkdirSync(path.join(root, RECORD_DIR, 'x'));
    fs.writeFileSync(path.join(root, RECORD_DIR, 'x', 'mine.txt'), 'keep');
    removeRecorded(root, record);
    expect(files(victim)).toEqual(['important.txt', 'sub/5.pbf']);
    // The record's own files go; a file of the user's in its folder stays.
    expect(files(path.join(root, RECORD_DIR))).toEqual(['x/mine.txt']);
    expect(fs.lstatSync(path.join(root, '7')).isSymbolicLink()).toBe(true);
    // Nor does a write: paths reach the sink from inputs too (an archive's planes, for extract).
    const sink = new DirectorySink(root);
    return expect(sink.write('0/../../victim/x.pbf', 'x')).rejects.toThrow('"0/../../victim/x.pbf" is no path inside the output folder');
  });

  it('--force and --resume refuse a recorded folder that is now a link (moved to another disk, linked back), removing nothing', async () => {
    const parent = tempDir();
    const root = path.join(parent, 'out'), moved = path.join(parent, 'bigdisk');
    const first = new DirectorySink(root);
    await first.initialize({ force: false, resume: false });
    await first.begin({ force: false, resume: false });
    await first.write('4/0/1.json', 'tile');
    await first.write('tileset.json', '{}');
    await first.finish();
    fs.renameSync(path.join(root, '4'), moved);
    fs.symlinkSync(moved, path.join(root, '4'));
    fs.writeFileSync(path.join(moved, '0', '2.pbf'), 'the user\'s');
    for (const opts of [{ force: true, resume: false }, { force: false, resume: true }]) {
      const again = new DirectorySink(root);
      await again.initialize(opts);
      await expect(again.begin(opts)).rejects.toThrow(`${path.join(root, '4')} is a symbolic link where a build made a folder (or lies on its way): the build would remove and write tiles through it, outside the output; put the folder back in its place or remove the link (nothing was removed)`);
    }
    expect(files(moved)).toEqual(['0/1.json', '0/2.pbf']);
    expect(fs.existsSync(path.join(root, 'tileset.json'))).toBe(true);
  });

  it('refuses to resume where a symbolic link lies at a tile\'s name in a folder a build made, writing nothing', async () => {
    const root = tempDir();
    const first = new DirectorySink(root);
    await first.initialize({ force: false, resume: false });
    await first.begin({ force: false, resume: false });
    await first.write('4/0/1.pbf', 'tile');
    await first.finish();
    const victim = path.join(tempDir(), 'victim');
    fs.writeFileSync(victim, 'the user\'s');
    fs.symlinkSync(victim, path.join(root, '4', '0', '2.pbf'));
    const again = new DirectorySink(root);
    await again.initialize({ force: false, resume: true });
    const link = path.join(root, '4', '0', '2.pbf');
    await expect(again.begin({ force: false, resume: true })).rejects.toThrow(new OutputError(`${link} is a symbolic link where a build writes a tile: a tile is never a link, nor written through one (it may point out of the output); remove the link (nothing was written)`, link));
    expect(fs.readFileSync(victim, 'utf8')).toBe('the user\'s');
  });

  it('reads every whole line of a journal a kill cut short', () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, RECORD_DIR));
    fs.writeFileSync(path.join(root, RECORD_DIR, '0badcafe.jsonl'), '{"dir":"2"}\n{"file":"tileset.json"}\n{"dir":"2/');
    const record = readRecord(root);
    expect([...record.dirs]).toEqual(['2']);
    expect([...record.files]).toEqual(['tileset.json']);
  });
});

describe('MemorySink, the in-memory twin', () => {
  it('force removes only the keys a build wrote', async () => {
    const sink = new MemorySink();
    sink.files.set('0/data.csv', new Uint8Array([1]));
    await sink.initialize({ force: true, resume: false });
    await sink.begin({ force: true, resume: false });
    await sink.write('0/0/0.pbf', 'tile');
    await sink.write('tileset.json', '{}');
    const removal = await sink.begin({ force: true, resume: false });
    expect(removal?.files).toBe(2);
    expect([...sink.files.keys()]).toEqual(['0/data.csv']);
  });

  it('refuses to replace a tileset.json it did not write', async () => {
    const sink = new MemorySink();
    sink.files.set('tileset.json', new Uint8Array([1]));
    await expect(sink.initialize({ force: true, resume: false })).rejects.toThrow(/not written by a mudm-tiles build/);
  });
});

describe('makeJournaledDirectory', () => {
  it('records the directories it makes, before making them, and none that were there', () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, '5'));
    const journal = new Journal(root, '0badcafe');
    // The journal is written first: once an entry is there, the directory may still be missing (a kill in between).
    const add = journal.add.bind(journal);
    const seen: boolean[] = [];
    journal.add = (e) => { add(e); seen.push(fs.existsSync(path.join(root, (e as { dir: string }).dir))); };
    expect(makeJournaledDirectory(root, '5/3/7', journal)).toEqual(['5/3', '5/3/7']);
    expect(seen).toEqual([false, false]);
    expect(fs.statSync(path.join(root, '5/3/7')).isDirectory()).toBe(true);
    expect(makeJournaledDirectory(root, '5/3', journal)).toEqual([]);
    journal.close();
    expect([...readRecord(root).dirs].sort()).toEqual(['5/3', '5/3/7']);
  });
});

describe('Journal', () => {
  it('a withdrawn file is no longer the build\'s, unless another journal (a later build\'s) names it', () => {
    const root = tempDir();
    const failed = new Journal(root, '0000000a');
    failed.add({ file: 'tiles.pbf.pmtiles' });
    failed.add({ file: 'tiles.json.pmtiles' });
    failed.add({ withdrawn: 'tiles.pbf.pmtiles' });
    failed.close();
    expect([...readRecord(root).files]).toEqual(['tiles.json.pmtiles']);
    const later = new Journal(root, '0000000b');
    later.add({ file: 'tiles.pbf.pmtiles' });
    later.close();
    expect([...readRecord(root).files].sort()).toEqual(['tiles.json.pmtiles', 'tiles.pbf.pmtiles']);
  });
});

describe('TileFiles', () => {
  it('writers of one thread share the directories they know; one gone since is made and journaled again', () => {
    const root = tempDir();
    const known = new Set<string>();
    const first = new TileFiles(root, known);
    expect(first.write('5/3/4.pbf', Uint8Array.of(1))).toBeUndefined();
    first.close();
    expect(known).toEqual(new Set(['5/3']));
    fs.rmSync(path.join(root, '5'), { recursive: true });
    const second = new TileFiles(root, known);
    expect(second.write('5/3/5.pbf', Uint8Array.of(2, 3))).toBeUndefined();
    second.close();
    expect([...fs.readFileSync(path.join(root, '5', '3', '5.pbf'))]).toEqual([2, 3]);
    expect([...readRecord(root).dirs].sort()).toEqual(['5', '5/3']);
  });

  it('says what went wrong, with the full path, instead of throwing', () => {
    const root = tempDir();
    fs.writeFileSync(path.join(root, '5'), 'a file in the way');
    const files = new TileFiles(root);
    const failed = files.write('5/3/4.pbf', Uint8Array.of(1));
    files.close();
    expect(failed?.code).toBe('ENOTDIR');
    expect(failed?.path).toBe(path.join(root, '5/3/4.pbf'));
  });

  it('never writes a tile through a symbolic link at its path (planted between a kill and --resume): says so, the target untouched', () => {
    const root = tempDir();
    const victim = path.join(tempDir(), 'victim.txt');
    fs.writeFileSync(victim, 'the user\'s');
    fs.mkdirSync(path.join(root, '5', '3'), { recursive: true });
    fs.symlinkSync(victim, path.join(root, '5', '3', '4.pbf'));
    const files = new TileFiles(root);
    const failed = files.write('5/3/4.pbf', Uint8Array.of(1, 2, 3));
    files.close();
    expect(failed?.code).toBe('ELOOP');
    expect(fs.readFileSync(victim, 'utf8')).toBe('the user\'s');
    const full = path.join(root, '5/3/4.pbf');
    expect(writeFailure(Object.assign(new Error(failed?.message), { code: failed?.code }), full)).toEqual(new OutputError(
      `${full} is a symbolic link where this build writes a tile: a tile is never written through a link (it may point out of the output); remove the link`, full, 'ELOOP',
    ));
  });
});

describe('a file where the build makes a folder', () => {
  it('is named itself when a write meets it (exit 4), and the user\'s file stays', async () => {
    const root = tempDir();
    const sink = new DirectorySink(root);
    await sink.initialize({ force: false, resume: false });
    await sink.begin({ force: false, resume: false });
    // Put there while the build runs (begin's look found nothing).
    fs.writeFileSync(path.join(root, '5'), 'mine');
    const err = await sink.write('5/0/0.pbf', 'tile').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutputError);
    expect((err as OutputError).exitCode).toBe(4);
    expect((err as Error).message).toBe(`${path.join(root, '5')} is a file where this build makes a folder (on the way to ${path.join(root, '5/0/0.pbf')}); move it away or choose another output`);
    expect(fs.readFileSync(path.join(root, '5'), 'utf8')).toBe('mine');
    expect(fs.readdirSync(root).sort()).toEqual(['.mudm-written', '5']);
  });

  it('describes other failures by the path written', () => {
    const root = tempDir();
    fs.writeFileSync(path.join(root, 'z'), 'mine');
    const enotdir = Object.assign(new Error('ENOTDIR'), { code: 'ENOTDIR' });
    expect(writeFailure(enotdir, path.join(root, 'z'), true).message).toBe(`${path.join(root, 'z')} is a file where this build makes a folder; move it away or choose another output`);
    expect(writeFailure(Object.assign(new Error('full'), { code: 'ENOSPC' }), path.join(root, 'a.pbf')).message).toBe(`cannot write ${path.join(root, 'a.pbf')}: no space left on device`);
    // A folder on the way after all (the file gone since): the error as it came.
    expect(writeFailure(enotdir, path.join(root, 'y', 'a.pbf')).message).toBe(`cannot write ${path.join(root, 'y', 'a.pbf')}: a file is in the way of a directory`);
  });
});
