// Routes a build's files into PMTiles archives: tiles by plane and format to one PmtilesSink each, the descriptor into
// the metadata of every archive (and, under a directory, to DIR/tileset.json last), the run report and previews beside.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DirectorySink, type OutputLayout, type Removal, type SinkOpenOptions, type TileSink, type WriteOptions } from '../io/sink.js';
import { Journal, RECORD_DIR, readRecord } from '../io/written.js';
import { OutputError, UsageError, describeFsError, removalError } from '../report/errors.js';
import type { Plane } from '../tiling/space.js';
import { tilePathParts } from '../tiling/tile-names.js';
import { archiveName, besideArchive, folderArchiveMetadata, isArchiveName, listedArchives, type ArchiveFormat } from './archive-names.js';
import { Compression, MAX_ZOOM, TileType } from './pmtiles-format.js';
import { refuseForeign } from './foreign.js';
import { PmtilesSink, tileCompressionOf } from './pmtiles-sink.js';
import type { TileCompression } from '../options.js';
import { makeDirectory, removeFile, removeMadeDirectories } from '../io/dirs.js';

/** Beside each archive part (`NAME.part`) a step makes: `NAME.made`, made first, so that a part gone missing since is known to be lost. */
export const MADE = '.made';

const REPORT = 'build-report.json';
const tileTypeOf = (format: ArchiveFormat) => (format === 'pbf' ? TileType.Mvt : TileType.Other);

export interface ArchiveSinkOptions {
  /** `file`: `out` is FILE.pmtiles, one archive (PBF, one plane); `planes`: `out` is a directory, one archive per plane and format. */
  mode: 'file' | 'planes';
  out: string;
  /** How tiles are stored (`--tile-compression`): `auto` keeps PBF as encoded and gzips JSON. */
  compression?: TileCompression;
  /** Where this process keeps the parts its archives grow in (under the work directory), one per archive. */
  partsDir: string;
  /** Continue the parts found there whatever `begin` says: shards and finalize, which may be run again. */
  resumeParts?: boolean;
  /** Finished parts of other processes (shards) to merge into the archive named so at `finish`. */
  mergeParts?: (archive: string) => string[];
  /** The plan's layout, when known before `begin` (shards and finalize read it from the plan). */
  layout?: OutputLayout;
}

interface Entry { sink: PmtilesSink; ready: Promise<void> }

/**
 * A TileSink writing archives. Tiles may come in any order and from several processes (each with its own parts,
 * merged by `finish` without re-encoding a tile); `flush` makes what was written survive a kill, for `--resume`.
 * `finish` writes every archive the descriptor lists, then, under a directory, `tileset.json`: its presence means
 * every archive is whole.
 */
export class ArchiveSink implements TileSink {
  private readonly archives = new Map<string, Entry>();
  /** Under a directory: tileset.json, build-report.json, previews. */
  private readonly aux: DirectorySink | undefined;
  /** Under a directory: each archive enters the build's record (OUT/.mudm-written) before it is renamed into place. */
  private readonly journal: Journal | undefined;
  private layout: OutputLayout | undefined;
  private resume = false;
  /** `TileSink.setEpoch`: given to every archive's sink, those made later too. */
  private epoch = 0;
  private descriptor: string | undefined;
  /**
   * Files beside `-o FILE.pmtiles` (the report), and under a directory the report: held until the archives are
   * written, since a kill or a full disk before left a report of archives that are not there.
   */
  private readonly besides = new Map<string, Uint8Array | string>();
  private report: Uint8Array | string | undefined;
  /** With -o FILE.pmtiles, the first folder `initialize` made for the file (its folder did not exist). */
  private madeFrom: string | undefined;
  /**
   * The archives (and with -o FILE.pmtiles the report) an earlier build wrote, as `initialize` found them: only those
   * files are removed or replaced; one found at their names later appeared while this build ran, and is left as it is.
   */
  private readonly found = new Map<string, fs.Stats>();

  constructor(private readonly options: ArchiveSinkOptions) {
    this.aux = options.mode === 'planes' ? new DirectorySink(options.out, false) : undefined;
    this.journal = this.aux ? new Journal(options.out, randomBytes(4).toString('hex')) : undefined;
    this.layout = options.layout;
  }

