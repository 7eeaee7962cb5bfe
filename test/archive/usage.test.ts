// What the CLI refuses about archives, with the message and the exit code: JSON tiles or several planes in one
// archive, --preview with one archive, an unknown --archive kind, an archive in the way, extract of no archive, and
// no tile to store (refused for a directory alike).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startServer } from '../../src/serve.js';
import { memoryIO } from '../../src/cli/io.js';
import { Compression, TileType } from '../../src/archive/pmtiles-format.js';
import { PmtilesWriter } from '../../src/archive/pmtiles-writer.js';
import { scratchDirs } from './helpers.js';
import { PLAN_VERSION } from '../../src/build/state.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../sample-data/slide');
const scratch = scratchDirs('archive-usage');

async function cli(...argv: string[]): Promise<{ code: number; err: string; out: string }> {
  const io = memoryIO();
  const code = await main(argv, io);
  return { code, err: io.err(), out: io.out() };
}

/** Why a build of features too small to draw at zooms 0–2 of a 1024-px world with --lod none writes nothing. */
const noTile = (out: string) => `${out}: there is no tile to write (every feature left out: too small to draw at zooms 0–2 with --lod none: nothing of it is left on the finest zoom's grid, 1/16 image pixel): nothing to build, no descriptor written; --lod auto draws a feature too small for a zoom as a point`;

