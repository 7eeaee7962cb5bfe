// --force removes only what an earlier build recorded writing; --resume continues only the build OUT's work state describes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { BIN, expectOk, expectSamePyramid, listFiles, removeTemps, runCli, runProcess, tempDir } from '../e2e/helpers.js';

afterAll(removeTemps);

/** A small FeatureCollection of `n` squares along the diagonal of a `side` px image. */
function squares(file: string, n: number, side: number): void {
  const step = side / (n + 1);
  const features = Array.from({ length: n }, (_, i) => {
    const x = step * (i + 0.5), y = step * (i + 0.5), s = step / 2;
    return { type: 'Feature', id: i + 1, geometry: { type: 'Polygon', coordinates: [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]] }, properties: { n: i } };
  });
  fs.writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features }));
}

/** Every file under `dir` with its bytes, for "nothing was touched". */
function snapshot(dir: string): Map<string, string> {
  return new Map(listFiles(dir).map((f) => [f, fs.readFileSync(path.join(dir, f)).toString('base64')]));
}

/** The user's own files: digit-named folders included, one of them where the build writes its zoom-0 tiles. */
const USER_FILES: Record<string, string> = {
  '2024/holiday/img.jpg': 'x',
  '7/readme': 'notes',
  '0/data.csv': 'a,b\n1,2\n',
  'notes.txt': 'mine',
};

function plantUserFiles(out: string): void {
  for (const [rel, text] of Object.entries(USER_FILES)) {
    fs.mkdirSync(path.dirname(path.join(out, rel)), { recursive: true });
    fs.writeFileSync(path.join(out, rel), text);
  }
}

function expectUserFiles(out: string): void {
  for (const [rel, text] of Object.entries(USER_FILES)) {
    expect(fs.existsSync(path.join(out, rel)), `${rel} survives`).toBe(true);
    expect(fs.readFileSync(path.join(out, rel), 'utf8')).toBe(text);
  }
}

let big = '';
let small = '';
let cleanSmall = '';

beforeAll(async () => {
  const dir = tempDir('force-in');
  big = path.join(dir, 'big.json');
  small = path.join(dir, 'small.json');
  squares(big, 40, 4000);
  squares(small, 5, 900);
  cleanSmall = path.join(dir, 'clean');
  expectOk(await runCli(['build', small, '-o', cleanSmall, '-q']), 'clean build of small.json');
});

/** Files of the pyramid alone: what a build into an empty folder writes, without the record of it. */
function pyramidFiles(out: string): string[] {
  return listFiles(out).filter((f) => !f.startsWith('.mudm-written/') && !(f in USER_FILES));
}

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

/** Whether strace runs here (.ci/run installs it): it kills a process at an exact system call. */
const hasStrace = (() => {
  try { execFileSync('strace', ['-V'], { stdio: 'ignore' }); return true; } catch { return false; }
})();

