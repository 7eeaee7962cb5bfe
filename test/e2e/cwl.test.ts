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
function jobAsBuild(): { files: string[]; flags: string[]; outName: string; shards: number } {
  const job = parse(fs.readFileSync(JOB, 'utf8')) as Record<string, unknown>;
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

describe('CWL workflow', () => {
  it.skipIf(!hasCwltool)(
    hasCwltool
      ? 'cwltool --no-container runs plan → 3 × build-shard → finalize, equal to `mudm-tiles build` with the same options'
      : 'SKIPPED: cwltool is not on PATH (.ci/run installs the Debian package cwltool)',
    async () => {
      const { files, flags, outName, shards } = jobAsBuild();
      expect(shards).toBe(3);
      const work = tempDir('cwl');
      const outdir = path.join(work, 'outdir');
      const tmp = path.join(work, 'tmp');
      fs.mkdirSync(tmp);
      const env = { ...process.env, PATH: `${cliBinDir()}${path.delimiter}${process.env.PATH ?? ''}` };
      const run = await runProcess('cwltool', [
        '--no-container', '--parallel', '--outdir', outdir,
        '--tmpdir-prefix', `${tmp}/t-`, '--tmp-outdir-prefix', `${tmp}/o-`,
        path.join(CWL, 'mudm-tiles.cwl'), JOB,
      ], { env, cwd: work, timeoutMs: 110_000 });
      expect(run.code, `cwltool failed:\n${run.stderr.slice(-4000)}`).toBe(0);
      const result = JSON.parse(run.stdout) as { pyramid: { class: string; path: string } };
      expect(result.pyramid.class).toBe('Directory');
      expect(result.pyramid.path).toBe(path.join(outdir, outName));
      // Every shard ran (the log names each scattered job's command line).
      for (let i = 0; i < shards; i++) expect(run.stderr).toMatch(new RegExp(`--shard \\\\?\\s*${i}\\b`));

      const local = path.join(work, 'local');
      expectOk(await runCli(['build', ...files, '-o', local, '-q', ...flags]), 'local build');
      expectSamePyramid(result.pyramid.path, local);
    },
  );
});
