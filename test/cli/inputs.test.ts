// The inputs of a build (or validate) command line (files, directories, --input, --manifest) through main(): what is
// refused, with the message and exit code, and what is warned of; each case stops before the build or builds a feature or two.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../../src/cli/io.js';
import { decodePbf, tmpDir } from '../helpers/pyramid.js';

const feature = (id: number, x: number, properties: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'Feature', id, properties, geometry: { type: 'Point', coordinates: [x, 10] } });

/** A folder with a.json and b.json of one feature each. */
function inputs(): string {
  const dir = tmpDir('mudm-inputs');
  fs.writeFileSync(path.join(dir, 'a.json'), `${feature(1, 10)}\n`);
  fs.writeFileSync(path.join(dir, 'b.json'), `${feature(2, 50)}\n`);
  return dir;
}

/** Runs `mudm-tiles ARGS` in `cwd`: exit code, stderr, stdout. */
async function cli(args: string[], cwd: string): Promise<{ code: number; err: string; out: string }> {
  const io = memoryIO({ cwd });
  const code = await main(args, io);
  return { code, err: io.err(), out: io.out() };
}

const USAGE = "Run 'mudm-tiles build --help' for usage.\n";

describe('--manifest entries', () => {
  it('refuses a key an entry does not take (exit 2), naming the manifest, the entry, the key and the one it may mean', async () => {
    const dir = inputs();
    const manifest = path.join(dir, 'inputs.json');
    const refused = async (entries: unknown[]) => {
      fs.writeFileSync(manifest, JSON.stringify(entries));
      const r = await cli(['build', '--manifest', 'inputs.json', '-o', 'out', '--image-size', '100,100'], dir);
      expect(r.code).toBe(2);
      expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
      return r.err;
    };
    // Both files were put on plane 0, the "channel" passed over.
    expect(await refused([{ path: 'a.json', channel: 0 }, { path: 'b.json', channel: 1 }]))
      .toBe(`error: manifest ${manifest}: entry 0 has an unknown key "channel" (did you mean "c"?): an entry takes path, t, c, z, layer\n${USAGE}`);
    expect(await refused([{ path: 'a.json', c: 0 }, { file: 'b.json', c: 1 }]))
      .toBe(`error: manifest ${manifest}: entry 1 has an unknown key "file" (did you mean "path"?): an entry takes path, t, c, z, layer\n${USAGE}`);
    expect(await refused([{ path: 'a.json', Layer: 'cells' }])).toContain('entry 0 has an unknown key "Layer" (did you mean "layer"?)');
    expect(await refused([{ path: 'a.json', colour: 'red' }])).toContain('entry 0 has an unknown key "colour": an entry takes path, t, c, z, layer\n');
  });

  it('that cannot be read is named with why, in words (exit 3): not Node\'s "ENOENT: …, open \'…\'"', async () => {
    const dir = inputs();
    const missing = await cli(['build', '--manifest', 'nope.json', '-o', 'out'], dir);
    expect([missing.code, missing.err]).toEqual([3, `error: cannot read manifest ${path.join(dir, 'nope.json')}: no such file or directory\n`]);
    fs.mkdirSync(path.join(dir, 'folder.json'));
    const folder = await cli(['build', '--manifest', 'folder.json', '-o', 'out'], dir);
    expect([folder.code, folder.err]).toEqual([3, `error: cannot read manifest ${path.join(dir, 'folder.json')}: it is a directory\n`]);
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
  });

  it('refuses a value of another type (exit 2), naming the entry, the key and the value', async () => {
    const dir = inputs();
    const manifest = path.join(dir, 'inputs.json');
    for (const [entry, why] of [
      [{ path: 3 }, 'entry 0: path must be the name of a file or directory (relative to the manifest), found 3'],
      [{ path: '' }, 'entry 0: path must be the name of a file or directory (relative to the manifest), found ""'],
      [{ c: 1 }, 'entry 0 has no "path"'],
      [{ path: 'a.json', c: '1' }, 'entry 0: c must be a non-negative integer, found "1"'],
      [{ path: 'a.json', z: 1.5 }, 'entry 0: z must be a non-negative integer, found 1.5'],
      [{ path: 'a.json', layer: 3 }, 'entry 0: layer must be a layer name (a non-empty string), found 3'],
      ['a.json', 'entry 0 must be an object such as {"path": "cells.json", "c": 1}, found "a.json"'],
    ] as const) {
      fs.writeFileSync(manifest, JSON.stringify([entry]));
      const r = await cli(['build', '--manifest', manifest, '-o', 'out'], dir);
      expect([r.code, r.err], why).toEqual([2, `error: manifest ${manifest}: ${why}\n${USAGE}`]);
    }
  });

  it('that lists no input, the only inputs given, is named as such (exit 2): it was given, so "no input given" misled', async () => {
    const dir = inputs();
    const manifest = path.join(dir, 'inputs.json');
    for (const empty of [[], { inputs: [] }]) {
      fs.writeFileSync(manifest, JSON.stringify(empty));
      const r = await cli(['build', '--manifest', 'inputs.json', '-o', 'out'], dir);
      expect([r.code, r.err]).toEqual([2, `error: manifest ${manifest} lists no input (its array is empty), and no other input is given: list the files to build in it, or pass them as arguments\n${USAGE}`]);
      expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
    }
    // Beside other inputs an empty manifest is no fault (a workflow's list of the extra files of a slide may be empty).
    const r = await cli(['build', path.join(dir, 'a.json'), '--manifest', 'inputs.json', '-o', path.join(tmpDir('mudm-inputs'), 'out'), '--image-size', '100,100', '--workers', '1'], dir);
    expect(r.code, r.err).toBe(0);
  });
});

