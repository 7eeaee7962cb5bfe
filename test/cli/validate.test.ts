// `mudm-tiles validate` end to end: the real binary, its output text, --json, stdin, the sample cap and every exit code.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { constants, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { littleEndianTiff } from '../helpers/tiff.js';
import { noise16 } from '../helpers/pieces.js';
import { mulberry32 } from '../../src/random.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/mudm-tiles.js');
const dir = mkdtempSync(join(tmpdir(), 'mudm-validate-'));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], stdin?: string | Buffer): Promise<Run> {
  return new Promise((done) => {
    const child = execFile('node', [BIN, ...args], { cwd: dir, maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      done({ code, stdout, stderr });
    });
    child.stdin?.end(stdin ?? '');
  });
}

const square = (closed = true) => ({
  type: 'Polygon',
  coordinates: [[[0, 0], [10, 0], [10, 10], [0, 10], ...(closed ? [[0, 0]] : [])]],
});
const cell = (i: number, extra: Record<string, unknown> = {}) => ({
  type: 'Feature',
  id: i,
  geometry: square(),
  properties: { label: i },
  ...extra,
});
const fc = (features: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ type: 'FeatureCollection', ...extra, features }, null, 1);
const file = (name: string, content: string | Buffer): string => {
  writeFileSync(join(dir, name), content);
  return name;
};

