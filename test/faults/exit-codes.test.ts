// Every failure ends with a documented exit code and a message naming the path or the file, never exit 5 with a stack.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, SAMPLE, expectOk, removeTemps, runCli, tempDir, waitFor, type RunResult } from '../e2e/helpers.js';
import { mountTmpfs, unmountTmpfs } from '../helpers/temps.js';

afterAll(() => {
  unmountTmpfs();
  removeTemps();
});

const NO_MOUNT = 'SKIPPED: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)';
const CELLS = path.join(SAMPLE, 'cells.json');

function expectNoStack(r: RunResult): void {
  expect(r.stderr, 'an internal error with a stack trace').not.toMatch(/internal error|\n\s+at /);
}

/** Exit 4, no stack, a message with the path and the reason. */
function expectOutputError(r: RunResult, where: string, why: RegExp): void {
  expectNoStack(r);
  expect(r.code, r.stderr).toBe(4);
  expect(r.stderr).toContain(where);
  expect(r.stderr).toMatch(why);
}

/** A feature whose property nests `depth` arrays. */
function deepFeature(depth: number): string {
  return `{"type":"Feature","geometry":{"type":"Point","coordinates":[5,5]},"properties":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
}

const POINT = '{"type":"Feature","geometry":{"type":"Point","coordinates":[10,10]},"properties":{}}';

describe('a property nested 20,000 deep', () => {
  let dir = '';
  beforeAll(() => { dir = tempDir('deep'); });

  it.each([
    ['a bare feature', 'deep.json', deepFeature(20_000)],
    ['in a FeatureCollection', 'deep-fc.json', `{"type":"FeatureCollection","features":[${deepFeature(20_000)}]}`],
    ['in a feature sequence', 'deep.ndjson', `${deepFeature(20_000)}\n`],
  ])('%s: validate says invalid (exit 1), build exits 1 naming the file and the rule', async (_, name, text) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    const v = await runCli(['validate', file]);
    expect(v.code, v.stdout + v.stderr).toBe(1);
    expect(v.stdout + v.stderr).toContain('nesting-too-deep');
    const out = path.join(dir, `out-${name}`);
    const r = await runCli(['build', file, '-o', out]);
    expectNoStack(r);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toContain('nesting-too-deep');
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
  });

  it('beside valid features it is counted invalid and the build goes on (exit 0)', async () => {
    const file = path.join(dir, 'mixed.ndjson');
    fs.writeFileSync(file, `${POINT}\n${deepFeature(20_000)}\n${POINT}\n`);
    const out = path.join(dir, 'out-mixed');
    const r = await runCli(['build', file, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as { features: { valid: number; invalidByCode: Record<string, number> } };
    expect(report.features.valid).toBe(2);
    expect(report.features.invalidByCode['nesting-too-deep']).toBe(1);
  });
});

describe('the spill folder cannot be written: exit 4 with its path', () => {
  it('--tmp-dir is a file', async () => {
    const dir = tempDir('spill-file');
    const file = path.join(dir, 'not-a-folder');
    fs.writeFileSync(file, 'x');
    const out = path.join(dir, 'out');
    const r = await runCli(['build', CELLS, '-o', out, '--tmp-dir', file, '--memory-budget', '1']);
    expectOutputError(r, file, /a file is in the way/);
    expect(fs.readFileSync(file, 'utf8')).toBe('x');
  });

  const ro = mountTmpfs('64k', true);
  it.skipIf(!ro)(ro ? '--tmp-dir is read-only' : `${NO_MOUNT}: --tmp-dir read-only`, async () => {
    const out = path.join(tempDir('spill-ro'), 'out');
    const r = await runCli(['build', CELLS, '-o', out, '--tmp-dir', ro as string, '--memory-budget', '1']);
    expectOutputError(r, ro as string, /read-only/);
  });

  const full = mountTmpfs('64k');
  it.skipIf(!full)(full ? '--tmp-dir is full' : `${NO_MOUNT}: --tmp-dir full`, async () => {
    const out = path.join(tempDir('spill-full'), 'out');
    const r = await runCli(['build', CELLS, '-o', out, '--tmp-dir', full as string, '--memory-budget', '1']);
    expectOutputError(r, full as string, /no space left/);
    expect(fs.readdirSync(full as string), 'spilled records left behind').toEqual([]);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
  });

  const disk = mountTmpfs('64k');
  it.skipIf(!disk)(disk ? 'a full disk with a small --memory-budget (spilling into OUT)' : `${NO_MOUNT}: full disk`, async () => {
    const out = path.join(disk as string, 'build');
    const r = await runCli(['build', CELLS, '-o', out, '--memory-budget', '1']);
    expectOutputError(r, out, /no space left/);
    expect(fs.existsSync(path.join(out, '.mudm-work')), 'the work directory of a failed build').toBe(false);
  });

  const planDisk = mountTmpfs('64k');
  it.skipIf(!planDisk)(planDisk ? 'plan on a full disk leaves no .mudm-work/level-0 behind' : `${NO_MOUNT}: plan on a full disk`, async () => {
    const out = path.join(planDisk as string, 'plan');
    const r = await runCli(['plan', CELLS, '-o', out, '--shards', '2']);
    expectOutputError(r, out, /no space left/);
    expect(fs.existsSync(path.join(out, '.mudm-work')), 'the work directory of a failed plan').toBe(false);
  });
});

describe('a read-only output path', () => {
  const ro = mountTmpfs('64k', true);
  it.skipIf(!ro)(ro ? 'is reported as read-only (exit 4), not as ENOENT from mkdir' : `${NO_MOUNT}: read-only output`, async () => {
    const out = path.join(ro as string, 'pyramid', 'out');
    const r = await runCli(['build', CELLS, '-o', out]);
    expectOutputError(r, out, /read-only/);
    expect(r.stderr).not.toMatch(/ENOENT/);
  });
});

describe('documents that are not feature sources, and builds with no valid feature: exit 1, no descriptor', () => {
  let dir = '';
  beforeAll(() => { dir = tempDir('not-source'); });

  it.each([
    ['null', 'null'],
    ['42', '42'],
    ['"hello"', 'a string'],
    ['{"type":"FeatureCollection","features":{}}', 'found a FeatureCollection whose features is not an array but an object'],
    // A build's report, read as input: not called a FeatureCollection.
    ['{"tiles":{},"features":{"read":3}}', 'found an object without "type": "FeatureCollection" (type missing) whose features is not an array but an object'],
    // Another tool's own format (HoVer-Net): said so, not read as one invalid feature.
    ['{"mag":40,"nuc":{"1":{"bbox":[[1,2],[3,4]],"contour":[[1,2],[3,4]],"type":1}}}', 'found an object without type, features, geometry or coordinates (members mag, nuc), no GeoJSON: export GeoJSON from the tool that wrote it'],
  ])('%s', async (text, found) => {
    const file = path.join(dir, `doc-${Buffer.from(text).toString('hex').slice(0, 16)}.json`);
    fs.writeFileSync(file, text);
    const out = path.join(dir, `out-${path.basename(file)}`);
    const r = await runCli(['build', file, '-o', out]);
    expectNoStack(r);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(/not a feature source/);
    expect(r.stderr).toContain(found);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
  });

  it('a top-level array is read as features: of numbers, none is valid', async () => {
    const file = path.join(dir, 'numbers.json');
    fs.writeFileSync(file, '[1, 2]');
    const out = path.join(dir, 'out-numbers');
    const r = await runCli(['build', file, '-o', out]);
    expectNoStack(r);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${file}: no valid feature (2 read, 2 invalid: feature-not-object`);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
  });

  it('a sequence of features none of which is valid', async () => {
    const file = path.join(dir, 'all-invalid.ndjson');
    fs.writeFileSync(file, '{"type":"Feature","geometry":{"type":"Point","coordinates":[1]},"properties":{}}\n{"type":"Feature"}\n');
    const out = path.join(dir, 'out-all-invalid');
    const r = await runCli(['build', file, '-o', out]);
    expectNoStack(r);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(/no valid feature/);
    expect(r.stderr).toMatch(/position-length/);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
  });

  it('valid features none of which can be placed (all beyond --image-size): exit 1, no output, for a directory and an archive', async () => {
    const file = path.join(dir, 'far.json');
    fs.writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features: [50, 60, 70].map((x) => ({ type: 'Feature', geometry: { type: 'Point', coordinates: [x, x] }, properties: {} })) }));
    for (const out of [path.join(dir, 'out-far'), path.join(dir, 'out-far.pmtiles')]) {
      const r = await runCli(['build', file, '-o', out, '--image-size', '10,10']);
      expectNoStack(r);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`error: ${file}: none of the 3 valid feature(s) can be placed (outside-image: 3, the first: ${file}:1:41: feature 0, lying at x 50 to 50, y 50 to 50): nothing to build, no descriptor written; are their coordinates in this image's pixels (10 × 10, --image or --image-size)?`);
      expect(fs.existsSync(out), out).toBe(false);
    }
  });

  it('valid features none of which can be placed, without an image (coordinates below 0): the first named, and what outside-world means', async () => {
    const file = path.join(dir, 'negative.ndjson');
    const square = (x: number) => JSON.stringify({ type: 'Feature', geometry: { type: 'Polygon', coordinates: [[[x, x], [x + 10, x], [x + 10, x + 10], [x, x]]] }, properties: {} });
    fs.writeFileSync(file, `${square(-500)}\n${square(-300)}\n`);
    const out = path.join(dir, 'out-negative');
    const r = await runCli(['build', file, '-o', out]);
    expectNoStack(r);
    expect([r.code, r.stderr]).toEqual([1, `error: ${file}: none of the 2 valid feature(s) can be placed (outside-world: 2, the first: ${file}:1:1: feature 0, lying at x -500 to -490, y -500 to -490): nothing to build, no descriptor written; outside-world: wholly left of or above the image's top-left corner (x or y below 0, where pixel coordinates start) or beyond 2^39 px\n`]);
    expect(fs.existsSync(out), out).toBe(false);
  });
});