describe('options that conflict with what the inputs say', () => {
  it('refuses (exit 2) a pair of which one would be passed over, naming both and why, before reading anything', async () => {
    const dir = inputs();
    const a = path.join(dir, 'a.json'), b = path.join(dir, 'b.json');
    const manifest = path.join(dir, 'inputs.json');
    const refused = async (args: string[], message: string) => {
      const r = await cli(['build', ...args, '-o', path.join(dir, 'out')], dir);
      expect([r.code, r.err], args.join(' ')).toEqual([2, `error: ${message}\n${USAGE}`]);
    };
    // Each built with exit 0 before, the one option passed over.
    await refused([dir, '--layer', 'X', '--layer-per-file'], '--layer X and --layer-per-file conflict: --layer names one layer for every input, --layer-per-file one for each file of a directory: give one of them');
    await refused([a, '--layer', 'X', '--layer-by', 'class'], "--layer X and --layer-by class conflict: --layer-by names each feature's layer by its field, and --layer would name only the layer of features without that field: give one of them");
    fs.writeFileSync(manifest, JSON.stringify([{ path: 'a.json', layer: 'cells' }]));
    await refused(['--manifest', manifest, '--layer-by', 'class'], `manifest ${manifest}: entry 0's layer cells and --layer-by class conflict: --layer-by names each feature's layer by its field, and the entry would name only the layer of its features without that field: give one of them`);
    fs.mkdirSync(path.join(dir, 'patches'));
    fs.copyFileSync(a, path.join(dir, 'patches', 'a.json'));
    fs.writeFileSync(manifest, JSON.stringify([{ path: 'patches', layer: 'cells' }]));
    await refused(['--manifest', manifest, '--layer-per-file'], `the layer cells that ${path.join(dir, 'patches')}'s manifest entry names and --layer-per-file conflict: the entry names one layer for the directory, --layer-per-file one for each of its files: give one of them`);
    await refused(['--input', `c=0:${a}`, '--input', `c=1:${b}`, '--plane-field', 'c=channel'], '--plane-field c=channel and the planes given with the inputs conflict: every input fixes c (--input c=N:FILE, a manifest entry\'s "c"), which wins over a field: give one of them');
    await refused([a, '-q', '--progress', 'json'], '--quiet and --progress json conflict: --quiet prints nothing but errors, progress neither: give one of them');
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
  });
});

