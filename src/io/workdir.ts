// The work directory of a build: its plan, one completion marker per work unit and per shard; on disk or in memory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describeFsError, WorkStateError } from '../report/errors.js';
import { makeDirectory, removeMadeDirectories, writeParts } from './dirs.js';
import { sweepAside } from './aside.js';
import { CLAIMING, createOnly, LEASE_MS, OWNER_FILE, OWNERS_DIR, ownerOf, parseOwner, readText, RecordKeeper, removeIfSame, RETIRING, sinceRefresh, TAKEOVER, whoIs, type Owner, type ProcessProbe } from './owner-file.js';

export { isAside, OWNER_FILE, OWNERS_DIR, type ProcessProbe } from './owner-file.js';

/** Durable state between the steps of a build (plan, build-shard, finalize) and across an interruption (resume). */
export interface WorkDir {
  /** Directory for spilled unit records, or undefined for a memory-only twin. */
  readonly root: string | undefined;
  writeJson(rel: string, value: unknown): void;
  readJson<T>(rel: string): T | undefined;
  /** Writes the parts one after the other as one file, atomically. */
  writeBytes(rel: string, parts: readonly Uint8Array[]): void;
  readBytes(rel: string): Uint8Array | undefined;
  /**
   * Appends the parts to a file (made with its folder when missing); a kill may leave the last append cut short. The
   * file stays open for the next append until `close`, `removeFolder` or `destroy`.
   */
  append(rel: string, parts: readonly Uint8Array[]): void;
  /** Closes the files kept open for appending (a later append opens them again). */
  close(): void;
  /** This process's step ended: the records it made (`own`, `claimOwner`) say so to other machines, and are no longer kept fresh. */
  release(): void;
  /** `length` bytes at `offset`, or undefined when the file is missing or shorter. */
  readRange(rel: string, offset: number, length: number): Uint8Array | undefined;
  exists(rel: string): boolean;
  /** Names of the entries of a folder, sorted; [] when it does not exist. */
  list(rel: string): string[];
  /** Removes a folder and all it holds, or a single file. */
  removeFolder(rel: string): void;
  /** Removes the whole work directory. */
  destroy(): void;
  /** Bytes of a file, or undefined when it is missing. */
  size(rel: string): number | undefined;
  /**
   * Why what is at the work directory's place is not a build's state (a file, a link, a folder of other files), so
   * that neither --force removes it nor a build takes it for another's; undefined when it is one, or nothing is there.
   */
  foreign(): string | undefined;
  /**
   * Makes the work directory for a new build, which must not find one (an interrupted, running or sharded build's
   * state): a WorkStateError then, with nothing touched. Two builds started into one output cannot both claim it.
   */
  claim(): void;
  /**
   * Whether the work directory is a build's that ended before it had a plan (killed while reading), or a `plan`'s
   * for shards that ended before its end: its owner is recorded and no longer runs, and there is nothing to continue.
   * A new build may replace it without --force.
   */
  abandoned(): boolean;
  /**
   * Removes the work directory of a build that has ended (`--force`, or `abandoned`), moved aside first so that no
   * process removes one another has claimed since it looked: then a WorkStateError, and it stays.
   */
  retire(): void;
  /**
   * Removes what a claim or a removal of this work directory killed part-way left beside it (`NAME.retiring-TAG`,
   * `NAME.claiming-TAG`) when it holds only a build's state, but a claim under way and state a `retire` is about to
   * put back (their owner runs); never anything else.
   */
  sweep(): void;
  /**
   * Records this process as the build working here (a build after `claim`, a resumed build taking it over, a plan
   * while it reads: it removes the record once the plan is written, as shards work in what it leaves).
   */
  own(as?: string): void;
  /**
   * A process recorded as working here (a build, or a shard in `owners/`; `only`: the one that file records) when it
   * is another one still running: "pid N" (and its machine) and the file that records it. On this machine known by
   * its pid and start (a pid reused is not it); on another one, sharing the volume, by its record kept fresh (LEASE_MS).
   */
  liveOwner(only?: string): { who: string; file: string } | undefined;
  /**
   * Records this process in `as` unless another one running is recorded there (then it, as
   * `liveOwner` says, and nothing is written): two processes claiming at once cannot both get it, the file made by an
   * exclusive link, and one left by a process that ended replaced only as it was seen (under a lock beside it).
   */
  claimOwner(as: string): { who: string; file: string } | undefined;
}

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
  /** Without `processes`, no owner is recorded or looked for. */
  constructor(readonly root: string, private readonly processes?: ProcessProbe) {}

  /** This build's owner record; from the first one made until `release` or `destroy`, it counts as running in `p`. */
  private ownerRecord(p: ProcessProbe): Owner {
    p.running?.add(this.tag);
    return ownerOf(p, this.tag);
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
        makeDirectory(path.dirname(full));
        fd = fs.openSync(full, 'a');
        this.appending.set(full, fd);
      }
      writeParts(fd, parts);
    } catch (err) {
      throw describeFsError(err, full);
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
      makeDirectory(path.dirname(full));
      const fd = fs.openSync(tmp, 'w');
      try {
        write(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, full);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw describeFsError(err, full);
    }
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

  claim(): void {
    const p = this.processes;
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
    } catch (err) {
      if (made !== this.root) fs.rmSync(made, { recursive: true, force: true });
      const code = (err as { code?: string }).code;
      if (code === 'EEXIST' || code === 'ENOTEMPTY') throw new WorkStateError(claimedMessage(this.root), this.root);
      throw describeFsError(err, this.root);
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
      makeDirectory(path.dirname(full));
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
      throw describeFsError(err, full);
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
