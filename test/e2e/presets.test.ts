// The presets (pipelines/presets) run plan, build-shard and finalize for real and equal a one-machine build.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, SAMPLE, SHARDED_OPTS, buildLocalReference, cliBinDir, expectOk, expectSamePyramid, fakeSbatch, removeTemps, runProcess, tempDir } from './helpers.js';

const PRESETS = path.join(ROOT, 'pipelines', 'presets');

let local = '';

beforeAll(async () => {
  local = await buildLocalReference();
});

afterAll(removeTemps);

describe('presets', () => {
  it('sharded-local.sh (shards in parallel, mudm-tiles from PATH) gives the one-machine pyramid', async () => {
    const out = path.join(tempDir('preset'), 'out');
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${cliBinDir()}${path.delimiter}${process.env.PATH ?? ''}`, LOG: 'json' };
    delete env.MUDM_TILES;
    const r = await runProcess('bash', [path.join(PRESETS, 'sharded-local.sh'), out, '3', SAMPLE, ...SHARDED_OPTS], { env });
    expectOk(r, 'sharded-local.sh');
    expectSamePyramid(out, local);
    // -q quiets every step, not only plan: nothing on stderr.
    const quiet = await runProcess('bash', [path.join(PRESETS, 'sharded-local.sh'), path.join(tempDir('preset-q'), 'out'), '2', SAMPLE, ...SHARDED_OPTS, '-q'], { env });
    expect([quiet.code, quiet.stderr]).toEqual([0, '']);
  });

  it('slurm-submit.sh submits plan, an array of build-shard and finalize that give the one-machine pyramid', async () => {
    const bin = cliBinDir();
    const log = path.join(tempDir('sbatch'), 'jobs.log');
    fakeSbatch(bin, log);
    const out = path.join(tempDir('slurm'), 'out');
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, CPUS: '1' };
    delete env.MUDM_TILES;
    const r = await runProcess('bash', [path.join(PRESETS, 'slurm-submit.sh'), out, '3', SAMPLE, ...SHARDED_OPTS], { env });
    expectOk(r, 'slurm-submit.sh');
    const jobs = fs.readFileSync(log, 'utf8').trim().split('\n');
    expect(jobs).toHaveLength(3);
    expect(jobs[1]).toMatch(/--dependency=afterok:\d+ --array=0-2/);
    expectSamePyramid(out, local);
  });
});
