// Temporary directories made by a test file; test/setup-temps.ts removes them all after the file, whatever it made.
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
