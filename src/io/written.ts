// The record of what builds wrote into an output folder: all that `--force` may remove, and all that a resume may sweep.
import fs from 'node:fs';
import path from 'node:path';
import { makeDirectory } from './dirs.js';
import { removalError } from '../report/errors.js';
import { MAX_ZOOM } from '../tiling/space.js';
import { isTileNumber, tileFileName } from '../tiling/tile-names.js';

/**
 * Folder in OUT holding the record: while a build runs, one journal per writing process (a sharded build has several,
 * perhaps on other machines); once it is complete, one manifest. Readers take the union of both.
 */
export const RECORD_DIR = '.mudm-written';
const MANIFEST = 'manifest.json';
const JOURNAL = /^[0-9a-f]{8}\.jsonl$/;

/** Temporary files of DirectorySink.write: `NAME.tmp-TAG-N`. */
export const TEMPORARY = /\.tmp-[0-9a-f]{8}-\d+$/;

/** Whether a file is a tile or a temporary of one: in a directory a build created, every such file is the build's. */
export function isTileName(name: string): boolean {
  const temporary = TEMPORARY.exec(name);
  return tileFileName(temporary ? name.slice(0, temporary.index) : name) !== null;
}

/**
 * What builds wrote, by path relative to OUT (`/`-separated): the directories they created, whose tile files are
 * theirs, and every other file (descriptor, report, previews, tiles in a directory that was already there). Tiles
 * are not listed one by one: 400,000 tiles lie in a few thousand directories.
 */
export interface WrittenRecord { dirs: Set<string>; files: Set<string> }

/** What removing a record took away, for the log. */
export interface Removal {
  files: number;
  dirs: number;
  /** Top-level entries of OUT it removed or removed from. */
  touched: string[];
  /** Entries left in directories a build created, because no build wrote them (first few) and how many. */
  kept: string[];
  keptCount: number;
}

/**
 * A journal line: a directory or file about to be made, or (`withdrawn`) a file this journal named that the build
 * did not write after all (its name was taken while it ran: a user's file there is not the build's to remove).
 */
type Entry = { dir: string } | { file: string } | { withdrawn: string };

/**
 * Whether a record names a path a build may have written: relative to OUT, `/`-separated, without an empty, `.` or
 * `..` segment. Any other entry (a record planted or damaged: `../elsewhere`) is passed over, so that `--force`
 * never reaches outside OUT; what it would have covered is then nobody's, and kept.
 */
export function isRecordPath(p: unknown): p is string {
  return typeof p === 'string' && p !== '' && !p.startsWith('/') && !p.includes('\0') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

function addEntry(record: WrittenRecord, e: unknown): void {
  if (e === null || typeof e !== 'object') return;
  const { dir, file, withdrawn } = e as { dir?: unknown; file?: unknown; withdrawn?: unknown };
  if (isRecordPath(dir)) record.dirs.add(dir);
  if (isRecordPath(file)) record.files.add(file);
  if (typeof withdrawn === 'string') record.files.delete(withdrawn);
}

/** Whether a folder on the way from OUT to `rel` (`rel` itself too when `self`) is a symbolic link: not the build's to go through. */
function throughLink(root: string, rel: string, self: boolean): boolean {
  const parts = rel.split('/');
  for (let i = 1; i <= parts.length - (self ? 0 : 1); i++) {
    try {
      if (fs.lstatSync(path.join(root, ...parts.slice(0, i))).isSymbolicLink()) return true;
    } catch {
      return false;
    }
  }
  return false;
}

/** Path of the manifest under OUT: the record of a finished build (or extract). */
export const MANIFEST_PATH = `${RECORD_DIR}/${MANIFEST}`;

/** Adds what a manifest's text lists to `record` (nothing when it is unreadable: a build replaces it atomically). */
export function addManifest(record: WrittenRecord, text: string): WrittenRecord {
  try {
    const m = JSON.parse(text) as { dirs?: unknown; files?: unknown };
    for (const d of Array.isArray(m.dirs) ? m.dirs : []) addEntry(record, { dir: d });
    for (const f of Array.isArray(m.files) ? m.files : []) addEntry(record, { file: f });
  } catch {
    // An unreadable manifest was not written by a build.
  }
  return record;
}

/** The union of the manifest and every journal in OUT; empty when no build recorded anything there. */
export function readRecord(root: string): WrittenRecord {
  const record: WrittenRecord = { dirs: new Set(), files: new Set() };
  const dir = path.join(root, RECORD_DIR);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return record;
  }
  for (const name of names) {
    if (name === MANIFEST) {
      addManifest(record, fs.readFileSync(path.join(dir, name), 'utf8'));
    } else if (JOURNAL.test(name)) {
      // A process killed mid-line leaves a partial last line: every whole line before it still counts. A journal's
      // withdrawal takes back its own line only: another journal naming the file (a later build's) still counts.
      const own: WrittenRecord = { dirs: record.dirs, files: new Set() };
      for (const line of fs.readFileSync(path.join(dir, name), 'utf8').split('\n')) {
        try { addEntry(own, JSON.parse(line)); } catch { /* the partial line */ }
      }
      for (const f of own.files) record.files.add(f);
    }
  }
  return record;
}

