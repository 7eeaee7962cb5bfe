// The inspect and verify commands end to end through bin/mudm-tiles.js (run `npm run build` first: it uses dist/).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tmpDir } from '../helpers/pyramid.js';
import { buildSquares } from './fixture.js';

const BIN = fileURLToPath(new URL('../../bin/mudm-tiles.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(async () => {
  dir = tmpDir('mudm-cli-inspect');
  await buildSquares({ out: path.join(dir, 'out') });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('mudm-tiles inspect / verify', () => {
  it('inspect prints a summary, --json the same as JSON', async () => {
    const out = path.join(dir, 'out');
    const text = await cli('inspect', out);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^layers$/m);
    expect(text.stdout).toMatch(/largest tiles/);
    const json = await cli('inspect', out, '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ format: 'pbf', zooms: { min: 0, max: 2 }, world: { side: 1024 } });
  });

  it('inspect Z/X/Y prints the tile as data-model JSON in global pixels, from PBF or JSON', async () => {
    const out = path.join(dir, 'out');
    for (const format of ['pbf', 'json']) {
      const r = await cli('inspect', out, '2/0/0', '--format', format);
      expect(r.code).toBe(0);
      const fc = JSON.parse(r.stdout) as { type: string; features: Array<{ id: unknown; geometry: { coordinates: number[][][] } }> };
      expect(fc.type).toBe('FeatureCollection');
      const sq = fc.features.find((f) => f.id === 1);
      expect(sq?.geometry.coordinates[0]).toContainEqual([180, 180]);
    }
    const missing = await cli('inspect', out, '2/3/3');
    expect(missing.code).toBe(0);
    expect(missing.stderr).toMatch(/no such tile/);
    expect((await cli('inspect', out, '2/0')).code).toBe(2);
    expect((await cli('inspect', out, '2/0/0', '--format', 'json,pbf')).code).toBe(2);
    // The address's suffix names the file; --format naming the other is refused; an address outside is a usage error.
    expect((await cli('inspect', out, '2/0/0.json')).stdout).toBe((await cli('inspect', out, '2/0/0', '--format', 'json')).stdout);
    expect((await cli('inspect', out, '2/0/0.pbf')).stdout).toBe((await cli('inspect', out, '2/0/0')).stdout);
    const both = await cli('inspect', out, '2/0/0.json', '--format', 'pbf');
    expect([both.code, both.stderr.split('\n')[0]]).toEqual([2, 'error: tile 2/0/0.json names a json file, and --format says pbf: give one']);
    for (const [address, why] of [['3/0/0', "zoom 3 is outside this pyramid's zooms 0–2"], ['2/4/0', 'zoom 2 has 4 × 4 tiles, x and y 0–3']]) {
      const r = await cli('inspect', out, address);
      expect([r.code, r.stderr.split('\n')[0]]).toEqual([2, `error: tile ${address} is not in this pyramid: ${why}`]);
    }
    expect((await cli('inspect', path.join(dir, 'nothing'))).code).toBe(3);
  });

  it('inspect of a tile in a format the pyramid has none of is a usage error, not an empty tile', async () => {
    const pbfOnly = path.join(dir, 'pbf-only');
    fs.cpSync(path.join(dir, 'out'), pbfOnly, { recursive: true });
    for (const z of ['0', '1', '2']) for (const f of fs.readdirSync(path.join(pbfOnly, z), { recursive: true }) as string[]) if (f.endsWith('.json')) fs.rmSync(path.join(pbfOnly, z, f));
    const r = await cli('inspect', pbfOnly, '2/0/0.json');
    expect([r.code, r.stdout, r.stderr.split('\n')[0]]).toEqual([2, '', 'error: 2/0/0.json: this pyramid has no JSON tiles at zoom 2, only PBF ones: ask for 2/0/0.pbf']);
    const overview = await cli('inspect', pbfOnly, '0/0/0', '--format', 'json');
    expect([overview.code, overview.stderr.split('\n')[0]]).toEqual([2, 'error: 0/0/0.json: this pyramid has no JSON tiles (zoom 0 of a JSON pyramid is its overview descriptor anyway); read zoom 0 from the PBF tile']);
    // A tile of its own format that is not there is still an empty tile.
    const empty = await cli('inspect', pbfOnly, '2/3/3.pbf');
    expect([empty.code, JSON.parse(empty.stdout)]).toEqual([0, { type: 'FeatureCollection', features: [] }]);
    // Zoom 0's JSON files are overviews: a PBF tile missing there is an empty tile, not a format the pyramid lacks.
    const noPbf0 = path.join(dir, 'no-pbf-0');
    fs.cpSync(path.join(dir, 'out'), noPbf0, { recursive: true });
    fs.rmSync(path.join(noPbf0, '0', '0', '0.pbf'));
    const zero = await cli('inspect', noPbf0, '0/0/0.pbf');
    expect([zero.code, JSON.parse(zero.stdout)]).toEqual([0, { type: 'FeatureCollection', features: [] }]);
  });

  it('inspect suggests the address of the format the pyramid has, planes included', async () => {
    const planes = path.join(dir, 'planes');
    const built = await cli('build', path.join(ROOT, 'sample-data/slide'), '-o', planes, '--format', 'pbf', '--plane-field', 'c=c,z=z', '--max-zoom', '1', '-q');
    expect(built.code, built.stderr).toBe(0);
    const r = await cli('inspect', planes, '1/1/2/0/0.json');
    expect([r.code, r.stderr.split('\n')[0]]).toEqual([2, 'error: 1/1/2/0/0.json: this pyramid has no JSON tiles at zoom 1, only PBF ones: ask for 1/1/2/0/0.pbf']);
  });

  it('verify exits 0 on a fresh build and 1 with the list of problems on a tampered one', async () => {
    const out = path.join(dir, 'out');
    const ok = await cli('verify', out);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/ok, \d+ tiles/);
    const bad = path.join(dir, 'bad');
    fs.cpSync(out, bad, { recursive: true });
    fs.writeFileSync(path.join(bad, '2/1/1.pbf'), Buffer.from('not a tile'));
    const r = await cli('verify', bad);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^2\/1\/1\.pbf: .*\[tile-undecodable\]$/m);
    expect(r.stdout).toMatch(/problems? in \d+ tiles checked/);
    // inspect still summarises it, but says which tile's features it could not count.
    const seen = await cli('inspect', bad);
    expect(seen.code).toBe(0);
    expect(seen.stderr).toMatch(/^warning: 2\/1\/1\.pbf: does not decode as a PBF tile \(.+\): its features are not counted \(mudm-tiles verify checks the whole pyramid\) \[tile-undecodable\]$/m);
    const j = await cli('verify', bad, '--json');
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, counts: { 'tile-undecodable': 1 } });
    const budget = await cli('verify', out, '--tile-budget', '100');
    expect(budget.code).toBe(1);
    expect(budget.stdout).toMatch(/tile-over-budget/);
    expect((await cli('verify', path.join(dir, 'nothing'))).code).toBe(3);
    // A path that is not there is named as such, not as a pyramid without its descriptor.
    const missing = await cli('inspect', path.join(dir, 'missing.pmtiles'));
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain(`error: ${path.join(dir, 'missing.pmtiles')}: no such archive`);
    const gone = await cli('verify', path.join(dir, 'nothing'));
    expect(gone.stderr).toContain(`${path.join(dir, 'nothing')}: no such pyramid directory or archive`);
  });


  it('verify prints its notes after the problems too, not only when the pyramid passes', async () => {
    const noted = path.join(dir, 'noted');
    fs.cpSync(path.join(dir, 'out'), noted, { recursive: true });
    fs.writeFileSync(path.join(noted, '0', 'data.csv'), 'a,b\n');
    const stray = '1 entry in the zoom folders not named as tiles, not part of the pyramid (a viewer never asks for them): 0/data.csv';
    const ok = await cli('verify', noted);
    expect([ok.code, ok.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^${noted}: ok, \\d+ tiles and \\d+ features checked; ${stray.replace(/[()]/g, '\\$&')}\\n$`))]);
    // Without its report the budget is unknown: one problem, and two notes (sizes not checked, the stray entry).
    fs.rmSync(path.join(noted, 'build-report.json'));
    const r = await cli('verify', noted);
    const lines = r.stdout.trimEnd().split('\n');
    expect(r.code).toBe(1);
    expect(lines[0]).toBe('build-report.json: no build-report.json: the pyramid was not finished by a build [report-missing]');
    expect(lines.slice(1)).toEqual([expect.stringMatching(new RegExp(`^${noted}: 1 problem in \\d+ tiles checked; no build report says which budget the build held .*tile sizes are not checked .*; ${stray.replace(/[()]/g, '\\$&')}$`))]);
  });
  it('inspect takes a tile file alone as that tile of its pyramid; a tile or an input given for a pyramid is named as what it is (exit 3)', async () => {
    const out = path.join(dir, 'out');
    const x = fs.readdirSync(path.join(out, '2'))[0];
    const y = fs.readdirSync(path.join(out, '2', x)).find((f) => f.endsWith('.pbf')) as string;
    const file = path.join(out, '2', x, y);
    // Before, the tile was opened as an archive: "not a PMTiles archive: N bytes, shorter than the 127-byte header".
    const alone = await cli('inspect', file);
    const addressed = await cli('inspect', out, `2/${x}/${y}`);
    expect([alone.code, addressed.code]).toEqual([0, 0]);
    expect((JSON.parse(alone.stdout) as { features: unknown[] }).features.length).toBeGreaterThan(0);
    expect(alone.stdout).toBe(addressed.stdout);
    const verified = await cli('verify', file);
    expect([verified.code, verified.stderr]).toEqual([3, `error: ${file} is a tile of the pyramid ${out}: give the pyramid (${out}), or to read this tile, inspect ${out} 2/${x}/${y}\n`]);
    const input = path.join(dir, 'cells.json');
    fs.writeFileSync(input, '{"type":"FeatureCollection","features":[]}');
    const given = await cli('inspect', input);
    expect([given.code, given.stderr]).toEqual([3, `error: ${input} is neither a pyramid directory nor a PMTiles archive: give the folder that holds tileset.json, or a .pmtiles file (an input file is checked by mudm-tiles validate)\n`]);
  });
});
