// Read access to a built pyramid: a directory on disk or files in memory (a MemorySink's map), behind one interface.
import fs from 'node:fs';
import path from 'node:path';
import type { Problem } from './verify-problems.js';
import { tileFileName, tilePathParts } from '../tiling/tile-names.js';

/** What inspect and verify need from a pyramid: files by relative path and directory listings. */
export interface PyramidReader {
  /** Where the pyramid is, for messages. */
  readonly name: string;
  /** Bytes of a file relative to the root (`/`-separated), or undefined when there is none. */
  read(relPath: string): Uint8Array | undefined;
  /** Names of the entries (files and directories) of a directory relative to the root ('' is the root), sorted; empty when absent. */
  list(relDir: string): string[];
  /** What is wrong with the container itself (an archive), found when it was opened; verify lists them. */
  readonly problems?: readonly Problem[];
  /** What a reader read that `serve` would not serve (an archive linked in from elsewhere): verify notes it. */
  readonly notes?: readonly string[];
  /** Whole without a build report: one archive file, which takes its name only once complete (`-o FILE.pmtiles`). */
  readonly wholeWithoutReport?: boolean;
  /** The archive files read (none for a directory): as listed (one archive: as given), size on disk, tile compression. */
  readonly archives?: readonly ArchiveFacts[];
}

export interface ArchiveFacts { path: string; bytes: number; tileCompression: 'none' | 'gzip' }

export function sortNames(names: string[]): string[] {
  // Numeric names (zooms, tile indexes) in numeric order, the rest after them by code point.
  return names.sort((a, b) => {
    const na = /^\d+$/.test(a), nb = /^\d+$/.test(b);
    if (na && nb) return Number(a) - Number(b);
    if (na !== nb) return na ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

/** The most bytes one file of a pyramid is read to (a tile: the archives' MAX_TILE; descriptors are far smaller). */
const MAX_FILE = 256 * 2 ** 20;

/**
 * Whether `file` lies inside `realRoot` (a real path) once its links are followed: what `serve` would serve. A link
 * out of the pyramid is not read, as serve does not serve it.
 */
export function resolvesInside(realRoot: string, file: string): boolean {
  try {
    const real = fs.realpathSync(file);
    return real === realRoot || real.startsWith(realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep);
  } catch {
    return false;
  }
}

/**
 * A pyramid directory. Reads are synchronous: many small files read fastest that way (stack.md). Only regular files
 * are read, up to MAX_FILE bytes: a FIFO would block for ever, a link to /dev/zero fill the memory. `confined`: only
 * files inside it once links are followed (what extract copies beside archives: a link to / would copy the host's).
 */
export function directoryReader(root: string, confined = false): PyramidReader {
  let realRoot: string | undefined;
  return {
    name: root,
    read(relPath) {
      let fd: number | undefined;
      try {
        const full = path.join(root, relPath);
        if (confined && !resolvesInside((realRoot ??= fs.realpathSync(root)), full)) return undefined;
        fd = fs.openSync(full, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
        const st = fs.fstatSync(fd);
        if (!st.isFile() || st.size > MAX_FILE) return undefined;
        const buf = Buffer.allocUnsafe(st.size);
        let done = 0;
        for (let n = -1; done < st.size && n !== 0; done += n) n = fs.readSync(fd, buf, done, st.size - done, done);
        return done === st.size ? buf : buf.subarray(0, done);
      } catch {
        return undefined;
      } finally {
        if (fd !== undefined) fs.closeSync(fd);
      }
    },
    list(relDir) {
      try {
        return sortNames(fs.readdirSync(path.join(root, relDir)));
      } catch {
        return [];
      }
    },
  };
}

/** The in-memory twin of `directoryReader`: files keyed by relative path, as `MemorySink.files` holds them. */
export function memoryReader(files: ReadonlyMap<string, Uint8Array | string>, name = 'memory'): PyramidReader {
  const encoder = new TextEncoder();
  return {
    name,
    read(relPath) {
      const v = files.get(relPath.replace(/^\.?\/+/, ''));
      return typeof v === 'string' ? encoder.encode(v) : v;
    },
    list(relDir) {
      const prefix = relDir === '' || relDir === '.' ? '' : `${relDir.replace(/\/+$/, '')}/`;
      const names = new Set<string>();
      for (const k of files.keys()) {
        if (!k.startsWith(prefix)) continue;
        const rest = k.slice(prefix.length);
        const slash = rest.indexOf('/');
        names.add(slash < 0 ? rest : rest.slice(0, slash));
      }
      names.delete('');
      return sortNames([...names]);
    },
  };
}

/** A reader for a directory path, or the reader itself. */
export function asReader(root: string | PyramidReader): PyramidReader {
  return typeof root === 'string' ? directoryReader(root) : root;
}

/**
 * The pyramid directory a tile file lies in and the tile's address there (`out/3/2/5.pbf` → `out`, `3/2/5.pbf`): the
 * nearest folder above it with a descriptor, under which the rest of the path is a tile path. Undefined for any other
 * path (`inspect out/3/2/5.pbf` read the tile as an archive and said it was no PMTiles archive).
 */
export function tileFileRoot(file: string): { root: string; address: string } | undefined {
  if (!tileFileName(path.basename(file))) return undefined;
  try {
    if (!fs.statSync(file).isFile()) return undefined;
  } catch {
    return undefined;
  }
  const segments = [path.basename(file)];
  // A tile path has at most six segments: zoom, three plane folders, column, file.
  for (let dir = path.dirname(file); segments.length < 6; dir = path.dirname(dir)) {
    segments.unshift(path.basename(dir));
    const root = path.dirname(dir);
    if (fs.existsSync(path.join(root, 'tileset.json')) && tilePathParts(segments.join('/')) !== null) return { root, address: segments.join('/') };
    if (root === dir || root === path.dirname(root)) return undefined;
  }
  return undefined;
}
