// A work directory's records of who runs a build or one of its steps: made only where none is, read whole.
import fs from 'node:fs';
import os from 'node:os';
import { randomBytes } from 'node:crypto';

/** Who works in a work directory: the process that claimed or resumed it, on which machine. */
export const OWNER_FILE = 'owner.json';
/** Suffix (then a tag) of a work directory being made beside its place, with its owner inside, before it is renamed there. */
export const CLAIMING = '.claiming-';
/** Suffix (then a tag) of a work directory moved aside to be removed (`retire`, `destroy`). */
export const RETIRING = '.retiring-';

/**
 * Whether `name` is work directory `workDir` being made beside its place (`CLAIMING`) or moved aside to be removed
 * (`RETIRING`): what a kill during a claim or a removal leaves.
 */
export const isAside = (name: string, workDir: string): boolean => [CLAIMING, RETIRING].some((s) => name.startsWith(`${workDir}${s}`) && /^[0-9a-f]{8}$/.test(name.slice(workDir.length + s.length)));
/** A folder a claim is making has no owner inside for as long as this at most (it is written right after): not swept. */
export const CLAIM_GRACE_MS = 60_000;
/** Shards (several at once, the work directory shared) record themselves here, one file each. */
export const OWNERS_DIR = 'owners';

/**
 * A process recorded as working in a work directory: its pid, on which machine, when it started (where known), and
 * which of its builds (`run`: two builds of one process, through the library, are told apart by it).
 */
export interface Owner {
  pid: number; host: string; start?: string; run?: string;
  /**
   * The command that made the work directory (`build`, `plan`), in the records it writes there: a step that finds no
   * plan yet can say whose it is. Absent in a resumed build's and a shard's records, and in those of earlier versions.
   */
  command?: string;
  /**
   * Written when the step ends (done, failed, interrupted): said in the record itself, which every copy keeps, where
   * its date (1970) is lost to a copy that does not keep times (`cp -r`, an object store, a workflow's staging).
   */
  ended?: boolean;
}

/** This process and whether another one runs: given by the CLI (library code does not look at `process`). */
export interface ProcessProbe {
  pid: number;
  /** When this process started (where the system says: boot and start time), so a reused pid is not taken for it. */
  start?: string;
  /** Whether process `pid` runs, and is the one that started at `start` when that is known. */
  alive(pid: number, start?: string): boolean;
  /**
   * The builds of this process now working in a work directory, by their `Owner.run`: without it, another build of
   * this process is never taken for a running one (its records are taken for ended).
   */
  readonly running?: Set<string>;
}

/** "pid N", or for another machine's process "pid N on HOST" and how fresh its record is. */
export function whoIs(o: Owner, file: string): string {
  if (o.host === os.hostname()) return `pid ${o.pid}`;
  const age = Math.round((sinceRefresh(file) ?? 0) / 1000);
  return `pid ${o.pid} on ${o.host}, whose record was refreshed ${age} s ago; a record no longer refreshed counts as ended ${LEASE_MS / 1000} s after`;
}

