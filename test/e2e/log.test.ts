// `--log json`: every line the build-family commands write on stderr is a JSON object, for engines that collect logs.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SAMPLE, SHARDED_OPTS, expectOk, removeTemps, runCli, tempDir, type RunResult } from './helpers.js';

afterAll(removeTemps);

/** The stderr lines, each parsed; fails on the first line that is not a JSON object with level and message. */
function jsonLines(r: RunResult, what: string): { level: string; message: string }[] {
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
  return lines.map((l) => {
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch {
      throw new Error(`${what}: stderr line is not JSON: ${l}`);
    }
    expect(v, `${what}: ${l}`).toMatchObject({ level: expect.any(String), message: expect.any(String) });
    return v as { level: string; message: string };
  });
}

describe('--log json', () => {
  it('build, plan, build-shard and finalize write only JSON lines on stderr', async () => {
    const dir = tempDir('log');
    const built = await runCli(['build', SAMPLE, '-o', path.join(dir, 'local'), '--log', 'json']);
    expectOk(built, 'build');
    jsonLines(built, 'build');

    const out = path.join(dir, 'sharded');
    const steps: [string, string[]][] = [
      ['plan', ['plan', SAMPLE, '-o', out, '--shards', '2', '--log', 'json', ...SHARDED_OPTS]],
      ['build-shard 0', ['build-shard', out, '--shard', '0', '--log', 'json']],
      ['build-shard 1', ['build-shard', out, '--shard', '1', '--log', 'json']],
      ['finalize', ['finalize', out, '--log', 'json']],
    ];
    for (const [what, args] of steps) {
      const r = await runCli(args);
      expectOk(r, what);
      jsonLines(r, what);
    }
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(true);
  });

  it('every warning and notice ends its text line with its code, the event of its JSON line', async () => {
    const dir = tempDir('log-codes');
    const input = path.join(dir, 'cells.ndjson');
    // Three points near the origin and one far off (outliers), one without an id (mixed-ids), a string among numbers
    // (mixed-field), one without the plane field (plane-field-lacking).
    const point = (id: number | undefined, x: number, y: number, properties: Record<string, unknown>) =>
      JSON.stringify({ type: 'Feature', ...(id === undefined ? {} : { id }), geometry: { type: 'Point', coordinates: [x, y] }, properties });
    fs.writeFileSync(input, [point(1, 1, 2, { score: 1, slice: 0 }), point(undefined, 2, 1, { score: 'high' }), point(3, 1, 1, { score: 2, slice: 0 }), point(4, 30, 30, { score: 3, slice: 0 })].join('\n'));
    const out = path.join(dir, 'out');
    // A small budget for two workers (memory-budget), 4 px tiles (tiny-tiles), and an earlier build --force removes.
    const args = ['build', input, '-o', out, '--force', '--plane-field', 'z=slice', '--max-zoom', '3', '--memory-budget', '64M', '--workers', '2'];
    expectOk(await runCli([...args, '-q']), 'first build');
    const text = await runCli(args);
    expectOk(text, 'text build');
    const lines = text.stderr.split('\n').filter((l) => l !== '');
    const codes = lines.map((l) => /^(?:warning: )?.+ \[([a-z0-9]+(?:-[a-z0-9]+)*)\]$/.exec(l)?.[1] ?? `no code: ${l}`);
    expect(codes).toEqual(['memory-budget', 'mixed-ids', 'plane-field-lacking', 'mixed-field', 'tiny-tiles', 'outliers', 'removed']);
    expect(lines.filter((l) => l.startsWith('warning: '))).toHaveLength(6);
    const json = await runCli([...args, '--log', 'json']);
    expectOk(json, 'json build');
    const events = jsonLines(json, 'json build').map((l) => (l as { event?: string }).event);
    // The last line is the result (`done`), which is no warning or notice: it has no text line.
    expect(events).toEqual([...codes, 'done']);
  });

  it('an error is a JSON line too, with level error and the path', async () => {
    const file = path.join(tempDir('log-err'), 'pyramid');
    fs.writeFileSync(file, '');
    const r = await runCli(['build', SAMPLE, '-o', file, '--log', 'json']);
    expect(r.code).toBe(4);
    const lines = jsonLines(r, 'failed build');
    const error = lines.find((l) => l.level === 'error');
    expect(error, r.stderr).toBeDefined();
    expect(JSON.stringify(error)).toContain(file);
  });
});
