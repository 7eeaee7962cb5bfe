// What the tests of --force and --resume share: small inputs and a clean build of one, the user's files planted in
// OUT, snapshots, and the tools that stop a build part-way (strace kills at a system call; chattr holds a file).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { beforeAll, expect } from 'vitest';
import { BIN, expectOk, listFiles, runCli, runProcess, tempDir, type RunResult } from '../e2e/helpers.js';

/** A small FeatureCollection of `n` squares along the diagonal of a `side` px image. */
function squares(file: string, n: number, side: number): void {
  const step = side / (n + 1);
  const features = Array.from({ length: n }, (_, i) => {
    const x = step * (i + 0.5), y = step * (i + 0.5), s = step / 2;
    return { type: 'Feature', id: i + 1, geometry: { type: 'Polygon', coordinates: [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]] }, properties: { n: i } };
  });
  fs.writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features }));
}

/**
 * The inputs, made as a test file is collected: `big` (40 squares, 4000 px: more zooms) and `small` (5, 900 px); and
 * `cleanSmall`, small's build into a new folder, made before the file's tests run.
 */
export function forceInputs(): { big: string; small: string; cleanSmall: string } {
  const dir = tempDir('force-in');
  const inputs = { big: path.join(dir, 'big.json'), small: path.join(dir, 'small.json'), cleanSmall: path.join(dir, 'clean') };
  squares(inputs.big, 40, 4000);
  squares(inputs.small, 5, 900);
  beforeAll(async () => expectOk(await runCli(['build', inputs.small, '-o', inputs.cleanSmall, '-q']), 'clean build of small.json'));
  return inputs;
}

/** Every file under `dir` with its bytes, for "nothing was touched". */
export function snapshot(dir: string): Map<string, string> {
  return new Map(listFiles(dir).map((f) => [f, fs.readFileSync(path.join(dir, f)).toString('base64')]));
}

/** The user's own files: digit-named folders included, one of them where the build writes its zoom-0 tiles. */
export const USER_FILES: Record<string, string> = {
  '2024/holiday/img.jpg': 'x',
  '7/readme': 'notes',
  '0/data.csv': 'a,b\n1,2\n',
  'notes.txt': 'mine',
};

export function plantUserFiles(out: string): void {
  for (const [rel, text] of Object.entries(USER_FILES)) {
    fs.mkdirSync(path.dirname(path.join(out, rel)), { recursive: true });
    fs.writeFileSync(path.join(out, rel), text);
  }
}

export function expectUserFiles(out: string): void {
  for (const [rel, text] of Object.entries(USER_FILES)) {
    expect(fs.existsSync(path.join(out, rel)), `${rel} survives`).toBe(true);
    expect(fs.readFileSync(path.join(out, rel), 'utf8')).toBe(text);
  }
}

/** Files of the pyramid alone: what a build into an empty folder writes, without the record of it. */
export function pyramidFiles(out: string): string[] {
  return listFiles(out).filter((f) => !f.startsWith('.mudm-written/') && !(f in USER_FILES));
}

/** Whether strace runs here (.ci/run installs it): it kills a process at an exact system call. */
export const hasStrace = (() => {
  try { execFileSync('strace', ['-V'], { stdio: 'ignore' }); return true; } catch { return false; }
})();

/** Runs the CLI killed at its `when`-th unlink: where --force removes the earlier pyramid's files. */
export const killedAtUnlink = (args: string[], when: number): Promise<RunResult> => runProcess('strace', [
  '-f', '-qq', '-o', '/dev/null', '-e', 'trace=unlink,unlinkat', '-e', `inject=unlink,unlinkat:signal=SIGKILL:when=${when}`, process.execPath, BIN, ...args,
]);

/** Whether chattr sets attributes here (root on a file system that has them): an immutable file, which root cannot remove either. */
export const chattr = (flag: string, file: string): boolean => {
  try { execFileSync('chattr', [flag, file], { stdio: 'ignore' }); return true; } catch { return false; }
};

export const hasChattr = (() => {
  const probe = path.join(tempDir('chattr-probe'), 'f');
  fs.writeFileSync(probe, '');
  return chattr('+i', probe) && chattr('-i', probe);
})();
