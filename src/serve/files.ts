// What `serve` may open: request paths as segments, the names never served, files kept inside a folder, the viewer's files.
import fs from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// A Map, not an object literal: an extension from a request must never find an Object.prototype member.
const TYPES = new Map<string, string>([
  ['.json', 'application/json'],
  ['.pbf', 'application/x-protobuf'],
  ['.mvt', 'application/vnd.mapbox-vector-tile'],
  ['.pmtiles', 'application/vnd.pmtiles'],
  ['.png', 'image/png'],
  ['.jpg', 'image/jpeg'],
  ['.jpeg', 'image/jpeg'],
  ['.tif', 'image/tiff'],
  ['.tiff', 'image/tiff'],
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.mjs', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.map', 'application/json'],
  ['.svg', 'image/svg+xml'],
  ['.txt', 'text/plain; charset=utf-8'],
]);

export function contentType(file: string): string {
  return TYPES.get(path.extname(file).toLowerCase()) ?? 'application/octet-stream';
}

/** The viewer directory shipped with the package: `viewer/` beside `src/` (sources) and `dist/` (build). */
export function defaultViewerDir(): string {
  return fileURLToPath(new URL('../../viewer/', import.meta.url));
}

/**
 * The files the viewer page loads from `vendor/`, as package and path inside it: OpenLayers' single-file build
 * (UMD, global `ol`) and stylesheet, the `pmtiles` reader's single-file build (global `pmtiles`), and `ol-pmtiles`
 * as an ES module (its bundle carries an older OpenLayers of its own, which breaks beside ours; the page's import
 * map hands it the global `ol` instead).
 */
const VENDOR: readonly (readonly [name: string, pkg: string, file: string])[] = [
  ['ol.js', 'ol', 'dist/ol.js'],
  ['ol.css', 'ol', 'ol.css'],
  ['pmtiles.js', 'pmtiles', 'dist/pmtiles.js'],
  ['ol-pmtiles.js', 'ol-pmtiles', 'dist/esm/index.js'],
];

/**
 * The vendored files by name, resolved the way Node resolves the packages from this module (through their
 * `package.json`, which every `exports` map lets out), so they are found wherever the package manager put them.
 * A name is absent when its package is not installed.
 */
export function vendorFiles(): Map<string, string> {
  const require = createRequire(import.meta.url);
  const out = new Map<string, string>();
  for (const [name, pkg, file] of VENDOR) {
    try {
      const full = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
      if (fs.existsSync(full)) out.set(name, full);
    } catch {
      // Reported when the file is asked for: the server still serves tiles without the viewer.
    }
  }
  return out;
}

/** The scheme and authority of an absolute-form request target (`http://host:port`), the authority captured. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)/i;

/** The authority an absolute-form request target names (checked as the Host header is), or undefined in origin form. */
export function targetAuthority(target: string): string | undefined {
  return ABSOLUTE_FORM.exec(target)?.[1];
}

/**
 * The decoded path segments of a request target, its path (origin form) or the path of its URL (absolute form, which
 * a server must accept: RFC 9112, 3.2.2), or undefined when it is neither (`*`) or cannot be decoded (bad
 * percent-encoding, NUL). Each segment is decoded on its own, so `%2f` stays inside its segment (and is refused by
 * `servable`) instead of becoming a separator; empty segments are kept (and refused).
 */
export function requestSegments(given: string): string[] | undefined {
  const absolute = ABSOLUTE_FORM.exec(given);
  const target = absolute ? `/${given.slice(absolute[0].length).replace(/^\//, '')}` : given;
  if (!target.startsWith('/')) return undefined;
  const end = target.search(/[?#]/);
  const pathPart = end < 0 ? target : target.slice(0, end);
  const segments: string[] = [];
  // An empty segment (`//x`, `/x/`) is kept, and `servable` refuses it: one file has one path, not aliases.
  for (const raw of pathPart === '/' ? [] : pathPart.slice(1).split('/')) {
    let s: string;
    try {
      s = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (s.includes('\0')) return undefined;
    segments.push(s);
  }
  return segments;
}

/**
 * Whether a path segment may be served. Never: `.` and `..`, any hidden name (`.mudm-work/`, the work state, the
 * sink's probe file), a temporary name of a write in progress (`NAME.tmp-…`, an archive's probe `NAME.probe-…` and
 * its part `NAME.pmtiles.part`), spill folders (`mudm-spill-…`, when `--tmp-dir` is inside OUT), or a segment
 * holding a separator.
 */
export function servable(segment: string): boolean {
  return segment !== '' && !segment.startsWith('.') && !segment.includes('.tmp-') && !segment.includes('.probe-')
    && !segment.endsWith('.pmtiles.part') && !segment.startsWith('mudm-spill-') && !/[/\\\0]/.test(segment);
}

export interface Opened {
  /** The path opened, whose extension gives the content type. */
  file: string;
  handle: FileHandle;
  stats: fs.Stats;
}

/**
 * Opens a regular file; null when it is absent, unreadable or anything else. O_NONBLOCK keeps a FIFO planted in the
 * folder from blocking the open (a regular file ignores it); O_NOFOLLOW refuses a symlink put in place since, unless
 * `follow` (the one archive the user named, which may be a link retargeted from build to build).
 */
export async function openRegular(file: string, follow = false): Promise<Opened | null> {
  let handle: FileHandle;
  try {
    handle = await fsp.open(file, fs.constants.O_RDONLY | (follow ? 0 : fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    const stats = await handle.stat();
    if (stats.isFile()) return { file, handle, stats };
  } catch {
    // Not servable: closed below.
  }
  await handle.close();
  return null;
}

/**
 * Opens the file the segments name under `realBase` (a real path) when its own real path, symlinks resolved, is
 * inside `realBase` and every segment of it is servable: a symlink out of the folder, or to its work state, is
 * treated as absent.
 */
export async function openInside(realBase: string, segments: string[]): Promise<Opened | null> {
  if (segments.length === 0 || !segments.every(servable)) return null;
  let real: string;
  try {
    real = await fsp.realpath(path.join(realBase, ...segments));
  } catch {
    return null;
  }
  const rel = path.relative(realBase, real);
  if (rel === '' || path.isAbsolute(rel) || !rel.split(path.sep).every(servable)) return null;
  return openRegular(real);
}
