// Fault injection against `serve` (issue 11, items 3-5): symlinks out of OUT, the work state, CORS, prototype names, odd requests.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../../src/cli/io.js';
import { OutputError, UsageError } from '../../src/report/errors.js';
import { startServer, type Server } from '../../src/serve.js';
import { rawRequest } from '../helpers/http.js';
import { leaked, makeServeFixture, type ServeFixture } from './serve-fixture.js';

let fx: ServeFixture;
let server: Server;
beforeAll(async () => {
  fx = makeServeFixture();
  server = await startServer({ root: fx.out, port: 0 });
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(fx.dir, { recursive: true, force: true });
});

const get = (target: string, opts: Parameters<typeof rawRequest>[2] = {}) => rawRequest(server.port, target, opts);

/** The server is alive and serving OUT. */
async function stillAnswers(s: Server = server): Promise<void> {
  const r = await rawRequest(s.port, '/tileset.json');
  expect(r.status).toBe(200);
  expect(r.body.toString()).toMatch(/"tilejson":"3\.0\.0"/);
}

describe('symlinks out of OUT', () => {
  it('answers 404 for a symlink to /etc/passwd, to / and to a folder outside, with nothing of the file', async () => {
    for (const target of ['/passwd', '/rootlink/etc/passwd', '/outdir/secret.txt', '/up/secret.txt', '/up/secret/secret.txt']) {
      const r = await get(target);
      expect(r.status, target).toBe(404);
      expect(leaked(r.body, fx), target).toEqual([]);
    }
    // HEAD must not give the size of a file outside either.
    const head = await get('/passwd', { method: 'HEAD' });
    expect(head.status).toBe(404);
    expect(head.headers.get('content-length')).not.toBe(String(fs.statSync('/etc/passwd').size));
  });

  it('treats a tile-shaped symlink out of OUT as an absent tile (204, empty)', async () => {
    // A tile of the layout (zoom, c, x, y) of a plane no archive is listed for: the folder's file, were it inside.
    const r = await get('/0/7/0/0.pbf');
    expect(r.status).toBe(204);
    expect(r.body.length).toBe(0);
  });

  it('serves a symlink whose real path stays inside OUT', async () => {
    const r = await get('/alias.json');
    expect(r.status).toBe(200);
    expect(r.body.equals(fs.readFileSync(path.join(fx.out, 'tileset.json')))).toBe(true);
    // Out through `..` and back in: the real path is what counts.
    expect((await get('/up/out/tileset.json')).status).toBe(200);
    expect((await get('/passwd')).status).toBe(404);
  });
});

describe('the work state and temporary files', () => {
  it('never serves .mudm-work, however it is reached', async () => {
    for (const target of ['/.mudm-work/state.json', '/%2emudm-work/state.json', '/.mudm-work/spill/unit-0', '/0/..%2f.mudm-work/state.json', '/work/state.json', '/.MUDM-WORK/state.json']) {
      const r = await get(target);
      expect(r.status, target).toBe(404);
      expect(leaked(r.body, fx), target).toEqual([]);
    }
  });

  it('never serves a file a build is still writing (its temporary name)', async () => {
    const r = await get('/1/0/0.pbf.tmp-0badc0de-3');
    expect(r.status).toBe(404);
    expect(leaked(r.body, fx)).toEqual([]);
  });
});

describe('archives listed in OUT/tileset.json', () => {
  it('answers tile paths of plane 0 from the archives inside OUT', async () => {
    const pbf = await get('/1/0/1/0.pbf');
    expect(pbf.status).toBe(200);
    expect(pbf.body.equals(fx.archiveTiles[1])).toBe(true);
    const json = await get('/0/0/0/0.json');
    expect(json.status).toBe(200);
    expect(json.body.equals(fx.archiveTiles[2])).toBe(true);
  });

  it('never reads a listed archive outside OUT, hidden, in the work state or a part: 404 naming it as listed, not an empty tile', async () => {
    const hrefs = ['tiles-c1.pbf.pmtiles', '../secret/outside.pmtiles', '.hidden.pmtiles', '.mudm-work/state.pmtiles', 'tiles-c5.pbf.pmtiles.part'];
    for (const [i, href] of hrefs.entries()) {
      for (const target of [`/0/${i + 1}/0/0.pbf`, `/1/${i + 1}/1/0.pbf`]) {
        const r = await get(target, { headers: { 'Accept-Encoding': 'gzip' } });
        expect(r.status, target).toBe(404);
        expect(r.body.toString(), target).toBe(`${href}, listed in tileset.json, is not in the served folder\n`);
        expect(leaked(r.body, fx), target).toEqual([]);
      }
    }
    for (const target of ['/tiles-c1.pbf.pmtiles', '/.hidden.pmtiles', '/.mudm-work/state.pmtiles', '/tiles-c5.pbf.pmtiles.part', '/%2e%2e/secret/outside.pmtiles']) {
      for (const range of [undefined, 'bytes=0-16383', 'bytes=-100']) {
        const r = await get(target, { headers: range ? { Range: range } : {} });
        expect(r.status, `${target} ${range}`).toBe(404);
        expect(leaked(r.body, fx), target).toEqual([]);
      }
    }
  });

  it('answers 500 naming a listed file that is no archive, as OUT names it, and keeps serving', async () => {
    const r = await get('/0/6/0/0.pbf');
    expect(r.status).toBe(500);
    expect(r.body.toString()).toBe('broken.pmtiles: not a PMTiles archive: 14 bytes, shorter than the 127-byte header\n');
    expect(r.body.toString()).not.toContain(fx.out);
    await stillAnswers();
  });
});