describe('one file given twice', () => {
  it('is refused (exit 2), naming the file and both ways it was given, however the path reaches it', async () => {
    const dir = inputs();
    const a = path.join(dir, 'a.json');
    const link = path.join(tmpDir('mudm-inputs'), 'link.json');
    fs.symlinkSync(a, link);
    const other = `${dir}${path.sep}..${path.sep}${path.basename(dir)}${path.sep}a.json`;
    const manifest = path.join(dir, 'inputs.json');
    fs.writeFileSync(manifest, JSON.stringify([{ path: 'a.json', c: 1 }]));
    const twice = (first: string, second: string) => `error: ${a} is given twice, as ${first} and as ${second}: each of its features would be read twice and be twice in the pyramid; give it once\n${USAGE}`;
    // Each read every feature twice before (2 features of 1, exit 0).
    for (const [args, first, second] of [
      [[a, a], `${a} (argument 1)`, `${a} (argument 2)`],
      [[a, link], `${a} (argument 1)`, `${link} (argument 2)`],
      [[a, other], `${a} (argument 1)`, `${other} (argument 2)`],
      [[dir, a], `${a} (argument 1, in directory ${dir})`, `${a} (argument 2)`],
      // A plane fixed for one only: the other's features may land on it too.
      [[a, '--manifest', manifest], `${a} (argument 1)`, `a.json (manifest ${manifest} entry 0)`],
    ] as const) {
      const r = await cli(['build', ...args, '-o', path.join(dir, 'out')], dir);
      expect([r.code, r.err], args.join(' ')).toEqual([2, twice(first, second)]);
    }
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
    // Links to nothing are no file given twice: each is named as unreadable (exit 3).
    fs.symlinkSync(path.join(dir, 'gone-1'), path.join(dir, 'x.json'));
    fs.symlinkSync(path.join(dir, 'gone-2'), path.join(dir, 'y.json'));
    const broken = await cli(['build', dir, '-o', path.join(dir, 'out')], dir);
    expect([broken.code, broken.err]).toEqual([3, `error: cannot read ${path.join(dir, 'x.json')}: no such file\n`]);
  });

  it('is read once per plane when given for other planes (one segmentation on two channels)', async () => {
    const dir = inputs();
    const a = path.join(dir, 'a.json');
    const r = await cli(['build', '--input', `c=0:${a}`, '--input', `c=1:${a}`, '-o', path.join(dir, 'out'), '--image-size', '100,100', '--workers', '1', '--format', 'pbf', '--max-zoom', '0'], dir);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toMatch(/features: 2 read, 2 valid, 0 invalid/);
    expect(r.out).toMatch(/2 plane\(s\) over c/);
  });
});

