// Tiles for `serve` out of PMTiles archives: the one archive it was started on, or those OUT/tileset.json lists.
import fs from 'node:fs';
import path from 'node:path';
import { folderMemberProblem, writtenAs } from '../archive/archive-names.js';
import { Compression, TileType } from '../archive/pmtiles-format.js';
import { PmtilesArchive, handleRangeSource } from '../archive/pmtiles-reader.js';
import { InputError } from '../report/errors.js';
import { openInside, openRegular, type Opened } from './files.js';
import { validators } from './ranges.js';
import { archiveFor, descriptorPlane, pyramidTile, samePlane, tileRoutes, type TileFormat, type TileRequest, type TileRoutes } from './tile-routes.js';
import type { Plane } from '../tiling/space.js';
import { tileFileName } from '../tiling/tile-names.js';

/** A tile found in an archive, as it goes out: gzip-encoded only when the client takes gzip. */
export interface FoundTile {
  bytes: Uint8Array;
  gzip: boolean;
  ext: TileFormat;
  modified: Date;
  /** The ETag of the archive it was read from: a page reading tiles by URL sees the archive replaced by it. */
  archive?: string;
}

/**
 * What a request path is to the archives: not a tile path of theirs (`undefined`: the files answer), a tile they
 * do not hold (`'absent'`), a tile, an archive that cannot be read (`{ unreadable }`, naming it as OUT names it), or
 * one under another archive's name (`{ misplaced, written }`: renamed or swapped, it holds another plane's tiles).
 */
export type TileAnswer = FoundTile | 'absent' | Unreadable | { missing: string } | { misplaced: string; written: string } | undefined;

/** An archive that could not answer: its name as OUT names it, and why, in the reader's words (a damaged part). */
export interface Unreadable { unreadable: string; why: string }

/**
 * Why `name` (at `file` on this machine) could not answer. A reader's message names the part at fault; the file's
 * path on the server is put as the client names it. Other errors (the disk's) are not passed on: their text may
 * hold paths of the server's.
 */
function unreadable(name: string, file: string, err: unknown): Unreadable {
  if (!(err instanceof InputError)) return { unreadable: name, why: 'not readable as a PMTiles archive' };
  const why = err.message.split(file).join(name);
  return { unreadable: name, why: why.startsWith(`${name}: `) ? why.slice(name.length + 2) : why };
}

