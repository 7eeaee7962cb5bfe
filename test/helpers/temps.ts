// Temporary directories made by a test file; test/setup-temps.ts removes them all after the file, whatever it made.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];

/** A fresh directory `PREFIX-XXXXXX` under $TMPDIR (its real path), removed after the test file. */
export function makeTemp(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? os.tmpdir()), `${prefix}-`));
  made.push(dir);
  return dir;
}

/** Removes every directory `makeTemp` made so far. */
export function removeMadeTemps(): void {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

const mounts: string[] = [];

/**
 * A tmpfs of `size` (read-only with `ro`), or undefined where it cannot be mounted: only root with CAP_SYS_ADMIN may.
 * As root, a read-only directory made with chmod would still be writable; a read-only mount is not.
 */
export function mountTmpfs(size: string, ro = false): string | undefined {
  if (process.getuid?.() !== 0 || os.platform() !== 'linux') return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mudm-fault-mnt-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `${ro ? 'ro,' : ''}size=${size}`, 'tmpfs', dir]).status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  mounts.push(dir);
  return dir;
}

/** Unmounts and removes every tmpfs `mountTmpfs` made so far. */
export function unmountTmpfs(): void {
  for (const dir of mounts.splice(0)) {
    spawnSync('umount', [dir]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
