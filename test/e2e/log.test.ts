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
