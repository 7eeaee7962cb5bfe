// Static HTTP server for a pyramid and its viewer page: tiles with the right content types, OpenLayers, no path traversal.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
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
}

export interface Server {
  url: string;
  port: number;
  /** Stops accepting connections, ends the open ones (keep-alive included) and resolves when the server is closed. */
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.pbf': 'application/x-protobuf',
  '.mvt': 'application/vnd.mapbox-vector-tile',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

export function contentType(file: string): string {
  return TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/** The viewer directory shipped with the package: `viewer/` beside `src/` (sources) and `dist/` (build). */
export function defaultViewerDir(): string {
  return fileURLToPath(new URL('../viewer/', import.meta.url));
}

/**
 * OpenLayers' single-file build (UMD, global `ol`) and its stylesheet, resolved the way Node resolves the package
 * from this module, so it is found wherever the package manager put `ol`. Undefined when it is not installed.
 */
export function vendorFiles(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const out: Record<string, string> = {};
  for (const [name, spec] of [['ol.js', 'ol/dist/ol.js'], ['ol.css', 'ol/ol.css']] as const) {
    try {
      out[name] = require.resolve(spec);
    } catch {
      // Reported when the file is asked for: the server still serves tiles without the viewer.
    }
  }
  return out;
}

/**
 * Maps a URL path to a file under `base`, or null when it would leave it. Decoding happens before the check, so
 * `%2e%2e/` and encoded separators are caught too; NUL bytes and backslashes are refused outright.
 */
export function safeJoin(base: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const parts = decoded.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.some((s) => s === '..')) return null;
  const full = path.resolve(base, ...parts);
  const rel = path.relative(base, full);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return full;
}

function send(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** A PBF tile path of the layout (`{zlvl}/[t/c/z/]{x}/{y}.pbf`): when absent it is an empty tile, not an error. */
const PBF_TILE = /^\/\d+(\/\d+){2,5}\.pbf$/;

function sendFile(req: http.IncomingMessage, res: http.ServerResponse, file: string | null | undefined, emptyTile = false): void {
  if (!file) {
    send(res, 403, 'forbidden\n');
    return;
  }
  fs.stat(file, (err, st) => {
    if (err || !st.isFile()) {
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
    res.writeHead(200, {
      'Content-Type': contentType(file),
      'Content-Length': st.size,
      // A pyramid may be rebuilt while it is served: always revalidate.
      'Cache-Control': 'no-cache',
      'Last-Modified': st.mtime.toUTCString(),
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const stream = fs.createReadStream(file);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  });
}

/** Starts the server on 127.0.0.1 (by default). Rejects with UsageError when the port is taken. */
export async function startServer(opts: ServeOptions): Promise<Server> {
  const root = path.resolve(opts.root);
  let st: fs.Stats;
  try {
    st = fs.statSync(root);
  } catch {
    throw new InputError(`${opts.root} does not exist`, opts.root);
  }
  if (!st.isDirectory()) throw new InputError(`${opts.root} is not a directory`, opts.root);
  const viewer = path.resolve(opts.viewerDir ?? defaultViewerDir());
  const vendor = vendorFiles();
  const host = opts.host ?? '127.0.0.1';

  const server = http.createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS', 'Access-Control-Allow-Headers': '*' });
      res.end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD, OPTIONS');
      send(res, 405, 'method not allowed\n');
      return;
    }
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    } catch {
      send(res, 400, 'bad request\n');
      return;
    }
    if (pathname === '/' || pathname === '/index.html') {
      sendFile(req, res, path.join(viewer, 'index.html'));
    } else if (pathname.startsWith('/viewer/')) {
      sendFile(req, res, safeJoin(viewer, pathname.slice('/viewer/'.length)));
    } else if (pathname.startsWith('/vendor/')) {
      const file = vendor[pathname.slice('/vendor/'.length)];
      if (file) sendFile(req, res, file);
      else send(res, 404, `not found: ${pathname} (is the ol package installed?)\n`);
    } else {
      sendFile(req, res, safeJoin(root, pathname), PBF_TILE.test(pathname));
    }
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
