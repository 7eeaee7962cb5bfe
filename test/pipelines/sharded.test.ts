// Sharded builds through the CLI (plan, build-shard, finalize) and the presets equal a one-machine build byte for byte.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN, SAMPLE, SHARDED_OPTS, cliBinDir, expectOk, expectSamePyramid, listFiles, removeTemps, runCli, runProcess, tempDir, tmpLeftovers,
} from './helpers.js';

const PRESETS = path.join(path.dirname(BIN), '..', 'pipelines', 'presets');

let local = '';

/** Every file under `dir` with its bytes, the work directory included. */
function snapshot(dir: string): Map<string, Buffer> {
  return new Map(listFiles(dir).map((f) => [f, fs.readFileSync(path.join(dir, f))]));
}

beforeAll(async () => {
  local = path.join(tempDir('local'), 'out');
  expectOk(await runCli(['build', SAMPLE, '-o', local, '-q', ...SHARDED_OPTS]), 'local build');
});

afterAll(removeTemps);

describe('plan, build-shard, finalize', () => {
  it('3 shards run in any order (one from JOB_COMPLETION_INDEX) give the one-machine pyramid; a retried shard changes nothing', async () => {
    const out = path.join(tempDir('sharded'), 'out');
    const plan = await runCli(['plan', SAMPLE, '-o', out, '--shards', '3', ...SHARDED_OPTS]);
    expectOk(plan, 'plan');
    expect(fs.readdirSync(out), 'plan writes only the work directory').toEqual(['.mudm-work']);

    expectOk(await runCli(['build-shard', out, '--shard', '2']), 'shard 2');
    expectOk(await runCli(['build-shard', out, '--shard', '0']), 'shard 0');
    // As in a Kubernetes Indexed Job: no --shard, the index from the environment.
    expectOk(await runCli(['build-shard', out], { env: { ...process.env, JOB_COMPLETION_INDEX: '1' } }), 'shard 1 from JOB_COMPLETION_INDEX');
    expect(fs.existsSync(path.join(out, 'tileset.json')), 'no descriptor before finalize').toBe(false);

    const before = snapshot(out);
    const again = await runCli(['build-shard', out, '--shard', '1']);
    expectOk(again, 'shard 1 retried');
    const after = snapshot(out);
    expect([...after.keys()]).toEqual([...before.keys()]);
    expect([...after].filter(([f, b]) => !b.equals(before.get(f) as Buffer)).map(([f]) => f), 'files a retried shard changed').toEqual([]);

    expectOk(await runCli(['finalize', out]), 'finalize');
    expect(fs.existsSync(path.join(out, '.mudm-work')), 'finalize removes the work directory').toBe(false);
    expectSamePyramid(out, local);
  });

  it('finalize refuses with exit 4 while a shard is missing, and succeeds once it is done', async () => {
    const out = path.join(tempDir('missing'), 'out');
    expectOk(await runCli(['plan', SAMPLE, '-o', out, '--shards', '3', ...SHARDED_OPTS]), 'plan');
    expectOk(await runCli(['build-shard', out, '--shard', '0']), 'shard 0');
    expectOk(await runCli(['build-shard', out, '--shard', '2']), 'shard 2');
    const refused = await runCli(['finalize', out]);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toMatch(/shard\(?s?\)?\s*1\b/);
    expect(fs.existsSync(path.join(out, 'tileset.json'))).toBe(false);
    expect(fs.existsSync(path.join(out, '.mudm-work', 'plan.json')), 'a refused finalize keeps the plan').toBe(true);

    expectOk(await runCli(['build-shard', out, '--shard', '1']), 'shard 1');
    expectOk(await runCli(['finalize', out]), 'finalize');
    expectSamePyramid(out, local);
  });

  it('build-shard without a shard index, or with one past the last shard, is a usage error (exit 2)', async () => {
    const out = path.join(tempDir('usage'), 'out');
    expectOk(await runCli(['plan', SAMPLE, '-o', out, '--shards', '2', ...SHARDED_OPTS]), 'plan');
    const env = { ...process.env };
    delete env.JOB_COMPLETION_INDEX;
    const none = await runCli(['build-shard', out], { env });
    expect(none.code, none.stderr).toBe(2);
    const past = await runCli(['build-shard', out, '--shard', '2']);
    expect(past.code, past.stderr).toBe(2);
    expect(tmpLeftovers(out)).toEqual([]);
  });

  it('plan --force over an earlier pyramid replaces it: no tile of the old one survives', async () => {
    const out = path.join(tempDir('force'), 'out');
    expectOk(await runCli(['build', SAMPLE, '-o', out, '-q', ...SHARDED_OPTS]), 'first build');
    expectOk(await runCli(['plan', SAMPLE, '-o', out, '--force', '--shards', '2', '--max-zoom', '1', ...SHARDED_OPTS]), 'plan --force');
    expectOk(await runCli(['build-shard', out, '--shard', '0']), 'shard 0');
    expectOk(await runCli(['build-shard', out, '--shard', '1']), 'shard 1');
    expectOk(await runCli(['finalize', out]), 'finalize');
    const reference = path.join(tempDir('force-ref'), 'out');
    expectOk(await runCli(['build', SAMPLE, '-o', reference, '-q', '--max-zoom', '1', ...SHARDED_OPTS]), 'reference build');
    expectSamePyramid(out, reference);
  });
});

