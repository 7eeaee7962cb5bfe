// Property: whatever path is asked (encodings, double encodings, `..`, backslashes, prototype names, symlinks planted in
// OUT), with whatever byte range and coding, `serve` answers only with bytes of a servable file inside OUT or of the
// viewer (whole or a range of it), or a tile of an archive inside OUT, and keeps answering.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultViewerDir, servable, startServer, vendorFiles, type Server } from '../../src/serve.js';
import { rawRequest } from '../helpers/http.js';
import { leaked, makeServeFixture, type ServeFixture } from './serve-fixture.js';

let fx: ServeFixture;
let server: Server;
/**
 * Digests of every body a response may carry: servable files of OUT (symlinks not followed), the viewer, the vendored
 * libraries, the tiles of the archives inside OUT; and those files by size, whose ranges a 206 may carry.
 */
const allowed = new Set<string>();
const filesBySize = new Map<number, Buffer[]>();
const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const allow = (b: Buffer) => {
  allowed.add(digest(b));
  filesBySize.set(b.length, [...(filesBySize.get(b.length) ?? []), b]);
};

function addFiles(dir: string, keep: (name: string) => boolean): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!keep(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) addFiles(p, keep);
    else if (e.isFile()) allow(fs.readFileSync(p));
  }
}

/** Whether a 206 body is the range its Content-Range names of a file a response may carry whole. */
function allowedRange(body: Buffer, contentRange: string | undefined): boolean {
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(contentRange ?? '');
  if (!m) return false;
  const [start, end, size] = m.slice(1).map(Number);
  return end - start + 1 === body.length && (filesBySize.get(size) ?? []).some((f) => f.subarray(start, end + 1).equals(body));
}

beforeAll(async () => {
  fx = makeServeFixture();
  server = await startServer({ root: fx.out, port: 0 });
  addFiles(fx.out, servable);
  addFiles(defaultViewerDir(), () => true);
  for (const file of vendorFiles().values()) allow(fs.readFileSync(file));
  for (const tile of fx.archiveTiles) allowed.add(digest(tile));
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(fx.dir, { recursive: true, force: true });
});

/** Every byte as %XX, dots and slashes included. */
const percentAll = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

/** Names that lead somewhere in the fixture: symlinks out, the work state, the viewer's routes, archives and their tiles. */
const ENTRIES = [
  'planted', 'rootlink', 'outdir', 'up', 'work', 'passwd', '.mudm-work', '0', '1', 'vendor', 'viewer', '..', '.',
  'tiles-c0.pbf.pmtiles', 'tiles-c1.pbf.pmtiles', '.hidden.pmtiles', 'tiles-c5.pbf.pmtiles.part', 'broken.pmtiles',
];
const WORDS = [
  ...ENTRIES, '...', 'etc', 'secret', 'secret.txt', 'out', 'spill', 'unit-0', 'state.json', '.MUDM-WORK', '1', '0.pbf',
  '1.pbf', '0.json', '1.json', '2', '3', '4', '5', '6', 'outside.pmtiles', 'state.pmtiles', '0.pbf.tmp-0badc0de-3', 'tileset.json', 'alias.json', 'index.html', 'ol.js', 'constructor', '__proto__',
  'toString', 'prototype', 'hasOwnProperty', 'valueOf', '%', '%zz', '%00', '%c0%ae%c0%ae', '%e0%80%ae', '\\..',
  '..\\..', 'a\\b', '~', '*', ';',
];

/** How a segment is written: as is (only spaces and non-ASCII encoded), as a URI component, every byte encoded, or that twice. */
const spelled = (word: fc.Arbitrary<string>) =>
  fc.tuple(word, fc.constantFrom('raw', 'raw', 'uri', 'all', 'twice')).map(([s, how]) =>
    how === 'raw' ? s.replace(/[^\x21-\x7e]/g, percentAll) : how === 'uri' ? encodeURIComponent(s) : how === 'all' ? percentAll(s) : percentAll(percentAll(s)));

const segment = spelled(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...WORDS) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }));

const separator = fc.constantFrom('/', '/', '/', '//', '/./', '%2f', '%2F', '%5c', '\\', '%252f');