/** The binary runs the compiled code: build when dist is missing or older than the CLI and reader sources. */
beforeAll(() => {
  const built = join(ROOT, 'dist/cli/commands/validate.js');
  const sources = ['src/cli/main.ts', 'src/cli/commands/validate.ts', 'src/io/read.ts', 'src/cli/args.ts'].map((f) => join(ROOT, f));
  const stale = !existsSync(built) || sources.some((s) => statSync(s).mtimeMs > statSync(built).mtimeMs);
  if (stale) {
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe' });
    } catch {
      // Type errors elsewhere in the tree still emit JavaScript; the tests below say whether what we need works.
    }
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mudm-tiles validate', () => {
  it('exit 0: valid collection, summary per file and a total', async () => {
    const a = file('valid.json', fc([cell(1), cell(2), cell(3)]));
    const r = await run(['validate', a]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'valid.json: valid, 3 features (0 invalid), 0 errors, 0 warnings\n' +
        'total: 1 file (0 invalid, 0 unreadable), 3 features, 0 errors, 0 warnings, 0 invalid features\n',
    );
    expect(r.stderr).toBe('');
  });

  it('exit 0 with warnings, printed with "warning:"; --quiet hides them and the summaries', async () => {
    const w = file('warn.json', fc([cell(1, { bbox: [10, 10, 0, 0] }), cell(2)]));
    const r = await run(['validate', w]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^warn\.json:\d+:\d+: feature 0: \/bbox: warning: .+ \[bbox-inverted\]$/m);
    expect(r.stdout).toMatch(/^warn\.json: valid, 2 features \(0 invalid\), 0 errors, 1 warning$/m);
    const q = await run(['validate', '--quiet', w]);
    expect([q.code, q.stdout, q.stderr]).toEqual([0, '', '']);
  });

  it('exit 1: feature issues as file:line:column: feature N: /pointer: message [code]; collection issues as file:collection: /pointer', async () => {
    const bad = file(
      'bad.json',
      fc([cell(0), cell(1, { geometry: square(false) }), cell(2, { id: 2.5 })], { multiscale: { axes: 'xy' } }),
    );
    const r = await run(['validate', bad]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^bad\.json:41:3: feature 1: \/geometry\/coordinates\/0: .+ \[ring-not-closed\]$/);
    expect(lines[1]).toMatch(/^bad\.json:\d+:\d+: feature 2: \/id: .+ \[id-type\]$/);
    expect(lines[2]).toMatch(/^bad\.json:collection: \/multiscale\/axes: .+ \[[a-z-]+\]$/);
    expect(lines[3]).toBe('bad.json: invalid, 3 features (2 invalid), 3 errors, 0 warnings');
    expect(lines[4]).toBe('total: 1 file (1 invalid, 0 unreadable), 3 features, 3 errors, 0 warnings, 2 invalid features');
    // --quiet keeps the errors, drops the summaries.
    const q = await run(['validate', '-q', bad]);
    expect(q.stdout.trimEnd().split('\n')).toEqual(lines.slice(0, 3));
  });

  it('traces a label mask as build does and counts its labels; one build refuses is unreadable with its reason (exit 3)', async () => {
    // Labels 1, 2, 3 in a 3 × 2 8-bit PNG; a signed 32-bit TIFF with -4 at pixel (1, 0); a .png of no image.
    const png = file('cells.png', await sharp(Buffer.from([0, 1, 2, 1, 0, 3]), { raw: { width: 3, height: 2, channels: 1 } }).toColourspace('b-w').png().toBuffer());
    const neg = file('neg.tif', littleEndianTiff([[256, 4, 2], [257, 4, 1], [258, 3, 32], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, 1], [279, 4, 8], [339, 3, 2]], new Uint8Array(Int32Array.from([1, -4]).buffer)));
    const cut = file('cut.png', '\x89PNG\r\n\x1a\n');
    const good = file('good.json', fc([cell(1)]));
    const ok = await run(['validate', png, good]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`${png}: valid, label mask of 3 labels, 0 errors, 0 warnings\n`);
    expect(ok.stdout).toContain('total: 2 files (0 invalid, 0 unreadable), 4 features');
    const bad = await run(['validate', neg, cut]);
    expect(bad.code).toBe(3);
    expect(bad.stdout).toContain(`${neg}: unreadable: label value -4 at pixel (1, 0) is not a non-negative integer below 2^32\n`);
    expect(bad.stdout).toContain(`${cut}: unreadable: not an image in a format sharp can read (TIFF, PNG or JPEG expected)\n`);
    expect(bad.stdout).toContain('total: 2 files (0 invalid, 2 unreadable)');
  });

  it('an intensity image given as a label mask is unreadable with the reason build gives (exit 3)', async () => {
    const w = 200, { data, reason } = noise16(w, mulberry32(61));
    const png = file('DAPI.png', await sharp(data, { raw: { width: w, height: w, channels: 1 } }).toColourspace('grey16').png().toBuffer());
    const r = await run(['validate', png]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain(`${png}: unreadable: ${reason}`);
    expect(r.stdout).toContain('total: 1 file (0 invalid, 1 unreadable), 0 features');
  });

  it("of a built pyramid's folder: its run report is named as one, with a warning, not checked as a descriptor (exit 0)", async () => {
    const input = file('cells-for-pyramid.json', fc([cell(1), cell(2)]));
    const built = await run(['build', input, '-o', 'pyramid', '-q', '--workers', '1']);
    expect(built.code, built.stderr).toBe(0);
    const r = await run(['validate', 'pyramid']);
    expect(r.code, r.stdout).toBe(0);
    // Before, the report (tiles and features of its own shapes) was taken for a broken descriptor: 3 errors, exit 1.
    expect(r.stdout.split('\n').filter((l) => l.startsWith('pyramid/'))).toEqual([
      "pyramid/build-report.json: (top level): warning: a build's run report (build-report.json), not a muDM document: validate checks annotations and descriptors; check a pyramid with mudm-tiles verify [document-build-report]",
      'pyramid/build-report.json: valid, build report, 0 errors, 1 warning',
      'pyramid/tileset.json: valid, tileset descriptor, 0 errors, 0 warnings',
    ]);
    const json = await run(['validate', '--json', join('pyramid', 'build-report.json')]);
    const report = JSON.parse(json.stdout) as { files: { kind: string; counts: Record<string, number> }[] };
    expect([report.files[0].kind, report.files[0].counts]).toEqual(['report', { 'document-build-report': 1 }]);
  });

  it('at most 20 samples per code and file, then "… and K more [code]"', async () => {
    const many = file('many.json', fc(Array.from({ length: 27 }, (_, i) => cell(i, { geometry: square(false) }))));
    const r = await run(['validate', many]);
    expect(r.code).toBe(1);
    const samples = r.stdout.split('\n').filter((l) => l.endsWith('[ring-not-closed]') && l.includes(': feature '));
    expect(samples).toHaveLength(20);
    expect(samples[19]).toMatch(/^many\.json:\d+:\d+: feature 19: /);
    expect(r.stdout).toContain('many.json: … and 7 more [ring-not-closed]\n');
    expect(r.stdout).toContain('many.json: invalid, 27 features (27 invalid), 27 errors, 0 warnings\n');
  });

  it('--json: the whole report on stdout', async () => {
    const bad = file('bad2.json', fc([cell(0), cell(1, { geometry: square(false) })]));
    const good = file('good.ndjson', `${JSON.stringify(cell(1))}\n${JSON.stringify(cell(2))}\n`);
    const r = await run(['validate', '--json', bad, good]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.exitCode).toBe(1);
    expect(report.total).toEqual({ files: 2, features: 4, invalidFeatures: 1, errors: 1, warnings: 0, invalidFiles: 1, unreadableFiles: 0 });
    expect(report.files[0]).toMatchObject({
      file: 'bad2.json',
      kind: 'collection',
      type: 'FeatureCollection',
      valid: false,
      features: 2,
      invalidFeatures: 1,
      errors: 1,
      warnings: 0,
      counts: { 'ring-not-closed': 1 },
    });
    expect(report.files[0].samples).toEqual([
      { file: 'bad2.json', feature: 1, line: expect.any(Number), column: 3, path: '/geometry/coordinates/0', message: expect.any(String), code: 'ring-not-closed', severity: 'error' },
    ]);
    expect(report.files[1]).toMatchObject({ file: 'good.ndjson', kind: 'sequence', valid: true, features: 2, samples: [] });
  });

  it('- reads stdin (gzip too)', async () => {
    const r = await run(['validate', '-'], fc([cell(1), cell(2, { geometry: square(false) })]));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^stdin:38:3: feature 1: \/geometry\/coordinates\/0: .+ \[ring-not-closed\]$/m);
    const z = await run(['validate', '-'], gzipSync(fc([cell(1)])));
    expect(z.code).toBe(0);
    expect(z.stdout).toMatch(/^stdin: valid, 1 feature \(0 invalid\)/m);
  });

  it('descriptors, bare features, geometries, .gz files', async () => {
    const d = file('desc.json', JSON.stringify({ tilejson: '3.0.0', tiles: ['{z}/{x}/{y}.pbf'], vector_layers: [{ id: 'cells', fields: {} }] }));
    const f = file('one.geojson', JSON.stringify(cell(1)));
    const g = file('point.json', JSON.stringify({ type: 'Point', coordinates: [1, 2] }));
    const z = file('cells.json.gz', gzipSync(fc([cell(1), cell(2)])));
    const r = await run(['validate', d, f, g, z]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('desc.json: valid, tileset descriptor, 0 errors, 0 warnings\n');
    expect(r.stdout).toContain('one.geojson: valid, 1 feature (0 invalid), 0 errors, 0 warnings\n');
    expect(r.stdout).toContain('point.json: valid, Point, 0 errors, 0 warnings\n');
    expect(r.stdout).toContain('cells.json.gz: valid, 2 features (0 invalid), 0 errors, 0 warnings\n');
  });

  it('exit 2: no files, unknown flag, stdin twice', async () => {
    const none = await run(['validate']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/validate needs at least one FILE/);
    const flag = await run(['validate', '--strictt', 'x.json']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/unknown option --strictt for validate/);
    expect(flag.stdout).toBe('');
    const twice = await run(['validate', '-', '-']);
    expect(twice.code).toBe(2);
  });

  it('exit 3: missing file, and a syntax error with file, line and column; other files are still checked', async () => {
    const broken = file('broken.json', '{"type": "FeatureCollection", "features": [\n  {"type": "Feature", "geometry": null},\n  {"type": "Feature" "geometry": null}\n]}\n');
    const bad = file('bad3.json', fc([cell(1, { geometry: square(false) })]));
    const r = await run(['validate', 'missing.json', broken, bad]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('error: missing.json: no such file\n');
    expect(r.stderr).toContain(`error: broken.json:3:22: feature 1: Expected ',' or '}' after property value, found '"' (JSON path /type)\n`);
    expect(r.stdout).toContain('broken.json: unreadable at line 3, column 22: ');
    expect(r.stdout).toMatch(/^bad3\.json:\d+:\d+: feature 0: .+\[ring-not-closed\]$/m);
    expect(r.stdout).toMatch(/^total: 3 files \(1 invalid, 2 unreadable\), 2 features/m);
    const json = JSON.parse((await run(['validate', '--json', broken])).stdout);
    expect(json.files[0].unreadable).toEqual({ message: `feature 1: Expected ',' or '}' after property value, found '"' (JSON path /type)`, line: 3, column: 22 });
    expect(json.exitCode).toBe(3);
  });

  it('not JSON at all: exit 3 with the position of the first bad byte', async () => {
    const t = file('notes.txt', 'hello\n');
    const r = await run(['validate', t]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("error: notes.txt:1:1: unexpected 'h', expected a JSON value\n");
  });

  it('exit 3 on a bad escape, at its line counted over lone CRs (old Mac OS), with the feature and JSON path; build says the same', async () => {
    const features = [cell(1), cell(2), { ...cell(3), properties: { name: 'C:\\qupath' } }].map((f) => JSON.stringify(f));
    // The escape written the way a Windows path is: "C:\qupath" in the file.
    const text = `{"type":"FeatureCollection",\r"features":[\r${features.join(',\r')}\r]}\r`.replace('C:\\\\qupath', 'C:\\qupath');
    const f = file('mac.json', text);
    const column = features[2].indexOf('\\\\') + 1;
    const message = `mac.json:5:${column}: feature 2: invalid escape "\\q" in a string (JSON knows \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; write a backslash as \\\\) (JSON path /properties/name)`;
    const v = await run(['validate', f]);
    expect([v.code, v.stderr]).toEqual([3, `error: ${message}\n`]);
    const b = await run(['build', f, '-o', 'mac-out']);
    expect([b.code, b.stderr]).toEqual([3, `error: ${message}\n`]);
  });

  it('exit 3 on gzip cut short, with bytes appended or corrupt: what is wrong, and how far its JSON was read; build says the same', async () => {
    const zipped = gzipSync(readFileSync(join(ROOT, 'sample-data/slide/cells.json')));
    const cut = file('cut.json.gz', zipped.subarray(0, 5000));
    // What the cut holds: zlib made to stop where the input does. Its features are one a line from line 6.
    const held = gunzipSync(zipped.subarray(0, 5000), { finishFlush: constants.Z_SYNC_FLUSH }).toString('latin1').split('\n');
    const last = held.length - 1;
    const where = `${cut}:${held.length}:${held[last].length + 1}`;
    const message = `the gzip stream ends early (truncated file?): the JSON in it breaks off here, after ${held.join('\n').length.toLocaleString('en-US')} bytes; the last complete feature read is feature ${last - 6} (line ${last})`;
    const v = await run(['validate', cut]);
    expect([v.code, v.stderr]).toEqual([3, `error: ${where}: ${message}\n`]);
    expect(v.stdout).toContain(`${cut}: unreadable at line ${held.length}, column ${held[last].length + 1}: ${message}\n`);
    const b = await run(['build', cut, '-o', 'cut-out']);
    expect([b.code, b.stderr]).toEqual([3, `error: ${where}: ${message}\n`]);
    // The others fail in a step whose output zlib drops: the place is where reading stopped.
    const appended = file('appended.json.gz', Buffer.concat([zipped, Buffer.from('garbage\n')]));
    const crc = Buffer.from(zipped);
    crc[crc.length - 6] ^= 0xff;
    const corrupt = file('crc.json.gz', crc);
    // Bytes appended leave the data whole, read up to there; of corrupt data (a checksum is checked at the end) none.
    const read = /: the JSON read before the error ends here, after [\d,]+ bytes; the last complete feature read is feature \d+ \(line \d+\)\n$/;
    const untrusted = /, found after [\d,]+ bytes of JSON, which end here: nothing read from it can be trusted\n$/;
    for (const [name, why, rest] of [[appended, 'bytes that are not gzip follow the end of the gzip stream (appended to the file?)', read], [corrupt, 'the gzip data is corrupt (its CRC-32 checksum does not match the data)', untrusted]] as const) {
      const r = await run(['validate', name]);
      expect(r.code).toBe(3);
      expect(r.stderr.startsWith(`error: ${name}:`) && r.stderr.includes(`: ${why}`), r.stderr).toBe(true);
      expect(r.stderr).toMatch(rest);
    }
  });

  it('--help and --log json', async () => {
    const h = await run(['validate', '--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/^Usage: mudm-tiles validate \[options\] FILE\|DIR\.\.\./);
    const j = await run(['validate', '--log', 'json', 'missing.json']);
    expect(j.code).toBe(3);
    expect(JSON.parse(j.stderr.trim())).toMatchObject({ level: 'error', file: 'missing.json', line: 0, column: 0 });
  });
});