  async initialize({ force, resume }: SinkOpenOptions): Promise<void> {
    const { out } = this.options;
    if (this.aux) {
      await this.aux.initialize({ force, resume });
      // An archive name no build recorded writing is a user's file: never replaced.
      const record = readRecord(out);
      const foreign = archivesIn(out).filter((f) => !record.files.has(path.basename(f)));
      if (foreign.length > 0) {
        throw new OutputError(`${foreign.join(', ')}: not written by a mudm-tiles build (no record in ${path.join(out, RECORD_DIR)}), and named as an archive of this output, which the build may write (its planes are known only once read): --force and --resume never replace a file no build wrote; move ${foreign.length === 1 ? 'it' : 'them'} away or choose another output`, out);
      }
      for (const f of archivesIn(out)) {
        const st = statOf(f);
        if (st) this.found.set(f, st);
      }
      return;
    }
    const st = statOf(out);
    if (st?.isDirectory()) throw new OutputError(`output ${out} is a directory, not an archive file (a directory of archives is -o DIR --archive pmtiles)`, out);
    const report = besideArchive(out, 'build-report.json') as string;
    for (const [file, kind] of [[out, 'archive'], [report, 'report']] as const) {
      const st = statOf(file);
      if (!st) continue;
      // A file no build wrote is refused as such: --force would not replace it either. A build writes no links: one
      // there (`latest.pmtiles` → a build's archive) is a user's, whatever it points to.
      refuseForeign(file, kind, st.isSymbolicLink());
      if (!force && !resume) throw new OutputError(`output ${file} exists, written by an earlier build; use --force to replace it`, file);
      this.found.set(file, st);
    }
    try {
      this.madeFrom = makeDirectory(path.dirname(out));
      // Asked, not tried with a file: a probe file a kill left stayed beside the archive for good.
      fs.accessSync(path.dirname(out), fs.constants.W_OK);
    } catch (err) {
      throw describeFsError(err, out);
    }
  }

  async begin({ force, resume, layout }: SinkOpenOptions & { layout?: OutputLayout }): Promise<Removal | undefined> {
    this.layout = layout ?? this.layout;
    this.resume = resume;
    this.checkLayout();
    const { out } = this.options;
    // What an earlier build wrote goes now (initialize checked that a build wrote it): a failed rebuild never looks whole.
    if (this.aux) {
      // Read first: with force the directory sink removes what the record lists, the record included.
      const record = readRecord(out);
      const removal = await this.aux.begin({ force, resume });
      this.removeFound(archivesIn(out).filter((f) => record.files.has(path.basename(f))));
      return removal;
    }
    const old = this.removeFound([out, besideArchive(out, 'build-report.json') as string]);
    return force && old.length > 0 ? { files: old.length, dirs: 0, touched: old.map((f) => path.basename(f)), kept: [], keptCount: 0 } : undefined;
  }

  /** The archive of one plane holds PBF tiles of zooms the PMTiles tile ids reach. */
  private checkLayout(): void {
    const { mode, out } = this.options;
    const l = this.layout;
    if (!l) return;
    if (l.maxZoom > MAX_ZOOM) throw new UsageError(`a PMTiles archive holds zooms 0..${MAX_ZOOM}; this pyramid's finest zoom is ${l.maxZoom}: lower --max-zoom or write a directory`);
    if (mode === 'file' && l.planes.length > 1) {
      const shown = l.planes.slice(0, 4).map((p) => l.dims.map((d) => `${d}=${p[d]}`).join(',')).join('; ');
      throw new UsageError(`-o ${out} holds the tiles of one plane; the input has ${l.planes.length} (${shown}${l.planes.length > 4 ? '; ...' : ''}): write one archive per plane with -o DIR --archive pmtiles`);
    }
  }

  gzips(): ArchiveFormat[] {
    return (['json', 'pbf'] as const).filter((f) => tileCompressionOf(tileTypeOf(f), this.options.compression) === Compression.Gzip);
  }

  async write(relPath: string, bytes: Uint8Array | string, opts?: WriteOptions): Promise<void> {
    const entry = this.route(relPath);
    if (entry) {
      await entry.ready;
      await entry.sink.write(relPath, bytes, opts);
    } else if (relPath === 'tileset.json') {
      // Into every archive's metadata at finish, and under a directory to DIR/tileset.json after them.
      this.descriptor = typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8');
    } else if (this.aux && relPath === REPORT) {
      this.report = bytes;
    } else if (this.aux) {
      await this.aux.write(relPath, bytes);
    } else {
      this.besides.set(this.beside(relPath), bytes);
    }
  }

