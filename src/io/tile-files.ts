// Tile files written straight under a pyramid directory, from whichever thread encoded them: no temporary name and rename.
import fs from 'node:fs';
import path from 'node:path';

/** Why a tile could not be written, as plain data: it crosses from a worker thread to the one that reports it. */
export interface TileWriteFailure { path: string; code?: string; message: string }

/**
 * Writes tiles of one pyramid. A tile is written in place: a kill mid-write leaves a partial file, which is safe
 * because the unit that owns it has no marker yet, and `--resume` rewrites every tile of an unmarked unit (a unit's
 * tiles are the same files with the same bytes every time); the descriptor, written last, says when all are whole.
 */
export class TileFiles {
  private readonly dirs = new Set<string>();
  constructor(readonly root: string) {}

  /** Writes `bytes` at `relPath`; returns what went wrong instead of throwing. */
  write(relPath: string, bytes: Uint8Array): TileWriteFailure | undefined {
    const full = path.join(this.root, relPath);
    try {
      const dir = path.dirname(full);
      if (!this.dirs.has(dir)) {
        fs.mkdirSync(dir, { recursive: true });
        this.dirs.add(dir);
      }
      fs.writeFileSync(full, bytes);
      return undefined;
    } catch (err) {
      const e = err as { code?: string; message?: string };
      return { path: full, code: e.code, message: e.message ?? String(err) };
    }
  }
}
