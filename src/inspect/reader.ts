// Read access to a built pyramid: a directory on disk or files in memory (a MemorySink's map), behind one interface.
import fs from 'node:fs';
import path from 'node:path';
import type { Problem } from './verify-problems.js';

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

/** A pyramid directory. Reads are synchronous: many small files read fastest that way (stack.md). */
export function directoryReader(root: string): PyramidReader {
  return {
    name: root,
    read(relPath) {
      try {
        return fs.readFileSync(path.join(root, relPath));
      } catch {
        return undefined;
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
