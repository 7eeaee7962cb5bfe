// A build killed with SIGKILL in the middle, then run with --resume, ends byte-identical to an uninterrupted build.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/random.js';
import { SLOW_OPTS, expectOk, expectSamePyramid, generateCells, killWhen, listFiles, markerCount, removeTemps, runCli, startCli, tempDir, waitFor } from './helpers.js';

/**
 * Cuts to half every tile written after the newest unit marker: such a tile's unit has no marker (a unit's marker
 * comes after all its tiles), so this is what a kill mid-write may leave, made certain. Returns how many.
 */
function cutUnmarkedTiles(out: string): number {
  const tiles = unmarkedTiles(out);
  for (const f of tiles) {
    const bytes = fs.readFileSync(path.join(out, f));
    fs.writeFileSync(path.join(out, f), bytes.subarray(0, bytes.length >> 1));
  }
  return tiles.length;
}

/** Tiles written after the newest unit marker (a file vanishing while it is looked at counts as not there). */
function unmarkedTiles(out: string): string[] {
  const files = fs.existsSync(out) ? listFiles(out) : [];
  const mtime = (f: string) => fs.statSync(path.join(out, f), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const newestMarker = Math.max(0, ...files.filter((f) => f.startsWith('.mudm-work/units/') && f.endsWith('.log')).map(mtime));
  return files.filter((x) => /^\d+\/.*\.(json|pbf)$/.test(x) && mtime(x) > newestMarker);
}

let input = '';
let reference = '';
/** How long the uninterrupted build took: kills land anywhere in that span. */
let referenceMs = 0;

beforeAll(async () => {
  const dir = tempDir('resume-in');
  input = path.join(dir, 'cells.json');
  generateCells(input, 30_000);
  reference = path.join(dir, 'reference');
  const t0 = Date.now();
  expectOk(await runCli(['build', input, '-o', reference, '-q', ...SLOW_OPTS]), 'uninterrupted build');
  referenceMs = Date.now() - t0;
});

afterAll(removeTemps);

describe('--resume after SIGKILL', () => {
  it('leaves no descriptor after the kill, skips the finished units, and gives the same bytes', async () => {
    const out = path.join(tempDir('resume'), 'out');
    await killWhen(['build', input, '-o', out, '-q', ...SLOW_OPTS], () => markerCount(out) >= 3);

    expect(fs.existsSync(path.join(out, 'tileset.json')), 'a killed build has no descriptor').toBe(false);
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json')), 'the plan survives the kill').toBe(true);
    const finished = markerCount(out);
    expect(finished).toBeGreaterThanOrEqual(3);
    // A tile write the kill cut short leaves its temporary file (planted here, as the kill may land anywhere).
    const zoomDir = fs.readdirSync(out).find((e) => /^\d+$/.test(e)) as string;
    const planted = path.join(out, zoomDir, '0.pbf.tmp-0badcafe-7');
    fs.writeFileSync(planted, 'half a tile');

    // A tile of a finished unit removed since (older than every marker: its unit's marker came after it): its unit is
    // tiled again rather than trusted.
    const unmarked = new Set(unmarkedTiles(out));
    const lost = listFiles(out).find((f) => /^\d+\/.*\.pbf$/.test(f) && !unmarked.has(f)) as string;
    fs.rmSync(path.join(out, lost));

    const resumed = await runCli(['build', input, '-o', out, '--resume', ...SLOW_OPTS]);
    expectOk(resumed, 'build --resume');
    expect(resumed.stderr).toMatch(/warning: --resume: unit \S+ \(level \d\) was marked done, but its output holds \d+ of its \d+ pbf tiles of zoom \d+: it is tiled again/);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as { run: { resumed: number } };
    expect(report.run.resumed, 'units skipped because their markers existed').toBeGreaterThanOrEqual(finished - 1);
    expect(fs.existsSync(path.join(out, '.mudm-work')), 'a finished build removes its work directory').toBe(false);
    expect(fs.existsSync(planted), 'resume removes temporary files of the killed build').toBe(false);
    // run.resumed describes the run, not the pyramid; the report keeps such fields under run.
    expectSamePyramid(out, reference);
  });

  // Tiles are written in place (no temporary name): a kill mid-write leaves a partial tile, which is safe only because
  // its unit has no marker and --resume rewrites every tile of such a unit. Kills at random moments (reading, tiling
  // any level, two workers writing, finalizing) must never leave a byte that differs from the clean build.
  it('killed at random moments again and again, each run resumed, ends with the bytes of a clean build', async () => {
    const out = path.join(tempDir('resume-random'), 'out');
    const seed = Number(process.env.KILL_SEED ?? 20261123);
    const random = mulberry32(seed);
    // --resume once a plan is there to resume; before (a kill while reading) or after a run that finished, a fresh build.
    const args = () => ['build', input, '-o', out, '-q', '--workers', '2', '--unit-size', '256',
      ...(fs.existsSync(path.join(out, '.mudm-work', 'plan.json')) ? ['--resume'] : fs.existsSync(out) ? ['--force'] : [])];
    const kills: number[] = [];
    let cut = 0;
    let resumes = 0;
    // Six rounds, and more (up to 16) while no kill has yet left a tile of an unmarked unit: a unit may be marked in
    // the few milliseconds between seeing its tile and the kill, and with fast units that happened now and then.
    for (let i = 0; i < 6 || (cut === 0 && i < 16); i++) {
      const run = args();
      if (run.includes('--resume')) resumes++;
      const before = markerCount(out);
      const { child, done } = startCli(run);
      let ended = false;
      const finished = done.then((r) => { ended = true; return r; });
      const t0 = Date.now();
      // Even rounds: a random moment of the whole run (reading, tiling, finalizing). Odd rounds: within 20 ms of a
      // tile written after this run's newest marker, so that some kills leave tiles of unmarked units however loaded
      // the machine is (a random delay after the first marker missed them all, now and then, on a loaded machine).
      if (i % 2 === 1) await waitFor(() => ended || (markerCount(out) > before && unmarkedTiles(out).length > 0), 60_000);
      const at = i % 2 === 0 ? Math.round(random() * referenceMs) : Math.round(random() * 20);
      const timer = setTimeout(() => child.kill('SIGKILL'), at);
      const r = await finished;
      clearTimeout(timer);
      if (r.signal === 'SIGKILL') {
        kills.push(Date.now() - t0);
        // A kill after the descriptor was written (while the process cleaned up) ends a complete build: the
        // descriptor is there only when every tile is, with the bytes of a clean build.
        if (fs.existsSync(path.join(out, 'tileset.json'))) expectSamePyramid(out, reference, [], true);
        cut += cutUnmarkedTiles(out);
      } else {
        expectOk(r, `run ${i} (seed ${seed})`);
      }
    }
    expect(kills.length, `kills that landed before the build ended (seed ${seed})`).toBeGreaterThanOrEqual(3);
    expect(cut, 'partial tiles left for --resume to rewrite').toBeGreaterThan(0);
    const last = args();
    if (last.includes('--resume')) resumes++;
    expect(resumes, `runs that resumed a killed one (seed ${seed})`).toBeGreaterThanOrEqual(3);
    expectOk(await runCli(last), `the last run (seed ${seed}, kills at ${kills.join(', ')} ms)`);
    expectSamePyramid(out, reference);
  });
});
