// Creating directories with the real reason when it fails: Node's recursive mkdir says ENOENT on a read-only file system.
import fs from 'node:fs';
import path from 'node:path';

/**
 * `mkdir -p dir`; returns the first directory it created (undefined when `dir` existed). A failure carries the code
 * of the first directory that could not be made (EROFS, EACCES, ENOTDIR), not the ENOENT a recursive mkdir reports
 * when a parent cannot be created.
 */
export function makeDirectory(dir: string): string | undefined {
  try {
    return fs.mkdirSync(dir, { recursive: true });
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOENT') throw err;
    let existing = path.resolve(dir);
    const missing: string[] = [];
    while (!fs.existsSync(existing) && path.dirname(existing) !== existing) {
      missing.unshift(existing);
      existing = path.dirname(existing);
    }
    // The first missing directory, made alone, fails with the reason (or succeeds after a race: then try again).
    if (missing.length > 0) fs.mkdirSync(missing[0]);
    return fs.mkdirSync(dir, { recursive: true }) ?? missing[0];
  }
}