describe('presets', () => {
  it('sharded-local.sh (shards in parallel, mudm-tiles from PATH) gives the one-machine pyramid', async () => {
    const out = path.join(tempDir('preset'), 'out');
    const env = { ...process.env, PATH: `${cliBinDir()}${path.delimiter}${process.env.PATH ?? ''}`, LOG: 'json' };
    delete env.MUDM_TILES;
    const r = await runProcess('bash', [path.join(PRESETS, 'sharded-local.sh'), out, '3', SAMPLE, ...SHARDED_OPTS], { env });
    expectOk(r, 'sharded-local.sh');
    expectSamePyramid(out, local);
  });

  it('slurm-submit.sh submits plan, an array of build-shard and finalize that give the one-machine pyramid', async () => {
    // A stand-in sbatch that runs each job at once, array tasks with SLURM_ARRAY_TASK_ID, and fails as the job fails.
    const bin = cliBinDir();
    const log = path.join(tempDir('sbatch'), 'jobs.log');
    fs.writeFileSync(path.join(bin, 'sbatch'), [
      '#!/usr/bin/env bash',
      'set -euo pipefail',
      'wrap=""; array=""',
      'for a in "$@"; do case $a in --wrap=*) wrap=${a#--wrap=} ;; --array=*) array=${a#--array=} ;; esac; done',
      `echo "$*" >> ${JSON.stringify(log)}`,
      'if [ -n "$array" ]; then',
      '  for ((i = ${array%-*}; i <= ${array#*-}; i++)); do SLURM_ARRAY_TASK_ID=$i sh -c "$wrap" >&2; done',
      'else sh -c "$wrap" >&2; fi',
      'echo $RANDOM',
    ].join('\n'));
    fs.chmodSync(path.join(bin, 'sbatch'), 0o755);
    const out = path.join(tempDir('slurm'), 'out');
    const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, CPUS: '1' };
    delete env.MUDM_TILES;
    const r = await runProcess('bash', [path.join(PRESETS, 'slurm-submit.sh'), out, '3', SAMPLE, ...SHARDED_OPTS], { env });
    expectOk(r, 'slurm-submit.sh');
    const jobs = fs.readFileSync(log, 'utf8').trim().split('\n');
    expect(jobs).toHaveLength(3);
    expect(jobs[1]).toMatch(/--dependency=afterok:\d+ --array=0-2/);
    expectSamePyramid(out, local);
  });
});