  async read(relPath: string): Promise<Uint8Array | undefined> {
    const entry = this.route(relPath);
    if (entry) {
      await entry.ready;
      return entry.sink.read(relPath);
    }
    if (relPath === 'tileset.json') return this.descriptor === undefined ? undefined : Buffer.from(this.descriptor);
    if (this.aux && relPath === REPORT && this.report !== undefined) return typeof this.report === 'string' ? Buffer.from(this.report) : this.report;
    if (this.aux) return this.aux.read(relPath);
    const held = this.besides.get(this.beside(relPath));
    if (held !== undefined) return typeof held === 'string' ? Buffer.from(held) : held;
    try {
      return fs.readFileSync(this.beside(relPath));
    } catch {
      return undefined;
    }
  }

  setEpoch(epoch: number): void {
    this.epoch = epoch;
    for (const e of this.archives.values()) e.sink.setEpoch(epoch);
  }

  async remove(relPath: string): Promise<void> {
    const entry = this.route(relPath);
    if (entry) {
      await entry.ready;
      await entry.sink.remove(relPath);
    } else if (relPath === 'tileset.json') this.descriptor = undefined;
    else if (this.aux && relPath === REPORT && this.report !== undefined) this.report = undefined;
    else if (this.aux) await this.aux.remove(relPath);
    else {
      this.besides.delete(this.beside(relPath));
      removeFile(this.beside(relPath));
    }
  }

  async flush(): Promise<void> {
    for (const e of this.archives.values()) {
      await e.ready;
      await e.sink.flush();
    }
  }

  /** Writes every archive (the descriptor as its metadata), then under a directory tileset.json, last. */
  async finish(): Promise<void> {
    const { descriptor } = this;
    if (descriptor === undefined) throw new OutputError(`${this.options.out}: no tileset.json was written, and it is the archives' metadata`, this.options.out);
    // Every archive the descriptor promises (under a directory those of a plane and format with tiles), made here
    // when no tile came to it: one that holds none is refused when assembled (PMTiles has no empty archive).
    const listed = this.options.mode === 'file' ? [{ href: path.basename(this.options.out), format: 'pbf' as const }] : listedArchives(JSON.parse(descriptor) as object);
    for (const a of listed) this.entry(a.href, a.format);
    const unlisted = [...this.archives.keys()].filter((n) => !listed.some((a) => a.href === n));
    if (unlisted.length > 0) throw new Error(`internal: tiles went to ${unlisted.join(', ')}, which the descriptor does not list`);
    for (const name of [...this.archives.keys()].sort()) {
      const { sink, ready } = this.archives.get(name) as Entry;
      await ready;
      await sink.write('tileset.json', this.options.mode === 'planes' ? folderArchiveMetadata(descriptor, name) : descriptor);
      // An archive an earlier run of this step named (a finalize killed before its cleanup, run again) is replaced.
      this.removeFound([sink.file]);
      // Recorded before it exists, so that a kill never leaves an archive of the build unrecorded; withdrawn when it
      // was not made (a file that appeared at its name is left as it is, and is not the build's to remove later).
      this.journal?.add({ file: name });
      try {
        await sink.finish();
      } catch (err) {
        this.journal?.add({ withdrawn: name });
        throw err;
      }
    }
    for (const [file, bytes] of this.besides) {
      this.foundStill(file);
      writeBeside(file, bytes);
    }
    this.besides.clear();
    if (this.aux) {
      this.journal?.close();
      if (this.report !== undefined) await this.aux.write(REPORT, this.report);
      await this.aux.write('tileset.json', descriptor);
      await this.aux.finish();
    }
  }

  /**
   * Whether `file` is there as `initialize` found it (a file of an earlier build, to remove or replace); false when
   * there is none. A file there that `initialize` did not find appeared while this build ran: refused, left as it is.
   */
  private foundStill(file: string): boolean {
    const st = statOf(file);
    if (!st) return false;
    const was = this.found.get(file);
    if (was !== undefined && sameFile(was, st)) return true;
    throw new OutputError(`${file} appeared while this build ran (another build, or a file put there): left as it is; move it away and run the build again`, file);
  }

  /** Removes those of `files` that are there as `initialize` found them (see `foundStill`); returns them. */
  private removeFound(files: readonly string[]): string[] {
    const old = files.filter((f) => this.foundStill(f));
    removeArchives(old);
    for (const f of old) this.found.delete(f);
    return old;
  }