describe('usage errors (exit 2) point to --archive', () => {
  it.each([
    [['--format', 'json'], (f: string) => `-o ${f} writes one PMTiles archive of PBF tiles; for --format json write one archive per plane and format with -o DIR --archive pmtiles`],
    [['--format', 'json,pbf'], (f: string) => `-o ${f} writes one PMTiles archive of PBF tiles; for --format json,pbf write one archive per plane and format with -o DIR --archive pmtiles`],
    [['--preview'], (f: string) => `--preview writes PNG files beside the tiles, which -o ${f} (one archive) has no place for: write -o DIR --archive pmtiles`],
    [['--archive', 'pmtiles'], (f: string) => `-o ${f} is one PMTiles archive already; --archive pmtiles writes one archive per plane and format under a directory: drop --archive, or give -o a directory name`],
    // A value --format does not take is said as for a directory build, not taken for a format archives lack.
    [['--format', 'xml'], () => '--format takes json, pbf or json,pbf, found "xml"'],
    [['--format', 'PBF'], () => '--format takes json, pbf or json,pbf, found "PBF"'],
  ])('-o FILE.pmtiles %j', async (extra, message) => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const r = await cli('build', SAMPLE, '-o', file, ...extra);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`error: ${message(file)}\n`);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('-o FILE.pmtiles of features that give no tile: exit 1, no archive (PMTiles has no empty one)', async () => {
    const dir = scratch();
    const input = path.join(dir, 'outside.json');
    fs.writeFileSync(input, JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', geometry: { type: 'Point', coordinates: [5000, 5000] }, properties: {} }] }));
    const file = path.join(dir, 'outside.pmtiles');
    const r = await cli('build', input, '-o', file, '--image-size', '1000,1000');
    // Beyond the image: no feature to place, found before any tile is made.
    expect([r.code, r.err.trim().split('\n').pop()]).toEqual([1, `error: ${input}: none of the 1 valid feature(s) can be placed (outside-image: 1, the first: ${input}:1:41: feature 0, lying at x 5,000 to 5,000, y 5,000 to 5,000): nothing to build, no descriptor written; are their coordinates in this image's pixels (1000 × 1000, --image or --image-size)?`]);
    expect(fs.readdirSync(dir)).toEqual(['outside.json']);
    // Placed, but too small to draw at any zoom (a line that rounds to one position, not thinned to a point): no tile.
    const tiny = path.join(dir, 'tiny.json');
    fs.writeFileSync(tiny, JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', geometry: { type: 'LineString', coordinates: [[10, 10], [10.001, 10]] }, properties: {} }] }));
    const m = await cli('build', tiny, '-o', file, '--image-size', '1000,1000', '--lod', 'none', '--max-zoom', '2');
    expect([m.code, m.err.trim().split('\n').pop()]).toEqual([1, `error: ${noTile(file)}`]);
    expect(fs.readdirSync(dir).sort()).toEqual(['outside.json', 'tiny.json']);
  });

  it('a directory of features that give no tile is refused as the archive is: exit 1, the same message, nothing left', async () => {
    const dir = scratch();
    const tiny = path.join(dir, 'tiny.json');
    fs.writeFileSync(tiny, JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', geometry: { type: 'LineString', coordinates: [[10, 10], [10.001, 10]] }, properties: {} }] }));
    const args = ['--image-size', '1000,1000', '--lod', 'none', '--max-zoom', '2', '--workers', '1'];
    // Each built before, exit 0: a descriptor over no tile at all, which passed for the slide's pyramid.
    for (const extra of [[], ['--format', 'json'], ['--archive', 'pmtiles']]) {
      const out = path.join(dir, 'out');
      const r = await cli('build', tiny, '-o', out, ...args, ...extra);
      expect([r.code, r.err], extra.join(' ')).toEqual([1, `error: ${noTile(out)}\n`]);
      // The zoom folders it made went with OUT, which it made: the next build needs no --force.
      expect(fs.readdirSync(dir), extra.join(' ')).toEqual(['tiny.json']);
    }
    // Into a folder of the user's, over an earlier build of it (--force): what the build wrote goes, the user's file stays.
    const out = path.join(dir, 'mine');
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, 'notes.txt'), 'mine');
    const r = await cli('build', tiny, '-o', out, ...args, '--force');
    expect([r.code, r.err]).toEqual([1, `error: ${noTile(out)}\n`]);
    expect(fs.readdirSync(out)).toEqual(['notes.txt']);
    // A sharded build stops at finalize, with its work directory (plan --force to start over).
    const sharded = path.join(dir, 'sharded');
    for (const step of [['plan', tiny, '-o', sharded, ...args], ['build-shard', sharded, '--shard', '0', '--workers', '1']]) {
      expect((await cli(...step, '-q')).code, step[0]).toBe(0);
    }
    const f = await cli('finalize', sharded, '--workers', '1');
    expect([f.code, f.err]).toEqual([1, `error: ${noTile(sharded)}\n`]);
    expect(fs.readdirSync(sharded)).toEqual(['.mudm-work']);
  });

  it('-o FILE.pmtiles --format pbf,pbf, as a directory build takes it', async () => {
    const dir = scratch();
    const r = await cli('build', SAMPLE, '-o', path.join(dir, 'slide.pmtiles'), '--format', 'pbf,pbf', '-q', '--max-zoom', '1');
    expect([r.code, r.err]).toEqual([0, '']);
  });

  it('-o NAME.pmtiles/ (a directory named like an archive)', async () => {
    const dir = scratch();
    const out = `${path.join(dir, 'y.pmtiles')}/`;
    const r = await cli('build', SAMPLE, '-o', out);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`error: -o ${out} names a directory ending in .pmtiles: one archive is -o ${path.join(dir, 'y.pmtiles')}; a directory needs another name\n`);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('-o FILE.pmtiles of an input with several planes, after reading it; nothing is left', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const r = await cli('build', SAMPLE, '-o', file, '--plane-field', 'c=c,z=z', '--workers', '1');
    expect(r.code).toBe(2);
    expect(r.err).toContain(`error: -o ${file} holds the tiles of one plane; the input has 6 (c=0,z=0; c=0,z=1; c=0,z=2; c=1,z=0; ...): write one archive per plane with -o DIR --archive pmtiles\n`);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('an --archive kind other than pmtiles, and --archive for a command that writes none', async () => {
    const dir = scratch();
    const r = await cli('build', SAMPLE, '-o', dir, '--archive', 'zip');
    expect(r.code).toBe(2);
    expect(r.err).toContain("error: option --archive must be one of pmtiles, got 'zip'");
    const f = await cli('finalize', dir, '--archive', 'pmtiles');
    expect(f.code).toBe(2);
    expect(f.err).toContain('error: option --archive does not apply to finalize (it is for build, plan)');
  });

  it('extract without -o, of a directory without a descriptor or that lists no archive, of a path that is not there', async () => {
    const dir = scratch();
    expect(await cli('extract', path.join(dir, 'x.pmtiles'))).toMatchObject({ code: 2, err: expect.stringContaining('error: extract needs an output directory: -o DIR') });
    // Archives but no descriptor (a build of --archive killed before it): no pyramid, exit 3 as for verify.
    fs.writeFileSync(path.join(dir, 'tiles.pbf.pmtiles'), 'x');
    expect(await cli('extract', dir, '-o', path.join(dir, 'out'))).toMatchObject({
      code: 3, err: expect.stringContaining(`error: ${dir} has no readable tileset.json: not a pyramid, or one whose build has not finished; nothing to extract`),
    });
    fs.writeFileSync(path.join(dir, 'tileset.json'), '{bad');
    expect((await cli('extract', dir, '-o', path.join(dir, 'out'))).code, 'a descriptor that is not JSON').toBe(3);
    fs.writeFileSync(path.join(dir, 'tileset.json'), '{"tilejson":"3.0.0","tiles":["{zlvl}/{x}/{y}.pbf"],"vector_layers":[]}');
    expect(await cli('extract', dir, '-o', path.join(dir, 'out'))).toMatchObject({
      code: 2, err: expect.stringContaining(`error: ${dir} is neither a PMTiles archive nor a directory whose tileset.json lists archives`),
    });
    expect(await cli('extract', path.join(dir, 'none.pmtiles'), '-o', path.join(dir, 'out'))).toMatchObject({
      code: 3, err: expect.stringContaining(`error: ${path.join(dir, 'none.pmtiles')}: no such archive or directory`),
    });
  });

  it('extract -o NAME.pmtiles is refused (a directory named like an archive); --force says what it removed', async () => {
    const dir = scratch();
    const archive = path.join(dir, 'slide.pmtiles');
    expect((await cli('build', SAMPLE, '-o', archive, '-q', '--max-zoom', '1')).code).toBe(0);
    const named = path.join(dir, 'b.pmtiles');
    expect(await cli('extract', archive, '-o', named)).toMatchObject({ code: 2, err: expect.stringContaining(`error: extract writes a directory, and ${named} names an archive: give -o a directory name`) });
    expect(fs.existsSync(named)).toBe(false);
    const out = path.join(dir, 'out');
    expect((await cli('extract', archive, '-o', out, '-q')).code).toBe(0);
    const again = await cli('extract', archive, '-o', out, '--force');
    expect(again.code).toBe(0);
    expect(again.err).toMatch(new RegExp(`^--force: removed \\d+ files and \\d+ directories an earlier build wrote in ${out.replace(/[.]/g, '\\.')}`));
  });
});

describe('one archive of a folder build', () => {
  it('is refused by inspect, verify and extract (exit 2), which point to the folder', async () => {
    const out = path.join(scratch(), 'out');
    expect((await cli('build', SAMPLE, '-o', out, '-q', '--archive', 'pmtiles', '--plane-field', 'c=c,z=z', '--layer-per-file', '--format', 'json,pbf', '--max-zoom', '1')).code).toBe(0);
    for (const [argv, name] of [[['inspect'], 'tiles-c1-z2.pbf.pmtiles'], [['verify'], 'tiles-c1-z2.pbf.pmtiles'], [['extract', '-o', path.join(out, 'x')], 'tiles-c0-z1.json.pmtiles']] as const) {
      const file = path.join(out, name);
      const r = await cli(argv[0], file, ...argv.slice(1));
      expect(r.code, argv[0]).toBe(2);
      const plane = name.includes('c1-z2') ? 'plane c=1, z=2, pbf tiles' : 'plane c=0, z=1, json tiles';
      expect(r.err).toContain(`error: ${file} is one archive of a folder build (${plane}): give the folder, ${out}, whose tileset.json lists it`);
    }
    expect(fs.existsSync(path.join(out, 'x'))).toBe(false);
    expect((await cli('verify', out)).code).toBe(0);
    // Copied away from its folder: there is no folder to give, and the message says what is missing.
    const alone = path.join(scratch(), 'tiles-c1-z2.pbf.pmtiles');
    fs.copyFileSync(path.join(out, 'tiles-c1-z2.pbf.pmtiles'), alone);
    const r = await cli('verify', alone);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`error: ${alone} is one archive of a folder build (plane c=1, z=2, pbf tiles), without the folder's tileset.json beside it: it is not read alone; give the whole folder the build wrote (every archive and tileset.json)`);
    // serve would answer its tiles at the first plane's URLs, and the viewer would ask for the others beside it.
    const member = path.join(out, 'tiles-c1-z2.pbf.pmtiles');
    await expect(startServer({ root: member, port: 0 })).rejects.toThrow(`${member} is one archive of a folder build (plane c=1, z=2, pbf tiles): serve the folder, ${out}, whose tileset.json lists it`);
    // Refused, it is not left open in this process (a library caller's) until garbage collection closes it.
    const held = fs.readdirSync('/proc/self/fd').filter((fd) => { try { return fs.readlinkSync(`/proc/self/fd/${fd}`) === member; } catch { return false; } });
    expect(held).toEqual([]);
    // Renamed as well: served, its tiles answered none of the URLs its descriptor gave (a blank viewer). Its metadata
    // names the archive it was written as.
    const renamed = path.join(scratch(), 'slide.pmtiles');
    fs.copyFileSync(path.join(out, 'tiles-c0-z1.json.pmtiles'), renamed);
    const why = `${renamed} was written as tiles-c0-z1.json.pmtiles, one archive of a folder build (plane c=0, z=1, json tiles), and renamed: it is not read alone; put it back under its name among the folder's other archives and`;
    await expect(startServer({ root: renamed, port: 0 })).rejects.toThrow(`${why} serve the whole folder (every archive and tileset.json)`);
    const inspected = await cli('inspect', renamed);
    expect(inspected.code).toBe(2);
    expect(inspected.err).toContain(`error: ${why} give the whole folder`);
    // Under another archive's name, beside the folder's tileset.json (swapped): not taken for that plane's archive.
    const swapped = path.join(out, 'tiles-c1-z2.pbf.pmtiles');
    fs.copyFileSync(path.join(out, 'tiles-c0-z0.pbf.pmtiles'), swapped);
    const s = await cli('verify', swapped);
    expect(s.code).toBe(2);
    expect(s.err).toContain(`error: ${swapped} was written as tiles-c0-z0.pbf.pmtiles, one archive of a folder build (plane c=0, z=0, pbf tiles), and renamed`);
  });
});

describe('verify of one damaged archive', () => {
  it('lists it as archive-invalid (exit 1, --json too) when its header reads; exit 3 when it is no archive', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    expect((await cli('build', path.join(SAMPLE, 'cells.json'), '-o', file, '-q')).code).toBe(0);
    const bytes = fs.readFileSync(file);
    // The root directory's length (header bytes 16-23) past what it holds: it does not decompress.
    bytes.writeBigUInt64LE(BigInt(bytes.readUInt32LE(16) + 9), 16);
    fs.writeFileSync(file, bytes);
    const r = await cli('verify', file, '--json');
    expect(r.code).toBe(1);
    const result = JSON.parse(r.out) as { ok: boolean; problems: { code: string; path: string; message: string }[] };
    expect(result.ok).toBe(false);
    expect(result.problems.map((x) => [x.code, x.path])).toEqual([['archive-invalid', 'slide.pmtiles']]);
    expect(result.problems[0].message).toMatch(/^the root directory \(bytes 127–\d+\) does not decompress/);
    fs.writeFileSync(file, 'not an archive at all');
    const no = await cli('verify', file);
    expect(no.code).toBe(3);
    expect(no.err).toContain('not a PMTiles archive');
  });
});

describe('an archive in the way (exit 4)', () => {
  it('is refused without --force, and with --force when no build wrote it; the file stays as it was', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    fs.writeFileSync(file, 'not an archive');
    for (const argv of [[], ['--force']]) {
      const r = await cli('build', SAMPLE, '-o', file, ...argv);
      expect(r.code).toBe(4);
      expect(r.err).toContain(`error: ${file} was not written by a mudm-tiles build (not a PMTiles archive with a tileset descriptor as metadata): --force and --resume only replace what a build wrote`);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('not an archive');
    expect(fs.readdirSync(dir)).toEqual(['slide.pmtiles']);
  });

  // As root, another user is taken on with setpriv: in a sticky folder, that user may not remove root's archive.
  const asNobody = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;
  it.skipIf(!asNobody)('an old archive the user may not remove: permission denied (exit 4), not "a file in the way", kept whole', () => {
    const dir = scratch();
    fs.chmodSync(dir, 0o1777);
    const file = path.join(dir, 'w.pmtiles');
    const bin = path.resolve('bin/mudm-tiles.js');
    const input = path.join(SAMPLE, 'cells.json');
    expect(spawnSync('node', [bin, 'build', input, '-o', file, '-q', '--max-zoom', '1']).status).toBe(0);
    for (const f of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, f), 0o666);
    const before = fs.readFileSync(file);
    const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'node', bin, 'build', input, '-o', file, '-q', '--force', '--max-zoom', '1'], { encoding: 'utf8' });
    expect([r.status, r.stderr.trim().split('\n').pop()]).toEqual([4, `error: cannot remove ${file}, which an earlier build wrote: operation not permitted (it or its folder is immutable or append-only, as lsattr -d shows, or it may not be removed by this user). `
      + `build --force removed nothing in ${file}; its state is kept in ${path.join(dir, '.w.pmtiles.mudm-work')}: once ${file} can be removed (or is moved away), run mudm-tiles build INPUT... -o ${file} --resume, with the same inputs and options, to continue it: it removes the rest of what earlier builds wrote, then builds (build --force again starts over)`]);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(fs.readdirSync(path.join(dir, '.w.pmtiles.mudm-work')).sort()).toEqual(['owner.json', 'plan.json', 'removing.json']);
  });

  it('a link to a build\'s own archive at the archive\'s name is a user\'s: refused with --force too, the link and its target kept', async () => {
    const dir = scratch();
    const real = path.join(dir, 'a.pmtiles');
    expect((await cli('build', SAMPLE, '-o', real, '-q', '--max-zoom', '1')).code).toBe(0);
    const before = fs.readFileSync(real);
    const link = path.join(dir, 'latest.pmtiles');
    fs.symlinkSync('a.pmtiles', link);
    const r = await cli('build', SAMPLE, '-o', link, '--force', '--max-zoom', '1');
    expect([r.code, r.err.trim()]).toEqual([4, `error: ${link} was not written by a mudm-tiles build (a symbolic link): --force and --resume only replace what a build wrote; move it away or choose another output`]);
    expect(fs.readlinkSync(link)).toBe('a.pmtiles');
    expect(fs.readFileSync(real).equals(before)).toBe(true);
  });

  it('a link to nowhere at the archive\'s or the report\'s name is a file in the way too, refused before the build runs', async () => {
    for (const name of ['slide.pmtiles', 'slide.build-report.json']) {
      const dir = scratch();
      fs.symlinkSync('/nowhere/at/all', path.join(dir, name));
      for (const argv of [[], ['--force']]) {
        const r = await cli('build', SAMPLE, '-o', path.join(dir, 'slide.pmtiles'), ...argv);
        expect(r.code, `${name} ${argv.join(' ')}`).toBe(4);
        expect(r.err).toMatch(new RegExp(`^error: ${path.join(dir, name).replace(/[.]/g, '\\.')} was not written by a mudm-tiles build`));
        expect(fs.readlinkSync(path.join(dir, name))).toBe('/nowhere/at/all');
        expect(fs.readdirSync(dir)).toEqual([name]);
      }
    }
  });

  it('under --archive, an archive name the record does not list is refused even with --force; those it lists go', async () => {
    const dir = scratch();
    const out = path.join(dir, 'out');
    expect((await cli('build', SAMPLE, '-o', out, '-q', '--archive', 'pmtiles', '--format', 'pbf', '--max-zoom', '1')).code).toBe(0);
    // Where a JSON archive would go: no build wrote this one.
    const theirs = path.join(out, 'tiles.json.pmtiles');
    fs.writeFileSync(theirs, 'a user file under an archive name');
    const refused = await cli('build', SAMPLE, '-o', out, '-q', '--archive', 'pmtiles', '--force', '--max-zoom', '1');
    expect(refused.code).toBe(4);
    expect(refused.err).toContain(`error: ${theirs}: not written by a mudm-tiles build (no record in ${path.join(out, '.mudm-written')}), and named as an archive of this output, which the build may write (its planes are known only once read): --force and --resume never replace a file no build wrote; move it away or choose another output`);
    expect(fs.readFileSync(theirs, 'utf8')).toBe('a user file under an archive name');
    fs.rmSync(theirs);
    const forced = await cli('build', SAMPLE, '-o', out, '--archive', 'pmtiles', '--force', '--max-zoom', '1');
    expect(forced.code, forced.err).toBe(0);
    expect(forced.err).toMatch(/--force: removed 3 files and 0 directories an earlier build wrote in .* \(build-report\.json, tiles\.pbf\.pmtiles, tileset\.json\)/);
    expect(fs.readdirSync(out).sort()).toEqual(['.mudm-written', 'build-report.json', 'tiles.json.pmtiles', 'tiles.pbf.pmtiles', 'tileset.json']);
  });

  it('is refused with --force when another tiler wrote it, though its metadata is TileJSON', async () => {
    const dir = scratch();
    const file = path.join(dir, 'basemap.pmtiles');
    const w = new PmtilesWriter(file, { tileType: TileType.Mvt, tileCompression: Compression.None });
    w.add(0, 0, 0, Uint8Array.of(1));
    w.finish({ tilejson: '3.0.0', name: 'basemap', format: 'pbf', vector_layers: [{ id: 'roads', fields: {} }] });
    const before = fs.readFileSync(file);
    const r = await cli('build', SAMPLE, '-o', file, '--force', '-q');
    expect(r.code).toBe(4);
    expect(r.err).toContain(`error: ${file} was not written by a mudm-tiles build (not a PMTiles archive with a tileset descriptor as metadata)`);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  it('another build\'s work directory is named for what goes on with it, before the output is looked at (--archive too)', async () => {
    const dir = scratch();
    const out = path.join(dir, 'planes');
    const work = path.join(out, '.mudm-work');
    const argv = ['build', SAMPLE, '-o', out, '--archive', 'pmtiles', '-q', '--max-zoom', '1'];
    expect((await cli(...argv)).code).toBe(0);
    // As a build killed while reading leaves it: a work directory, no plan; the earlier output still there.
    fs.mkdirSync(work);
    let r = await cli(...argv);
    expect(r.code).toBe(4);
    expect(r.err).toContain(`error: ${work} holds the state of another build of this output, which has no plan yet (it is still reading its input, or stopped without a record of its process): nothing there to continue; wait for it to end, or start over with --force once no build runs there`);
    // Killed after its plan: --resume continues it.
    fs.writeFileSync(path.join(work, 'plan.json'), JSON.stringify({ version: PLAN_VERSION, shards: 1 }));
    r = await cli(...argv);
    expect(r.code).toBe(4);
    expect(r.err).toContain(`error: ${work} holds the state of another build of this output (interrupted, or still running): --resume continues it, --force starts over, removing that state`);
    r = await cli(...argv, '--resume', '--force');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--resume continues the build in OUT and --force starts over, removing it: give one of them');
    expect((await cli(...argv, '--force')).code).toBe(0);
  });

  it('build-shard says when it tiles a damaged shard anew, and finalize run again after success answers with the build\'s report', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const work = path.join(dir, '.slide.pmtiles.mudm-work');
    expect((await cli('plan', SAMPLE, '-o', file, '--shards', '2', '-q', '--max-zoom', '1')).code).toBe(0);
    for (const shard of ['0', '1']) expect((await cli('build-shard', file, '--shard', shard, '-q')).code).toBe(0);
    fs.rmSync(path.join(work, 'parts', 'shard-0'), { recursive: true });
    let r = await cli('finalize', file, '-q');
    expect(r.code).toBe(4);
    expect(r.err).toContain(`error: cannot finalize: the archive part slide.pmtiles.part is missing, of shard 0 in ${work}: run build-shard --shard 0 again (it tiles its units anew)`);
    r = await cli('build-shard', file, '--shard', '0', '--progress', 'none');
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/warning: shard 0: its archive parts were damaged \(slide\.pmtiles\.part is missing\): its \d+ unit\(s\) are tiled again/);
    r = await cli('finalize', file);
    expect(r.code, r.err).toBe(0);
    const archive = fs.readFileSync(file);
    // A workflow retrying the step that succeeded: nothing to do, the same report, the archive untouched.
    const again = await cli('finalize', file);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toContain(`${file} is finalized already (a complete output, its work directory gone): nothing to do`);
    expect(again.out).toBe(r.out);
    expect(fs.readFileSync(file).equals(archive)).toBe(true);
  });

  it('a plain build does not start over another build\'s work directory (interrupted, running, planned): exit 4, nothing touched; the same plan again is exit 0', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const work = path.join(dir, '.slide.pmtiles.mudm-work');
    expect((await cli('plan', SAMPLE, '-o', file, '--shards', '2', '-q', '--max-zoom', '1')).code).toBe(0);
    expect((await cli('build-shard', file, '--shard', '0', '-q')).code).toBe(0);
    const state = fs.readdirSync(work).sort();
    const planBytes = fs.readFileSync(path.join(work, 'plan.json'));
    // A plan of other options (--max-zoom, --shards) is another build's; the same plan again is the one there (below).
    for (const argv of [['build', SAMPLE, '-o', file, '-q', '--max-zoom', '1'], ['plan', SAMPLE, '-o', file, '--shards', '2', '-q', '--max-zoom', '2'], ['plan', SAMPLE, '-o', file, '--shards', '3', '-q', '--max-zoom', '1']]) {
      const r = await cli(...argv);
      expect(r.code, argv.join(' ')).toBe(4);
      expect(r.err).toContain(`error: ${work} holds the state of another build of this output, planned for 2 shard(s): build-shard and finalize go on with it, --force starts over, removing that state`);
      expect(fs.readdirSync(work).sort()).toEqual(state);
      expect(fs.existsSync(file)).toBe(false);
    }
    // The same plan again (a workflow engine retrying the step): nothing to do, exit 0, the plan and shard 0's work kept.
    const again = await cli('plan', SAMPLE, '-o', file, '--shards', '2', '--max-zoom', '1');
    expect(again.code, again.err).toBe(0);
    expect(again.err).toMatch(new RegExp(`^${work.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} holds this plan already, of the same inputs and options: nothing to do; \\d+ features in \\d+ work unit\\(s\\) over 2 shard\\(s\\), for build-shard and finalize\n$`));
    expect(fs.readdirSync(work).sort()).toEqual(state);
    expect(fs.readFileSync(path.join(work, 'plan.json')).equals(planBytes)).toBe(true);
    // The shards go on and finalize, as planned.
    expect((await cli('build-shard', file, '--shard', '1', '-q')).code).toBe(0);
    const done = await cli('finalize', file, '-q');
    expect(done.code, done.err).toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual(['slide.build-report.json', 'slide.pmtiles']);
  });

  it('finalize refuses what no build wrote at the names it writes, before touching anything', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const planned = await cli('plan', SAMPLE, '-o', file, '--shards', '1', '--max-zoom', '1');
    expect(planned.code).toBe(0);
    // The work directory it names is the one beside the file.
    expect(planned.err + planned.out).toContain(`over 1 shard(s) in ${path.join(dir, '.slide.pmtiles.mudm-work')}`);
    expect((await cli('build-shard', file, '--shard', '0', '-q')).code).toBe(0);
    fs.writeFileSync(file, 'precious');
    const r = await cli('finalize', file, '-q');
    expect(r.code).toBe(4);
    expect(r.err).toContain(`error: ${file} was not written by a mudm-tiles build`);
    expect(fs.readFileSync(file, 'utf8')).toBe('precious');
    // Under --archive: a foreign archive name and a foreign report in OUT; nothing goes, the work state stays.
    const out = path.join(dir, 'out');
    expect((await cli('plan', SAMPLE, '-o', out, '--archive', 'pmtiles', '--shards', '1', '-q', '--max-zoom', '1')).code).toBe(0);
    expect((await cli('build-shard', out, '--shard', '0', '-q')).code).toBe(0);
    fs.writeFileSync(path.join(out, 'tiles.pbf.pmtiles'), 'mine');
    fs.writeFileSync(path.join(out, 'build-report.json'), '{"mine":1}');
    const refused = await cli('finalize', out, '-q');
    expect(refused.code).toBe(4);
    expect(fs.readFileSync(path.join(out, 'tiles.pbf.pmtiles'), 'utf8')).toBe('mine');
    expect(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')).toBe('{"mine":1}');
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json'))).toBe(true);
  });

  it('is replaced with --force when a build wrote it', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    expect((await cli('build', SAMPLE, '-o', file, '-q', '--max-zoom', '1')).code).toBe(0);
    const first = fs.readFileSync(file);
    const again = await cli('build', SAMPLE, '-o', file, '-q', '--max-zoom', '2');
    expect(again.code).toBe(4);
    expect(again.err).toContain(`error: output ${file} exists, written by an earlier build; use --force to replace it`);
    const r = await cli('build', SAMPLE, '-o', file, '--force', '--max-zoom', '2');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('--force: removed what an earlier build wrote: slide.pmtiles, slide.build-report.json [removed]\n');
    expect(fs.readFileSync(file).equals(first)).toBe(false);
    expect(fs.readdirSync(dir).sort()).toEqual(['slide.build-report.json', 'slide.pmtiles']);
  });
});