/** One process's journal: each entry is on disk before the file it covers is written. */
export class Journal {
  private fd: number | undefined;
  constructor(private readonly root: string, private readonly tag: string) {}

  add(entry: Entry): void {
    if (this.fd === undefined) {
      makeDirectory(path.join(this.root, RECORD_DIR));
      this.fd = fs.openSync(path.join(this.root, RECORD_DIR, `${this.tag}.jsonl`), 'a');
    }
    fs.writeSync(this.fd, `${JSON.stringify(entry)}\n`);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * `mkdir -p root/rel`, each directory it is about to make in the journal first (a kill between the two leaves a
 * recorded directory that does not exist, never one made and unrecorded). Returns those directories, relative.
 */
export function makeJournaledDirectory(root: string, rel: string, journal: Journal): string[] {
  const parts = rel.split('/');
  let have = parts.length;
  while (have > 0 && !fs.existsSync(path.join(root, ...parts.slice(0, have)))) have--;
  const missing: string[] = [];
  for (let i = have + 1; i <= parts.length; i++) missing.push(parts.slice(0, i).join('/'));
  for (const dir of missing) journal.add({ dir });
  makeDirectory(path.join(root, rel));
  return missing;
}

/**
 * Replaces the journals by one manifest (sorted, so the same build gives the same bytes). Tiles another process
 * listed one by one in a directory some process created fold into that directory's entry.
 */
export function writeManifest(root: string): void {
  const record = readRecord(root);
  const dir = path.join(root, RECORD_DIR);
  const files = [...record.files].filter((f) => !(record.dirs.has(posixDirname(f)) && isTileName(path.posix.basename(f)))).sort();
  const manifest = { 'written-by': 'mudm-tiles', version: 1, dirs: [...record.dirs].sort(), files };
  makeDirectory(dir);
  const tmp = path.join(dir, `${MANIFEST}.tmp`);
  fs.writeFileSync(tmp, `${JSON.stringify(manifest, null, 1)}\n`);
  fs.renameSync(tmp, path.join(dir, MANIFEST));
  for (const name of fs.readdirSync(dir)) if (JOURNAL.test(name)) fs.rmSync(path.join(dir, name), { force: true });
}

function posixDirname(rel: string): string {
  const d = path.posix.dirname(rel);
  return d === '.' ? '' : d;
}

function depth(rel: string): number {
  return rel.split('/').length;
}

/** The record's own files (manifest, journals, a manifest being written), then its folder if that left it empty. */
function removeRecordFolder(root: string): void {
  const dir = path.join(root, RECORD_DIR);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) if (n === MANIFEST || n === `${MANIFEST}.tmp` || JOURNAL.test(n)) fs.rmSync(path.join(dir, n), { force: true });
  try {
    fs.rmdirSync(dir);
  } catch {
    // A file no build writes there is kept, and so is the folder holding it.
  }
}

/**
 * Removes what the record lists (with `only: 'temporaries'`, only the temporary files a killed write left) and, in
 * full mode, the record itself and the directories it lists once they are empty. Everything else stays: a user's
 * files, and the directories that hold them.
 */
export function removeRecorded(root: string, record: WrittenRecord, only?: 'temporaries'): Removal {
  const removal: Removal = { files: 0, dirs: 0, touched: [], kept: [], keptCount: 0 };
  const touched = new Set<string>();
  // Links are looked for once per folder by the loops below, not once per file: a pyramid holds 400,000 tiles.
  const unlink = (rel: string): void => {
    try {
      fs.unlinkSync(path.join(root, rel));
      removal.files++;
      touched.add(rel.split('/')[0]);
    } catch (err) {
      // The file is named: the output folder's name alone does not say which one may not go.
      if ((err as { code?: string }).code !== 'ENOENT') throw removalError(err, path.join(root, rel), removal.files);
    }
  };
  const list = (rel: string): fs.Dirent[] => {
    try {
      return fs.readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch {
      return [];
    }
  };
  // Files listed one by one, and the temporaries beside them; the descriptor first: a removal that fails part-way
  // (a file the user may not remove) must not leave tileset.json, which says the pyramid is whole, beside what is gone.
  const byDir = new Map<string, Set<string>>();
  for (const f of [...record.files].sort((a, b) => Number(b === 'tileset.json') - Number(a === 'tileset.json'))) {
    const d = posixDirname(f);
    if (!byDir.has(d)) byDir.set(d, new Set());
    byDir.get(d)?.add(path.posix.basename(f));
    if (only === undefined && !throughLink(root, f, false)) unlink(f);
  }
  for (const [d, names] of byDir) {
    if (d !== '' && throughLink(root, d, true)) continue;
    for (const e of list(d)) {
      const m = TEMPORARY.exec(e.name);
      if (e.isFile() && m && names.has(e.name.slice(0, m.index))) unlink(d ? `${d}/${e.name}` : e.name);
    }
  }
  // Directories a build created, deepest first, so each is empty of the build's files when its turn comes.
  for (const d of [...record.dirs].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1))) {
    if (throughLink(root, d, true)) continue;
    for (const e of list(d)) {
      if (e.isFile() && isTileName(e.name) && (only === undefined || TEMPORARY.test(e.name))) unlink(`${d}/${e.name}`);
    }
    if (only !== undefined) continue;
    try {
      fs.rmdirSync(path.join(root, d));
      removal.dirs++;
      touched.add(d.split('/')[0]);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw removalError(err, path.join(root, d), removal.files);
      for (const e of list(d)) {
        const rel = `${d}/${e.name}`;
        if (e.isDirectory() && record.dirs.has(rel)) continue;
        if (removal.kept.length < 5) removal.kept.push(rel);
        removal.keptCount++;
      }
    }
  }
  try {
    if (only === undefined) removeRecordFolder(root);
  } catch (err) {
    throw removalError(err, (err as { path?: string }).path ?? path.join(root, RECORD_DIR), removal.files);
  }
  removal.touched = [...touched].sort();
  return removal;
}

