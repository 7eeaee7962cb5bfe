// A build killed with SIGKILL in the middle, then run with --resume, ends byte-identical to an uninterrupted build.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLOW_OPTS, expectOk, expectSamePyramid, generateCells, markerCount, removeTemps, runCli, startCli, tempDir, waitFor } from './helpers.js';

let input = '';
let reference = '';

beforeAll(async () => {
  const dir = tempDir('resume-in');
  input = path.join(dir, 'cells.json');
  generateCells(input, 30_000);
  reference = path.join(dir, 'reference');
  expectOk(await runCli(['build', input, '-o', reference, '-q', ...SLOW_OPTS]), 'uninterrupted build');
});

afterAll(removeTemps);

describe('--resume after SIGKILL', () => {
  it('leaves no descriptor after the kill, skips the finished units, and gives the same bytes', async () => {
    const out = path.join(tempDir('resume'), 'out');
    const { child, done } = startCli(['build', input, '-o', out, '-q', ...SLOW_OPTS]);
    const started = await waitFor(() => markerCount(out) >= 3, 60_000);
    child.kill('SIGKILL');
    const killed = await done;
    expect(started, 'no unit finished within 60 s').toBe(true);
    expect(killed.signal, `the build ended before the kill (code ${killed.code}); the input is too small to interrupt`).toBe('SIGKILL');

    expect(fs.existsSync(path.join(out, 'tileset.json')), 'a killed build has no descriptor').toBe(false);
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json')), 'the plan survives the kill').toBe(true);
    const finished = markerCount(out);
    expect(finished).toBeGreaterThanOrEqual(3);
    // A tile write the kill cut short leaves its temporary file (planted here, as the kill may land anywhere).
    const zoomDir = fs.readdirSync(out).find((e) => /^\d+$/.test(e)) as string;
    const planted = path.join(out, zoomDir, '0.pbf.tmp-0badcafe-7');
    fs.writeFileSync(planted, 'half a tile');

    const resumed = await runCli(['build', input, '-o', out, '-q', '--resume', ...SLOW_OPTS]);
    expectOk(resumed, 'build --resume');
    const report = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as { run: { resumed: number } };
    expect(report.run.resumed, 'units skipped because their markers existed').toBeGreaterThanOrEqual(finished);
    expect(fs.existsSync(path.join(out, '.mudm-work')), 'a finished build removes its work directory').toBe(false);
    expect(fs.existsSync(planted), 'resume removes temporary files of the killed build').toBe(false);
    // run.resumed describes the run, not the pyramid; the report keeps such fields under run.
    expectSamePyramid(out, reference);
  });
});
