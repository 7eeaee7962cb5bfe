// A work directory's records of who runs a build or one of its steps: made only where none is, read whole.
import fs from 'node:fs';
import os from 'node:os';

/** A process recorded as working in a work directory: its pid, on which machine, and when it started (where known). */
export interface Owner { pid: number; host: string; start?: string }

/** The record of process `p` on this machine. */
export function ownerOf(p: { pid: number; start?: string }): Owner {
  return { pid: p.pid, host: os.hostname(), ...(p.start ? { start: p.start } : {}) };
}

/** A record's bytes as text, undefined when there is none. */
export const readText = (file: string): string | undefined => { try { return fs.readFileSync(file, 'utf8'); } catch { return undefined; } };

/** A record's text as an owner; undefined when it is not whole JSON (a create that has not written it yet). */
export function parseOwner(text: string): Owner | undefined {
  try {
    const o = JSON.parse(text) as Owner;
    return o !== null && typeof o === 'object' ? o : undefined;
  } catch {
    return undefined;
  }
}

/** Link errors of file systems without hard links (FAT, exFAT, some FUSE mounts). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Makes `file` holding `text` only if nothing is there (false then): a whole file linked to its name, which fails
 * when the name is taken whoever took it; where links fail, an exclusive create.
 */
export function createOnly(file: string, tmp: string, text: string): boolean {
  const taken = (err: unknown) => (err as { code?: string }).code === 'EEXIST';
  fs.writeFileSync(tmp, text);
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (err) {
    if (taken(err)) return false;
    if (!NO_LINKS.has((err as { code?: string }).code ?? '')) throw err;
    try {
      fs.writeFileSync(file, text, { flag: 'wx' });
      return true;
    } catch (e) {
      if (taken(e)) return false;
      throw e;
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Puts a record moved aside back at its name, unless another took the name in between. */
export function putBack(aside: string, file: string): void {
  try {
    fs.linkSync(aside, file);
  } catch (err) {
    if (NO_LINKS.has((err as { code?: string }).code ?? '') && !fs.existsSync(file)) fs.renameSync(aside, file);
  }
  fs.rmSync(aside, { force: true });
}
