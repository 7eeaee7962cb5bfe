// Tile sinks: where a build's files go. A directory (tiles written in place by the workers, other files through a temporary name) or memory.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { OutputError, describeFsError } from '../report/errors.js';
import type { Dim, Plane } from '../tiling/space.js';
import { makeDirectory, removeMadeDirectories, writeFailure } from './dirs.js';
import { isAside } from './workdir.js';
import { Journal, RECORD_DIR, folderAtFile, foreignTile, isRecordPath, isTileName, linkedTile, makeJournaledDirectory, recordedLink, readRecord, removeRecorded, writeManifest, type Removal, type WrittenRecord } from './written.js';

export interface SinkOpenOptions { force: boolean; resume: boolean }

/** What a build is about to write, once planned: sinks that split the output by plane and format need it. */
export interface OutputLayout {
  dims: Dim[];
  planes: Plane[];
  formats: { json: boolean; pbf: boolean };
  maxZoom: number;
}

/** A tile file's format, as its extension says. */
export type TileFormat = 'json' | 'pbf';
/** How `write` gets a file: `gzipped`, a tile compressed already as the sink stores that format (`gzips`). */
export interface WriteOptions { gzipped?: boolean }

export interface TileSink {
  /**
   * Checks that the output may be written, changing nothing there: refuses a non-empty one without force, and a
   * file the build would overwrite (descriptor, report) that no build wrote.
   */
  initialize(opts: SinkOpenOptions): Promise<void>;
  /**
   * Called once tiles are about to be written. With force, removes what earlier builds recorded writing there (and
   * says what in the result); with resume, only what a killed write left half done; never anything else.
   */
  begin(opts: SinkOpenOptions & { layout?: OutputLayout }): Promise<Removal | void>;
  /**
   * Opens the directory of each zoom for tiles written in place by any thread (io/tile-files.ts: no temporary name;
   * the unit markers and the descriptor, written last, cover a kill), making and recording it; returns the root to
   * write under. Undefined when the sink has no such directory, or a zoom's directory is there and no build recorded
   * making it: tiles then go through `write`, which checks each file.
   */
  directTiles?(zooms: readonly number[]): string | undefined;
  /**
   * Tile formats this sink stores gzipped (an archive's): the workers compress those tiles beside their tiling, and
   * they come to `write` marked `gzipped` (on the writing thread, through zlib's thread pool, it took longer).
   */
  gzips?(): TileFormat[];
  /**
   * The epoch of what is written and removed from here on: a build's count of thinning corrections, times two, plus
   * one while a correction removes tiles. A sink that merges writers' records (archive parts) keeps, of a tile, the
   * latest epoch's; a directory applies each write as it comes and needs none.
   */
  setEpoch?(epoch: number): void;
  /** Writes one file atomically: a reader never sees a partial file under the final name. */
  write(relPath: string, bytes: Uint8Array | string, opts?: WriteOptions): Promise<void>;
  /** Reads a file back, or undefined when it does not exist. */
  read(relPath: string): Promise<Uint8Array | undefined>;
  remove(relPath: string): Promise<void>;
  /** Makes every write so far survive the process being killed; a sink that buffers needs it before work is marked done. */
  flush?(): Promise<void>;
  /** The build is complete: its record of what it wrote becomes one manifest. */
  finish(): Promise<void>;
  /** Lets go of open files without completing the output (a shard's end, a failed build); what was flushed stays. */
  close?(): Promise<void>;
  /**
   * After a run that failed and keeps no work state: removes the directories `initialize` made for the output, when
   * they are left empty (an invalid input with --strict leaves no empty OUT behind).
   */
  abandon?(): void;
  /** After a run whose output must be all or nothing: removes what it wrote since `begin`, then as `abandon` does. */
  discard?(): void;
}

/** Files every build writes at fixed names; a user's file there is never overwritten. */
export const COMPLETION_FILES = ['tileset.json', 'build-report.json'];

