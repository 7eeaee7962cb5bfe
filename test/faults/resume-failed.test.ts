// A --resume that fails after taking over an interrupted build keeps that build's work, and --resume identifies the --image file as it does an input.
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, SLOW_OPTS, expectOk, expectSamePyramid, generateCells, killWhen, listFiles, markerCount, removeTemps, runCli, runProcess, tempDir } from '../e2e/helpers.js';
import { hasStrace, snapshot } from './force-fixture.js';

afterAll(removeTemps);

/** The work directory's files by their bytes' hash, but its owner record, which each run that takes it over rewrites. */
const workState = (work: string) => new Map([...snapshot(work)].filter(([f]) => f !== 'owner.json').map(([f, bytes]) => [f, createHash('sha1').update(bytes).digest('hex')]));

/** What every failed --resume here ends its message with: the work kept, and how to go on. */
const kept = (work: string) => `. This --resume keeps the interrupted build's work (its tiles so far, and its state in ${work}): once the cause is fixed, run the same build with --resume again to continue it; --force (without --resume) starts over`;

let input = '';
let reference = '';

beforeAll(async () => {
  const dir = tempDir('resume-failed-in');
  const cells = path.join(dir, 'cells.json');
  generateCells(cells, 30_000);
  // One invalid feature at the very end: a build passes it over, with --strict it is fatal once the read reaches it.
  const doc = JSON.parse(fs.readFileSync(cells, 'utf8')) as { features: unknown[] };
  doc.features.push({ type: 'Feature', id: 999_999, geometry: { type: 'Polygon', coordinates: [[[1, 1], [2, 2]]] }, properties: {} });
  input = path.join(dir, 'input.json');
  fs.writeFileSync(input, JSON.stringify(doc));
  reference = path.join(dir, 'reference');
  expectOk(await runCli(['build', input, '-o', reference, '-q', ...SLOW_OPTS]), 'the clean build');
});

describe('a --resume that fails after taking over an interrupted build', () => {
  it('keeps the work it took over and says so, exit as the error (1: --strict, 3: the input unreadable); the next --resume gives the clean pyramid', async () => {
    const out = path.join(tempDir('resume-failed'), 'out');
    const work = path.join(out, '.mudm-work');
    const args = ['build', input, '-o', out, '-q', ...SLOW_OPTS];
    await killWhen(args, () => markerCount(out) >= 3);
    const markers = markerCount(out);
    const state = workState(work);

    // The resumed build reads its input anew: --strict stops it at the invalid feature, past what the kill left.
    const strict = await runCli([...args, '--resume', '--strict']);
    const at = fs.readFileSync(input, 'latin1').lastIndexOf('{"type":"Feature"') + 1;
    expect([strict.code, strict.stderr]).toEqual([1, `error: ${input}:1:${at}: feature 30000: /geometry/coordinates/0: linear ring must have 4 or more positions, found [[1,1],[2,2]] (2) [ring-too-short]${kept(work)}\n`]);
    expect(workState(work), 'the interrupted build\'s work directory as the kill left it').toEqual(state);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);

    if (hasStrace) {
      // The input unreadable when the resumed build opens it (EACCES, which chmod cannot give root).
      const denied = await runProcess('strace', ['-f', '-qq', '-o', '/dev/null', '-P', input, '-e', 'trace=openat', '-e', 'inject=openat:error=EACCES', process.execPath, BIN, ...args, '--resume']);
      expect([denied.code, denied.stderr]).toEqual([3, `error: ${input}: permission denied${kept(work)}\n`]);
      expect(workState(work), 'the interrupted build\'s work directory as the kill left it').toEqual(state);
    }

    const resumed = await runCli([...args, '--resume']);
    expectOk(resumed, 'the --resume after them');
    const report = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as { run: { resumed: number } };
    expect(report.run.resumed, 'the units the kill left finished are not tiled again').toBeGreaterThanOrEqual(markers);
    expectSamePyramid(out, reference);
  });
});

describe('--resume with --image', () => {
  it('refuses another image of the same size (exit 2), naming the file, nothing touched; the same image resumes', async () => {
    const dir = tempDir('resume-image');
    const image = path.join(dir, 'slide.png'), other = path.join(dir, 'other.png'), aside = path.join(dir, 'slide.png.first');
    // The size the generated cells' slide states: an image of it is the world either way.
    const png = (background: string) => sharp({ create: { width: 6364, height: 4243, channels: 3, background } }).png().toFile(image);
    await png('#ffffff');
    const out = path.join(dir, 'out');
    const args = ['build', input, '-o', out, '-q', '--image', image, ...SLOW_OPTS];
    await killWhen(args, () => fs.existsSync(path.join(out, '.mudm-work', 'plan.json')));
    const state = snapshot(out);

    // The same name, another picture of the same size (a later scan written over it): its dimensions alone passed.
    fs.renameSync(image, aside);
    await png('#ff00ff');
    const redrawn = await runCli([...args, '--resume']);
    expect([redrawn.code, redrawn.stderr]).toEqual([2, `error: --resume: the inputs or options differ from those of the interrupted build in ${path.join(out, '.mudm-work')} (--image ${image} has changed since: its size or modification time differs); run again with the same ones, or start over with --force (without --resume)\n`]);
    // Another file of the same size.
    fs.renameSync(image, other);
    const another = await runCli(['build', input, '-o', out, '-q', '--image', other, ...SLOW_OPTS, '--resume']);
    expect([another.code, another.stderr]).toEqual([2, `error: --resume: the inputs or options differ from those of the interrupted build in ${path.join(out, '.mudm-work')} (--image was ${image}, is ${other} now); run again with the same ones, or start over with --force (without --resume)\n`]);
    expect(snapshot(out), 'nothing in OUT touched').toEqual(state);

    // The image the build was given, back as it was (a rename keeps its modification time): resumed.
    fs.renameSync(aside, image);
    expectOk(await runCli([...args, '--resume']), 'the --resume with the same image');
    expect(listFiles(out)).toContain('tileset.json');
  });
});