describe('the folders of a directory input', () => {
  it('are not read (no recursion): those holding data files are named in one warning, hidden ones passed over as before', async () => {
    const dir = inputs();
    for (const [folder, files] of [['patch-1', ['p.json', 'q.ndjson.gz']], ['patch-2', ['r.geojson']], ['more.json', ['s.json']], ['thumbs', ['t.png']], ['.git', ['config.json']], ['empty.json', []]] as const) {
      fs.mkdirSync(path.join(dir, folder));
      for (const f of files) fs.writeFileSync(path.join(dir, folder, f), `${feature(9, 90)}\n`);
    }
    // The output in a temporary folder of its own (one beside the input, in the system's, was left there by each run).
    const r = await cli(['build', dir, '-o', path.join(tmpDir('mudm-inputs'), 'out'), '--image-size', '100,100', '--workers', '1', '--format', 'pbf', '--max-zoom', '0'], dir);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(`warning: directory ${dir}: 3 sub-folder(s) hold data files, which are not read (more.json: 1 file(s), patch-1: 2 file(s), patch-2: 1 file(s)): a directory gives the files it holds, not its folders' (no recursion); give a folder as an input of its own to read it [folders-not-read]\n`
      + `warning: directory ${dir}: 1 hidden file(s) or folder(s) named like data passed over (empty.json): a directory gives the data files it holds, not hidden ones (such as the ._ files a Mac's copy leaves) or folders [hidden-passed-over]\n`);
    expect(r.out).toMatch(/features: 2 read, 2 valid, 0 invalid/);
    // A directory of folders only: nothing to read, and the message says where the files are (exit 3).
    const parent = tmpDir('mudm-inputs');
    fs.mkdirSync(path.join(parent, 'slide-1'));
    fs.writeFileSync(path.join(parent, 'slide-1', 'cells.json'), `${feature(1, 10)}\n`);
    const none = await cli(['build', parent, '-o', path.join(dir, 'none')], dir);
    expect(none.code).toBe(3);
    expect(none.err).toContain(`error: directory ${parent} holds no .json, .geojson or .ndjson files (its sub-folders slide-1 hold some: give them as inputs)\n`);
  });
});

