// The work directory of a build: its plan, one completion marker per work unit and per shard; on disk or in memory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describeFsError, OutputError, WorkStateError } from '../report/errors.js';
import type { WorkDir } from './workdir-contract.js';
import { makeDirectory, removeMadeDirectories, writeParts } from './dirs.js';
import { sweepAside } from './aside.js';
import { CLAIMING, createOnly, LEASE_MS, OWNER_FILE, OWNERS_DIR, ownerOf, parseOwner, readText, RecordKeeper, removeIfSame, RETIRING, sinceRefresh, TAKEOVER, whoIs, type Owner, type ProcessProbe } from './owner-file.js';

export { isAside, OWNER_FILE, OWNERS_DIR, type ProcessProbe } from './owner-file.js';

export type { WorkDir } from './workdir-contract.js';

/**
 * What a build's work directory holds: its owner or plan from its start, then these folders. A folder of only such
 * entries (a removal killed part-way leaves some) is a build's state too.
 */
const STATE_FILES = [OWNER_FILE, 'plan.json'];
/** Marks a --force removal of what earlier builds wrote in the output as under way (build/output.ts `beginOutput`). */
export const REMOVING_FILE = 'removing.json';
/** The --image of a build with --preview, read onto the preview grid (8-bit RGB) by its plan, for finalize. */
export const PREVIEW_IMAGE = 'preview-image.rgb';
const STATE_ENTRIES = [...STATE_FILES, REMOVING_FILE, PREVIEW_IMAGE, OWNERS_DIR, 'units', 'parts', 'shards', 'level-0', 'spill'];
/** A build's entry, or what it makes beside one (`owner.json.tmp-…`, `owner.json.takeover`). */
const isStateEntry = (n: string): boolean => STATE_ENTRIES.some((e) => n === e || n.startsWith(`${e}.`));

/** Why a new build cannot start where a work directory is. */
export const claimedMessage = (where: string) => `${where} holds the state of another build of this output (interrupted, still running, or `
  + 'planned for shards): --resume continues an interrupted build, --force starts over (removing that state), '
  + 'build-shard and finalize go on with a plan';

export class DiskWorkDir implements WorkDir {
  private readonly tag = randomBytes(4).toString('hex');
  /** Files appended to, by path, open: a build appends a unit's marker and records to two files, unit after unit. */
  private readonly appending = new Map<string, number>();
  /** This process's records, kept fresh for other machines while it works. */
  private readonly keeper = new RecordKeeper();
  /** The first folder `claim` made on the way to the work directory (OUT, when only the work directory goes there). */
  private madeParent: string | undefined;
  /** Whether the work directory has been there for this process: from then on, it is never made again. */
  private established: boolean;
  /** The command whose `claim` made the work directory, named in its owner records. */
  private madeBy: string | undefined;
  /** Without `processes`, no owner is recorded or looked for. */
  constructor(readonly root: string, private readonly processes?: ProcessProbe) {
    this.established = fs.existsSync(root);
  }

  /** This build's owner record; from the first one made until `release` or `destroy`, it counts as running in `p`. */
  private ownerRecord(p: ProcessProbe): Owner {
    p.running?.add(this.tag);
    return ownerOf(p, this.tag, this.madeBy);
  }

  writeJson(rel: string, value: unknown): void {
    this.writeAtomically(rel, (fd) => fs.writeFileSync(fd, JSON.stringify(value)));
  }

  readJson<T>(rel: string): T | undefined {
    try {
      return JSON.parse(fs.readFileSync(path.join(this.root, rel), 'utf8')) as T;
    } catch {
      return undefined;
    }
  }

  writeBytes(rel: string, parts: readonly Uint8Array[]): void {
    this.writeAtomically(rel, (fd) => writeParts(fd, parts));
  }

  readBytes(rel: string): Uint8Array | undefined {
    try {
      return fs.readFileSync(path.join(this.root, rel));
    } catch {
      return undefined;
    }
  }

  append(rel: string, parts: readonly Uint8Array[]): void {
    const full = path.join(this.root, rel);
    try {
      let fd = this.appending.get(full);
      if (fd === undefined) {
        this.makeFolderOf(full);
        fd = fs.openSync(full, 'a');
        this.appending.set(full, fd);
      }
      writeParts(fd, parts);
    } catch (err) {
      throw this.writeError(err, full);
    }
  }

  close(): void {
    for (const fd of this.appending.values()) fs.closeSync(fd);
    this.appending.clear();
  }