/**
 * Entries of OUT that are the tool's own state, not output: they do not make OUT "not empty" (a work directory being
 * removed or being made, `.mudm-work.retiring-TAG` and `.mudm-work.claiming-TAG`, included).
 */
const isOwnState = (name: string): boolean => name === WORK_DIR || name === RECORD_DIR || isAside(name, WORK_DIR);
const WORK_DIR = '.mudm-work';

export type { Removal } from './written.js';

/** Refuses a build that would replace `existing` (descriptor, report) when no build recorded writing them. */
function refuseUnrecorded(existing: string[], root?: string): void {
  if (existing.length === 0) return;
  const one = existing.length === 1;
  throw new OutputError(
    `${existing.map((f) => (root ? path.join(root, f) : f)).join(', ')} ${one ? 'was' : 'were'} not written by a mudm-tiles build (no record of ${one ? 'it' : 'them'}${root ? ` in ${path.join(root, RECORD_DIR)}` : ''}): --force and --resume only replace what a build wrote; move ${one ? 'it' : 'them'} away or choose another output`,
    root,
  );
}

export class DirectorySink implements TileSink {
  /** Directories this process has written into. */
  private readonly dirs = new Set<string>();
  /** Directories this build created, in this process or in the runs it resumes: their tile files are its own. */
  private readonly created = new Set<string>();
  private tmpCounter = 0;
  /** Distinguishes this writer's temporary files and journal from another process writing the same pyramid (a retried shard). */
  private readonly tag = randomBytes(4).toString('hex');
  private readonly journal: Journal;
  /** The record as last read, for `recorded`. */
  private record: WrittenRecord | undefined;
  /** The first directory `initialize` made on the way to OUT (OUT or an ancestor), when OUT did not exist. */
  private madeFrom: string | undefined;

  /** `tileFolders`: whether this build makes tile folders in OUT (not when its tiles go into archives there). */
  constructor(readonly root: string, private readonly tileFolders = true) {
    this.journal = new Journal(root, this.tag);
  }

  async initialize({ force, resume }: SinkOpenOptions): Promise<void> {
    let entries: string[] = [];
    try {
      const st = fs.statSync(this.root);
      if (!st.isDirectory()) throw new OutputError(`output ${this.root} is a file, not a directory`, this.root);
      entries = fs.readdirSync(this.root);
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT') throw describeFsError(err, this.root);
    }
    const visible = entries.filter((e) => !isOwnState(e));
    if (visible.length > 0 && !force && !resume) {
      const shown = `${visible.slice(0, 3).join(', ')}${visible.length > 3 ? ', …' : ''}`;
      throw new OutputError(`output ${this.root} is not empty (${visible.length} ${visible.length === 1 ? 'entry' : 'entries'}: ${shown}); use --force to replace what an earlier build wrote there`, this.root);
    }
    if (visible.length > 0) {
      const record = readRecord(this.root);
      refuseUnrecorded(COMPLETION_FILES.filter((f) => entries.includes(f) && !record.files.has(f)), this.root);
    }
    try {
      this.madeFrom = makeDirectory(this.root);
      this.probe();
    } catch (err) {
      throw describeFsError(err, this.root);
    }
  }

  /**
   * Removes what was written since `begin` (everything recorded: `begin` removed what earlier builds had, or OUT held
   * nothing), and the directories `initialize` made for OUT, left empty. For a run that must write all or nothing.
   */
  discard(): void {
    try {
      this.journal.close();
      removeRecorded(this.root, readRecord(this.root));
    } catch {
      // Best effort after a failure that is reported already; what is left is listed in OUT's record.
    }
    this.abandon();
  }

  abandon(): void {
    removeMadeDirectories(this.root, this.madeFrom);
  }