describe('--layer-per-file with file inputs', () => {
  /** The layers of a one-tile build's tile 0/0/0.pbf, each with the ids of its features. */
  const layersOf = (out: string) => {
    const byLayer: Record<string, unknown[]> = {};
    for (const f of decodePbf(fs.readFileSync(path.join(out, '0', '0', '0.pbf')), 128, 0, 0, 0)) (byLayer[f.layer] ??= []).push(f.id);
    return byLayer;
  };
  const ONE_TILE = ['--image-size', '100,100', '--workers', '1', '--format', 'pbf', '--max-zoom', '0'];

  it('makes each file a layer named after it, as for a directory\'s files; files named alike share one, with a warning', async () => {
    const dir = inputs();
    const a = path.join(dir, 'a.json'), b = path.join(dir, 'b.json');
    const out = path.join(tmpDir('mudm-inputs'), 'out');
    const r = await cli(['build', a, b, '-o', out, '--layer-per-file', ...ONE_TILE], dir);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(layersOf(out)).toEqual({ a: [1], b: [2] });
    // Two folders' a.json: one layer a, said as the directory's a.json and a.ndjson are (it was said of neither before).
    const other = path.join(tmpDir('mudm-inputs'), 'a.ndjson');
    fs.writeFileSync(other, `${feature(3, 90)}\n`);
    const shared = await cli(['build', a, b, other, '-o', `${out}-2`, '--layer-per-file', ...ONE_TILE], dir);
    expect([shared.code, shared.err]).toEqual([0, `warning: ${a}, ${other} are all named a less their folders and data extensions, and their features go into one layer a (--layer-per-file names layers after files): rename one for a layer of its own; or fix each to a plane of its own (--input c=0:FILE) for one layer a over those planes [layer-shared]\n`]);
    expect(layersOf(`${out}-2`)).toEqual({ a: [1, 3], b: [2] });
    // Fixed to other planes, they are one layer over the planes, as asked: nothing to say.
    const planes = await cli(['build', '--input', `c=0:${a}`, '--input', `c=1:${other}`, '-o', `${out}-3`, '--layer-per-file', ...ONE_TILE], dir);
    expect([planes.code, planes.err]).toEqual([0, '']);
  });

  it('without it, two files named alike on one plane share a layer as well, with the same warning; a directory\'s own files share its layer in silence', async () => {
    const dir = inputs();
    const out = path.join(tmpDir('mudm-inputs'), 'out');
    // Two channels' exports, each named cells.json: `build ch0/cells.json ch1/cells.json`.
    const [c0, c1, more] = [path.join(dir, 'ch0', 'cells.json'), path.join(dir, 'ch1', 'cells.json'), path.join(dir, 'more', 'cells')];
    [c0, c1].forEach((f, i) => {
      fs.mkdirSync(path.dirname(f));
      fs.writeFileSync(f, `${feature(i + 1, 10 + 40 * i)}\n`);
    });
    const either = 'rename one, or give each its layer in a --manifest entry ("layer"), for a layer of its own; or fix each to a plane of its own (--input c=0:FILE) for one layer cells over those planes [layer-shared]\n';
    const r = await cli(['build', c0, c1, '-o', out, ...ONE_TILE], dir);
    expect([r.code, r.err]).toEqual([0, `warning: ${c0}, ${c1} are all named cells less their folders and data extensions, and their features go into one layer cells (an input's layer is named after its file, a directory's after the directory): ${either}`]);
    expect(layersOf(out)).toEqual({ cells: [1, 2] });
    // A directory input is named after itself: one of the same name as a file input shares its layer too.
    fs.mkdirSync(more, { recursive: true });
    fs.writeFileSync(path.join(more, 'part-1.json'), `${feature(3, 90)}\n`);
    const withDir = await cli(['build', more, c0, '-o', `${out}-dir`, ...ONE_TILE], dir);
    expect([withDir.code, withDir.err]).toEqual([0, `warning: directory ${more}, ${c0} are all named cells less their folders and data extensions, and their features go into one layer cells (an input's layer is named after its file, a directory's after the directory): ${either}`]);
    // What the warning offers keeps them apart, or makes one layer over two planes; --layer and a directory's own
    // files (a.json, b.json: one layer, as asked) share on purpose: nothing to say.
    fs.writeFileSync(path.join(dir, 'inputs.json'), JSON.stringify([{ path: 'ch0/cells.json', layer: 'cells-0' }, { path: 'ch1/cells.json', layer: 'cells-1' }]));
    const named = await cli(['build', '--manifest', path.join(dir, 'inputs.json'), '-o', `${out}-named`, ...ONE_TILE], dir);
    expect([named.code, named.err, layersOf(`${out}-named`)]).toEqual([0, '', { 'cells-0': [1], 'cells-1': [2] }]);
    const planes = await cli(['build', '--input', `c=0:${c0}`, '--input', `c=1:${c1}`, '-o', `${out}-planes`, ...ONE_TILE], dir);
    expect([planes.code, planes.err]).toEqual([0, '']);
    const layer = await cli(['build', c0, c1, '--layer', 'cells', '-o', `${out}-layer`, ...ONE_TILE], dir);
    expect([layer.code, layer.err]).toEqual([0, '']);
    const folder = path.join(tmpDir('mudm-inputs'), 'export');
    fs.mkdirSync(folder);
    for (const f of ['a.json', 'b.json']) fs.copyFileSync(path.join(dir, f), path.join(folder, f));
    const own = await cli(['build', folder, '-o', `${out}-own`, ...ONE_TILE], dir);
    expect([own.code, own.err, layersOf(`${out}-own`)]).toEqual([0, '', { export: [1, 2] }]);
  });

  it("refuses (exit 2) a manifest entry's layer for a file, as for a directory: one of the two would be passed over", async () => {
    const dir = inputs();
    const manifest = path.join(dir, 'inputs.json');
    fs.writeFileSync(manifest, JSON.stringify([{ path: 'a.json', layer: 'cells' }, { path: 'b.json' }]));
    // Built before, the file in layer cells.
    const r = await cli(['build', '--manifest', manifest, '--layer-per-file', '-o', path.join(dir, 'out')], dir);
    expect([r.code, r.err]).toEqual([2, `error: the layer cells that ${path.join(dir, 'a.json')}'s manifest entry names and --layer-per-file conflict: the entry names the file's layer, --layer-per-file names it after the file (a): give one of them\n${USAGE}`]);
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
  });
});

