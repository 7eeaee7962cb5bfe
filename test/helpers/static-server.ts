// A plain static file server with HTTP Range, as any web host or object store is: what the viewer needs when no
// mudm-tiles runs. Also copies the viewer's files (page, modules, vendored libraries) into a folder to host.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { defaultViewerDir, vendorFiles } from '../../src/serve.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
};

export interface StaticServer { url: string; close(): Promise<void> }

/**
 * Serves `root` on 127.0.0.1: GET and HEAD, one byte range per request (206, 416), everything else whole. With
 * `weakEtags`, each file has a weak ETag of its size and time (as Express's serve-static, sirv and vite send); with
 * `'per-range'`, each range one of its body (a hash, as a framework's `send` gives). With `ranges: false`, a Range
 * header is passed over and the whole file sent (Python's http.server). `wholeFor(rel, req)`, asked of every request,
 * says when to send the whole file all the same (as a host answers an If-Range that no longer holds).
 */
export async function startStaticServer(
  root: string,
  { weakEtags = false as boolean | 'per-range', ranges = true, wholeFor = undefined as ((rel: string, req: http.IncomingMessage) => boolean) | undefined } = {},
): Promise<StaticServer> {
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? '/', 'http://host').pathname);
    const file = path.join(root, rel.endsWith('/') ? `${rel}index.html` : rel);
    let size: number, etag: string;
    try {
      if (!file.startsWith(root + path.sep)) throw new Error('outside');
      const st = fs.statSync(file);
      if (!st.isFile()) throw new Error('not a file');
      size = st.size;
      etag = `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
    } catch {
      res.writeHead(404).end();
      return;
    }
    const headers = { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'Accept-Ranges': 'bytes', ...(weakEtags ? { ETag: etag } : {}) };
    const whole = wholeFor?.(rel, req) === true;
    const m = ranges && !whole ? /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '') : null;
    if (!m || (m[1] === '' && m[2] === '')) {
      res.writeHead(200, { ...headers, 'Content-Length': size });
      if (req.method === 'HEAD') res.end();
      else fs.createReadStream(file).pipe(res);
      return;
    }
    const start = m[1] === '' ? Math.max(0, size - Number(m[2])) : Number(m[1]);
    const end = m[1] === '' || m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (start >= size || end < start) {
      res.writeHead(416, { 'Content-Range': `bytes */${size}` }).end();
      return;
    }
    if (weakEtags === 'per-range') {
      // An ETag of each body, as a framework's `send` gives: another for every range of one file.
      const body = Buffer.alloc(end - start + 1);
      const fd = fs.openSync(file, 'r');
      fs.readSync(fd, body, 0, body.length, start);
      fs.closeSync(fd);
      const sum = body.reduce((h, b) => (h * 31 + b) >>> 0, body.length);
      res.writeHead(206, { ...headers, ETag: `W/"${sum.toString(16)}"`, 'Content-Length': body.length, 'Content-Range': `bytes ${start}-${end}/${size}` }).end(body);
      return;
    }
    res.writeHead(206, { ...headers, 'Content-Length': end - start + 1, 'Content-Range': `bytes ${start}-${end}/${size}` });
    fs.createReadStream(file, { start, end }).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** Copies the viewer as a static site needs it: `index.html`, `viewer/…` and `vendor/…`, as `serve` answers them. */
export function copyViewer(site: string): void {
  const viewer = defaultViewerDir();
  fs.cpSync(viewer, path.join(site, 'viewer'), { recursive: true });
  fs.copyFileSync(path.join(viewer, 'index.html'), path.join(site, 'index.html'));
  fs.mkdirSync(path.join(site, 'vendor'), { recursive: true });
  for (const [name, file] of vendorFiles()) fs.copyFileSync(file, path.join(site, 'vendor', name));
}
