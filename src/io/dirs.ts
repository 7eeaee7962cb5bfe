// Creating directories with the real reason when it fails (Node's recursive mkdir says ENOENT on a read-only file
// system), and writing many buffers to a file in few system calls.
import fs from 'node:fs';
import path from 'node:path';
import { describeFsError, OutputError, systemCode } from '../report/errors.js';

/**
 * `mkdir -p dir` (with `within`, only the folders below that one, which must be there); returns the first directory
 * it created (undefined when `dir` existed). A failure carries the code of the first directory that could not be
 * made (EROFS, EACCES, ENOTDIR), not the ENOENT a recursive mkdir reports when a parent cannot be created.
 */
export function makeDirectory(dir: string, within?: string): string | undefined {
  // One level at a time, not `recursive`: Node's recursive mkdir spins for ever, deaf to signals, where mkdir says
  // ENOENT under a parent that exists (-o /proc/x); made alone, each fails with its reason.
  const { existing, missing } = existingAncestor(dir);
  // Below `within` only: that folder gone, it is not made again (nor is it by a mkdir below it, which fails ENOENT).
  if (within !== undefined && path.relative(path.resolve(within), existing).startsWith('..')) {
    throw Object.assign(new Error(`ENOENT: no such file or directory, mkdir '${within}'`), { code: 'ENOENT', path: within });
  }
  let first: string | undefined;
  let at = existing;
  for (const name of missing) {
    at = path.join(at, name);
    try {
      fs.mkdirSync(at);
      first ??= at;
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
      // A link to nowhere: there for mkdir, missing for every check that follows it.
      const link = fs.lstatSync(at).isSymbolicLink() && !fs.existsSync(at) ? fs.readlinkSync(at) : undefined;
      if (link !== undefined) throw new Error(`${at} is a symbolic link to ${link}, which does not exist`);
      // Made by another process since (a race): fine when it is a directory.
      if (!fs.statSync(at).isDirectory()) throw err;
    }
  }
  if (!fs.statSync(at).isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), { code: 'ENOTDIR', path: at });
  return first;
}

/**
 * Removes a file (nothing there is no error). Not `rmSync`: where unlinking is not allowed (EPERM: a sticky folder,
 * an immutable file) it tries rmdir and reports ENOTDIR, which reads as a file in the way of a directory.
 */
export function removeFile(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOENT') throw err;
  }
}

/** The nearest of `p` and its parents that exists (absolute), and the names below it that do not, outermost first. */
export function existingAncestor(p: string): { existing: string; missing: string[] } {
  let existing = path.resolve(p);
  const missing: string[] = [];
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) {
    missing.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  return { existing, missing };
}

/**
 * Why writing `full` (a file, or with `folder` a folder) failed, as an OutputError: a file where a folder on its way
 * goes (ENOTDIR, EEXIST) is named itself, for the user who put it there; anything else by `full`.
 */
export function writeFailure(err: unknown, full: string, folder = false): OutputError {
  const code = (err as { code?: string }).code;
  if (code === 'ELOOP') {
    return new OutputError(`${full} is a symbolic link where this build writes a tile: a tile is never written through a link (it may point out of the output); remove the link`, full, code);
  }
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    try {
      // Walked up as given (relative stays relative, as the user wrote OUT).
      let existing = folder ? full : path.dirname(full);
      while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
      if (!fs.statSync(existing).isDirectory()) {
        const what = existing === full ? '' : ` (on the way to ${full})`;
        return new OutputError(`${existing} is a file where this build makes a folder${what}; move it away or choose another output`, existing, systemCode(code));
      }
    } catch {
      // Gone since: described by the path written.
    }
  }
  return describeFsError(err, full);
}

/**
 * How path `a` stands to path `b` on disk (real paths, links resolved; a path that does not exist yet by its nearest
 * existing parent): the same, `a` holds `b`, `a` lies inside `b`, or apart (undefined).
 */
export function pathOverlap(a: string, b: string): 'is' | 'holds' | 'lies inside' | undefined {
  const real = (p: string): string => {
    const { existing, missing } = existingAncestor(p);
    return path.join(fs.realpathSync(existing), ...missing);
  };
  const ra = real(a), rb = real(b);
  const inside = (x: string, y: string): boolean => x.startsWith(y.endsWith(path.sep) ? y : `${y}${path.sep}`);
  return ra === rb ? 'is' : inside(rb, ra) ? 'holds' : inside(ra, rb) ? 'lies inside' : undefined;
}

/**
 * Undoes `makeDirectory(dir)` that returned `made`: removes `dir` and its parents up to `made`, each only while it is
 * empty (a directory anything was put in stays, with its parents). Best effort: for cleaning up after a failure.
 */
export function removeMadeDirectories(dir: string, made: string | undefined): void {
  if (made === undefined) return;
  const stop = path.resolve(made);
  try {
    for (let d = path.resolve(dir); ; d = path.dirname(d)) {
      fs.rmdirSync(d);
      if (d === stop || path.dirname(d) === d) return;
    }
  } catch {
    // Not empty, or gone already: what is left is the user's or another run's.
  }
}

/** writev takes at most this many buffers a call (IOV_MAX on Linux). */
const IOV_MAX = 1024;

/**
 * Writes the parts one after the other at the descriptor's position: one system call per 1,024 parts, not one per
 * part (writev may write less than asked: the rest goes in the next call).
 */
export function writeParts(fd: number, parts: readonly Uint8Array[]): void {
  let list = parts.filter((p) => p.byteLength > 0);
  while (list.length > 0) {
    const batch = list.slice(0, IOV_MAX);
    let n = fs.writevSync(fd, batch);
    let i = 0;
    while (i < batch.length && n >= batch[i].byteLength) n -= batch[i++].byteLength;
    list = list.slice(i);
    if (n > 0) list[0] = list[0].subarray(n);
  }
}

/** Appends the parts to `file`, made when missing (its folder must exist). */
export function appendParts(file: string, parts: readonly Uint8Array[]): void {
  const fd = fs.openSync(file, 'a');
  try { writeParts(fd, parts); } finally { fs.closeSync(fd); }
}