  readRange(rel: string, offset: number, length: number): Uint8Array | undefined {
    let fd: number;
    try {
      fd = fs.openSync(path.join(this.root, rel), 'r');
    } catch {
      return undefined;
    }
    try {
      const out = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        const n = fs.readSync(fd, out, got, length - got, offset + got);
        if (n === 0) return undefined;
        got += n;
      }
      return out;
    } finally {
      fs.closeSync(fd);
    }
  }

  private writeAtomically(rel: string, write: (fd: number) => void): void {
    const full = path.join(this.root, rel);
    const tmp = `${full}.tmp-${this.tag}`;
    try {
      this.makeFolderOf(full);
      const fd = fs.openSync(tmp, 'w');
      try {
        write(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, full);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw this.writeError(err, full);
    }
  }

  /**
   * Makes the folders of `full` in the work directory; the work directory itself only until it is there. A step
   * whose work directory was removed while it ran (finalize ended under a duplicate shard) does not make it again:
   * a work directory of one stray marker in a finished output would stop every later step there.
   */
  private makeFolderOf(full: string): void {
    makeDirectory(path.dirname(full), this.established ? this.root : undefined);
  }

  /** A failed write as an error: the work directory gone (removed by another step) said so, not as the file's ENOENT. */
  private writeError(err: unknown, full: string): Error {
    if (this.established && !fs.existsSync(this.root)) return new WorkStateError(`${this.root} was removed while this step ran (finalize, or plan --force, of this output), so ${full} was not written`, this.root);
    return describeFsError(err, full);
  }

  exists(rel: string): boolean {
    return fs.existsSync(path.join(this.root, rel));
  }

  list(rel: string): string[] {
    try {
      return fs.readdirSync(path.join(this.root, rel)).filter((n) => !n.includes('.tmp-')).sort();
    } catch {
      return [];
    }
  }

  removeFolder(rel: string): void {
    this.close();
    fs.rmSync(path.join(this.root, rel), { recursive: true, force: true });
  }

  destroy(): void {
    this.processes?.running?.delete(this.tag);
    this.close();
    this.keeper.stop();
    // Moved aside whole first: removed in place, a kill part-way could leave the plan and the units' markers without
    // the archive parts they stand for, which --resume would then take for tiles written.
    const aside = `${this.root}${RETIRING}${this.tag}`;
    try {
      fs.renameSync(this.root, aside);
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return;
      throw describeFsError(err, this.root);
    }
    fs.rmSync(aside, { recursive: true, force: true });
    // A build whose tiles went elsewhere (a caller's sink) leaves no empty folder it made for its work directory.
    removeMadeDirectories(path.dirname(this.root), this.madeParent);
  }

  sweep(): void {
    sweepAside(this.root, (o, file) => this.runs(o, file), isStateEntry);
  }

  size(rel: string): number | undefined {
    try {
      return fs.statSync(path.join(this.root, rel)).size;
    } catch {
      return undefined;
    }
  }

  foreign(): string | undefined {
    let what: string | undefined;
    try {
      const st = fs.lstatSync(this.root);
      if (st.isSymbolicLink()) what = 'a symbolic link';
      else if (!st.isDirectory()) what = 'a file';
      else {
        const names = fs.readdirSync(this.root);
        // A build's entries and what it makes beside them (`owner.json.tmp-…`, `owner.json.takeover`): anything else
        // (a user's notes beside an owner.json of their own) makes the folder not a build's, whatever it holds too.
        const others = names.filter((n) => !isStateEntry(n));
        if (others.length > 0) what = `${others.length === 1 ? 'a file' : 'files'} no build writes there (${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''})`;
      }
    } catch {
      return undefined;
    }
    return what && `${this.root} is where this output's work directory goes, and holds ${what}: not a build's state, which --force and --resume do not touch; move it away, or choose another output`;
  }

  claim(command?: string): void {
    const p = this.processes;
    this.madeBy = command;
    // With owners recorded, the directory appears with its owner in it (made aside, then renamed into place): no
    // moment shows a work directory whose owner is unknown, which another build could take for an abandoned one.
    const made = p ? `${this.root}${CLAIMING}${this.tag}` : this.root;
    try {
      this.madeParent ??= makeDirectory(path.dirname(this.root));
      this.sweep();
      // Not recursive: it fails when the directory is there, whoever made it in between.
      fs.mkdirSync(made);
      if (p) {
        fs.writeFileSync(path.join(made, OWNER_FILE), JSON.stringify(this.ownerRecord(p)));
        // A rename onto a directory that holds anything fails: of two builds, one gets the place.
        fs.renameSync(made, this.root);
      }
      this.established = true;
    } catch (err) {
      // A folder that lets entries be made but not renamed or removed (append-only) keeps the one made aside.
      let left: string | undefined;
      if (made !== this.root) {
        try { fs.rmSync(made, { recursive: true, force: true }); } catch { left = made; }
      }
      const code = (err as { code?: string }).code;
      if (code === 'EEXIST' || code === 'ENOTEMPTY') throw new WorkStateError(claimedMessage(this.root), this.root);
      const e = describeFsError(err, this.root);
      if (code !== 'EPERM' && left === undefined) throw e;
      const why = code === 'EPERM' ? ' (its folder may be append-only or immutable, as lsattr -d shows)' : '';
      const leftover = left === undefined ? '' : `; ${left}, made on the way, could not be removed either: remove it once the folder allows`;
      throw new OutputError(`${e.message}${why}${leftover}`, e.path, e.errno);
    }
  }

  retire(): void {
    const aside = `${this.root}${RETIRING}${this.tag}`;
    this.close();
    this.keeper.stop();
    try {
      // One process moves it: of two that judged it ended, the other finds nothing and goes on to claim.
      fs.renameSync(this.root, aside);
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return;
      throw describeFsError(err, this.root);
    }
    // Claimed by a build between the look and the move: it is that build's, put back.
    const o = readText(path.join(aside, OWNER_FILE));
    const owner = o === undefined ? undefined : parseOwner(o);
    if (owner && this.runs(owner, path.join(aside, OWNER_FILE))) {
      try { fs.renameSync(aside, this.root); } catch { /* taken again meanwhile: it stays aside, named */ }
      throw new WorkStateError(`${this.root} belongs to a build that is still running (${whoIs(owner, path.join(this.root, OWNER_FILE))}), which took it while this one looked`, this.root);
    }
    fs.rmSync(aside, { recursive: true, force: true });
  }

  abandoned(): boolean {
    const p = this.processes;
    if (!p || this.foreign() !== undefined) return false;
    // A plan is an interrupted build's to --resume; or, for shards, one whose `plan` ended before its end (it removes
    // its owner record at the end, below) and that nothing has tiled from: a plan run again replaces it.
    if (this.exists('plan.json')) {
      const forShards = this.readJson<{ forShards?: boolean }>('plan.json')?.forShards === true;
      if (!forShards || this.list('shards').length > 0 || this.list('units').length > 0) return false;
    }
    const o = this.readJson<Owner>(OWNER_FILE);
    // Not this process's own (a second build it runs into the same output): that one may still be reading.
    if (o === undefined || (o.pid === p.pid && o.start === p.start && o.host === os.hostname())) return false;
    return !this.runs(o, path.join(this.root, OWNER_FILE)) && this.liveOwner() === undefined;
  }

  own(as = OWNER_FILE): void {
    const p = this.processes;
    if (!p) return;
    const text = JSON.stringify(this.ownerRecord(p));
    this.writeAtomically(as, (fd) => fs.writeFileSync(fd, text));
    this.keeper.keep(path.join(this.root, as), text);
  }

  release(): void {
    this.processes?.running?.delete(this.tag);
    this.keeper.release();
  }

  claimOwner(as: string): { who: string; file: string } | undefined {
    const p = this.processes;
    if (!p) return undefined;
    const full = path.join(this.root, as);
    const tmp = `${full}.tmp-${this.tag}`;
    const busy = (o: Owner | undefined) => ({ who: o ? whoIs(o, full) : 'another process', file: full });
    try {
      this.makeFolderOf(full);
      let contended = false;
      // Enough rounds to outwait a few other claimants' takeovers (each a few milliseconds).
      for (let attempt = 0; attempt < 50; attempt++) {
        // Read once: whether it runs and whether it is still there to replace are judged on the same bytes.
        const seen = readText(full);
        if (seen === undefined) {
          const text = JSON.stringify(this.ownerRecord(p));
          if (createOnly(full, tmp, text)) { this.keeper.keep(full, text); return undefined; }
          continue;
        }
        const o = parseOwner(seen);
        // Not whole yet: a claim in progress (an exclusive create, where links fail).
        if (o === undefined) return busy(undefined);
        if (this.runs(o, full)) return busy(o);
        // A process that ended (or this one): its record removed if it is still the one read, then claimed anew.
        contended = !removeIfSame(full, seen, JSON.stringify(this.ownerRecord(p)), `${tmp}-lock`);
      }
      if (contended) return { who: 'another process, replacing the record of one that ended', file: full };
      return busy(parseOwner(readText(full) ?? ''));
    } catch (err) {
      throw this.writeError(err, full);
    }
  }

  /**
   * Whether the process the owner record in `file` names is another one, still running: on this machine asked after
   * by pid, on another (a shared volume, where no pid can be asked after) while its record is kept fresh.
   */
  private runs(o: Owner, file: string): boolean {
    const p = this.processes;
    if (!p || !Number.isInteger(o.pid) || o.ended === true) return false;
    if (o.host !== os.hostname()) return (sinceRefresh(file) ?? Infinity) < LEASE_MS;
    // This process: another of its builds, while it works; this build itself, or one that ended, no.
    if (o.pid === p.pid && o.start === p.start) return o.run !== undefined && o.run !== this.tag && p.running?.has(o.run) === true;
    return p.alive(o.pid, o.start);
  }

  liveOwner(only?: string): { who: string; file: string } | undefined {
    const p = this.processes;
    if (!p) return undefined;
    for (const rel of only !== undefined ? [only] : [OWNER_FILE, ...this.list(OWNERS_DIR).filter((n) => !n.endsWith(TAKEOVER)).map((n) => `${OWNERS_DIR}/${n}`)]) {
      const o = this.readJson<Owner>(rel);
      const file = path.join(this.root, rel);
      if (o && this.runs(o, file)) return { who: whoIs(o, file), file };
    }
    return undefined;
  }
}
