// --force removes only what an earlier build recorded writing; --resume continues only the build OUT's work state describes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, expectOk, expectSamePyramid, listFiles, removeTemps, runCli, runProcess, tempDir } from '../e2e/helpers.js';
import { expectUserFiles, forceInputs, hasStrace, plantUserFiles, pyramidFiles, snapshot, USER_FILES } from './force-fixture.js';

afterAll(removeTemps);

const { big, small, cleanSmall } = forceInputs();

describe('--force', () => {
  it('keeps a user\'s files, digit-named folders included, and says what it removes', async () => {
    const out = path.join(tempDir('force'), 'd');
    plantUserFiles(out);
    // The first build has more zooms (a bigger image) than the second: its extra zoom folders must go.
    expectOk(await runCli(['build', big, '-o', out, '--force', '-q']), 'build big.json into the user\'s folder');
    expectUserFiles(out);
    const first = await runCli(['build', small, '-o', out, '--force']);
    expectOk(first, 'build small.json --force over it');
    expectUserFiles(out);
    expect(first.stderr).toMatch(/--force: removed \d+ files? and \d+ director(y|ies) an earlier build wrote/);
    // Exactly the pyramid a build into an empty folder writes, beside the user's files: no tile of big.json is left.
    expect(pyramidFiles(out)).toEqual(pyramidFiles(cleanSmall));
    // The record lists what the build wrote; the user's files are not in it.
    const manifest = fs.readFileSync(path.join(out, '.mudm-written', 'manifest.json'), 'utf8');
    expect(manifest).toContain('tileset.json');
    for (const rel of Object.keys(USER_FILES)) expect(manifest).not.toContain(rel);
  });

  it('plan --force and a sharded build keep them too, and record all the shards wrote', async () => {
    const out = path.join(tempDir('force-sharded'), 'd');
    plantUserFiles(out);
    expectOk(await runCli(['plan', big, '-o', out, '--force', '--shards', '2', '-q']), 'plan --force');
    for (const shard of ['0', '1']) expectOk(await runCli(['build-shard', out, '--shard', shard, '-q']), `shard ${shard}`);
    expectOk(await runCli(['finalize', out, '-q']), 'finalize');
    expectUserFiles(out);
    // Every tile of the sharded big.json build goes: the shards' records are complete.
    expectOk(await runCli(['build', small, '-o', out, '--force', '-q']), 'build small.json --force');
    expect(pyramidFiles(out)).toEqual(pyramidFiles(cleanSmall));
    expectUserFiles(out);
  });

  it('never replaces a user\'s file where a tile of the build goes (exit 4), and a later --force removes only the build\'s', async () => {
    const out = tempDir('force-in-the-way');
    fs.mkdirSync(path.join(out, '0', '0'), { recursive: true });
    fs.writeFileSync(path.join(out, '0', '0', '0.pbf'), 'mine');
    const r = await runCli(['build', small, '-o', out, '--force']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(path.join(out, '0', '0', '0.pbf'));
    expect(r.stderr).toMatch(/no build wrote it/);
    expect(fs.readFileSync(path.join(out, '0', '0', '0.pbf'), 'utf8')).toBe('mine');
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    fs.renameSync(path.join(out, '0', '0', '0.pbf'), path.join(out, 'mine.pbf'));
    expectOk(await runCli(['build', small, '-o', out, '--force', '-q']), 'once the file is moved away');
    expect(listFiles(out).filter((f) => !f.startsWith('.mudm-written/') && f !== 'mine.pbf')).toEqual(pyramidFiles(cleanSmall));
  });

  it('a rebuild with --force that finds a user\'s tile where it may write one stops before it removes the old pyramid', async () => {
    const out = tempDir('force-keeps-pyramid');
    expectOk(await runCli(['build', small, '-o', out, '--max-zoom', '1', '-q']), 'the first build');
    // A zoom the first build did not write, holding a user's file of a tile's name.
    fs.mkdirSync(path.join(out, '2', '1'), { recursive: true });
    fs.writeFileSync(path.join(out, '2', '1', '1.pbf'), 'mine');
    const before = snapshot(out);
    const r = await runCli(['build', small, '-o', out, '--max-zoom', '2', '--force']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(`error: ${path.join(out, '2', '1', '1.pbf')} is in the way: no build wrote it, and this build may write a tile there; move it away or choose another output (nothing was removed)`);
    // The whole first pyramid is there, as it was.
    expect(snapshot(out)).toEqual(before);
  });

  it('stops before writing anything at a file where a zoom folder goes: in a new OUT, and where a build made that folder', async () => {
    const out = tempDir('force-file-folder');
    fs.writeFileSync(path.join(out, '0'), 'mine');
    for (const workers of ['1', '2']) {
      const r = await runCli(['build', small, '-o', out, '--force', '--workers', workers]);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain(`error: ${path.join(out, '0')} is in the way: no build wrote it, and this build may write a tile there; move it away or choose another output (nothing was removed)`);
      expect(fs.readdirSync(out)).toEqual(['0']);
    }
    // A folder an earlier build made, now a file of the user's: the earlier pyramid stays as it was.
    const again = tempDir('force-file-folder-2');
    expectOk(await runCli(['build', small, '-o', again, '--max-zoom', '2', '-q']), 'the first build');
    fs.rmSync(path.join(again, '1'), { recursive: true });
    fs.writeFileSync(path.join(again, '1'), 'mine');
    const before = snapshot(again);
    const r = await runCli(['build', small, '-o', again, '--max-zoom', '2', '--force']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(`error: ${path.join(again, '1')} is in the way`);
    expect(snapshot(again)).toEqual(before);
  });

  it('refuses a file where a column folder goes inside a zoom folder a build made, before removing anything; files named as no folder can be stay', async () => {
    const out = tempDir('force-column-file');
    expectOk(await runCli(['build', small, '-o', out, '--max-zoom', '2', '-q']), 'the first build');
    fs.writeFileSync(path.join(out, '2', '3'), 'mine');
    const before = snapshot(out);
    const r = await runCli(['build', small, '-o', out, '--max-zoom', '2', '--force']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(`error: ${path.join(out, '2', '3')} is in the way`);
    expect(snapshot(out)).toEqual(before);
    // A year, or a number past the deepest zoom, at the top is no folder a build makes: kept, and the rebuild goes on.
    fs.rmSync(path.join(out, '2', '3'));
    fs.writeFileSync(path.join(out, '2024'), 'mine');
    fs.mkdirSync(path.join(out, '2023'));
    fs.writeFileSync(path.join(out, '2023', '1'), 'mine');
    expectOk(await runCli(['build', small, '-o', out, '--max-zoom', '2', '--force', '-q']), 'the rebuild');
    expect(fs.readFileSync(path.join(out, '2024'), 'utf8')).toBe('mine');
    expect(fs.readFileSync(path.join(out, '2023', '1'), 'utf8')).toBe('mine');
    // Archives make no tile folders: a file named 3 beside them is in nobody's way.
    const archives = tempDir('force-archives-number');
    expectOk(await runCli(['build', small, '-o', archives, '--archive', 'pmtiles', '--max-zoom', '2', '-q']), 'the archive build');
    fs.writeFileSync(path.join(archives, '3'), 'mine');
    expectOk(await runCli(['build', small, '-o', archives, '--archive', 'pmtiles', '--max-zoom', '2', '--force', '-q']), 'the archive rebuild');
    expect(fs.readFileSync(path.join(archives, '3'), 'utf8')).toBe('mine');
  });

  it('refuses a tile-named file in a folder a user made inside a zoom folder a build made, before removing anything', async () => {
    const out = tempDir('force-user-column');
    expectOk(await runCli(['build', small, '-o', out, '--max-zoom', '2', '-q']), 'the first build');
    // Column 3 of zoom 2 holds no tile of small.json: the user's folder, where a build of other data may write.
    expect(fs.existsSync(path.join(out, '2', '3'))).toBe(false);
    fs.mkdirSync(path.join(out, '2', '3'));
    fs.writeFileSync(path.join(out, '2', '3', '1.pbf'), 'mine');
    const before = snapshot(out);
    const r = await runCli(['build', small, '-o', out, '--max-zoom', '2', '--force']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toBe(`error: ${path.join(out, '2', '3', '1.pbf')} is in the way: no build wrote it, and this build may write a tile there; move it away or choose another output (nothing was removed)\n`);
    expect(snapshot(out)).toEqual(before);
  });

  it('refuses (exit 4) to replace a tileset.json no build wrote, and touches nothing', async () => {
    const out = tempDir('force-foreign');
    fs.writeFileSync(path.join(out, 'tileset.json'), '{"mine": true}');
    fs.mkdirSync(path.join(out, '3'));
    fs.writeFileSync(path.join(out, '3', '0.json'), 'mine too');
    const before = snapshot(out);
    const r = await runCli(['build', small, '-o', out, '--force']);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(path.join(out, 'tileset.json'));
    expect(r.stderr).toMatch(/not written by a mudm-tiles build/);
    expect(snapshot(out)).toEqual(before);
  });

  it('refuses (exit 4) a file, link or folder of other files where the work directory goes, with or without --force, --resume', async () => {
    const dir = tempDir('force-workdir');
    // Beside `-o s.pmtiles`, a folder of the user's; beside t.pmtiles, a file; in OUT of a directory build, a file.
    const cases: [string[], string, () => void][] = [
      [['-o', path.join(dir, 's.pmtiles')], path.join(dir, '.s.pmtiles.mudm-work'), () => {
        fs.mkdirSync(path.join(dir, '.s.pmtiles.mudm-work'));
        fs.writeFileSync(path.join(dir, '.s.pmtiles.mudm-work', 'thesis.tex'), 'chapter 1');
      }],
      [['-o', path.join(dir, 't.pmtiles')], path.join(dir, '.t.pmtiles.mudm-work'), () => fs.writeFileSync(path.join(dir, '.t.pmtiles.mudm-work'), 'notes')],
      // An owner.json does not make a folder a build's when it holds the user's files too.
      [['-o', path.join(dir, 'u.pmtiles')], path.join(dir, '.u.pmtiles.mudm-work'), () => {
        fs.mkdirSync(path.join(dir, '.u.pmtiles.mudm-work'));
        fs.writeFileSync(path.join(dir, '.u.pmtiles.mudm-work', 'owner.json'), '{"mine":true}');
        fs.writeFileSync(path.join(dir, '.u.pmtiles.mudm-work', 'notes.txt'), 'precious');
      }],
      [['-o', path.join(dir, 'A')], path.join(dir, 'A', '.mudm-work'), () => {
        fs.mkdirSync(path.join(dir, 'A'));
        fs.writeFileSync(path.join(dir, 'A', '.mudm-work'), 'mine');
      }],
    ];
    for (const [out, work, plant] of cases) {
      plant();
      const before = snapshot(dir);
      for (const more of [[], ['--force'], ['--resume']]) {
        const r = await runCli(['build', small, ...out, ...more]);
        expect(r.code, `${out[1]} ${more.join(' ')}: ${r.stderr}`).toBe(4);
        expect(r.stderr).toContain(`error: ${work} is where this output's work directory goes, and holds a`);
        expect(r.stderr).toContain('not a build\'s state, which --force and --resume do not touch; move it away, or choose another output');
        expect(snapshot(dir), `${out[1]} ${more.join(' ')}`).toEqual(before);
      }
      expect((await runCli(['plan', small, ...out, '--force', '--shards', '2'])).code).toBe(4);
      expect(snapshot(dir)).toEqual(before);
    }
    // What a removal killed part-way leaves of a build's work directory (no owner.json, no plan.json) is the build's:
    // --force takes it away.
    const partial = path.join(tempDir('force-workdir-partial'), '.v.pmtiles.mudm-work');
    fs.mkdirSync(path.join(partial, 'units'), { recursive: true });
    fs.writeFileSync(path.join(partial, 'units', '000000-abcd1234.log'), 'frames');
    expect((await runCli(['build', small, '-o', path.join(path.dirname(partial), 'v.pmtiles'), '-q'])).code).toBe(4);
    expectOk(await runCli(['build', small, '-o', path.join(path.dirname(partial), 'v.pmtiles'), '-q', '--force']), '--force over a partly removed work directory');
    expect(fs.existsSync(partial)).toBe(false);
    // A link, even one to nowhere, stays a link.
    const link = path.join(tempDir('force-workdir-link'), '.u.pmtiles.mudm-work');
    fs.symlinkSync('/nowhere/at/all', link);
    const r = await runCli(['build', small, '-o', path.join(path.dirname(link), 'u.pmtiles'), '--force']);
    expect([r.code, r.stderr]).toEqual([4, expect.stringContaining(`error: ${link} is where this output's work directory goes, and holds a symbolic link: not a build's state`)]);
    expect(fs.readlinkSync(link)).toBe('/nowhere/at/all');
  });
});

describe.skipIf(!hasStrace)('a link planted at a built tile\'s path between a kill (strace, 5th rename) and --resume', () => {
  it('is refused (exit 4) with the work state kept, and the next --resume, the link gone, gives the clean pyramid', async () => {
    const dir = tempDir('resume-link');
    const out = path.join(dir, 'out'), clean = path.join(dir, 'clean');
    expectOk(await runCli(['build', big, '-o', clean, '-q', '--max-zoom', '6']), 'the clean build');
    await runProcess('strace', ['-f', '-qq', '-o', '/dev/null', '-e', 'trace=rename,renameat,renameat2', '-e', 'inject=rename,renameat,renameat2:signal=SIGKILL:when=5', process.execPath, BIN, 'build', big, '-o', out, '-q', '--max-zoom', '6']);
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json')), 'killed after its plan').toBe(true);
    expect(fs.existsSync(path.join(out, 'tileset.json')), 'killed before its descriptor').toBe(false);
    const tile = listFiles(out).find((f) => f.endsWith('.pbf')) as string;
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'the user\'s');
    fs.rmSync(path.join(out, tile));
    fs.symlinkSync(victim, path.join(out, tile));
    const refused = await runCli(['build', big, '-o', out, '-q', '--max-zoom', '6', '--resume']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(`${path.join(out, tile)} is a symbolic link where a build writes a tile`);
    expect(fs.readFileSync(victim, 'utf8')).toBe('the user\'s');
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json')), 'the work state kept').toBe(true);
    // The link gone, and the tile with it: its unit, finished, is tiled again.
    fs.rmSync(path.join(out, tile));
    expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '6', '--resume']), 'the next --resume');
    expectSamePyramid(out, clean, ['run', 'timings'], true);
  });
});

describe.skipIf(!hasStrace)('finalize killed at a rename (strace) and run again', () => {
  it('leaves no temporary of the first run: the same pyramid as a clean build, the record of what was written included', async () => {
    const planned = path.join(tempDir('finalize-killed'), 'planned');
    expectOk(await runCli(['plan', small, '-o', planned, '-q', '--shards', '2']), 'plan');
    for (const shard of ['0', '1']) expectOk(await runCli(['build-shard', planned, '--shard', shard, '-q']), `shard ${shard}`);
    for (const when of [1, 3, 4]) {
      const out = path.join(tempDir(`finalize-killed-${when}`), 'out');
      fs.cpSync(planned, out, { recursive: true });
      const killed = await runProcess('strace', [
        '-f', '-qq', '-o', '/dev/null', '-e', 'trace=rename,renameat,renameat2', '-e', `inject=rename,renameat,renameat2:signal=SIGKILL:when=${when}`, process.execPath, BIN, 'finalize', out, '-q',
      ]);
      expect(killed.signal ?? killed.code, `rename ${when}: ${killed.stderr}`).not.toBe(0);
      expectOk(await runCli(['finalize', out, '-q']), `finalize again after a kill at rename ${when}`);
      expectSamePyramid(out, cleanSmall, ['run', 'timings', 'units']);
    }
  });
});

describe('plan run again', () => {
  it('replaces a plan for shards whose process ended before the plan\'s end (its owner record left), without --force', async () => {
    const out = path.join(tempDir('plan-retry'), 'out');
    expectOk(await runCli(['plan', small, '-o', out, '-q', '--shards', '2']), 'plan');
    const work = path.join(out, '.mudm-work');
    // What a kill between writing the plan and removing the owner record leaves: the record of a process that ended.
    fs.writeFileSync(path.join(work, 'owner.json'), JSON.stringify({ pid: 2 ** 22 + 9, host: os.hostname(), start: 'gone' }));
    // Shards do not take a plan whose writing did not end.
    const early = await runCli(['build-shard', out, '--shard', '0', '-q']);
    expect(early.code).toBe(4);
    expect(early.stderr).toBe(`error: ${work}: the process that wrote the plan (plan, or build --resume of it) ended before its end (owner.json is left): run plan again\n`);
    expectOk(await runCli(['plan', small, '-o', out, '-q', '--shards', '2']), 'plan again');
    expect(fs.existsSync(path.join(work, 'owner.json'))).toBe(false);
    // Once a shard has tiled from it, the plan is in use: refused as before.
    expectOk(await runCli(['build-shard', out, '--shard', '0', '-q']), 'shard 0');
    fs.writeFileSync(path.join(work, 'owner.json'), JSON.stringify({ pid: 2 ** 22 + 9, host: os.hostname(), start: 'gone' }));
    const refused = await runCli(['plan', small, '-o', out, '-q', '--shards', '2']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('holds the state of another build of this output');
  });
});

describe('--resume', () => {
  it('refuses (exit 2) a folder no build started, and leaves the user\'s tileset.json alone', async () => {
    const out = tempDir('resume-foreign');
    fs.writeFileSync(path.join(out, 'tileset.json'), '{"mine": true}');
    fs.writeFileSync(path.join(out, 'notes.txt'), 'mine');
    const before = snapshot(out);
    const r = await runCli(['build', small, '-o', out, '--resume']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--resume: .*no interrupted build/);
    expect(r.stderr).toContain(out);
    expect(snapshot(out)).toEqual(before);
  });

  it('says what to run: without --resume where no build began, --force where one stopped while reading', async () => {
    const none = tempDir('resume-none');
    const r = await runCli(['build', small, '-o', none, '--resume']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('nothing to continue; build without --resume (--force replaces what an earlier build wrote)');
    // A build killed while reading leaves its work directory, without a plan; a plain build refuses to start over it.
    const reading = tempDir('resume-reading');
    fs.mkdirSync(path.join(reading, '.mudm-work'));
    fs.writeFileSync(path.join(reading, '.mudm-work', 'owner.json'), JSON.stringify({ pid: 999999999, host: os.hostname() }));
    const again = await runCli(['build', small, '-o', reading, '--resume']);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain('nothing to continue; build without --resume, which replaces that state once the build that left it has ended (--force when its process is not recorded)');
    expectOk(await runCli(['build', small, '-o', reading, '--force', '-q']), 'as the message says');
  });

  it('refuses (exit 2) a finished pyramid of other inputs, and touches nothing', async () => {
    const out = path.join(tempDir('resume-finished'), 'out');
    expectOk(await runCli(['build', big, '-o', out, '-q']), 'build big.json');
    const before = snapshot(out);
    const r = await runCli(['build', small, '-o', out, '--resume']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--resume: .*no interrupted build/);
    expect(snapshot(out)).toEqual(before);
  });

  it('refuses (exit 2) an interrupted build of other options, keeping its work state for the right --resume', async () => {
    const out = path.join(tempDir('resume-options'), 'out');
    // A plan is the work state a build killed after reading leaves.
    expectOk(await runCli(['plan', small, '-o', out, '--shards', '1', '-q']), 'plan');
    const before = snapshot(out);
    const r = await runCli(['build', small, '-o', out, '--resume', '--max-zoom', '1']);
    expect(r.code, r.stderr).toBe(2);
    // What differs is named: an option, or an input.
    const head = `error: --resume: the inputs or options differ from those of the interrupted build in ${path.join(out, '.mudm-work')}`;
    expect(r.stderr).toBe(`${head} (--max-zoom was not given, is 1 now); run again with the same ones, or start over with --force (without --resume)\n`);
    const more = await runCli(['build', small, big, '-o', out, '--resume']);
    expect([more.code, more.stderr]).toEqual([2, expect.stringContaining(`${head} (input ${big} was not read then)`)]);
    expect(snapshot(out)).toEqual(before);
    // An input touched since, in a build of its own (a time set back is not the same time to the nanosecond).
    const copy = path.join(tempDir('resume-touched'), 'small.json');
    fs.copyFileSync(small, copy);
    const touchedOut = path.join(path.dirname(copy), 'out');
    expectOk(await runCli(['plan', copy, '-o', touchedOut, '--shards', '1', '-q']), 'plan of the copy');
    fs.utimesSync(copy, new Date(), new Date(Date.now() + 5000));
    const touched = await runCli(['build', copy, '-o', touchedOut, '--resume']);
    expect([touched.code, touched.stderr]).toEqual([2, expect.stringContaining(`(input ${copy} has changed since (its size or modification time, or its layer or plane))`)]);
    expectOk(await runCli(['build', small, '-o', out, '--resume', '-q']), 'the matching --resume');
    expect(pyramidFiles(out)).toEqual(pyramidFiles(cleanSmall));
  });
});