  abandon(): void {
    if (this.aux) this.aux.abandon();
    else removeMadeDirectories(path.dirname(this.options.out), this.madeFrom);
  }

  async close(): Promise<void> {
    this.journal?.close();
    for (const e of this.archives.values()) {
      await e.ready.catch(() => undefined);
      await e.sink.close();
    }
  }

  /** The archive a tile path goes to (opened on its first tile), or undefined for any other path. */
  private route(relPath: string): Entry | undefined {
    const tile = tilePathParts(relPath);
    if (!tile) return undefined;
    const format: ArchiveFormat = tile.ext;
    // One archive of PBF tiles: a JSON tile reaching it is refused by its sink, naming the path.
    if (this.options.mode === 'file') return this.entry(path.basename(this.options.out), 'pbf');
    const l = this.layout;
    const values = tile.planes;
    if (!l || values.length !== l.dims.length) throw new OutputError(`${this.options.out}: ${relPath} is not a tile path of this build's planes`, this.options.out);
    const plane: Plane = { t: 0, c: 0, z: 0 };
    l.dims.forEach((d, i) => { plane[d] = values[i]; });
    return this.entry(this.nameOf(plane, format), format);
  }

  private nameOf(plane: Plane, format: ArchiveFormat): string {
    return archiveName(plane, this.layout?.dims ?? [], format);
  }

  private entry(name: string, format: ArchiveFormat): Entry {
    let e = this.archives.get(name);
    if (e) return e;
    const { out, partsDir, mergeParts, resumeParts } = this.options;
    const file = this.aux ? path.join(out, name) : out;
    const tileType = tileTypeOf(format);
    const sink = new PmtilesSink(file, {
      tileType, tileCompression: tileCompressionOf(tileType, this.options.compression), partPath: path.join(partsDir, `${name}.part`),
      // The parts go with the work directory once the whole output is written: a build killed between two
      // archives' finish resumes from them.
      keepPart: true, parts: mergeParts?.(name),
    });
    const resume = resumeParts === true || this.resume;
    let ready: Promise<void>;
    try {
      makeDirectory(partsDir);
      // Said once the part is made (`begin` makes it before it returns), before any tile goes in: a part that goes
      // missing later is then known to be lost (`MADE`), and a kill in between leaves a part, not a false loss.
      const made = path.join(partsDir, `${name}${MADE}`);
      ready = sink.begin({ force: false, resume }).then(() => {
        try { fs.writeFileSync(made, ''); } catch (err) { throw describeFsError(err, made); }
      });
    } catch (err) {
      ready = Promise.reject(describeFsError(err, partsDir));
    }
    // Whoever writes to the archive awaits `ready` and sees its failure; this keeps it from counting as unhandled meanwhile.
    ready.catch(() => undefined);
    sink.setEpoch(this.epoch);
    e = { sink, ready };
    this.archives.set(name, e);
    return e;
  }

  private beside(relPath: string): string {
    const file = besideArchive(this.options.out, relPath);
    if (file === undefined) throw new OutputError(`${this.options.out}: beside an archive go its tiles' descriptor and the run report, not ${relPath}`, this.options.out);
    return file;
  }
}

/**
 * Whether `now` is the file `was` described: not one made since at its name (an inode number reused included), nor
 * rewritten in place (its mtime put back: ctime moves all the same). A ctime moved with the link count is the removal
 * of a second link (the one a killed assembly left in the work directory, which --force removes after it looked).
 */
function sameFile(was: fs.Stats, now: fs.Stats): boolean {
  return was.dev === now.dev && was.ino === now.ino && was.size === now.size && was.mtimeMs === now.mtimeMs
    && (was.ctimeMs === now.ctimeMs || was.nlink !== now.nlink);
}

function statOf(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw describeFsError(err, file);
  }
}

/** The archives in DIR. */
function archivesIn(dir: string): string[] {
  return listDir(dir).filter(isArchiveName).map((n) => path.join(dir, n));
}

function removeArchives(files: readonly string[]): void {
  files.forEach((file, removed) => {
    try {
      removeFile(file);
    } catch (err) {
      // The file is named: of an --archive folder's archives, the folder does not say which one may not go.
      throw removalError(err, file, removed);
    }
  });
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Writes a file beside the archive under a temporary name, then renames it. */
function writeBeside(file: string, bytes: Uint8Array | string): void {
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    fs.writeFileSync(tmp, bytes);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw describeFsError(err, file);
  }
}