const target = fc
  .tuple(spelled(fc.constantFrom(...ENTRIES)), fc.array(fc.tuple(separator, segment), { maxLength: 4 }), fc.constantFrom('', '', '?x=1', '#f', '/'))
  .map(([first, rest, tail]) => `/${first}${rest.map(([sep, s]) => sep + s).join('')}${tail}`);

/** Tile paths of the archives' pattern `{zlvl}/{c}/{x}/{y}.ext` for every plane OUT lists: mostly plain, sometimes spelled or separated oddly. */
const mostly = (plain: fc.Arbitrary<string>, odd: fc.Arbitrary<string>) => fc.oneof({ weight: 5, arbitrary: plain }, { weight: 1, arbitrary: odd });
const tilePart = (values: string[]) => mostly(fc.constantFrom(...values), spelled(fc.constantFrom(...values, '00', '..')));
const tileTarget = fc
  .tuple(tilePart(['0', '1']), tilePart(['0', '1', '2', '3', '4', '5', '6']), tilePart(['0', '1']), tilePart(['0.pbf', '1.pbf', '0.json', '1.json', '0.pbf.tmp-1']), fc.array(mostly(fc.constant('/'), separator), { minLength: 3, maxLength: 3 }))
  .map(([z, c, x, y, [s1, s2, s3]]) => `/${z}${s1}${c}${s2}${x}${s3}${y}`);

/** A symlink planted somewhere in OUT for one request, pointing out, at the work state, at itself or inside. */
const plant = fc.record({
  where: fc.constantFrom('', '0', '0/0', '.mudm-work'),
  to: fc.constantFrom('/', '/etc', '/etc/passwd', '..', '../..', '../../..', '../secret', '../secret.txt', '../secret/outside.pmtiles', '.mudm-work', '.mudm-work/state.json', 'tileset.json', 'tiles-c0.pbf.pmtiles', 'planted', 'absent'),
});

/** Request headers: none, byte ranges (inside, past the end, several, malformed), gzip taken or not. */
const headers = fc.record({
  range: fc.constantFrom(undefined, undefined, 'bytes=0-10', 'bytes=-5', 'bytes=5-', 'bytes=0-0,10-20', 'bytes=999999-', 'bytes=x', 'items=0-1'),
  gzip: fc.boolean(),
}).map(({ range, gzip }) => ({ ...(range ? { Range: range } : {}), ...(gzip ? { 'Accept-Encoding': 'gzip' } : {}) }));

describe('serve never returns a byte from outside OUT', () => {
  it('the markers are in the files, so a leak would show', async () => {
    const outside = await startServer({ root: fx.secretDir, port: 0 });
    try {
      expect(leaked((await rawRequest(outside.port, '/secret.txt')).body, fx)).toHaveLength(1);
    } finally {
      await outside.close();
    }
  });

  it('for generated paths and planted symlinks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(target, tileTarget), plant, headers, fc.constantFrom('GET', 'GET', 'HEAD'), async (t, p, h, method) => {
        const link = path.join(fx.out, p.where, 'planted');
        const to = p.to.startsWith('/') ? p.to : p.to === 'planted' ? 'planted' : path.relative(path.dirname(link), path.join(fx.out, p.to)) || '.';
        fs.symlinkSync(to, link);
        try {
          const r = await rawRequest(server.port, t, { method, headers: h });
          const gzip = r.headers.get('content-encoding') === 'gzip' && method === 'GET';
          expect(leaked(r.body, fx, gzip)).toEqual([]);
          expect([200, 204, 206, 400, 403, 404, 416, 431, 500]).toContain(r.status);
          if (r.status === 200 && method === 'GET') expect(allowed.has(digest(gzip ? gunzipSync(r.body) : r.body)), `${t} answered a file not allowed`).toBe(true);
          if (r.status === 206) expect(allowedRange(r.body, r.headers.get('content-range')), `${t} ${h.Range}: a range not allowed`).toBe(true);
          // The one listed file that is no archive, named as OUT names it.
          if (r.status === 500 && method === 'GET') expect(r.body.toString()).toBe('broken.pmtiles: not a PMTiles archive: 14 bytes, shorter than the 127-byte header\n');
        } finally {
          fs.unlinkSync(link);
        }
      }),
      { numRuns: 500 },
    );
    const after = await rawRequest(server.port, '/tileset.json');
    expect(after.status).toBe(200);
    expect(after.body.equals(fs.readFileSync(path.join(fx.out, 'tileset.json')))).toBe(true);
  });
});