describe('smaller ones', () => {
  it('issues about the collection itself say "collection", not "feature -1"', async () => {
    const dir = tempDir('collection-issue');
    const file = path.join(dir, 'in.json');
    fs.writeFileSync(file, `{"type":"FeatureCollection","provenance":5,"features":[${POINT}]}`);
    const r = await runCli(['build', file, '-o', path.join(dir, 'out')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${file}:collection: /provenance:`);
    expect(r.stdout).not.toContain('feature -1');
  });

  it('-q still reports the features the pyramid lost, by rule', async () => {
    const dir = tempDir('quiet');
    const file = path.join(dir, 'in.ndjson');
    fs.writeFileSync(file, `${POINT}\n{"type":"Feature","geometry":{"type":"Point","coordinates":[1]},"properties":{}}\n${POINT}\n`);
    const r = await runCli(['build', file, '-o', path.join(dir, 'out'), '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`warning: 1 of 3 features are not in the pyramid: 1 invalid (position-length: 1), the first: ${file}:2:1: feature 1 [features-lost]\n`);
    const quietOk = await runCli(['build', path.join(ROOT, 'sample-data', 'valid', 'point-feature.json'), '-o', path.join(dir, 'out-ok'), '-q']);
    expectOk(quietOk, 'a quiet build that lost nothing');
    expect(quietOk.stderr).toBe('');
  });

  it('plan -q and finalize -q of a sharded build say the features lost in the same line as build -q, and nothing when none is', async () => {
    const dir = tempDir('quiet-sharded');
    const file = path.join(dir, 'in.ndjson');
    const zeroArea = '{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[5,0],[0,0],[0,0]]]},"properties":{}}';
    fs.writeFileSync(file, `${POINT}\n{"type":"Feature","geometry":{"type":"Point","coordinates":[1]},"properties":{}}\n${POINT}\n${zeroArea}\n`);
    const lost = `warning: 2 of 4 features are not in the pyramid: 1 invalid (position-length: 1), the first: ${file}:2:1: feature 1; 1 not placed (zero-area: 1) [features-lost]\n`;
    const whole = await runCli(['build', file, '-o', path.join(dir, 'whole'), '-q']);
    expect([whole.code, whole.stdout, whole.stderr]).toEqual([0, '', lost]);
    // plan says it first (it read the inputs; finalize may run days later, elsewhere), -q or not; finalize again.
    const sharded = async (input: string, out: string) => {
      const plan = await runCli(['plan', input, '-o', out, '--shards', '1', '-q']);
      expectOk(plan, 'plan');
      expectOk(await runCli(['build-shard', out, '--shard', '0', '-q']), 'build-shard');
      return { plan, finalize: await runCli(['finalize', out, '-q']) };
    };
    const r = await sharded(file, path.join(dir, 'sharded'));
    expect([r.plan.stdout, r.plan.stderr]).toEqual(['', lost]);
    expect([r.finalize.code, r.finalize.stdout, r.finalize.stderr]).toEqual([0, '', lost]);
    const loud = await runCli(['plan', file, '-o', path.join(dir, 'loud'), '--shards', '1']);
    expect([loud.code, loud.stderr]).toEqual([0, `planned 4 features into 1 work unit(s) over 1 shard(s) in ${path.join(dir, 'loud', '.mudm-work')}\n${lost}`]);
    const none = await sharded(path.join(ROOT, 'sample-data', 'valid', 'point-feature.json'), path.join(dir, 'sharded-ok'));
    expect([none.plan.stderr, none.finalize.code, none.finalize.stdout, none.finalize.stderr]).toEqual(['', 0, '', '']);
  });

  it('a PBF-only build counts meshes as not placed (PBF cannot hold them, and no JSON tile is built), not as in JSON tiles', async () => {
    const dir = tempDir('mesh-pbf');
    const file = path.join(dir, 'in.ndjson');
    const tin = '{"type":"Feature","id":9,"geometry":{"type":"TIN","coordinates":[[[[0,0,0],[50,0,0],[0,50,1],[0,0,0]]]]},"properties":{}}';
    fs.writeFileSync(file, `${POINT}\n${tin}\n`);
    const out = path.join(dir, 'out');
    const r = await runCli(['build', file, '-o', out, '--format', 'pbf', '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/1 of 2 features are not in the pyramid: 1 not placed \(mesh-without-json-tiles: 1\)/);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as { features: { notPlaced: Record<string, number>; jsonOnly: number } };
    expect(report.features).toMatchObject({ notPlaced: { 'mesh-without-json-tiles': 1 }, jsonOnly: 0 });
    // With JSON tiles the mesh is kept there, and said to be.
    const both = await runCli(['build', file, '-o', path.join(dir, 'both'), '--format', 'json,pbf']);
    expectOk(both, 'the same input with JSON tiles');
    expect(both.stdout).toContain('in JSON tiles only (meshes cannot go into PBF): 1');
    expect(both.stderr).not.toMatch(/not in the pyramid/);
  });
});

describe('the first SIGTERM stops a read that is blocked', () => {
  /** Starts `build` on `input` with stdin as given, waits until it is reading, and sends one SIGTERM. */
  async function termWhileReading(input: string, out: string, stdin: 'pipe' | 'ignore'): Promise<RunResult> {
    const child = spawn(process.execPath, [BIN, 'build', input, '-o', out], { cwd: ROOT, stdio: [stdin, 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    // The output folder exists once the build has checked it, just before it reads.
    expect(await waitFor(() => fs.existsSync(out), 30_000), 'the build never started').toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGTERM');
    const timeout = new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000));
    const ended = await Promise.race([exited, timeout]);
    if (ended === 'hung') child.kill('SIGKILL');
    // Keeps the pipe open until here: a closed stdin would end the read by itself.
    child.stdin?.destroy();
    expect(ended, 'still running 20 s after the first SIGTERM').not.toBe('hung');
    const { code, signal } = ended as { code: number | null; signal: NodeJS.Signals | null };
    return { code, signal, stdout: '', stderr };
  }

  it('on standard input: nothing is kept, and the build is simply run again (no --resume, no --force)', async () => {
    const out = path.join(tempDir('term-stdin'), 'out');
    const r = await termWhileReading('-', out, 'pipe');
    expect(r.code, r.stderr).toBe(143);
    expect(r.stderr).toContain('build interrupted by SIGTERM: no descriptor written; it stopped while reading its input, before anything was kept: run the build again');
    // No work directory that a later build would take for another build's state (exit 4) or --resume for its own,
    // nor the output folder the build made.
    expect(fs.existsSync(out)).toBe(false);
    const again = spawnSync(process.execPath, [BIN, 'build', path.join(ROOT, 'sample-data', 'valid', 'feature-cell.json'), '-o', out], { cwd: ROOT, encoding: 'utf8' });
    expect(again.status, again.stderr).toBe(0);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(true);
  });

  it.skipIf(os.platform() === 'win32')('on a FIFO with no writer', async () => {
    const dir = tempDir('term-fifo');
    const fifo = path.join(dir, 'features.ndjson');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const r = await termWhileReading(fifo, path.join(dir, 'out'), 'ignore');
    expect(r.code, r.stderr).toBe(143);
    expect(r.stderr).toMatch(/interrupted by SIGTERM/);
  });
});