  async begin({ force, resume }: SinkOpenOptions): Promise<Removal | undefined> {
    try {
      const record = readRecord(this.root);
      const linked = recordedLink(this.root, record);
      if (linked !== undefined) {
        const full = path.join(this.root, linked);
        throw new OutputError(`${full} is a symbolic link where a build made a folder (or lies on its way): the build would remove and write tiles through it, outside the output; put the folder back in its place or remove the link (nothing was removed)`, full);
      }
      if (resume) {
        const link = linkedTile(this.root, record);
        if (link !== undefined) {
          const full = path.join(this.root, link);
          throw new OutputError(`${full} is a symbolic link where a build writes a tile: a tile is never a link, nor written through one (it may point out of the output); remove the link (nothing was written)`, full);
        }
        // The earlier runs' directories stay this build's; a write they were killed in left a temporary file.
        for (const d of record.dirs) this.created.add(d);
        removeRecorded(this.root, record, 'temporaries');
        // A failed rebuild must never look complete.
        for (const f of COMPLETION_FILES) if (record.files.has(f)) fs.rmSync(path.join(this.root, f), { force: true });
        return undefined;
      }
      // Checked before anything goes: a failed rebuild must not have removed the pyramid it could not replace.
      const foreign = force ? foreignTile(this.root, record, this.tileFolders) : undefined;
      if (foreign !== undefined) {
        const full = path.join(this.root, foreign);
        throw new OutputError(`${full} is in the way: no build wrote it, and this build may write a tile there; move it away or choose another output (nothing was removed)`, full);
      }
      // A folder no build made where a build wrote a file would stop the removal part-way, the old pyramid half gone.
      const folder = force ? folderAtFile(this.root, record) : undefined;
      if (folder !== undefined) {
        const full = path.join(this.root, folder);
        throw new OutputError(`${full} is a folder where an earlier build wrote a file: no build made it, and --force removes only what builds wrote; move it away or choose another output (nothing was removed)`, full);
      }
      // Without force OUT held nothing visible: a record there describes files that are gone.
      return removeRecorded(this.root, force ? record : { dirs: new Set(), files: new Set() });
    } catch (err) {
      throw describeFsError(err, this.root);
    }
  }

  directTiles(zooms: readonly number[]): string | undefined {
    const dirs = zooms.map(String);
    try {
      const unrecorded = dirs.filter((d) => !this.created.has(d) && fs.existsSync(path.join(this.root, d)));
      if (unrecorded.length > 0 && unrecorded.some((d) => !readRecord(this.root).dirs.has(d))) return undefined;
      for (const d of unrecorded) this.created.add(d);
      for (const d of dirs) {
        try {
          if (!this.dirs.has(d)) this.openDirectory(d);
        } catch (err) {
          throw writeFailure(err, path.join(this.root, d), true);
        }
      }
    } catch (err) {
      throw describeFsError(err, this.root);
    }
    return this.root;
  }

  /**
   * Fails early, with the path, when the directory cannot be written (read-only, no permission). Asked, not tried with
   * a file: a probe file a kill left between its write and its removal stayed in OUT for good.
   */
  private probe(): void {
    fs.accessSync(this.root, fs.constants.W_OK);
  }

  async write(relPath: string, bytes: Uint8Array | string): Promise<void> {
    // Paths come from inputs too (an archive's planes, for extract): none may lead out of OUT.
    if (!isRecordPath(relPath)) throw new OutputError(`${JSON.stringify(relPath)} is no path inside the output folder ${this.root}: nothing was written there`, this.root);
    const full = path.join(this.root, relPath);
    const tmp = `${full}.tmp-${this.tag}-${this.tmpCounter++}`; // as TEMPORARY matches
    const slash = relPath.lastIndexOf('/');
    const dir = slash < 0 ? '' : relPath.slice(0, slash);
    try {
      if (dir !== '' && !this.dirs.has(dir)) this.openDirectory(dir);
      if (!this.created.has(dir)) {
        // In a folder the build did not make, a file already there may be the user's: never replaced.
        if (fs.existsSync(full) && !this.recorded(relPath)) {
          throw new OutputError(`${full} is in the way: no build wrote it, and this build would replace it; move it away or choose another output`, full);
        }
        // The journal has the file before the file exists: a kill never leaves a file of the build unrecorded.
        this.journal.add({ file: relPath });
      } else if (!isTileName(relPath.slice(slash + 1))) this.journal.add({ file: relPath });
      // Synchronous writes measured fastest for many small files on 2 cores (stack.md); the main thread is idle here.
      fs.writeFileSync(tmp, bytes);
      fs.renameSync(tmp, full);
    } catch (err) {
      // Under a file in the way there is no temporary to remove, and the attempt fails too: the first error stands.
      try { fs.rmSync(tmp, { force: true }); } catch { /* see above */ }
      throw writeFailure(err, full);
    }
  }

