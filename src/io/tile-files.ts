// Tile files written straight under a pyramid directory, from whichever thread encoded them: no temporary name and rename.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Journal, makeJournaledDirectory } from './written.js';

/**
 * Writes a file, failing (ELOOP) where a symbolic link is: a build's tiles are never links, and one planted at a
 * tile's path (between a kill and --resume) would have the tile written wherever it points, outside OUT too.
 */
function writeNoFollow(full: string, bytes: Uint8Array): void {
  const fd = fs.openSync(full, NO_FOLLOW);
  try {
    for (let at = 0; at < bytes.byteLength;) at += fs.writeSync(fd, bytes, at);
  } finally {
    fs.closeSync(fd);
  }
}

const NO_FOLLOW = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW;

/** Why a tile could not be written, as plain data: it crosses from a worker thread to the one that reports it. */
export interface TileWriteFailure { path: string; code?: string; message: string }

/**
 * Writes tiles of one pyramid under a root whose zoom directories the sink opened (`TileSink.directTiles`). A tile is
 * written in place: a kill mid-write leaves a partial file, which is safe because the unit that owns it has no marker
 * yet, and `--resume` rewrites every tile of an unmarked unit (a unit's tiles are the same files with the same bytes
 * every time); the descriptor, written last, says when all are whole. A directory this makes goes into a journal of
 * its own (io/written.ts) before any tile goes into it, so --force can later remove what the build made.
 */
export class TileFiles {
  private readonly journal: Journal;
  /** The root as path.join spells it, with a separator after it. */
  private readonly prefix: string;

  /** `dirs`: the directories under `root` known to exist, shared by the writers of one thread from batch to batch. */
  constructor(readonly root: string, private readonly dirs = new Set<string>()) {
    this.journal = new Journal(root, randomBytes(4).toString('hex'));
    this.prefix = path.join(root, 'x').slice(0, -1);
  }

  /** Writes `bytes` at `relPath`; returns what went wrong instead of throwing. */
  write(relPath: string, bytes: Uint8Array): TileWriteFailure | undefined {
    // relPath is a tile path the build made (z/x/y.ext, planes before it): joined as it is, not normalised again.
    const full = this.prefix + relPath;
    try {
      const dir = relPath.slice(0, relPath.lastIndexOf('/'));
      if (!this.dirs.has(dir)) this.open(dir);
      try {
        writeNoFollow(full, bytes);
      } catch (err) {
        // A directory known from an earlier batch that is gone: made again (and journaled), then the tile written.
        if ((err as { code?: string }).code !== 'ENOENT') throw err;
        this.open(dir);
        writeNoFollow(full, bytes);
      }
      return undefined;
    } catch (err) {
      const e = err as { code?: string; message?: string };
      return { path: full, code: e.code, message: e.message ?? String(err) };
    }
  }

  /** Makes `dir` (relative), recording each directory it makes before making it. */
  private open(dir: string): void {
    makeJournaledDirectory(this.root, dir, this.journal);
    this.dirs.add(dir);
  }

  close(): void {
    this.journal.close();
  }
}
