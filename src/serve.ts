// Static HTTP server for a pyramid and its viewer page: tiles with the right content types, OpenLayers, nothing outside OUT.
import fs from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { pipeline } from 'node:stream';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { InputError, UsageError } from './report/errors.js';

export interface ServeOptions {
  /** The pyramid directory. */
  root: string;
  /** 0 picks a free port. */
  port?: number;
  host?: string;
  /** Where the viewer page lives (default: `viewer/` of this package). */
  viewerDir?: string;
  /** The one origin (or `*`) allowed to read responses from a page of another origin; none by default. */
  cors?: string;
}

export interface Server {
  url: string;
  port: number;
  /** Stops accepting connections, ends the open ones (keep-alive included) and resolves when the server is closed. */
  close(): Promise<void>;
}

// A Map, not an object literal: an extension from a request must never find an Object.prototype member.
const TYPES = new Map<string, string>([
  ['.json', 'application/json'],
  ['.pbf', 'application/x-protobuf'],
  ['.mvt', 'application/vnd.mapbox-vector-tile'],
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
  return fileURLToPath(new URL('../viewer/', import.meta.url));
}

/**
 * OpenLayers' single-file build (UMD, global `ol`) and its stylesheet, resolved the way Node resolves the package
 * from this module, so it is found wherever the package manager put `ol`. A name is absent when it is not installed.
 */
export function vendorFiles(): Map<string, string> {
  const require = createRequire(import.meta.url);
  const out = new Map<string, string>();
  for (const [name, spec] of [['ol.js', 'ol/dist/ol.js'], ['ol.css', 'ol/ol.css']] as const) {
    try {
      out.set(name, require.resolve(spec));
    } catch {
      // Reported when the file is asked for: the server still serves tiles without the viewer.
    }
  }
  return out;
}

/**
 * The `--cors` value as the exact `Access-Control-Allow-Origin` value: `*`, or an http(s) origin written as browsers
 * send it (lower-case scheme and host, a port only when not the default, no path). Throws UsageError otherwise.
 */
export function corsOrigin(value: string): string {
  if (value === '*') return value;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // Falls through to the message below.
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== value) {
    throw new UsageError(`--cors must be an origin such as https://viewer.example or http://localhost:3000 (no path, no trailing slash), or *; found '${value}'`);
  }
  return value;
}

/**
 * The decoded path segments of a request target, or undefined when it is not a path (`*`, absolute form) or cannot
 * be decoded (bad percent-encoding, NUL). Each segment is decoded on its own, so `%2f` stays inside its segment
 * (and is refused by `servable`) instead of becoming a separator.
 */