describe.skipIf(!hasStrace)('a --force removal killed part-way (strace kills at the 12th unlink)', () => {
  /** Runs the CLI killed at its `when`-th unlink: where --force removes the earlier pyramid's files. */
  const killedAtUnlink = (args: string[], when: number) => runProcess('strace', [
    '-f', '-qq', '-o', '/dev/null', '-e', 'trace=unlink,unlinkat', '-e', `inject=unlink,unlinkat:signal=SIGKILL:when=${when}`, process.execPath, BIN, ...args,
  ]);
  /** OUT holding a pyramid of big.json with more zooms than small.json's build makes: its finest tiles are the old build's alone. */
  async function oldPyramid(tag: string): Promise<string> {
    const out = path.join(tempDir(tag), 'out');
    expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '6']), 'the earlier build');
    expect(listFiles(out).length).toBeGreaterThan(40);
    return out;
  }

  it('build --resume removes the rest of the earlier pyramid before it writes: the same pyramid as a clean build', async () => {
    const out = await oldPyramid('force-killed');
    const killed = await killedAtUnlink(['build', small, '-o', out, '-q', '--force'], 12);
    expect(killed.signal ?? killed.code, killed.stderr).not.toBe(0);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    expect(fs.existsSync(path.join(out, '6'))).toBe(true);
    // The steps of a sharded build say whose work directory it is, the command that was stopped, and what goes on with it.
    const before = snapshot(out);
    for (const [args, nothing] of [[['build-shard', out, '--shard', '0'], 'build-shard: no shard 0 to tile'], [['finalize', out], 'finalize: nothing to finalize']] as const) {
      const refused = await runCli(args);
      expect([refused.code, refused.stderr]).toEqual([2, `error: ${nothing}: ${out} holds no plan for shards but the work directory of a plain build (${path.join(out, '.mudm-work')}, which build made, not plan), `
        + `interrupted by build --force before it had removed what an earlier build wrote in ${out} (some of it is left): mudm-tiles build INPUT... -o ${out} --resume continues it, with the inputs and options it was given, removing the rest first (build --force again starts over); `
        + `to build it in shards instead, run mudm-tiles plan INPUT... -o ${out} --shards N --force, then build-shard and finalize\n`]);
    }
    expect(snapshot(out)).toEqual(before);
    expectOk(await runCli(['build', small, '-o', out, '-q', '--resume']), 'build --resume');
    expectSamePyramid(out, cleanSmall, ['run'], true);
  });

  it('build-shard after plan --force killed so refuses, naming what to run; plan --force again then gives the clean pyramid', async () => {
    const out = await oldPyramid('plan-force-killed');
    const killed = await killedAtUnlink(['plan', small, '-o', out, '-q', '--force', '--shards', '2'], 12);
    expect(killed.signal ?? killed.code, killed.stderr).not.toBe(0);
    const refused = await runCli(['build-shard', out, '--shard', '0', '-q']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toBe(`error: ${path.join(out, '.mudm-work')}: plan --force was stopped before it removed what an earlier build wrote in the output, and some of it is left: run plan --force again\n`);
    expectOk(await runCli(['plan', small, '-o', out, '-q', '--force', '--shards', '2']), 'plan --force');
    for (const shard of ['0', '1']) expectOk(await runCli(['build-shard', out, '--shard', shard, '-q']), `shard ${shard}`);
    expectOk(await runCli(['finalize', out, '-q']), 'finalize');
    expectSamePyramid(out, cleanSmall, ['run', 'timings', 'units'], true);
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

describe('a --force removal that cannot remove what an earlier build wrote', () => {
  it('a folder where the build wrote a file: refused before anything goes (exit 4), naming it; moved away, --force goes on', async () => {
    const out = path.join(tempDir('force-folder'), 'out');
    expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '4']), 'the earlier build');
    plantUserFiles(out);
    const report = path.join(out, 'build-report.json');
    fs.rmSync(report);
    fs.mkdirSync(report);
    fs.writeFileSync(path.join(report, 'mine.txt'), 'mine');
    const before = snapshot(out);
    const r = await runCli(['build', small, '-o', out, '-q', '--force']);
    expect([r.code, r.stderr]).toEqual([4, `error: ${report} is a folder where an earlier build wrote a file: no build made it, and --force removes only what builds wrote; move it away or choose another output (nothing was removed)\n`]);
    expect(snapshot(out)).toEqual(before);
    fs.renameSync(report, path.join(path.dirname(out), 'moved'));
    expectOk(await runCli(['build', small, '-o', out, '-q', '--force']), 'the message followed');
    expectUserFiles(out);
    expect(fs.readFileSync(path.join(path.dirname(out), 'moved', 'mine.txt'), 'utf8')).toBe('mine');
  });

  /** Whether chattr sets attributes here (root on a file system that has them): an immutable file, which root cannot remove either. */
  const chattr = (flag: string, file: string): boolean => {
    try { execFileSync('chattr', [flag, file], { stdio: 'ignore' }); return true; } catch { return false; }
  };
  const hasChattr = (() => {
    const probe = path.join(tempDir('chattr-probe'), 'f');
    fs.writeFileSync(probe, '');
    return chattr('+i', probe) && chattr('-i', probe);
  })();

  it.skipIf(!hasChattr)('an immutable file, or a folder in an append-only one: exit 4 naming it, what was removed and what to run; the user\'s files stay, and --force again, once it can go, gives the clean pyramid', async () => {
    for (const [rel, flag] of [['build-report.json', '+i'], ['4', '+a']] as const) {
      const out = path.join(tempDir('force-immutable'), 'out');
      expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '4']), 'the earlier build');
      plantUserFiles(out);
      const held = path.join(out, rel);
      expect(chattr(flag, held)).toBe(true);
      let r;
      try {
        r = await runCli(['build', small, '-o', out, '-q', '--force']);
      } finally {
        chattr(flag.replace('+', '-'), held);
      }
      // The descriptor goes first, then the tiles, folders deepest first: an append-only zoom folder keeps its column folders.
      const [stuck, removed] = rel === '4' ? [path.join(out, '4', '0'), /removed \d+ file\(s\)/] : [held, /removed 1 file\(s\)/];
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toMatch(new RegExp(`^error: cannot remove ${stuck}, which an earlier build wrote: operation not permitted \\(it or its folder is immutable or append-only, as lsattr -d shows, or it may not be removed by this user\\)\\. `));
      expect(r.stderr).toMatch(removed);
      expect(r.stderr).toContain(`of what earlier builds wrote in ${out} before it (that pyramid is no longer whole), and touched nothing else; once ${stuck} can be removed (or is moved away), run mudm-tiles build INPUT... -o ${out} --force again: it removes the rest of what earlier builds wrote, then builds\n`);
      expect(fs.existsSync(path.join(out, 'tileset.json')), 'no descriptor over a half-removed pyramid').toBe(false);
      expectUserFiles(out);
      expectOk(await runCli(['build', small, '-o', out, '-q', '--force']), '--force again');
      expectUserFiles(out);
      expect(pyramidFiles(out)).toEqual(pyramidFiles(cleanSmall));
    }
  });

  it.skipIf(!hasChattr)('plan --force stopped the same way says to plan again in shards (--shards N), not in one', async () => {
    const out = path.join(tempDir('force-immutable-plan'), 'out');
    expectOk(await runCli(['build', big, '-o', out, '-q', '--max-zoom', '4']), 'the earlier build');
    const held = path.join(out, 'build-report.json');
    expect(chattr('+i', held)).toBe(true);
    let r;
    try {
      r = await runCli(['plan', small, '-o', out, '--shards', '2', '--force']);
    } finally {
      chattr('-i', held);
    }
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(`plan --force removed 1 file(s) of what earlier builds wrote in ${out} before it (that pyramid is no longer whole), and touched nothing else; once ${held} can be removed (or is moved away), run mudm-tiles plan INPUT... -o ${out} --shards N --force again: it removes the rest of what earlier builds wrote, then plans\n`);
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
