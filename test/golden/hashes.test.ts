// Same bytes across refactors: sha256 of every file of two pyramids against hashes.json (UPDATE_GOLDEN=1 rewrites it).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, SAMPLE, expectOk, runCli, runProcess } from '../e2e/helpers.js';
import { tmpDir } from '../helpers/pyramid.js';
import { GOLDEN, UPDATE, treeHashes } from './decode.js';

const HASHES = path.join(GOLDEN, 'hashes.json');
const scratch = tmpDir('hashes');
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

type Expected = Record<string, Record<string, string>>;
const expected: Expected = fs.existsSync(HASHES) ? (JSON.parse(fs.readFileSync(HASHES, 'utf8')) as Expected) : {};
const found: Expected = {};

afterAll(() => {
  if (UPDATE && Object.keys(found).length === 2) fs.writeFileSync(HASHES, `${JSON.stringify(found, null, 2)}\n`);
});

/** Builds with the CLI and checks the report says the run exercised what the case is for. */
async function build(name: string, args: string[]): Promise<{ out: string; report: Record<string, unknown> }> {
  const out = path.join(scratch, name);
  expectOk(await runCli(['build', ...args, '-o', out, '--force', '--quiet']), name);
  const report = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as Record<string, unknown>;
  return { out, report };
}

function compare(name: string, out: string): void {
  found[name] = treeHashes(out);
  if (UPDATE) return;
  expect(expected[name], `no hashes for ${name} in ${HASHES}: run UPDATE_GOLDEN=1 npx vitest run test/golden`).toBeDefined();
  expect(Object.keys(found[name]), `${name}: the files written`).toEqual(Object.keys(expected[name]));
  for (const [rel, hash] of Object.entries(expected[name])) expect(found[name][rel], `${name}: ${rel}`).toBe(hash);
}

describe('pyramid bytes (hashes.json)', () => {
  it('the sample slide, planes from properties', async () => {
    const { out, report } = await build('sample-slide', [SAMPLE, '--plane-field', 'c=c,z=z', '--layer-per-file', '--workers', '2']);
    expect(report).toMatchObject({ world: { planes: 6 } });
    compare('sample-slide', out);
  });

  it('a generated slide: 4 planes, 2 levels, thinned and pointified tiles, records spilled to disk', async () => {
    const input = path.join(scratch, 'generated.ndjson');
    expectOk(await runProcess(process.execPath, [path.join(ROOT, 'bench', 'generate.js'), '--cells', '2000', '--seed', '7', '--nuclei', 'polygons',
      '--planes', 't=2,z=2', '--width', '6000', '--height', '4000', '--format', 'ndjson', '--quiet', '-o', input]), 'generate');
    const { out, report } = await build('generated-slide', [input, '--plane-field', 't=t,z=z', '--layer-by', 'featureClass',
      '--tile-budget', '16K', '--memory-budget', '2M', '--workers', '2']);
    const r = report as { world: { planes: number }; units: { levels: number }; run: { spilled: boolean }; tiles: { byZoom: Record<string, { thinned: number; pointified: number }> } };
    const zooms = Object.values(r.tiles.byZoom);
    expect(r.world.planes).toBe(4);
    expect(r.units.levels).toBeGreaterThan(1);
    expect(r.run.spilled).toBe(true);
    expect(zooms.some((z) => z.thinned > 0)).toBe(true);
    expect(zooms.some((z) => z.pointified > 0)).toBe(true);
    compare('generated-slide', out);
  });
});