/** A file's identity: a rebuild renames a new file over the old one, which changes at least one of these. */
const identity = (s: fs.Stats) => `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;

export interface Held {
  archive: PmtilesArchive;
  identity: string;
  /** Requests using it now: a replaced archive is closed when the last one is done. */
  users: number;
  current: boolean;
  /** The metadata, parsed once. */
  metadata?: Promise<unknown>;
  /** What the metadata says of the tiles the archive answers (its routes and its plane), worked out once. */
  routes?: Promise<{ routes: TileRoutes; plane: Partial<Plane> }>;
}

/**
 * Archives kept open between requests, by real path, at most `limit` of them. Each request opens the file anew
 * (the same checks as any file) and compares its identity with the archive held, so a rebuilt archive is read
 * from its new bytes while requests on the old one finish on the old handle.
 */
export class ArchiveShelf {
  private readonly held = new Map<string, Held>();

  constructor(private readonly limit = 32) {}

  /** Runs `use` on the archive `opened` holds (its handle is the shelf's from now on); throws the reader's error when it is not PMTiles v3. */
  async with<T>(opened: Opened, use: (archive: PmtilesArchive, held: Held) => Promise<T>): Promise<T> {
    const id = identity(opened.stats);
    let h = this.held.get(opened.file);
    if (h && h.identity === id) {
      // Not awaited: between an await and `users++` another request could retire or evict the archive held.
      void opened.handle.close().catch(() => {});
    } else {
      let archive: PmtilesArchive;
      try {
        archive = await PmtilesArchive.open(handleRangeSource(opened.file, opened.handle, opened.stats.size));
      } catch (err) {
        await opened.handle.close();
        throw err;
      }
      // Requests that came at once each opened the archive: the first to get here is kept, the others' handles close.
      const now = this.held.get(opened.file);
      if (now && now.identity === id) {
        void archive.close().catch(() => {});
        h = now;
      } else {
        if (now) void this.retire(now);
        h = { archive, identity: id, users: 0, current: true };
      }
    }
    // In use before anything else runs, then most recently used last: eviction takes from the front, never this one.
    h.users++;
    this.held.delete(opened.file);
    this.held.set(opened.file, h);
    this.evict();
    try {
      return await use(h.archive, h);
    } finally {
      h.users--;
      if (!h.current && h.users === 0) await h.archive.close();
    }
  }

  /** Closes every archive not in use; those in use close when their requests end. */
  async close(): Promise<void> {
    const closing = [...this.held.values()].map((h) => this.retire(h));
    this.held.clear();
    await Promise.all(closing);
  }

  /** No longer the archive to serve: closed now when unused (resolved once closed), else when its last request ends. */
  private retire(h: Held): Promise<void> {
    h.current = false;
    return h.users === 0 ? h.archive.close().catch(() => {}) : Promise.resolve();
  }

  private evict(): void {
    for (const [file, h] of this.held) {
      if (this.held.size <= this.limit) return;
      if (h.users > 0) continue;
      this.held.delete(file);
      void this.retire(h);
    }
  }
}

/** The metadata of an archive, parsed once per archive held. */
function metadataOf(archive: PmtilesArchive, held: Held): Promise<unknown> {
  held.metadata ??= archive.metadata().catch(() => undefined);
  return held.metadata;
}

/** The tile a request names, out of an archive; the stored bytes when the client takes them as they are. */
async function readTile(archive: PmtilesArchive, tile: TileRequest, gzipOk: boolean, modified: Date): Promise<FoundTile | 'absent'> {
  const compression = archive.header.tileCompression;
  const asStored = compression === Compression.None || (compression === Compression.Gzip && gzipOk);
  const bytes = asStored ? await archive.storedTile(tile.z, tile.x, tile.y) : await archive.tile(tile.z, tile.x, tile.y);
  if (!bytes) return 'absent';
  return { bytes, gzip: asStored && compression === Compression.Gzip, ext: tile.ext, modified };
}

/**
 * The tiles of archives under a pyramid folder: the `assets` of its `tileset.json` (re-read when the file changes)
 * route the spec's tile paths of each plane and format to an archive inside the folder.
 */
export class FolderArchives {
  private routes: { identity: string; routes: TileRoutes } | undefined;

  constructor(private readonly root: string, private readonly shelf: ArchiveShelf) {}

  /**
   * The answer of the archive that holds the tile a path names (undefined: no archive routes it, the folder's files
   * may), and whether the folder's pyramid may hold that tile at all (its layout, zooms and planes, by its
   * `tileset.json`), so that a file absent there is an empty tile. A plane without an archive counts when within the
   * descriptor's bounds. The descriptor is looked at once per request, for tile-shaped paths only.
   */
  async tile(segments: string[], gzipOk: boolean): Promise<{ answer: TileAnswer; holds: boolean }> {
    if (tileFileName(segments[segments.length - 1] ?? '') === null) return { answer: undefined, holds: false };
    const routes = await this.currentRoutes();
    const tile = routes && pyramidTile(segments, routes);
    if (!routes || !tile) return { answer: undefined, holds: false };
    const asset = archiveFor(routes.archives, tile);
    if (!asset) return { answer: undefined, holds: true };
    const opened = await openInside(this.root, asset.segments);
    // A plane the descriptor lists has an archive: without it, its tiles are not known to be empty.
    if (!opened) return { answer: { missing: asset.segments.join('/') }, holds: true };
    const modified = opened.stats.mtime;
    const name = asset.segments.join('/');
    const found = await this.shelf.with(opened, async (archive, held): Promise<Exclude<TileAnswer, undefined>> => {
      const written = writtenAs(await metadataOf(archive, held));
      if (written !== undefined && written !== asset.segments[asset.segments.length - 1]) return { misplaced: name, written };
      return readTile(archive, tile, gzipOk, modified);
    }).catch((err: unknown) => unreadable(name, opened.file, err));
    return { answer: found, holds: true };
  }

  private async currentRoutes(): Promise<TileRoutes | undefined> {
    const opened = await openInside(this.root, ['tileset.json']);
    if (!opened) return undefined;
    try {
      const id = identity(opened.stats);
      if (this.routes?.identity !== id) {
        let descriptor: unknown;
        try {
          descriptor = JSON.parse((await opened.handle.readFile()).toString('utf8'));
        } catch {
          // A descriptor that is not JSON routes nothing; the file itself is still served as it is.
        }
        this.routes = { identity: id, routes: tileRoutes(descriptor) };
      }
      return this.routes.routes;
    } finally {
      await opened.handle.close();
    }
  }
}

/**
 * One archive served on its own (`serve slide.pmtiles`): its metadata is the descriptor (`/tileset.json`), the
 * archive itself is served under its name, and the spec's tile paths of its plane and format read from it. `file`
 * is the path as given: a symlink is followed at each request, so a link retargeted to a new build is served anew.
 */
export class FileArchive {
  readonly name: string;

  constructor(private readonly file: string, private readonly shelf: ArchiveShelf) {
    this.name = path.basename(file);
  }

  /**
   * Reads the archive once: undefined when it opens as PMTiles v3, else why not (the reader's message, which names
   * the part of a damaged archive), or null when it is no regular file.
   */
  async check(): Promise<string | null | undefined> {
    const opened = await openRegular(this.file, true);
    if (opened === null) return null;
    try {
      await this.shelf.with(opened, async () => true);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** Why the archive cannot be served alone (one plane of a folder build: serve the folder), or undefined. */
  async alone(): Promise<string | undefined> {
    const opened = await openRegular(this.file, true);
    if (!opened) return undefined;
    const metadata = await this.shelf.with(opened, (archive, held) => metadataOf(archive, held)).catch(() => undefined);
    return metadata !== null && typeof metadata === 'object' ? folderMemberProblem(metadata, this.file, 'serve', fs.existsSync(path.join(path.dirname(this.file), 'tileset.json'))) : undefined;
  }

  /** The archive file, opened (null when it is gone). */
  open(): Promise<Opened | null> {
    return openRegular(this.file, true);
  }

  /** The metadata as the descriptor's JSON bytes; absent when the archive is gone. */
  async descriptor(): Promise<Exclude<TileAnswer, undefined>> {
    const opened = await openRegular(this.file, true);
    if (!opened) return 'absent';
    const modified = opened.stats.mtime;
    let got: unknown;
    try {
      got = await this.shelf.with(opened, (archive, held) => metadataOf(archive, held));
    } catch (err) {
      return unreadable(this.name, this.file, err);
    }
    if (got === undefined) return { unreadable: this.name, why: 'its metadata does not decompress, or is not JSON' };
    return { bytes: Buffer.from(JSON.stringify(got)), gzip: false, ext: 'json', modified };
  }

  async tile(segments: string[], gzipOk: boolean): Promise<TileAnswer> {
    const opened = await openRegular(this.file, true);
    if (!opened) return undefined;
    const modified = opened.stats.mtime;
    const found = await this.shelf.with(opened, async (archive, held) => {
      // Per tile request, once per archive: its routes and plane do not change while it is held.
      held.routes ??= metadataOf(archive, held).then((m) => ({ routes: tileRoutes(m), plane: descriptorPlane(m) }));
      const { routes, plane } = await held.routes;
      const tile = pyramidTile(segments, routes);
      const format: TileFormat = archive.header.tileType === TileType.Mvt ? 'pbf' : 'json';
      // Only the tiles of its plane, format and zooms are the archive's: anything else is not found, not empty.
      if (!tile || tile.ext !== format || !samePlane(plane, tile.plane)) return undefined;
      return readTile(archive, tile, gzipOk, modified);
    }).catch((err: unknown) => unreadable(this.name, this.file, err));
    return found !== undefined && found !== 'absent' && !('unreadable' in found) ? { ...found, archive: validators(opened.stats).etag } : found;
  }
}
