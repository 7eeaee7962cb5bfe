// Features far outside the world cost what the world costs, not what their coordinates say; SIGTERM stops any build.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodePbf } from '../helpers/pyramid.js';
import { generateCells, removeTemps, runCli, tempDir } from '../e2e/helpers.js';
import { described, mib, runMeasured } from './measure.js';

afterAll(removeTemps);

const MIB = 1024 * 1024;

/** A one-feature collection: the polygon of `ring`. */
function polygonFile(dir: string, ring: number[][]): string {
  const file = path.join(dir, 'far.json');
  fs.writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: { label: 1 }, geometry: { type: 'Polygon', coordinates: [ring] } }] }));
  return file;
}

describe('a feature far outside the world', () => {
  it.each([
    ['reaching (1e7, 1e7)', [[0, 0], [1e7, 0], [1e7, 1e7], [0, 0]]],
    ['with coordinates of ±1e308', [[-1e308, -1e308], [1e308, -1e308], [1e308, 1e308], [-1e308, -1e308]]],
  ])('a triangle %s with --image-size 1000,1000 builds in seconds and little memory, cut to the world', async (_, ring) => {
    const dir = tempDir('far');
    const out = path.join(dir, 'out');
    const m = await runMeasured(['build', polygonFile(dir, ring), '-o', out, '--image-size', '1000,1000', '-q'], 10_000);
    expect(m.code, described(m)).toBe(0);
    expect(m.peakBytes, `peak ${mib(m.peakBytes)}`).toBeLessThan(400 * MIB);
    // The world is 1024 px (zooms 0-1); the triangle's part below its diagonal is in the tiles, reaching no further
    // than the world's edge and a tile buffer (8 px at zoom 1).
    const tiles = fs.readdirSync(path.join(out, '1'), { recursive: true }).map(String).filter((f) => f.endsWith('.pbf'));
    expect(tiles).toContain('1/0.pbf');
    const corners = tiles.flatMap((t) => {
      const [x, y] = t.replace('.pbf', '').split('/').map(Number);
      return decodePbf(fs.readFileSync(path.join(out, '1', t)), 1024, 1, x, y).flatMap((f) => f.rings.flat());
    });
    expect(Math.max(...corners.map((p) => Math.max(p[0], p[1])))).toBeLessThanOrEqual(1024 + 8);
    const v = await runCli(['verify', out]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});

describe('a feature too wide to store, without --image-size', () => {
  it('is an invalid feature named with its extent, in seconds and little memory; the others are built; --strict stops (exit 1)', async () => {
    const dir = tempDir('too-wide');
    // Coordinates in nanometres: a square of 10,000,000 px, beside a cell in pixels.
    const file = path.join(dir, 'nm.json');
    fs.writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features: [
      { type: 'Feature', properties: { label: 1 }, geometry: { type: 'Polygon', coordinates: [[[0, 0], [1e7, 0], [1e7, 1e7], [0, 1e7], [0, 0]]] } },
      { type: 'Feature', properties: { label: 2 }, geometry: { type: 'Polygon', coordinates: [[[10, 10], [30, 10], [30, 30], [10, 10]]] } },
    ] }));
    const out = path.join(dir, 'out');
    const m = await runMeasured(['build', file, '-o', out], 20_000);
    expect(m.code, described(m)).toBe(0);
    expect(m.peakBytes, `peak ${mib(m.peakBytes)}`).toBeLessThan(400 * MIB);
    const wide = `${file}:1:41: feature 0: /geometry: the geometry spans 10,000,000 × 10,000,000 px (x 0 to 10,000,000, y 0 to 10,000,000), 23,843,689 work cells of 2048 px where at most 262,144 are allowed: are its coordinates in pixels, or is a vertex astray? --image-size W,H cuts features to the image; a larger --unit-size makes fewer cells [feature-too-wide]`;
    expect(m.stdout).toContain(wide);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as { features: { valid: number; invalid: number } };
    expect(report.features).toMatchObject({ valid: 1, invalid: 1 });
    const strict = await runCli(['build', file, '-o', path.join(dir, 'strict'), '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('[feature-too-wide]');
  });
});

describe('SIGTERM', () => {
  it('stops a build inside a long work unit at once: exit 143, no descriptor', async () => {
    const dir = tempDir('long-unit');
    const input = path.join(dir, 'cells.json');
    generateCells(input, 20_000);
    const out = path.join(dir, 'out');
    let sentAt = 0;
    // One work unit for the whole slide: a single task that takes seconds, which the signal must not wait for.
    const m = await runMeasured(['build', input, '-o', out, '--workers', '1', '--unit-size', '65536', '--max-zoom', '8'], 60_000, (child) => {
      const poll = setInterval(() => {
        if (!fs.existsSync(path.join(out, '.mudm-work', 'plan.json'))) return;
        clearInterval(poll);
        // The plan is written when reading ends: the one unit starts tiling now.
        setTimeout(() => { sentAt = performance.now(); child.kill('SIGTERM'); }, 300);
      }, 20);
      child.on('close', () => clearInterval(poll));
    });
    const stopped = (performance.now() - sentAt) / 1000;
    expect(sentAt, `no plan was written: ${described(m)}`).toBeGreaterThan(0);
    expect(m.code, described(m)).toBe(143);
    expect(stopped, `exited ${stopped.toFixed(1)} s after SIGTERM`).toBeLessThan(5);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
  });
});
