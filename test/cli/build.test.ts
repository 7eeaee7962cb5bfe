// The build command end to end through the real binary: summary, outputs, and each exit code with its message.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { defaultLine } from '../helpers/pixel-size.js';
import { decodePbf, tmpDir } from '../helpers/pyramid.js';
import { littleEndianTiff, type TiffEntry } from '../helpers/tiff.js';
import { noise16 } from '../helpers/pieces.js';
import { mulberry32 } from '../../src/random.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/mudm-tiles.js');

function run(args: string[], cwd = ROOT, nodeArgs: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('node', [...nodeArgs, BIN, ...args], { cwd, maxBuffer: 1 << 26 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const feature = (id: number, x: number, y: number, extra = '') =>
  `{"type":"Feature","id":${id},"properties":{"label":${id}},"geometry":{"type":"Polygon","coordinates":[[[${x},${y}],[${x + 20},${y}],[${x + 20},${y + 20}],[${x},${y + 20}],[${x},${y}]]]}${extra}}`;

describe('mudm-tiles build', () => {
  it('builds the sample slide, prints the summary and writes a pyramid that verifies (exit 0)', async () => {
    const out = path.join(tmpDir('mudm-cli'), 'out');
    const r = await run(['build', 'sample-data/slide', '-o', out, '--plane-field', 'c=c,z=z', '--layer-per-file', '--workers', '2']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/2 layer\(s\) \[cells, nuclei\], 6 plane\(s\) over c,z/);
    expect(r.stdout).toMatch(/features: 6000 read, 6000 valid, 0 invalid/);
    const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as { tiles: string[]; bounds: number[] };
    expect(d.tiles).toEqual(['{zlvl}/{c}/{z}/{x}/{y}.pbf']);
    expect(d.bounds).toEqual([0, 0, 0, 0, 0, 0, 1, 2, 2012, 1342]);
    const v = await run(['verify', out]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it('exits 1 with --strict on an invalid feature, naming file, feature, path and rule', async () => {
    const dir = tmpDir('mudm-cli');
    const file = path.join(dir, 'cells.ndjson');
    fs.writeFileSync(file, `${feature(1, 10, 10)}\n{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[1]}}\n`);
    const r = await run(['build', file, '-o', path.join(dir, 'out'), '--strict']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cells\.ndjson:\d+:\d+: feature 1: \/geometry\/coordinates: .*\[position-length\]/);
    // Before anything is written: not even the output folders the build made for itself are left.
    expect(fs.existsSync(path.join(dir, 'out'))).toBe(false);
    for (const out of [['-o', path.join(dir, 'archives', 'out'), '--archive', 'pmtiles'], ['-o', path.join(dir, 'single', 'slide.pmtiles')]]) {
      const a = await run(['build', file, ...out, '--strict']);
      expect(a.code, out.join(' ')).toBe(1);
      expect(fs.existsSync(path.join(dir, out[1].split(path.sep).at(-2) as string)), out.join(' ')).toBe(false);
    }
    // An output folder that was there before stays.
    fs.mkdirSync(path.join(dir, 'mine'));
    expect((await run(['build', file, '-o', path.join(dir, 'mine'), '--strict'])).code).toBe(1);
    expect(fs.readdirSync(path.join(dir, 'mine'))).toEqual([]);
  });

  it('skips invalid features without --strict and counts them by rule', async () => {
    const dir = tmpDir('mudm-cli');
    const file = path.join(dir, 'cells.ndjson');
    fs.writeFileSync(file, `${feature(1, 10, 10)}\n{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[1]}}\n`);
    const r = await run(['build', file, '-o', path.join(dir, 'out')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/features: 2 read, 1 valid, 1 invalid/);
    expect(r.stdout).toMatch(/invalid position-length: 1/);
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'out', 'build-report.json'), 'utf8')) as { features: { invalidByCode: Record<string, number> } };
    expect(report.features.invalidByCode).toEqual({ 'position-length': 1 });
  });

  it('exits 2 on usage errors', async () => {
    const r = await run(['build', 'sample-data/slide']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: build needs an output: -o DIR, or -o FILE.pmtiles for one archive');
    const z = await run(['build', 'sample-data/slide', '-o', '/tmp/x', '--max-zoom', 'deep']);
    expect(z.code).toBe(2);
    // Written into tileset.json as given before, where TileJSON 3.0.0 wants semver and clients a URL.
    const out = path.join(tmpDir('mudm-cli'), 'out');
    const v = await run(['build', 'sample-data/slide', '-o', out, '--version', '1.2']);
    expect([v.code, v.stderr]).toEqual([2, 'error: --version must be a semver version, MAJOR.MINOR.PATCH such as 1.2.0, as TileJSON 3.0.0 requires (1.2.0?); found "1.2"\nRun \'mudm-tiles build --help\' for usage.\n']);
    const u = await run(['build', 'sample-data/slide', '-o', out, '--base-url', 'not a url']);
    expect([u.code, u.stderr]).toEqual([2, 'error: --base-url must be an absolute http or https URL such as https://host/slides/a (without it, tile paths are relative to tileset.json); found "not a url"\nRun \'mudm-tiles build --help\' for usage.\n']);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('reads inputs given by --input (a plane each) and --manifest, into those planes', async () => {
    const dir = tmpDir('mudm-cli-inputs');
    fs.writeFileSync(path.join(dir, 'a.json'), `${feature(1, 10, 10)}\n`);
    fs.writeFileSync(path.join(dir, 'b.json'), `${feature(2, 50, 50)}\n`);
    fs.writeFileSync(path.join(dir, 'inputs.json'), JSON.stringify([{ path: 'a.json', c: 3 }, { path: 'b.json', c: 4, layer: 'own' }]));
    for (const [how, args] of [['--input', ['--input', `c=1:${path.join(dir, 'a.json')}`, '--input', `c=2:${path.join(dir, 'b.json')}`]], ['--manifest', ['--manifest', path.join(dir, 'inputs.json')]]] as const) {
      const out = path.join(dir, how.slice(2));
      const r = await run(['build', ...args, '-o', out, '-q', '--image-size', '100,100']);
      expect([r.code, r.stderr], how).toEqual([0, '']);
      const planes = (JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as { bounds: number[] }).bounds;
      expect([planes[1], planes[6]], how).toEqual(how === '--input' ? [1, 2] : [3, 4]);
    }
    // --layer names every input's layer, a directory's too; a manifest entry's own layer wins.
    const named = path.join(dir, 'named');
    expect((await run(['build', '--manifest', path.join(dir, 'inputs.json'), '--layer', 'cells', '-o', named, '-q', '--image-size', '100,100'])).code).toBe(0);
    expect((JSON.parse(fs.readFileSync(path.join(named, 'build-report.json'), 'utf8')) as { world: { layers: string[] } }).world.layers).toEqual(['cells', 'own']);
    fs.mkdirSync(path.join(dir, 'patches'));
    fs.copyFileSync(path.join(dir, 'a.json'), path.join(dir, 'patches', 'a.json'));
    const fromDir = path.join(dir, 'from-dir');
    expect((await run(['build', path.join(dir, 'patches'), '--layer', 'cells', '-o', fromDir, '-q', '--image-size', '100,100'])).code).toBe(0);
    expect((JSON.parse(fs.readFileSync(path.join(fromDir, 'build-report.json'), 'utf8')) as { world: { layers: string[] } }).world.layers).toEqual(['cells']);
    // A manifest that is not JSON: where, as for any JSON input (exit 3).
    const broken = path.join(dir, 'broken.json');
    fs.writeFileSync(broken, '[{"path": "a.json",\n  "c": 1 "z": 2}]');
    const r = await run(['build', '--manifest', broken, '-o', path.join(dir, 'broken-out')]);
    expect([r.code, r.stderr]).toEqual([3, `error: ${broken}:2:10: Expected ',' or '}' after property value, found '"' (JSON path /0/c)\n`]);
  });

  it('exits 2 on an output that writes into an input directory, whose next build would read what this one wrote', async () => {
    const data = path.join(tmpDir('mudm-cli-overlap'), 'data');
    fs.mkdirSync(data);
    fs.copyFileSync(path.join(ROOT, 'sample-data/slide/cells.json'), path.join(data, 'cells.json'));
    for (const [out, more] of [[data, ['--archive', 'pmtiles']], [path.join(data, 'x.pmtiles'), []]] as const) {
      for (const command of ['build', 'plan']) {
        const r = await run([command, data, '-o', out, ...more, '--force']);
        expect([r.code, r.stderr]).toEqual([2, `error: the output ${out} writes into the input directory ${data}, whose data files a build reads: the next build would read what this one wrote there as input; choose an output outside it (a folder inside it is fine)\nRun 'mudm-tiles ${command} --help' for usage.\n`]);
      }
    }
    expect(fs.readdirSync(data)).toEqual(['cells.json']);
    // A folder inside it is not read (a directory input is its data files, not its folders): built, twice.
    for (let i = 0; i < 2; i++) {
      const sub = await run(['build', data, '-o', path.join(data, 'tiles'), '-q', '--max-zoom', '1', '--force']);
      expect([sub.code, sub.stderr]).toEqual([0, '']);
    }
    // A file input in the output folder is read alone: not refused, and --force keeps it (no build wrote it), with a
    // warning that the folder, read as an input later, holds the pyramid's files too.
    const input = path.join(data, 'cells.json');
    const one = await run(['build', input, '-o', data, '--max-zoom', '1', '--force']);
    expect(one.code).toBe(0);
    expect(one.stderr).toContain(`warning: ${input} lies in the folder the output ${data} writes its descriptor and report into: a later build of that folder as an input would read them too; keep inputs apart from outputs [input-beside-output]\n`);
    expect(fs.existsSync(input)).toBe(true);
    const beside = await run(['build', input, '-o', path.join(data, 'x.pmtiles'), '--max-zoom', '1', '--force']);
    expect([beside.code, beside.stderr]).toEqual([0, expect.stringContaining(`warning: ${input} lies in the folder the output`)]);
  });

  it('passes over hidden files and folders named like data in a directory, and says when --layer-per-file puts two files in one layer', async () => {
    const dir = path.join(tmpDir('mudm-cli-hidden'), 'export');
    fs.mkdirSync(path.join(dir, 'old.json'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'cells.ndjson'), `${feature(1, 10, 10)}\n`);
    fs.writeFileSync(path.join(dir, 'cells.json'), `${feature(2, 100, 50)}\n`);
    fs.writeFileSync(path.join(dir, 'more.jsonl'), `${feature(3, 200, 50)}\n`);
    // What a Mac's copy to a shared drive leaves beside each file: resource data, no JSON.
    fs.writeFileSync(path.join(dir, '._cells.ndjson'), Buffer.from([0, 5, 22, 7, 0, 2, 0, 0, 77, 97, 99]));
    fs.writeFileSync(path.join(dir, '.draft.json'), 'not json');
    const out = path.join(path.dirname(dir), 'out');
    const r = await run(['build', dir, '-o', out, '--format', 'pbf', '--max-zoom', '1', '--layer-per-file']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`warning: directory ${dir}: 3 hidden file(s) or folder(s) named like data passed over (._cells.ndjson, .draft.json, old.json): a directory gives the data files it holds, not hidden ones (such as the ._ files a Mac's copy leaves) or folders [hidden-passed-over]\n`
      + `warning: ${path.join(dir, 'cells.json')}, ${path.join(dir, 'cells.ndjson')} are all named cells less their folders and data extensions, and their features go into one layer cells (--layer-per-file names layers after files): rename one for a layer of its own; or fix each to a plane of its own (--input c=0:FILE) for one layer cells over those planes [layer-shared]\n`);
    const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as { vector_layers: { id: string }[] };
    expect(d.vector_layers.map((l) => l.id)).toEqual(['cells', 'more']);
    // A link to nothing is no hidden file or folder: read, and named as unreadable (exit 3).
    fs.symlinkSync(path.join(dir, 'gone.json'), path.join(dir, 'broken.json'));
    const broken = await run(['build', dir, '-o', `${out}-2`, '--format', 'pbf', '--max-zoom', '1']);
    expect(broken.code).toBe(3);
    expect(broken.stderr).toContain(`cannot read ${path.join(dir, 'broken.json')}: no such file`);
  });

  it('reads a directory\'s annotation documents and passes over the slide images beside them, saying so', async () => {
    const dir = path.join(tmpDir('mudm-cli-images'), 'export');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'cells.ndjson'), `${feature(1, 10, 10)}\n${feature(2, 100, 50)}\n`);
    // An intensity image (a mask would trace its grey levels as labels) and an RGB thumbnail (no mask at all).
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#336699' } }).png().toFile(path.join(dir, 'thumbnail.png'));
    await sharp(Buffer.alloc(64 * 48, 7), { raw: { width: 64, height: 48, channels: 1 } }).tiff().toFile(path.join(dir, 'slide-DAPI.tif'));
    const out = path.join(path.dirname(dir), 'out');
    const r = await run(['build', dir, '-o', out, '--format', 'pbf', '--max-zoom', '1']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`warning: directory ${dir}: 2 image file(s) passed over (slide-DAPI.tif, thumbnail.png): a directory gives its annotation documents; name a label mask as an input of its own [images-passed-over]\n`);
    expect(r.stdout).toContain('features: 2 read, 2 valid, 0 invalid');
    const ids = decodePbf(fs.readFileSync(path.join(out, '0/0/0.pbf')), 256, 0, 0, 0).map((f) => f.id).sort();
    expect(ids).toEqual([1, 2]);
    // Only images: nothing to read, and the message says how a mask is read.
    for (const f of ['cells.ndjson']) fs.rmSync(path.join(dir, f));
    const none = await run(['build', dir, '-o', out, '--force']);
    expect(none.code).toBe(3);
    expect(none.stderr).toContain(`error: directory ${dir} holds no .json, .geojson or .ndjson files (label masks are read when named as inputs themselves: slide-DAPI.tif, thumbnail.png)`);
  });

  it('exits 2 on a zoom range whose finest tiles are narrower than an image pixel, writing nothing', async () => {
    const out = path.join(tmpDir('mudm-cli-zoom'), 'out');
    const r = await run(['build', 'sample-data/slide/cells.json', '-o', out, '--max-zoom', '30']);
    expect([r.code, r.stderr]).toEqual([2, "error: --max-zoom 30 makes the finest tiles 1/524288 of an image pixel wide (the world is 2048 px): give a zoom of at most 11 (tiles of one pixel)\nRun 'mudm-tiles build --help' for usage.\n"]);
    expect(fs.existsSync(out)).toBe(false);
    // Tiles of one pixel are allowed (one small feature: zoom 11 of this world has 4 million tiles).
    const one = path.join(path.dirname(out), 'one.ndjson');
    fs.writeFileSync(one, `${feature(1, 10, 10)}\n`);
    const ok = await run(['build', one, '-o', out, '--image-size', '2048,2048', '--min-zoom', '11', '--max-zoom', '11', '-q']);
    expect([ok.code, ok.stderr]).toEqual([0, '']);
  });

  it.skipIf(!fs.existsSync('/proc/self'))('exits 4 on an output under /proc, where Node\'s recursive mkdir spun for ever', async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile('node', [BIN, 'build', 'sample-data/slide/cells.json', '-o', '/proc/mudm-tiles-test/out', '-q'], { cwd: ROOT, timeout: 30_000, killSignal: 'SIGKILL' }, (error, _stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr });
      });
    });
    expect([r.code, r.stderr]).toEqual([4, "error: cannot write /proc/mudm-tiles-test/out: ENOENT: no such file or directory, mkdir '/proc/mudm-tiles-test'\n"]);
  });

  it('exits 3 on a syntax error inside a feature, with line and column', async () => {
    const dir = tmpDir('mudm-cli');
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, `{"type":"FeatureCollection","features":[\n${feature(1, 0, 0)},\n{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2,]}}\n]}`);
    const r = await run(['build', file, '-o', path.join(dir, 'out')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${file}:3:65: feature 1:`);
  });

  it('exits 3 on a GeoJSON text sequence whose record is cut short in a string, naming the feature and path, and writes no archive', async () => {
    const dir = tmpDir('mudm-cli');
    fs.mkdirSync(path.join(dir, 'in'));
    const file = path.join(dir, 'in', 'cells.geojsons');
    // A writer stopped mid-record and another appended (RFC 7464 2.3): the RS lies in the cut record's string.
    fs.writeFileSync(file, `\x1e${feature(1, 0, 0)}\n\x1e${feature(2, 30, 0).slice(0, 44)}\x1e${feature(3, 60, 0)}\n`);
    const out = path.join(dir, 'cells.pmtiles');
    const r = await run(['build', file, '-o', out]);
    expect([r.code, r.stderr]).toEqual([3, `error: ${file}:2:46: feature 1: unexpected record separator (0x1E) inside the value that starts at line 2, column 2: a record cut short, the next begun here (truncated record?) (JSON path /properties)\n`]);
    expect(fs.readdirSync(dir)).toEqual(['in']);
  });

  it('exits 4 on a non-empty output without --force, and leaves it alone', async () => {
    const dir = tmpDir('mudm-cli');
    fs.writeFileSync(path.join(dir, 'keep.txt'), 'x');
    const r = await run(['build', 'sample-data/slide', '-o', dir]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`output ${dir} is not empty (1 entry: keep.txt); use --force`);
    expect(fs.readdirSync(dir)).toEqual(['keep.txt']);
  });

  it('takes an output holding only what kills left of work directories (a removal part-way, a claim before its rename) for empty, and removes that', async () => {
    const dir = tmpDir('mudm-cli');
    fs.mkdirSync(path.join(dir, '.mudm-work.retiring-0badcafe', 'units'), { recursive: true });
    const left = path.join(dir, '.mudm-work.claiming-0badcafe');
    fs.mkdirSync(left);
    // The owner of a process that ended (no such pid).
    fs.writeFileSync(path.join(left, 'owner.json'), JSON.stringify({ pid: 2 ** 22 + 7, host: os.hostname(), start: 'gone' }));
    const r = await run(['build', 'sample-data/slide', '-o', dir, '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readdirSync(dir)).not.toContain('.mudm-work.retiring-0badcafe');
    expect(fs.readdirSync(dir)).not.toContain('.mudm-work.claiming-0badcafe');
    expect(fs.existsSync(path.join(dir, 'tileset.json'))).toBe(true);
  });

  it('exits 3 on an --image or a label mask that cannot be read, naming the file', async () => {
    const dir = tmpDir('mudm-cli');
    const missing = path.join(dir, 'slide.tif');
    const r = await run(['build', 'sample-data/slide', '-o', path.join(dir, 'out'), '--image', missing]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`error: ${missing}: no such file`);
    const broken = path.join(dir, 'labels.png');
    fs.writeFileSync(broken, 'not a PNG');
    const m = await run(['build', broken, '-o', path.join(dir, 'out2')]);
    expect(m.code, m.stderr).toBe(3);
    expect(m.stderr).toContain(`error: ${broken}: not an image in a format sharp can read`);
    expect(fs.existsSync(path.join(dir, 'out2', 'tileset.json'))).toBe(false);
  });

  it('finalize prints its own time apart from the time plan took to read', async () => {
    const out = path.join(tmpDir('mudm-cli-finalize'), 'out');
    for (const args of [['plan', 'sample-data/slide/cells.json', '-o', out, '--shards', '2', '--max-zoom', '2'], ['build-shard', out, '--shard', '0'], ['build-shard', out, '--shard', '1']]) {
      const r = await run([...args, '-q']);
      expect(r.code, r.stderr).toBe(0);
    }
    const f = await run(['finalize', out]);
    expect(f.code, f.stderr).toBe(0);
    expect(f.stdout).toMatch(/\ntime: finalize \d+\.\d\ds \(tile\+write \d+\.\d\ds, describe \d+\.\d\ds; plan read the input in \d+\.\d\ds\) with \d+ worker/);
  });

  it('exits 4 when the work directory lacks its plan or holds one of another version', async () => {
    const out = path.join(tmpDir('mudm-cli'), 'out');
    fs.mkdirSync(out);
    const none = await run(['finalize', out]);
    expect(none.code, none.stderr).toBe(4);
    expect(none.stderr).toContain(`error: no readable plan in ${path.join(out, '.mudm-work')}: run mudm-tiles plan first`);
    fs.mkdirSync(path.join(out, '.mudm-work'));
    fs.writeFileSync(path.join(out, '.mudm-work', 'plan.json'), JSON.stringify({ version: 1, shards: 1, units: [] }));
    const old = await run(['build-shard', out, '--shard', '0']);
    expect(old.code, old.stderr).toBe(4);
    expect(old.stderr).toMatch(/error: the plan in .*\.mudm-work has version 1, this mudm-tiles reads version \d+: it was written by another version/);
  });

  it('turns a 16-bit label mask into polygons with holes, one feature per label', async () => {
    const dir = tmpDir('mudm-cli');
    const w = 64, h = 48, data = new Uint16Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
      if (x >= 4 && x < 20 && y >= 4 && y < 20) data[y * w + x] = 300;
      if (x >= 20 && x < 40 && y >= 10 && y < 30 && !(x >= 25 && x < 30 && y >= 15 && y < 20)) data[y * w + x] = 70000 % 65536;
    }
    await sharp(data, { raw: { width: w, height: h, channels: 1 } }).toColourspace('grey16').png().toFile(path.join(dir, 'labels.png'));
    const out = path.join(dir, 'out');
    const r = await run(['build', path.join(dir, 'labels.png'), '-o', out, '--image', path.join(dir, 'labels.png')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/features: 2 read, 2 valid/);
    const fc = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as { world: { width: number; height: number; layers: string[] } };
    expect(fc.world).toMatchObject({ width: 64, height: 48, layers: ['labels'] });
    const feats = decodePbf(fs.readFileSync(path.join(out, '0/0/0.pbf')), 64, 0, 0, 0);
    expect(feats.map((f) => f.properties.label).sort()).toEqual([300, 4464]);
    const holed = feats.find((f) => f.properties.label === 4464);
    expect(holed?.rings.length).toBe(2);
    expect(holed?.properties.area).toBe(20 * 20 - 25);
    // sharp writes 1 px/mm into every PNG's pHYs when given no density: no pixel size, no multiscale.
    expect(JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8'))).not.toHaveProperty('multiscale');
  });

  it('carries an OME-TIFF mask\'s PhysicalSizeX/Y into tileset.json and the JSON tiles as their multiscale', async () => {
    const dir = tmpDir('mudm-cli');
    const w = 512, h = 256, labels = Uint8Array.from({ length: w * h }, (_, i) => 1 + Math.floor((i % w) / 128));
    const xml = `<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="${w}" SizeY="${h}" SizeZ="1" SizeC="1" SizeT="1" PhysicalSizeX="0.2738" PhysicalSizeY="0.2738"><TiffData/></Pixels></Image></OME>`;
    const entries: TiffEntry[] = [[256, 4, w], [257, 4, h], [258, 3, 8], [259, 3, 1], [262, 3, 1], [270, 2, xml], [273, 4, 0], [277, 3, 1], [278, 4, h], [279, 4, w * h]];
    fs.writeFileSync(path.join(dir, 'labels.ome.tif'), littleEndianTiff(entries, labels));
    const out = path.join(dir, 'out');
    const r = await run(['build', path.join(dir, 'labels.ome.tif'), '-o', out, '--max-zoom', '1']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const multiscale = { axes: [{ name: 'x', type: 'space', unit: 'micrometer' }, { name: 'y', type: 'space', unit: 'micrometer' }], coordinateTransformations: [{ type: 'scale', scale: [0.2738, 0.2738] }] };
    expect(JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')).multiscale).toEqual(multiscale);
    expect(JSON.parse(fs.readFileSync(path.join(out, '1/0/0.json'), 'utf8')).multiscale).toEqual(multiscale);
  });

  it('a label mask sets the world by its size: labels far from the others are no outliers, and no warning says so', async () => {
    const dir = tmpDir('mudm-cli');
    const w = 2048, data = new Uint8Array(w * w);
    // 25 small labels in the top left, one in the far corner.
    for (let k = 0; k < 25; k++) for (let y = 0; y < 4; y++) for (let x = 0; x < 4; x++) data[((k % 5) * 6 + y) * w + Math.floor(k / 5) * 6 + x] = k + 1;
    for (let y = 2000; y < 2010; y++) for (let x = 2000; x < 2010; x++) data[y * w + x] = 200;
    await sharp(data, { raw: { width: w, height: w, channels: 1 } }).toColourspace('b-w').png().toFile(path.join(dir, 'mask.png'));
    const r = await run(['build', path.join(dir, 'mask.png'), '-o', path.join(dir, 'out'), '--max-zoom', '2']);
    // Only the line that sharp's 1 px/mm in the PNG gives no pixel size.
    expect([r.code, r.stderr]).toEqual([0, `${defaultLine(path.join(dir, 'mask.png'), 'a pHYs of 1 pixel per millimetre (25.4 dpi), libvips\' default when no size is given')[0]} [pixel-size-default]\n`]);
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'out', 'build-report.json'), 'utf8')) as { world: { outliers?: unknown; layers: string[] } };
    expect(report.world.outliers).toBeUndefined();
    expect(report.world.layers).toEqual(['mask']);
  });

  it('refuses an intensity image given as a label mask, naming what its pieces are, and writes nothing (exit 3)', async () => {
    const dir = tmpDir('mudm-cli');
    const w = 200, { data, reason } = noise16(w, mulberry32(61));
    const file = path.join(dir, 'DAPI.png');
    await sharp(data, { raw: { width: w, height: w, channels: 1 } }).toColourspace('grey16').png().toFile(file);
    const r = await run(['build', file, '-o', path.join(dir, 'out')]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`error: ${file}: ${reason}`);
    expect(fs.existsSync(path.join(dir, 'out', 'tileset.json'))).toBe(false);
  });

  it('prints nothing with -q at many workers (no MaxListenersExceededWarning from the tasks listening on the stop signal)', async () => {
    // 60,000 points: 15 parse batches of 4,096, more than the 12 (two per worker) that may be in flight at once.
    const dir = tmpDir('mudm-cli');
    const points = Array.from({ length: 60000 }, (_, i) => `{"type":"Feature","geometry":{"type":"Point","coordinates":[${(i % 300) * 10 + 5},${Math.floor(i / 300) * 10 + 5}]},"properties":{}}\n`);
    fs.writeFileSync(path.join(dir, 'points.ndjson'), points.join(''));
    const r = await run(['build', path.join(dir, 'points.ndjson'), '-o', path.join(dir, 'many'), '--workers', '6', '-q'], ROOT);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('loads libvips only for an image, a mask or a preview (0.1 s of start-up and its memory otherwise)', async () => {
    // At exit the process says whether libvips is mapped into it.
    const probe = ['--import', `data:text/javascript,${encodeURIComponent(
      "import fs from 'node:fs'; process.on('exit', () => process.stderr.write(fs.readFileSync('/proc/self/maps', 'utf8').includes('libvips') ? 'vips: loaded' : 'vips: not loaded'));",
    )}`];
    const dir = tmpDir('mudm-cli');
    const plain = await run(['build', 'sample-data/slide/cells.json', '-o', path.join(dir, 'plain.pmtiles'), '--format', 'pbf'], ROOT, probe);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toBe('vips: not loaded');
    fs.writeFileSync(path.join(dir, 'cells.json'), `${feature(1, 10, 10)}\n`);
    await sharp({ create: { width: 40, height: 40, channels: 3, background: '#000' } }).png().toFile(path.join(dir, 'slide.png'));
    const imaged = await run(['build', path.join(dir, 'cells.json'), '-o', path.join(dir, 'imaged'), '--image', path.join(dir, 'slide.png')], ROOT, probe);
    expect(imaged.code, imaged.stderr).toBe(0);
    // sharp wrote its 1 px/mm into the PNG: one line says that it gives no pixel size (-q hides it).
    expect(imaged.stderr).toBe(`${defaultLine(path.join(dir, 'slide.png'), 'a pHYs of 1 pixel per millimetre (25.4 dpi), libvips\' default when no size is given')[0]} [pixel-size-default]\nvips: loaded`);
  });

  it('refuses --image-size of another shape than --image (its background would lie askew), takes its size or a multiple', async () => {
    const dir = tmpDir('mudm-cli');
    fs.writeFileSync(path.join(dir, 'cells.json'), `${feature(1, 10, 10)}\n`);
    const image = path.join(dir, 'slide.png');
    await sharp({ create: { width: 40, height: 30, channels: 3, background: '#000' } }).png().toFile(image);
    const other = await run(['build', path.join(dir, 'cells.json'), '-o', path.join(dir, 'other'), '--image', image, '--image-size', '40,40', '--preview']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`error: --image-size 40,40 has not the shape of --image ${image} (40 × 30 px): its background would be stretched askew over the plane; leave --image-size out, or give the size of the slide that image shows`);
    expect(fs.existsSync(path.join(dir, 'other'))).toBe(false);
    // The image's own size, and the size of the slide it is a smaller picture of.
    for (const size of ['40,30', '400,301']) {
      const same = await run(['build', path.join(dir, 'cells.json'), '-o', path.join(dir, `same-${size}`), '--image', image, '--image-size', size, '--preview', '-q']);
      expect(same.code, same.stderr).toBe(0);
      expect((JSON.parse(fs.readFileSync(path.join(dir, `same-${size}`, 'tileset.json'), 'utf8')) as { bounds: number[] }).bounds).toEqual([0, 0, ...size.split(',').map(Number)]);
    }
  });
});