  /**
   * Whether a build (an earlier run of this one, another shard) recorded writing `relPath`. Read again when not found:
   * other processes' journals grow while this one runs.
   */
  private recorded(relPath: string): boolean {
    const slash = relPath.lastIndexOf('/');
    const has = (r: WrittenRecord): boolean => r.files.has(relPath) || (r.dirs.has(relPath.slice(0, Math.max(0, slash))) && isTileName(relPath.slice(slash + 1)));
    if (this.record && has(this.record)) return true;
    this.record = readRecord(this.root);
    return has(this.record);
  }

  /** Makes `dir` (relative), recording each directory it makes before making it: their tile files are then the build's. */
  private openDirectory(dir: string): void {
    for (const made of makeJournaledDirectory(this.root, dir, this.journal)) this.created.add(made);
    this.dirs.add(dir);
  }

  async read(relPath: string): Promise<Uint8Array | undefined> {
    try {
      return fs.readFileSync(path.join(this.root, relPath));
    } catch {
      return undefined;
    }
  }

  async remove(relPath: string): Promise<void> {
    fs.rmSync(path.join(this.root, relPath), { force: true, recursive: true });
  }

  async finish(): Promise<void> {
    try {
      this.journal.close();
      writeManifest(this.root);
    } catch (err) {
      throw describeFsError(err, path.join(this.root, RECORD_DIR));
    }
  }
}

/**
 * In-memory twin of DirectorySink, for tests and library callers that want the files as values. `files` may hold
 * entries nobody built (a caller's own): force removes only the keys a build wrote.
 */
export class MemorySink implements TileSink {
  readonly files = new Map<string, Uint8Array>();
  /** The record: keys builds wrote into `files`. */
  readonly written = new Set<string>();
  async initialize({ force, resume }: SinkOpenOptions): Promise<void> {
    if (this.files.size > 0 && !force && !resume) throw new OutputError('output is not empty; use --force to replace what an earlier build wrote there');
    if (this.files.size > 0) refuseUnrecorded(COMPLETION_FILES.filter((f) => this.files.has(f) && !this.written.has(f)));
  }
  async begin({ force, resume }: SinkOpenOptions): Promise<Removal | undefined> {
    if (resume) {
      for (const f of COMPLETION_FILES) if (this.written.has(f)) this.files.delete(f);
      return undefined;
    }
    const removal: Removal = { files: 0, dirs: 0, touched: [], kept: [], keptCount: 0 };
    const touched = new Set<string>();
    for (const k of this.written) {
      if (force && this.files.delete(k)) {
        removal.files++;
        touched.add(k.split('/')[0]);
      }
    }
    this.written.clear();
    removal.touched = [...touched].sort();
    return removal;
  }
  async write(relPath: string, bytes: Uint8Array | string): Promise<void> {
    this.written.add(relPath);
    this.files.set(relPath, typeof bytes === 'string' ? new TextEncoder().encode(bytes) : new Uint8Array(bytes));
  }
  async read(relPath: string): Promise<Uint8Array | undefined> {
    return this.files.get(relPath);
  }
  async remove(relPath: string): Promise<void> {
    for (const k of [...this.files.keys()]) if (k === relPath || k.startsWith(`${relPath}/`)) this.files.delete(k);
  }
  async finish(): Promise<void> {}
}