/**
 * The first folder a build recorded that is now a symbolic link, or that a recorded path goes through (a zoom folder
 * moved to another disk and linked back): removing the build's files there, or writing new ones, would reach outside
 * OUT. Undefined when there is none.
 */
export function recordedLink(root: string, record: WrittenRecord): string | undefined {
  for (const d of [...record.dirs].sort()) if (throughLink(root, d, true)) return d;
  for (const f of [...record.files].sort()) if (throughLink(root, f, false)) return posixDirname(f);
  return undefined;
}

/** The first file the record lists that is a folder now (a user's, made where the file was), undefined when none is. */
export function folderAtFile(root: string, record: WrittenRecord): string | undefined {
  const isFolder = (f: string) => { try { return fs.lstatSync(path.join(root, f)).isDirectory(); } catch { return false; } };
  return [...record.files].sort().find(isFolder);
}

/**
 * The first symbolic link at a tile's name in a folder a build made: a build's tiles are never links, and one put
 * there (between a kill and --resume) would be left in the pyramid, or written through, as a tile.
 */
export function linkedTile(root: string, record: WrittenRecord): string | undefined {
  for (const d of [...record.dirs].sort()) {
    let entries: fs.Dirent[] = [];
    try { entries = fs.readdirSync(path.join(root, d), { withFileTypes: true }); } catch { /* gone: nothing in it */ }
    const link = entries.find((e) => e.isSymbolicLink() && isTileName(e.name));
    if (link) return `${d}/${link.name}`;
  }
  return undefined;
}

/**
 * The first tile-named file at a tile's path (`Z/X/Y.pbf`, `T/C/Z/Z/X/Y.pbf`: folders named by numbers, zooms up to
 * MAX_ZOOM at the top) in a directory of `root` no build created that no build wrote: one a build may be about to
 * write a tile at, which is not its to replace. With `folders` (a build that makes tile folders), also a file no build
 * wrote named as such a folder, wherever one may be made, in folders a build created too. Other folders (`tiles/`,
 * another pyramid inside OUT) are not looked in.
 */
export function foreignTile(root: string, record: WrittenRecord, folders = true, rel = '', built = false): string | undefined {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const e of entries) {
    const at = rel === '' ? e.name : `${rel}/${e.name}`;
    if (!isTileNumber(e.name) || (rel === '' && Number(e.name) > MAX_ZOOM)) {
      // Not where a tile folder goes; a tile file only inside one.
      if (!e.isDirectory() && !built && rel !== '' && isTileName(e.name) && !TEMPORARY.test(e.name) && !record.files.has(at)) return at;
      continue;
    }
    if (e.isDirectory()) {
      // A directory a build created holds tiles of builds only (and what `--force` keeps, listed when it removes):
      // only a file where a folder goes is looked for there. One a user made inside it is not the build's.
      const ours = record.dirs.has(at);
      if (ours && !folders) continue;
      const found = foreignTile(root, record, folders, at, ours);
      if (found !== undefined) return found;
    } else if (folders && !record.files.has(at)) {
      // A file (or a link) named as a zoom, plane or column folder: where the build may make that folder.
      return at;
    }
  }
  return undefined;
}
