// Installs the package the way the Dockerfile's runtime stage does and runs its ENTRYPOINT on the sample slide.
// No Docker engine here: the steps of the Dockerfile's RUN lines, in a fresh directory, so a file missing from
// package.json "files" or a dependency missing from "dependencies" fails this test as it would fail the image.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, SAMPLE, expectOk, expectSamePyramid, removeTemps, runCli, runProcess, tempDir } from './helpers.js';

let app = '';
let installLog = '';

function sh(file: string, args: string[], cwd: string): string {
  const r = spawnSync(file, args, { cwd, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
  installLog += `$ ${file} ${args.join(' ')}\n${r.stdout}${r.stderr}`;
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} failed (${r.status}):\n${installLog.slice(-4000)}`);
  return r.stdout;
}

beforeAll(() => {
  const work = tempDir('image');
  const pkg = path.join(work, 'pkg');
  fs.mkdirSync(pkg);
  // Build stage: `npm pack` of the built checkout (vitest's global setup builds dist/ first; `prepare` would rebuild dist/ under
  // the feet of the test files running in parallel).
  const packed = JSON.parse(sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', pkg], ROOT)) as { filename: string }[];
  // Runtime stage: the tarball unpacked in a fresh /app, the project's lockfile beside it, `npm ci --omit=dev`.
  app = path.join(work, 'app');
  fs.mkdirSync(app);
  sh('tar', ['-xzf', path.join(pkg, packed[0].filename), '--strip-components=1', '-C', app], work);
  fs.copyFileSync(path.join(ROOT, 'package-lock.json'), path.join(app, 'package-lock.json'));
  sh('npm', ['pkg', 'delete', 'scripts.prepare'], app);
  sh('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], app);
}, 180_000);

afterAll(removeTemps);

describe('the image install (npm pack → npm ci --omit=dev)', () => {
  it('has the runtime dependencies and no dev tools', () => {
    const deps = Object.keys((JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    for (const d of deps) expect(fs.existsSync(path.join(app, 'node_modules', d, 'package.json')), `${d} installed`).toBe(true);
    for (const d of ['typescript', 'vitest', 'eslint']) expect(fs.existsSync(path.join(app, 'node_modules', d)), `${d} not installed`).toBe(false);
  });

  it('sharp loads its native binary and encodes an image', async () => {
    const code = "require('sharp')({create:{width:4,height:4,channels:3,background:'#f00'}}).png().toBuffer().then((b)=>{if(b.length<8)process.exit(1)})";
    const r = await runProcess(process.execPath, ['-e', code], { cwd: app });
    expectOk(r, 'sharp in the installed package');
  });

  it('the ENTRYPOINT answers --help, and builds the sample slide exactly as the checkout does', async () => {
    // ENTRYPOINT ["mudm-tiles"] is a wrapper for `node /app/bin/mudm-tiles.js`; WORKDIR /data is any directory.
    const entry = path.join(app, 'bin', 'mudm-tiles.js');
    const data = tempDir('data');
    expectOk(await runProcess(process.execPath, [entry, '--help'], { cwd: data }), 'mudm-tiles --help');
    const r = await runProcess(process.execPath, [entry, 'build', SAMPLE, '-o', 'out', '-q'], { cwd: data });
    expectOk(r, 'mudm-tiles build in the installed package');
    const local = path.join(tempDir('checkout'), 'out');
    expectOk(await runCli(['build', SAMPLE, '-o', local, '-q']), 'checkout build');
    expectSamePyramid(path.join(data, 'out'), local);
  });
});