/** The record of build `run` of process `p` on this machine (`command`: the one that made its work directory). */
export function ownerOf(p: { pid: number; start?: string }, run: string, command?: string): Owner {
  return { pid: p.pid, host: os.hostname(), ...(p.start ? { start: p.start } : {}), run, ...(command ? { command } : {}) };
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

/** Beside a record: the lock under which a record of a process that ended is replaced. */
export const TAKEOVER = '.takeover';
/** A takeover lock older than this was left by a process killed during one (a takeover is a few file operations). */
const STALE_LOCK_MS = 30_000;

/** Blocks for `ms` milliseconds: a claim's waits are a few milliseconds, between file operations. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Removes `file` if it still holds `seen` (the record of a process that ended), under an exclusive lock beside it, so
 * that of several processes replacing one record, none removes a record made since it was read: a record is made
 * only where none is (`createOnly`), and removed only by the lock's holder, after it read it again. False when
 * another process holds the lock (it is replacing the record: judge it again); a lock left by a process killed
 * during a takeover is removed once stale.
 */
export function removeIfSame(file: string, seen: string, lockText: string, tmp: string): boolean {
  const lock = `${file}${TAKEOVER}`;
  if (!createOnly(lock, tmp, lockText)) {
    if ((sinceRefresh(lock) ?? 0) > STALE_LOCK_MS) fs.rmSync(lock, { force: true });
    else pause(5);
    return false;
  }
  try {
    if (readText(file) === seen) fs.rmSync(file, { force: true });
  } finally {
    fs.rmSync(lock, { force: true });
  }
  return true;
}

/**
 * How long a record of another machine's process counts as that process running after its last refresh. A process
 * on this machine is asked after by pid; one on another machine sharing the volume cannot be, so it keeps its record
 * fresh and a machine that stopped (a crash, a killed container) lets it lapse. Longer than the attribute cache of an
 * NFS client (60 s at most by default), so a record kept fresh never looks stale from another machine.
 */
export const LEASE_MS = 180_000;
/** How often a process dates its records now. */
export const REFRESH_MS = 20_000;

/**
 * Milliseconds since `file` was last refreshed, by the clock of the file system that holds it: its modification time
 * against that of a file made beside it now (on a shared volume the server dates both, so machines whose clocks
 * differ agree; where nothing can be made there, this machine's clock). Undefined when it is gone.
 */
export function sinceRefresh(file: string): number | undefined {
  let then: number;
  try {
    then = fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  const probe = `${file}.tmp-clock-${randomBytes(4).toString('hex')}`;
  try {
    fs.writeFileSync(probe, '', { flag: 'wx' });
    return fs.statSync(probe).mtimeMs - then;
  } catch {
    return Date.now() - then;
  } finally {
    fs.rmSync(probe, { force: true });
  }
}

/** Dates `file` now by its file system's clock: its first byte written again (a time given would be this machine's). */
function touch(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    const first = Buffer.alloc(1);
    if (fs.readSync(fd, first, 0, 1, 0) === 1) fs.writeSync(fd, first, 0, 1, 0);
  } finally {
    fs.closeSync(fd);
  }
}

/** Keeps this process's records fresh while it works (every REFRESH_MS); a record gone is dropped. Never keeps the process alive. */
export class RecordKeeper {
  /** Each record kept, with the text this process wrote there: only that is refreshed, then marked ended. */
  private readonly files = new Map<string, string>();
  private timer: ReturnType<typeof setInterval> | undefined;

  keep(file: string, text: string): void {
    this.files.set(file, text);
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.refresh(), REFRESH_MS);
    this.timer.unref();
  }

  refresh(): void {
    for (const f of this.files.keys()) {
      try {
        touch(f);
      } catch {
        this.files.delete(f);
      }
    }
    if (this.files.size === 0) this.stop();
  }

  /**
   * The step ended (done, failed or interrupted): its records say so and are dated to 1970, so another machine takes
   * them as ended at once (a build interrupted in one container resumed in the next), from a copy of the work
   * directory too; only a process killed outright leaves its record to lapse. A record another process has made
   * since (this one's lapsed while it was stopped) is not this one's to end.
   */
  release(): void {
    const epoch = new Date(0);
    for (const [f, text] of this.files) {
      try {
        if (readText(f) !== text) continue;
        const owner = parseOwner(text);
        if (owner !== undefined) replaceWhole(f, JSON.stringify({ ...owner, ended: true }));
        fs.utimesSync(f, epoch, epoch);
      } catch {
        // Gone with its work directory: nothing to date.
      }
    }
    this.stop();
  }

  /** No longer refreshes anything (the work directory is gone). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.files.clear();
  }
}

/** Gives `file` the content `text` by a rename: a reader sees the old record or the new one, never half of one. */
function replaceWhole(file: string, text: string): void {
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
