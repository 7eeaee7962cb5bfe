// --memory-budget holds for big features: the whole process tree stays under it, and a value too big for it is an
// error naming the file and where the value starts (exit 1), found before it is read whole.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTemps, tempDir } from '../e2e/helpers.js';
import { described, mib, runMeasured } from './measure.js';

afterAll(removeTemps);

const MIB = 1024 * 1024;

const square = (x: number, y: number) => `[[[${x},${y}],[${x + 20},${y}],[${x + 20},${y + 20}],[${x},${y + 20}],[${x},${y}]]]`;

/** `n` features 200 px apart in a 2000 px slide, each with an id of `idBytes` bytes: a careless export of paths. */
function bigIds(file: string, n: number, idBytes: number): void {
  const fd = fs.openSync(file, 'w');
  const pad = 'x'.repeat(idBytes);
  for (let i = 0; i < n; i++) {
    fs.writeSync(fd, `{"type":"Feature","id":"${i}${pad}","properties":{"label":${i}},"geometry":{"type":"Polygon","coordinates":${square((i % 10) * 200, Math.floor(i / 10) * 100)}}}\n`);
  }
  fs.closeSync(fd);
}

/** One polygon of `n` vertices, a bare Feature document (not in a collection). */
function bigPolygon(file: string, n: number): void {
  const ring: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = (2 * Math.PI * i) / n, r = 400 + 50 * Math.sin(a * 97);
    ring.push(`[${(500 + r * Math.cos(a)).toFixed(3)},${(500 + r * Math.sin(a)).toFixed(3)}]`);
  }
  ring.push(ring[0]);
  fs.writeFileSync(file, `{"type":"Feature","properties":{"label":1},"geometry":{"type":"Polygon","coordinates":[[${ring.join(',')}]]}}\n`);
}

describe('--memory-budget', () => {
  it('100 features with 1 MB ids stay under --memory-budget 768M, and the pyramid holds every id', async () => {
    const dir = tempDir('big-ids');
    const input = path.join(dir, 'ids.ndjson');
    bigIds(input, 100, MIB);
    const out = path.join(dir, 'out');
    const m = await runMeasured(['build', input, '-o', out, '--memory-budget', '768M', '-q'], 60_000);
    expect(m.code, described(m)).toBe(0);
    expect(m.peakBytes, `peak ${mib(m.peakBytes)}`).toBeLessThan(768 * MIB);
    const report = JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as { features: { valid: number }; world: { maxZoom: number } };
    expect(report.features.valid).toBe(100);
    // Every feature, with its whole id, in the finest zoom's JSON tiles.
    const z = String(report.world.maxZoom);
    const ids = new Set<string>();
    for (const f of fs.readdirSync(path.join(out, z), { recursive: true }).map(String).filter((p) => p.endsWith('.json'))) {
      for (const feature of (JSON.parse(fs.readFileSync(path.join(out, z, f), 'utf8')) as { features: { id: string }[] }).features) ids.add(feature.id);
    }
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id.length).toBeGreaterThan(MIB);
  });

  it('one polygon of 1,000,000 vertices (a bare Feature document) stays under --memory-budget 512M', async () => {
    const dir = tempDir('big-polygon');
    const input = path.join(dir, 'polygon.json');
    bigPolygon(input, 1_000_000);
    const m = await runMeasured(['build', input, '-o', path.join(dir, 'out'), '--memory-budget', '512M', '-q'], 30_000);
    expect(m.code, described(m)).toBe(0);
    expect(m.peakBytes, `peak ${mib(m.peakBytes)}`).toBeLessThan(512 * MIB);
  });

  it('a feature too big for the budget is an error naming the file, the feature and its line (exit 1)', async () => {
    const dir = tempDir('too-big');
    const input = path.join(dir, 'cells.ndjson');
    // A small first record, then one of 20 MB: more than a twentieth of a 256 MiB budget.
    fs.writeFileSync(input, `{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[1,1]}}\n`);
    fs.appendFileSync(input, `{"type":"Feature","id":"${'x'.repeat(20 * MIB)}","properties":{},"geometry":{"type":"Point","coordinates":[2,2]}}\n`);
    const out = path.join(dir, 'out');
    const m = await runMeasured(['build', input, '-o', out, '--memory-budget', '256M'], 20_000);
    expect(m.code, described(m)).toBe(1);
    expect(m.stderr).toContain(`${input}:2:1: feature 1 is larger than 13421772 bytes, the most one value may take with --memory-budget 256M (a 20th of it, at least 1M)`);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
  });

  it('a gzip bomb of "[" stops early with exit 1 naming the file, under the budget', async () => {
    const dir = tempDir('bomb');
    const input = path.join(dir, 'bomb.json.gz');
    // 160 MB of "[" streamed through gzip: about 150 KB on disk.
    const chunk = Buffer.alloc(MIB, '[');
    await pipeline(Readable.from((function* () { for (let i = 0; i < 160; i++) yield chunk; })()), zlib.createGzip(), fs.createWriteStream(input));
    expect(fs.statSync(input).size).toBeLessThan(2 * MIB);
    const m = await runMeasured(['build', input, '-o', path.join(dir, 'out'), '--memory-budget', '256M'], 20_000);
    expect(m.code, described(m)).toBe(1);
    expect(m.stderr).toContain('bomb.json.gz:1:2: feature 0 is larger than 13421772 bytes');
    expect(m.peakBytes, `peak ${mib(m.peakBytes)}`).toBeLessThan(256 * MIB);
  });
});
