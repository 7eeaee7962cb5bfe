// Static HTTP server for a pyramid (a folder, or one PMTiles archive) and its viewer page: tiles, byte ranges, nothing outside OUT.
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { pipeline } from 'node:stream';
import { InputError, OutputError, UsageError } from './report/errors.js';
import { ArchiveShelf, FileArchive, FolderArchives, type TileAnswer } from './serve/archives.js';
import { contentType, defaultViewerDir, openInside, openRegular, requestSegments, targetAuthority, vendorFiles, type Opened } from './serve/files.js';
import { acceptsGzip, answerFor, contentValidators, dateIsStrong, validators, type ByteRange, type Validators } from './serve/ranges.js';

export { contentType, defaultViewerDir, requestSegments, servable, vendorFiles } from './serve/files.js';

export interface ServeOptions {
  /** The pyramid directory, or one PMTiles archive file. */
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

/** True when a Host header names this machine by address or `localhost`, so no DNS name can be rebound onto us. */
function localHost(header: string | undefined): boolean {
  if (header === undefined) return true;
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::\d*)?$/i.exec(header);
  if (!m) return false;
  const name = (m[1] ?? m[2]).toLowerCase().replace(/\.$/, '');
  return net.isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost');
}

function send(res: http.ServerResponse, status: number, text: string, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** A request header Node does not type (it joins repeated ones with commas). */
const headerOf = (req: http.IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/** An absent file: an empty tile when it is a PBF tile the pyramid may hold, else 404. */
function sendAbsent(res: http.ServerResponse, emptyTile: boolean): void {
  if (emptyTile) {
    // Empty tiles are not written. 204 tells a map client "no features" without the failed request a 404 is to
    // the browser (logged as an error, and retried by some clients).
    res.writeHead(204, { 'Content-Type': 'application/x-protobuf', 'Cache-Control': 'no-cache' });
    res.end();
    return;
  }
  send(res, 404, 'not found\n');
}

/**
 * Writes the status and headers of a GET or HEAD of a representation (`size` bytes, validators `v`, `headers` of its
 * content) and says what of it goes out: the whole, one range (files only), or nothing (a 304, 412 or 416, a HEAD).
 */
function startAnswer(req: http.IncomingMessage, res: http.ServerResponse, v: Validators, size: number, headers: http.OutgoingHttpHeaders, ranges: boolean): ByteRange | 'whole' | undefined {
  const now = Date.now();
  const common = {
    ...(ranges ? { 'Accept-Ranges': 'bytes' } : {}),
    // A pyramid may be rebuilt while it is served: always revalidate.
    'Cache-Control': 'no-cache',
    ...(dateIsStrong(v, now) ? { 'Last-Modified': v.lastModified } : {}),
    ETag: v.etag,
    ...(headers.Vary === undefined ? {} : { Vary: headers.Vary }),
    // A 304 updates the headers a browser cached: an unchanged tile of a rebuilt archive says the new archive too.
    ...(headers['X-Pyramid-Archive'] === undefined ? {} : { 'X-Pyramid-Archive': headers['X-Pyramid-Archive'] }),
  };
  const answer = answerFor(req.method ?? 'GET', {
    range: ranges ? headerOf(req, 'range') : undefined, ifRange: headerOf(req, 'if-range'), ifMatch: headerOf(req, 'if-match'), ifNoneMatch: headerOf(req, 'if-none-match'),
    ifModifiedSince: headerOf(req, 'if-modified-since'), ifUnmodifiedSince: headerOf(req, 'if-unmodified-since'),
  }, v, size, now);
  if (answer.status === 304) {
    res.writeHead(304, common);
    res.end();
    return undefined;
  }
  if (answer.status === 412) {
    send(res, 412, 'precondition failed\n', common);
    return undefined;
  }
  if (answer.status === 416) {
    send(res, 416, 'range not satisfiable\n', { ...common, 'Content-Range': `bytes */${size}` });
    return undefined;
  }
  if (answer.status === 206) {
    const { start, end } = answer.range;
    res.writeHead(206, { ...common, ...headers, 'Content-Length': end - start + 1, 'Content-Range': `bytes ${start}-${end}/${size}` });
  } else {
    res.writeHead(200, { ...common, ...headers, 'Content-Length': size });
  }
  if (req.method === 'HEAD') {
    res.end();
    return undefined;
  }
  return answer.status === 206 ? answer.range : 'whole';
}

/**
 * A file, whole or the byte range a GET asks for, with the validators a range reader checks between requests
 * (`ETag`; `If-Range` is honoured) and a revalidating client's preconditions (`If-None-Match`: 304).
 */
async function sendFile(req: http.IncomingMessage, res: http.ServerResponse, opened: Opened | null): Promise<void> {
  if (!opened) {
    sendAbsent(res, false);
    return;
  }
  const { handle, stats } = opened;
  const out = startAnswer(req, res, validators(stats), stats.size, { 'Content-Type': contentType(opened.file) }, true);
  if (out === undefined) {
    await handle.close();
    return;
  }
  // pipeline closes the file whether the client reads to the end or goes away.
  pipeline(handle.createReadStream(out === 'whole' ? {} : out), res, (err) => {
    if (err) res.destroy();
  });
}

/** What an archive answers (a tile, gzip-encoded as stored when the client takes gzip; its metadata), absent, or an unreadable archive. */
function sendTile(req: http.IncomingMessage, res: http.ServerResponse, answer: Exclude<TileAnswer, undefined>, emptyTile: boolean): void {
  if (answer === 'absent') {
    sendAbsent(res, emptyTile);
  } else if ('unreadable' in answer) {
    send(res, 500, `${answer.unreadable}: ${answer.why}\n`);
  } else if ('missing' in answer) {
    send(res, 404, `${answer.missing}, listed in tileset.json, is not in the served folder\n`);
  } else if ('misplaced' in answer) {
    send(res, 500, `${answer.misplaced} holds the tiles of ${answer.written}, the name it was written under (archives renamed or swapped): mudm-tiles verify names them\n`);
  } else {
    const { bytes } = answer;
    const out = startAnswer(req, res, contentValidators(bytes, answer.modified), bytes.length, {
      'Content-Type': contentType(`tile.${answer.ext}`),
      // The same URL is gzip or not by the request's Accept-Encoding.
      Vary: 'Accept-Encoding',
      ...(answer.gzip ? { 'Content-Encoding': 'gzip' } : {}),
      ...(answer.archive ? { 'X-Pyramid-Archive': answer.archive } : {}),
    // Tiles are small and may be gzip-encoded on the way: no ranges of them, so what goes out is the whole.
    }, false);
    if (out !== undefined) res.end(bytes);
  }
}

/**
 * Starts the server on 127.0.0.1 (by default). Rejects with OutputError when the port is taken or needs privileges,
 * UsageError when `cors` is not an origin, InputError when `root` is neither a folder nor a PMTiles archive. It serves the viewer at `/` and
 * `/viewer/`, OpenLayers and the PMTiles readers at `/vendor/`, and below that, for a folder, the regular files whose
 * real path lies inside it (never a hidden or temporary one) and the tiles of the archives its `tileset.json` lists;
 * for an archive, the archive under its own name, its metadata as `/tileset.json` and its tiles. Files are served
 * with byte ranges. Everything else is 404, and no request stops it.
 */
export async function startServer(opts: ServeOptions): Promise<Server> {
  const cors = opts.cors === undefined ? undefined : corsOrigin(opts.cors);
  let root: string;
  try {
    root = fs.realpathSync(opts.root);
  } catch {
    throw new InputError(`${opts.root} does not exist`, opts.root);
  }
  const shelf = new ArchiveShelf();
  let folder: FolderArchives | undefined;
  let single: FileArchive | undefined;
  if (fs.statSync(root).isDirectory()) {
    folder = new FolderArchives(root, shelf);
  } else {
    // Served under the name given, read through it (a link to the current build stays one).
    single = new FileArchive(path.resolve(opts.root), shelf);
    // Refused, the archive read for the checks must not stay open (a library caller's process goes on).
    try {
      const why = await single.check();
      // A file that is no archive at all is named as such; a damaged archive by what the reader found wrong.
      if (why === null || why?.includes('not a PMTiles archive')) throw new InputError(`${opts.root} is neither a pyramid directory nor a PMTiles v3 archive`, opts.root);
      if (why !== undefined) throw new InputError(why, opts.root);
      const whyNot = await single.alone();
      if (whyNot) throw new UsageError(whyNot);
    } catch (err) {
      await shelf.close();
      throw err;
    }
  }
  /** The folder or archive as the command named it (a link's name, not its target's). */
  const servedName = path.basename(path.resolve(opts.root));
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
    if (cors) {
      res.setHeader('Access-Control-Allow-Origin', cors);
      // What a range reader of another origin checks: where a range lies, and whether the archive changed.
      res.setHeader('Access-Control-Expose-Headers', 'Content-Range, Accept-Ranges, ETag, X-Pyramid-Name, X-Pyramid-Archive');
    }
    // Two Host lines leave which host is meant to whoever reads them: RFC 9112 section 3.2 asks for 400.
    if ((req.headersDistinct.host?.length ?? 0) > 1) {
      send(res, 400, 'bad request: more than one Host header\n');
      return;
    }
    // An absolute-form target names the host the request is for too (RFC 9112 3.2.2): both must be this machine.
    const authority = targetAuthority(req.url ?? '');
    if (checkHost && (!localHost(req.headers.host) || (authority !== undefined && !localHost(authority)))) {
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
      await sendPyramid(req, res, segments);
    }
  }

  /**
   * The folder as it is now: a folder link (`serve current`) retargeted to another build is followed at once, as a
   * link to an archive is. Null when the link no longer names a folder.
   */
  async function currentFolder(): Promise<FolderArchives | null> {
    const now = await fs.promises.realpath(opts.root).catch(() => null);
    if (now === null || !(await fs.promises.stat(now).then((st) => st.isDirectory(), () => false))) return null;
    if (now !== root) {
      root = now;
      folder = new FolderArchives(root, shelf);
    }
    return folder as FolderArchives;
  }

  /** Below the viewer: the folder's files and archive tiles, or the one archive, its metadata and its tiles. */
  async function sendPyramid(req: http.IncomingMessage, res: http.ServerResponse, segments: string[]): Promise<void> {
    // The page's URL names no folder or file at the root: the viewer titles a pyramid without a name by this one.
    if (segments.length === 1 && segments[0] === 'tileset.json') res.setHeader('X-Pyramid-Name', encodeURIComponent(servedName));
    // An absent PBF tile the pyramid may hold is an empty tile; other absent paths, tile-shaped or not, are not found.
    const pbf = segments[segments.length - 1].endsWith('.pbf');
    const gzipOk = acceptsGzip(req.headers['accept-encoding']);
    if (folder) {
      const current = await currentFolder();
      if (current === null) {
        sendAbsent(res, false);
        return;
      }
      const { answer, holds } = await current.tile(segments, gzipOk);
      if (answer) {
        sendTile(req, res, answer, pbf);
        return;
      }
      const opened = await openInside(root, segments);
      if (opened) await sendFile(req, res, opened);
      else sendAbsent(res, pbf && holds);
      return;
    }
    const archive = single as FileArchive;
    if (segments.length === 1 && segments[0] === archive.name) {
      await sendFile(req, res, await archive.open());
    } else if (segments.length === 1 && segments[0] === 'tileset.json') {
      sendTile(req, res, await archive.descriptor(), false);
    } else {
      const answer = await archive.tile(segments, gzipOk);
      if (answer) sendTile(req, res, answer, pbf);
      else sendAbsent(res, false);
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
      void shelf.close();
      // The machine's state, not the command line: a port another process holds, or one this user may not open.
      const port = opts.port ?? 0;
      const other = `--port ${port > 1023 && port < 65535 ? port + 1 : 8080}`;
      if (err.code === 'EADDRINUSE') reject(new OutputError(`port ${port} on ${host} is in use (another process listens there): give another, such as ${other}, or --port 0 for any free one`));
      else if (err.code === 'EACCES') reject(new OutputError(`port ${port} on ${host} needs privileges this process lacks: give one above 1023, such as ${other}, or --port 0 for any free one`));
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
      }).then(() => shelf.close());
      return closing;
    },
  };
}
