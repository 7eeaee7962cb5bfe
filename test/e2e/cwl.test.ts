// Runs the CWL workflow for real (cwltool --no-container, 3 shards) and compares it with a one-machine build, byte for byte.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { flagName } from '../../src/options.js';
import { ROOT, cliBinDir, expectOk, expectSamePyramid, removeTemps, runCli, runProcess, tempDir } from './helpers.js';

const CWL = path.join(ROOT, 'pipelines', 'cwl');
const JOB = path.join(CWL, 'job.example.yml');
const hasCwltool = spawnSync('cwltool', ['--version'], { encoding: 'utf8' }).status === 0;

/** The job's build options as CLI flags (snake_case input → --kebab-case option), and its input files. */
function jobAsBuild(extra: Record<string, unknown> = {}): { files: string[]; flags: string[]; outName: string; shards: number } {
  const job = { ...(parse(fs.readFileSync(JOB, 'utf8')) as Record<string, unknown>), ...extra };
  const files = (job.files as { location: string }[]).map((f) => path.resolve(CWL, f.location));
  const flags: string[] = [];
  for (const [k, v] of Object.entries(job)) {
    if (['files', 'shards', 'out_name'].includes(k)) continue;
    const flag = `--${flagName(k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()))}`;
    if (v === true) flags.push(flag);
    else if (v !== false && v !== null) flags.push(flag, String(v));
  }
  return { files, flags, outName: String(job.out_name ?? 'pyramid'), shards: Number(job.shards) };
}

afterAll(removeTemps);

/** Runs the workflow on the example job (its files resolved, `extra` inputs added) in `work`; cwltool's result. */
async function runWorkflow(work: string, extra: Record<string, unknown>) {
  const outdir = path.join(work, 'outdir');
  const tmp = path.join(work, 'tmp');
  fs.mkdirSync(tmp);
  const job = path.join(work, 'job.json');
  const example = parse(fs.readFileSync(JOB, 'utf8')) as Record<string, unknown>;
  const files = (example.files as { location: string }[]).map((f) => ({ class: 'File', location: path.resolve(CWL, f.location) }));
  fs.writeFileSync(job, JSON.stringify({ ...example, files, ...extra }));
  const env = { ...process.env, PATH: `${cliBinDir()}${path.delimiter}${process.env.PATH ?? ''}` };
  return runProcess('cwltool', [
    '--no-container', '--parallel', '--outdir', outdir,
    '--tmpdir-prefix', `${tmp}/t-`, '--tmp-outdir-prefix', `${tmp}/o-`,
    path.join(CWL, 'mudm-tiles.cwl'), job,
  ], { env, cwd: work, timeoutMs: 110_000 });
}

describe('CWL workflow', () => {
  // Directories (tiles), and archives: the shards then hand on one part per archive instead of trees of tiles.
  it.skipIf(!hasCwltool).each([
    ['a directory of tiles', {}],
    ['archives (archive: pmtiles, planes)', { archive: 'pmtiles', plane_field: 'c=c,z=z' }],
  ] as [string, Record<string, unknown>][])(
    hasCwltool
      ? 'cwltool --no-container runs plan → 3 × build-shard → finalize into %s, equal to `mudm-tiles build` with the same options'
      : 'SKIPPED: cwltool is not on PATH (.ci/run installs the Debian package cwltool)',
    async (_, extra) => {
      const { files, flags, outName, shards } = jobAsBuild(extra);
      expect(shards).toBe(3);
      const work = tempDir('cwl');
      const run = await runWorkflow(work, extra);
      expect(run.code, `cwltool failed:\n${run.stderr.slice(-4000)}`).toBe(0);
      const result = JSON.parse(run.stdout) as { pyramid: { class: string; path: string } };
      expect(result.pyramid.class).toBe('Directory');
      expect(result.pyramid.path).toBe(path.join(work, 'outdir', outName));
      // Every shard ran (the log names each scattered job's command line).
      for (let i = 0; i < shards; i++) expect(run.stderr).toMatch(new RegExp(`--shard \\\\?\\s*${i}\\b`));

      const local = path.join(work, 'local');
      expectOk(await runCli(['build', ...files, '-o', local, '-q', ...flags]), 'local build');
      expectSamePyramid(result.pyramid.path, local);
      if (extra.archive) expect(fs.readdirSync(result.pyramid.path).filter((f) => f.endsWith('.pmtiles'))).toHaveLength(12);
    },
  );

  it.skipIf(!hasCwltool)('refuses an out_name of one archive file, saying to use archive: pmtiles', async () => {
    const run = await runWorkflow(tempDir('cwl-file'), { out_name: 'slide.pmtiles' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('out_name slide.pmtiles: the workflow hands OUT from step to step as a directory; for PMTiles archives set archive: pmtiles and a directory name');
  });
});
