// The static server: content types, CORS, empty tiles, refused traversal, the viewer assets, and the CLI command's lifecycle.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeJoin, startServer, type Server } from '../../src/serve.js';
import { UsageError } from '../../src/report/errors.js';
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

/** A raw request, so that `..` and odd bytes reach the server as written (fetch would normalise them). */
function rawGet(port: number, target: string, method = 'GET'): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
    let data = '';
    sock.on('data', (d) => { data += d.toString('latin1'); });
    sock.on('end', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body: rest.join('\r\n\r\n') });
    });
    sock.on('error', reject);
  });
}

describe('startServer', () => {
  it('serves tiles, descriptors and images with their content types and CORS', async () => {
    const cases: [string, string][] = [
      ['tileset.json', 'application/json'], ['0/0/0.pbf', 'application/x-protobuf'], ['2/0/0.json', 'application/json'],
      ['preview.png', 'image/png'], ['', 'text/html; charset=utf-8'], ['viewer/viewer.js', 'text/javascript; charset=utf-8'],
      ['vendor/ol.js', 'text/javascript; charset=utf-8'], ['vendor/ol.css', 'text/css; charset=utf-8'],
    ];
    for (const [p, type] of cases) {
      const r = await fetch(`${server.url}${p}`);
      expect(r.status, p).toBe(200);
      expect(r.headers.get('content-type'), p).toBe(type);
      expect(r.headers.get('access-control-allow-origin'), p).toBe('*');
    }
    const tile = new Uint8Array(await (await fetch(`${server.url}0/0/0.pbf`)).arrayBuffer());
    expect(Buffer.from(tile).equals(fs.readFileSync(path.join(out, '0/0/0.pbf')))).toBe(true);
    expect(await (await fetch(server.url)).text()).toMatch(/vendor\/ol\.js/);
  });

  it('answers a missing PBF tile with 204 (empty), other missing files with 404', async () => {
    const empty = await fetch(`${server.url}2/3/3.pbf`);
    expect(empty.status).toBe(204);
    expect((await empty.arrayBuffer()).byteLength).toBe(0);
    expect((await fetch(`${server.url}2/3/3.json`)).status).toBe(404);
    expect((await fetch(`${server.url}nothing.txt`)).status).toBe(404);
    expect((await fetch(`${server.url}2`)).status).toBe(404);
  });

  it('refuses paths that leave the pyramid, however they are spelled', async () => {
    for (const target of ['/../secret.txt', '/..%2fsecret.txt', '/%2e%2e/secret.txt', '/%2e%2e%2fsecret.txt', '/viewer/..%2f..%2fout/tileset.json', '/2/..%5c..%5csecret.txt', '/%00']) {
      const r = await rawGet(server.port, target);
      expect([400, 403, 404], target).toContain(r.status);
      expect(r.body, target).not.toMatch(/outside the pyramid/);
    }
  });

  it('answers HEAD and OPTIONS, and refuses other methods', async () => {
    const head = await rawGet(server.port, '/tileset.json', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.head).toMatch(/Content-Length: \d+/i);
    expect((await rawGet(server.port, '/tileset.json', 'OPTIONS')).status).toBe(204);
    expect((await rawGet(server.port, '/tileset.json', 'POST')).status).toBe(405);
  });

  it('reports a taken port as a usage error and a missing directory as unreadable input', async () => {
    await expect(startServer({ root: out, port: server.port })).rejects.toBeInstanceOf(UsageError);
    await expect(startServer({ root: path.join(dir, 'absent'), port: 0 })).rejects.toThrow(/does not exist/);
  });

  it('keeps safeJoin inside its base', () => {
    expect(safeJoin('/srv/p', '/a/b.pbf')).toBe(path.resolve('/srv/p/a/b.pbf'));
    expect(safeJoin('/srv/p', '/../x')).toBeNull();
    expect(safeJoin('/srv/p', '/a/%2e%2e/%2e%2e/x')).toBeNull();
    expect(safeJoin('/srv/p', '/%E0%A4%A')).toBeNull();
  });
});

describe('mudm-tiles serve', () => {
  it('prints its URL, serves, and stops cleanly with exit 0 on SIGINT', async () => {
    // A port free a moment ago: ask the OS for one, then hand it to the command.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const child = spawn(process.execPath, [BIN, 'serve', out, '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += String(d); });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        stdout += String(d);
        const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`serve exited early with ${code}: ${stderr}`)));
    });
    expect(url).toBe(`http://127.0.0.1:${port}/`);
    expect((await fetch(`${url}tileset.json`)).status).toBe(200);
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c));
      child.kill('SIGINT');
    });
    expect(code).toBe(0);
    await expect(fetch(`${url}tileset.json`)).rejects.toThrow();
  });
});