describe('CORS', () => {
  it('sends no CORS header by default, neither on GET nor on a preflight', async () => {
    const r = await get('/tileset.json', { headers: { Origin: 'https://evil.example' } });
    expect(r.status).toBe(200);
    expect(r.headers.has('access-control-allow-origin')).toBe(false);
    const pre = await get('/tileset.json', { method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'GET' } });
    expect([...pre.headers.keys()].filter((k) => k.startsWith('access-control-'))).toEqual([]);
  });

  it('with cors, allows that one origin on tiles, preflights and errors', async () => {
    const s = await startServer({ root: fx.out, port: 0, cors: 'https://viewer.example:8443' });
    try {
      const r = await rawRequest(s.port, '/0/0/0.pbf', { headers: { Origin: 'https://viewer.example:8443' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('access-control-allow-origin')).toBe('https://viewer.example:8443');
      const pre = await rawRequest(s.port, '/0/0/0.pbf', { method: 'OPTIONS', headers: { Origin: 'https://viewer.example:8443', 'Access-Control-Request-Method': 'GET' } });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://viewer.example:8443');
      expect(pre.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
      // Still never the work state, whoever asks.
      const work = await rawRequest(s.port, '/.mudm-work/state.json', { headers: { Origin: 'https://viewer.example:8443' } });
      expect(work.status).toBe(404);
      expect(leaked(work.body, fx)).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('accepts * and refuses what is not an origin, with the value in the message', async () => {
    const s = await startServer({ root: fx.out, port: 0, cors: '*' });
    try {
      expect((await rawRequest(s.port, '/tileset.json')).headers.get('access-control-allow-origin')).toBe('*');
    } finally {
      await s.close();
    }
    for (const bad of ['viewer.example', 'https://viewer.example/', 'https://viewer.example/maps', 'ftp://viewer.example', 'https://a.example,https://b.example', '']) {
      await expect(startServer({ root: fx.out, port: 0, cors: bad }), bad).rejects.toThrow(UsageError);
    }
    const io = memoryIO();
    expect(await main(['serve', fx.out, '--cors', 'https://viewer.example/maps', '--port', '0'], io)).toBe(2);
    expect(io.err()).toMatch(/--cors must be an origin .*found 'https:\/\/viewer\.example\/maps'/);
  });

  it('exits 4 on a port in use, naming it and another to give: the machine\'s state, no usage error', async () => {
    const taken = server.port;
    await expect(startServer({ root: fx.out, port: taken })).rejects.toThrow(OutputError);
    const io = memoryIO();
    expect(await main(['serve', fx.out, '--port', String(taken)], io)).toBe(4);
    const other = taken < 65535 ? taken + 1 : 8080;
    expect(io.err()).toBe(`error: port ${taken} on 127.0.0.1 is in use (another process listens there): give another, such as --port ${other}, or --port 0 for any free one\n`);
  });

  it('refuses a request naming another host (DNS rebinding): 421, nothing served', async () => {
    for (const host of ['evil.example', `evil.example:${server.port}`, '127.0.0.1.evil.example', 'localhost.evil.example:80', 'evil.example@127.0.0.1']) {
      const r = await get('/tileset.json', { headers: { Host: host } });
      expect([400, 421], host).toContain(r.status);
      expect(r.body.toString(), host).not.toMatch(/tilejson/);
    }
    expect((await get('/tileset.json', { headers: { Host: 'evil.example' } })).status).toBe(421);
    for (const host of [`localhost:${server.port}`, `LOCALHOST:${server.port}`, `[::1]:${server.port}`, '127.0.0.1', 'viewer.localhost']) {
      expect((await get('/tileset.json', { headers: { Host: host } })).status, host).toBe(200);
    }
  });

  it('refuses a request with two Host lines (400), even when both name this machine', async () => {
    // A second Host line after the first, written raw.
    for (const second of ['evil.example', '127.0.0.1']) {
      const r = await get('/tileset.json', { headers: { 'X-Before': `1\r\nHost: ${second}` } });
      expect([r.status, r.body.toString()], second).toEqual([400, 'bad request: more than one Host header\n']);
    }
  });
});

describe('no request ends the process', () => {
  it('answers 404 for prototype names under /vendor/, /viewer/ and OUT', async () => {
    const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'prototype'];
    for (const name of names) {
      for (const target of [`/vendor/${name}`, `/viewer/${name}`, `/${name}`, `/0/${name}`]) {
        const r = await get(target);
        expect(r.status, target).toBe(404);
      }
    }
    await stillAnswers();
  });

  it('survives malformed encodings, NUL bytes, long paths and every method', async () => {
    const targets = ['/%', '/%E0%A4%A', '/%zz', '/%00', '/a%00.json', '/tileset.json%00.png', '/%252e%252e/secret.txt', `/${'a'.repeat(5000)}`, `/${'a/'.repeat(3000)}x`, `/${'%2e%2e/'.repeat(500)}etc/passwd`, '//etc/passwd', '/\\..\\secret.txt', '*'];
    for (const target of targets) {
      for (const method of ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH', 'TRACE']) {
        const r = await get(target, { method });
        expect(r.status, `${method} ${target}`).toBeGreaterThanOrEqual(200);
        expect(leaked(r.body, fx), `${method} ${target}`).toEqual([]);
      }
    }
    // Bigger than Node's header limit: refused before the handler, the server lives on.
    expect((await get(`/${'b'.repeat(100_000)}`)).status).toBe(431);
    expect((await get('/%E0%A4%A')).status).toBe(400);
    expect((await get('/tileset.json', { method: 'POST' })).status).toBe(405);
    await stillAnswers();
  });
});