export function requestSegments(target: string): string[] | undefined {
  if (!target.startsWith('/')) return undefined;
  const end = target.search(/[?#]/);
  const segments: string[] = [];
  for (const raw of (end < 0 ? target : target.slice(0, end)).split('/')) {
    if (raw === '') continue;
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
 * sink's probe file), a temporary name of a write in progress (`NAME.tmp-…`), spill folders (`mudm-spill-…`, when
 * `--tmp-dir` is inside OUT), or a segment holding a separator.
 */
export function servable(segment: string): boolean {
  return segment !== '' && !segment.startsWith('.') && !segment.includes('.tmp-') && !segment.startsWith('mudm-spill-')
    && !/[/\\\0]/.test(segment);
}

interface Opened {
  /** The path opened, whose extension gives the content type. */
  file: string;
  handle: FileHandle;
  stats: fs.Stats;
}

/**
 * Opens a regular file; null when it is absent, unreadable or anything else. O_NONBLOCK keeps a FIFO planted in the
 * folder from blocking the open (a regular file ignores it); O_NOFOLLOW refuses a symlink put in place since.
 */
async function openRegular(file: string): Promise<Opened | null> {
  let handle: FileHandle;
  try {
    handle = await fsp.open(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
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
async function openInside(realBase: string, segments: string[]): Promise<Opened | null> {
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

/** True when a Host header names this machine by address or `localhost`, so no DNS name can be rebound onto us. */
function localHost(header: string | undefined): boolean {
  if (header === undefined) return true;
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::\d*)?$/i.exec(header);
  if (!m) return false;
  const name = (m[1] ?? m[2]).toLowerCase().replace(/\.$/, '');
  return net.isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost');
}

function send(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** A PBF tile path of the layout (`{zlvl}/[t/c/z/]{x}/{y}.pbf`): when absent it is an empty tile, not an error. */
const PBF_TILE = /^\d+(\/\d+){2,5}\.pbf$/;

async function sendFile(req: http.IncomingMessage, res: http.ServerResponse, opened: Opened | null, emptyTile = false): Promise<void> {
  if (!opened) {
    if (emptyTile) {
      // Empty tiles are not written. 204 tells a map client "no features" without the failed request a 404 is to
      // the browser (logged as an error, and retried by some clients).
      res.writeHead(204, { 'Content-Type': 'application/x-protobuf', 'Cache-Control': 'no-cache' });
      res.end();
      return;
    }
    send(res, 404, 'not found\n');
    return;
  }
  const { handle, stats } = opened;
  res.writeHead(200, {
    'Content-Type': contentType(opened.file),
    'Content-Length': stats.size,
    // A pyramid may be rebuilt while it is served: always revalidate.
    'Cache-Control': 'no-cache',
    'Last-Modified': stats.mtime.toUTCString(),
  });
  if (req.method === 'HEAD') {
    res.end();
    await handle.close();
    return;
  }
  // pipeline closes the file whether the client reads to the end or goes away.
  pipeline(handle.createReadStream(), res, (err) => {
    if (err) res.destroy();
  });
}

/**
 * Starts the server on 127.0.0.1 (by default). Rejects with UsageError when the port is taken or `cors` is not an
 * origin. It serves the viewer at `/` and `/viewer/`, OpenLayers at `/vendor/`, and below that the regular files whose
 * real path lies inside `root`, never a hidden or temporary one; everything else is 404, and no request stops it.
 */
export async function startServer(opts: ServeOptions): Promise<Server> {
  const cors = opts.cors === undefined ? undefined : corsOrigin(opts.cors);
  let root: string;
  try {
    root = fs.realpathSync(opts.root);
  } catch {
    throw new InputError(`${opts.root} does not exist`, opts.root);
  }
  if (!fs.statSync(root).isDirectory()) throw new InputError(`${opts.root} is not a directory`, opts.root);
  let viewer: string | undefined;
  try {
    viewer = fs.realpathSync(opts.viewerDir ?? defaultViewerDir());
  } catch {
    // No viewer: its paths answer 404, the tiles are still served.
  }
  const vendor = vendorFiles();
  const host = opts.host ?? '127.0.0.1';
  // Behind a loopback address only a page that names this machine may talk to us (see localHost).
  const checkHost = net.isIP(host) ? host.startsWith('127.') || host === '::1' : host === 'localhost';

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (cors) res.setHeader('Access-Control-Allow-Origin', cors);
    if (checkHost && !localHost(req.headers.host)) {
      send(res, 421, 'this server answers only to 127.0.0.1 and localhost\n');
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors ? { Allow: 'GET, HEAD, OPTIONS', 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Allow-Headers': '*' } : { Allow: 'GET, HEAD, OPTIONS' });
      res.end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD, OPTIONS');
      send(res, 405, 'method not allowed\n');
      return;
    }
    const segments = requestSegments(req.url ?? '');
    if (!segments) {
      send(res, 400, 'bad request: the target must be a path in percent-encoded UTF-8, without NUL\n');
      return;
    }
    const [first, ...rest] = segments;
    if (first === undefined || (first === 'index.html' && rest.length === 0)) {
      await sendFile(req, res, viewer ? await openInside(viewer, ['index.html']) : null);
    } else if (first === 'viewer') {
      await sendFile(req, res, viewer ? await openInside(viewer, rest) : null);
    } else if (first === 'vendor') {
      const file = rest.length === 1 ? vendor.get(rest[0]) : undefined;
      await sendFile(req, res, file ? await openRegular(file) : null);
    } else {
      await sendFile(req, res, await openInside(root, segments), PBF_TILE.test(segments.join('/')));
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      // A bug or an I/O error must cost one response, never the process.
      if (res.headersSent) res.destroy();
      else send(res, 500, 'internal error\n');
    });
  });
  server.keepAliveTimeout = 2000;

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (err.code === 'EADDRINUSE') reject(new UsageError(`port ${opts.port} on ${host} is in use; choose another with --port`));
      else if (err.code === 'EACCES') reject(new UsageError(`port ${opts.port} on ${host} needs privileges; choose one above 1023 with --port`));
      else reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      // From now on an error is a failed accept (EMFILE under a flood of connections): the server keeps listening,
      // and without a listener it would end the process.
      server.on('error', () => {});
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(opts.port ?? 0, host);
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}/`,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