describe('validate DIR', () => {
  it("checks each data file of a directory as build reads it, in name order, and reports each (exit 1: one is invalid)", async () => {
    const dir = inputs();
    fs.writeFileSync(path.join(dir, 'c.ndjson'), `${feature(3, 20)}\n{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[1]}}\n`);
    fs.writeFileSync(path.join(dir, '._a.json'), 'resource fork');
    fs.writeFileSync(path.join(dir, 'slide.png'), 'not read');
    fs.mkdirSync(path.join(dir, 'patches'));
    fs.writeFileSync(path.join(dir, 'patches', 'd.json'), 'not read either');
    const r = await cli(['validate', dir], dir);
    // Refused before as a file that is a directory (exit 3).
    expect(r.code, r.err).toBe(1);
    const [a, b, c] = ['a.json', 'b.json', 'c.ndjson'].map((n) => path.join(dir, n));
    expect(r.out).toBe(`${a}: valid, 1 feature (0 invalid), 0 errors, 0 warnings\n`
      + `${b}: valid, 1 feature (0 invalid), 0 errors, 0 warnings\n`
      + `${c}:2:1: feature 1: /geometry/coordinates: position must have 2 or 3 numbers, found [1] (1) [position-length]\n`
      + `${c}: invalid, 2 features (1 invalid), 1 error, 0 warnings\n`
      + 'total: 3 files (1 invalid, 0 unreadable), 4 features, 1 error, 0 warnings, 1 invalid feature\n');
    // What build passes over, with build's warnings.
    expect(r.err).toBe(`warning: directory ${dir}: 1 sub-folder(s) hold data files, which are not read (patches: 1 file(s)): a directory gives the files it holds, not its folders' (no recursion); give a folder as an input of its own to read it [folders-not-read]\n`
      + `warning: directory ${dir}: 1 hidden file(s) or folder(s) named like data passed over (._a.json): a directory gives the data files it holds, not hidden ones (such as the ._ files a Mac's copy leaves) or folders [hidden-passed-over]\n`
      + `warning: directory ${dir}: 1 image file(s) passed over (slide.png): a directory gives its annotation documents; name a label mask as an input of its own [images-passed-over]\n`);
  });

  it('reports a directory without data files unreadable (exit 3), as build refuses it, and checks the other inputs all the same', async () => {
    const dir = inputs();
    const empty = tmpDir('mudm-inputs');
    const r = await cli(['validate', empty, path.join(dir, 'a.json'), '--json'], dir);
    expect([r.code, r.err]).toEqual([3, `error: ${empty}: directory ${empty} holds no .json, .geojson or .ndjson files\n`]);
    const report = JSON.parse(r.out) as { files: { file: string; valid: boolean; unreadable?: { message: string } }[] };
    expect(report.files.map((f) => [f.file, f.valid, f.unreadable?.message])).toEqual([
      [empty, false, `directory ${empty} holds no .json, .geojson or .ndjson files`],
      [path.join(dir, 'a.json'), true, undefined],
    ]);
  });
});

describe('an empty path', () => {
  // `build "$IN" -o out` with IN unset: the empty path resolved to the working directory, whose files were read.
  it('is refused (exit 2) before anything is read or written, naming the argument, for every command', async () => {
    const dir = inputs();
    for (const args of [['build', path.join(dir, 'a.json'), '', '-o', 'out'], ['plan', '', '-o', 'out', '--shards', '2'], ['validate', ''], ['inspect', ''], ['verify', ''], ['extract', '', '-o', 'out'], ['serve', '', '--port', '0']]) {
      const r = await cli(args, dir);
      const n = args.indexOf('') === 2 ? 2 : 1;
      expect([r.code, r.err.split('\n')[0]], args.join(' ')).toEqual([2, `error: argument ${n} is empty: ${args[0]} takes a path there (an unset shell variable?)`]);
      expect(r.out).toBe('');
    }
    const r = await cli(['build', '--input', 'c=0:', '-o', 'out'], dir);
    expect([r.code, r.err.split('\n')[0]]).toEqual([2, 'error: --input c=0: names no file: --input expects DIMS:FILE such as t=0,c=1:cells.json']);
    expect(fs.readdirSync(dir).sort()).toEqual(['a.json', 'b.json']);
  });
});
