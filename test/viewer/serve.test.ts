// The static server: content types, empty tiles, refused traversal, the viewer assets, and the CLI command's lifecycle.
// Hostile requests (symlinks, work state, CORS, prototype names) are in test/faults/serve.test.ts.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestSegments, servable, startServer, type Server } from '../../src/serve.js';
import { OutputError } from '../../src/report/errors.js';
import { rawRequest, spawnServe } from '../helpers/http.js';
import { tmpDir } from '../helpers/pyramid.js';
import { buildSquares } from '../inspect/fixture.js';

const BIN = fileURLToPath(new URL('../../bin/mudm-tiles.js', import.meta.url));

let dir: string;
let out: string;
let server: Server;
beforeAll(async () => {
  dir = tmpDir('mudm-serve');
  out = path.join(dir, 'out');
  await buildSquares({ out });
  fs.writeFileSync(path.join(out, 'preview.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'outside the pyramid');
  server = await startServer({ root: out, port: 0 });
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('startServer', () => {
  it('serves tiles, descriptors and images with their content types', async () => {
    const cases: [string, string][] = [
      ['tileset.json', 'application/json'], ['0/0/0.pbf', 'application/x-protobuf'], ['2/0/0.json', 'application/json'],
      ['preview.png', 'image/png'], ['', 'text/html; charset=utf-8'], ['viewer/viewer.js', 'text/javascript; charset=utf-8'],
      ['vendor/ol.js', 'text/javascript; charset=utf-8'], ['vendor/ol.css', 'text/css; charset=utf-8'],
    ];
    for (const [p, type] of cases) {
      const r = await fetch(`${server.url}${p}`);
      expect(r.status, p).toBe(200);
      expect(r.headers.get('content-type'), p).toBe(type);
    }
    const tile = new Uint8Array(await (await fetch(`${server.url}0/0/0.pbf`)).arrayBuffer());
    expect(Buffer.from(tile).equals(fs.readFileSync(path.join(out, '0/0/0.pbf')))).toBe(true);
    expect(await (await fetch(server.url)).text()).toMatch(/vendor\/ol\.js/);
    // The root's descriptor says which folder it is (the viewer's title when the pyramid has no name); nothing else does.
    expect((await fetch(`${server.url}tileset.json`)).headers.get('x-pyramid-name')).toBe('out');
    expect((await fetch(`${server.url}0/0/0.pbf`)).headers.has('x-pyramid-name')).toBe(false);
  });

  it('answers a missing PBF tile with 204 (empty), other missing files with 404', async () => {
    const empty = await fetch(`${server.url}2/3/3.pbf`);
    expect(empty.status).toBe(204);
    expect((await empty.arrayBuffer()).byteLength).toBe(0);
    expect((await fetch(`${server.url}2/3/3.json`)).status).toBe(404);
    expect((await fetch(`${server.url}nothing.txt`)).status).toBe(404);
    expect((await fetch(`${server.url}2`)).status).toBe(404);
  });

  it('answers 404 for a FIFO in the pyramid without waiting on it', async () => {
    const fifo = path.join(out, 'pipe.json');
    execFileSync('mkfifo', [fifo]);
    try {
      // More requests than libuv has threads: a blocking open would leave none for the next request.
      const answers = await Promise.all(Array.from({ length: 6 }, () => rawRequest(server.port, '/pipe.json')));
      expect(answers.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404]);
      expect((await fetch(`${server.url}tileset.json`)).status).toBe(200);
    } finally {
      fs.rmSync(fifo);
    }
  });

  it('refuses paths that leave the pyramid, however they are spelled', async () => {
    for (const target of ['/../secret.txt', '/..%2fsecret.txt', '/%2e%2e/secret.txt', '/%2e%2e%2fsecret.txt', '/viewer/..%2f..%2fout/tileset.json', '/2/..%5c..%5csecret.txt', '/%00']) {
      const r = await rawRequest(server.port, target);
      expect([400, 404], target).toContain(r.status);
      expect(r.body.toString(), target).not.toMatch(/outside the pyramid/);
    }
  });

  it('answers HEAD and OPTIONS, and refuses other methods', async () => {
    const head = await rawRequest(server.port, '/tileset.json', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers.get('content-length')).toBe(String(fs.statSync(path.join(out, 'tileset.json')).size));
    expect((await rawRequest(server.port, '/tileset.json', { method: 'OPTIONS' })).status).toBe(204);
    const post = await rawRequest(server.port, '/tileset.json', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('reports a taken port as an output problem (exit 4) and a missing directory as unreadable input', async () => {
    await expect(startServer({ root: out, port: server.port })).rejects.toBeInstanceOf(OutputError);
    await expect(startServer({ root: path.join(dir, 'absent'), port: 0 })).rejects.toThrow(/does not exist/);
  });

  it('answers one path per file: aliases with empty segments are not found', async () => {
    expect((await rawRequest(server.port, '/tileset.json')).status).toBe(200);
    for (const t of ['//tileset.json', '/tileset.json/', '/0//0/0.pbf', '/0/0/0.pbf/']) expect((await rawRequest(server.port, t)).status, t).toBe(404);
  });

  it('answers a request target in absolute form naming this machine, and refuses one naming another host', async () => {
    const local = await rawRequest(server.port, `http://127.0.0.1:${server.port}/tileset.json`);
    expect(local.status).toBe(200);
    expect(local.body.equals(fs.readFileSync(path.join(out, 'tileset.json')))).toBe(true);
    expect((await rawRequest(server.port, 'http://evil.example/tileset.json')).status).toBe(421);
  });

  it('decodes each path segment on its own and refuses hidden, temporary and parent names', () => {
    expect(requestSegments('/a/b%20c/d.pbf?x=1#f')).toEqual(['a', 'b c', 'd.pbf']);
    // Empty segments stay, to be refused: a file has one path.
    expect(requestSegments('/a//b/')).toEqual(['a', '', 'b', '']);
    expect(requestSegments('/?tileset=x')).toEqual([]);
    expect(requestSegments('/a/..%2f..%2fx')).toEqual(['a', '../../x']);
    expect(requestSegments('/%E0%A4%A')).toBeUndefined();
    expect(requestSegments('/a%00b')).toBeUndefined();
    expect(requestSegments('*')).toBeUndefined();
    // The absolute form (RFC 9112 3.2.2): its path; its host is checked as the Host header is (below).
    expect(requestSegments('http://127.0.0.1:8080/0/tileset.json?x')).toEqual(['0', 'tileset.json']);
    expect(requestSegments('HTTP://localhost?x')).toEqual([]);
    expect(requestSegments('http://localhost')).toEqual([]);
    for (const ok of ['0', 'tileset.json', 'preview', 'a..b']) expect(servable(ok), ok).toBe(true);
    for (const no of ['', '.', '..', '.mudm-work', '.probe-1a2b3c4d', '0.pbf.tmp-0badc0de-1', 'mudm-spill-0123456789', '../../x', 'a\\b']) expect(servable(no), no).toBe(false);
  });
});

describe('mudm-tiles serve', () => {
  it('prints its URL, serves with the --cors origin, and stops cleanly with exit 0 on SIGINT', async () => {
    // A port free a moment ago: ask the OS for one, then hand it to the command.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const { child, url } = await spawnServe(BIN, [out, '--port', String(port), '--cors', 'https://viewer.example']);
    expect(url).toBe(`http://127.0.0.1:${port}/`);
    const r = await fetch(`${url}tileset.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('https://viewer.example');
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c));
      child.kill('SIGINT');
    });
    expect(code).toBe(0);
    await expect(fetch(`${url}tileset.json`)).rejects.toThrow();
  });
});
