// Sharded builds through the CLI (plan, build-shard, finalize) equal a one-machine build byte for byte.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE, SHARDED_OPTS, buildLocalReference, expectOk, expectSamePyramid, listFiles, removeTemps, runCli, tempDir, tmpLeftovers } from './helpers.js';

let local = '';

/** Every file under `dir`, the work directory included, by its SHA-256: digests compare fast where whole buffers did not. */
function snapshot(dir: string): Map<string, string> {
  return new Map(listFiles(dir).map((f) => [f, createHash('sha256').update(fs.readFileSync(path.join(dir, f))).digest('hex')]));
}

beforeAll(async () => {
  local = await buildLocalReference();
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
    // Only the record of which process runs the shard names the new one.
    expect([...after].filter(([f, digest]) => digest !== before.get(f)).map(([f]) => f), 'files a retried shard changed').toEqual(['.mudm-work/owners/shard-1.json']);

    expectOk(await runCli(['finalize', out]), 'finalize');
    expect(fs.existsSync(path.join(out, '.mudm-work')), 'finalize removes the work directory').toBe(false);
    expectSamePyramid(out, local);
    // A shard retried after finalize (a workflow's retry): nothing to do, exit 0, the pyramid as it was.
    const late = await runCli(['build-shard', out, '--shard', '2']);
    expect([late.code, late.stderr]).toEqual([0, `warning: ${out} is finalized already (a complete output, its work directory gone): nothing for shard 2 to do [finalized-already]\n`]);
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
    expect(none.stderr).toContain('error: build-shard needs --shard I (or JOB_COMPLETION_INDEX in the environment)');
    const odd = await runCli(['build-shard', out], { env: { ...env, JOB_COMPLETION_INDEX: ' 1' } });
    expect([odd.code, odd.stderr.split('\n')[0]]).toEqual([2, 'error: build-shard: JOB_COMPLETION_INDEX is " 1", not a shard number (0, 1, …); give --shard I']);
    const past = await runCli(['build-shard', out, '--shard', '2']);
    expect(past.code, past.stderr).toBe(2);
    expect(tmpLeftovers(out)).toEqual([]);
  });

  it('a step retried on a pyramid whose report names no shards (finalized by an earlier version) says it cannot tell how it was built, that it is complete, and what starts a sharded build (exit 2), touching nothing', async () => {
    const out = path.join(tempDir('unrecorded'), 'out');
    expectOk(await runCli(['plan', SAMPLE, '-o', out, '--shards', '1', '-q', ...SHARDED_OPTS]), 'plan');
    expectOk(await runCli(['build-shard', out, '--shard', '0', '-q']), 'shard 0');
    expectOk(await runCli(['finalize', out, '-q']), 'finalize');
    // As a finalize of a version before run.shards wrote its report.
    const reportFile = path.join(out, 'build-report.json');
    const report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as { run: { shards?: number } };
    expect(report.run.shards).toBe(1);
    delete report.run.shards;
    fs.writeFileSync(reportFile, `${JSON.stringify(report, null, 2)}\n`);
    const before = snapshot(out);
    const found = (left: string) => `${out} holds a complete pyramid and no plan for shards (no work directory ${path.join(out, '.mudm-work')}, and its build-report.json names no shards, run.shards): `
      + `either build wrote it whole, or the finalize of an earlier mudm-tiles, which did not record shards, finished it; this cannot tell which, and either way the pyramid is complete as it is, with nothing left to ${left}; `
      + `to build it in shards anew, run mudm-tiles plan INPUT... -o ${out} --shards N --force, then build-shard and finalize`;
    const shard = await runCli(['build-shard', out, '--shard', '0']);
    // What to run is in the message: no pointer to --help follows, as for a mistake in the command line.
    expect([shard.code, shard.stderr]).toEqual([2, `error: build-shard: no shard 0 to tile: ${found('tile')}\n`]);
    const fin = await runCli(['finalize', out]);
    expect([fin.code, fin.stderr]).toEqual([2, `error: finalize: nothing to finalize: ${found('finalize')}\n`]);
    expect(snapshot(out)).toEqual(before);
  });

  it('plan --force over an earlier pyramid replaces it: no file of the old one survives', async () => {
    const out = path.join(tempDir('force'), 'out');
    // An earlier build with more zooms: tiles this build does not write, and a descriptor.
    expectOk(await runCli(['build', SAMPLE, '-o', out, '--max-zoom', '4', '-q', ...SHARDED_OPTS]), 'earlier build');
    expect(fs.existsSync(path.join(out, '4'))).toBe(true);
    expectOk(await runCli(['plan', SAMPLE, '-o', out, '--force', '--shards', '2', ...SHARDED_OPTS]), 'plan --force');
    expectOk(await runCli(['build-shard', out, '--shard', '0']), 'shard 0');
    expectOk(await runCli(['build-shard', out, '--shard', '1']), 'shard 1');
    expectOk(await runCli(['finalize', out]), 'finalize');
    expectSamePyramid(out, local);
  });
});
