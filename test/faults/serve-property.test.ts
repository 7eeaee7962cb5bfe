// Property: whatever path is asked (encodings, double encodings, `..`, backslashes, prototype names, symlinks planted in
// OUT), `serve` answers only with bytes of a servable file inside OUT or of the viewer, and keeps answering.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultViewerDir, servable, startServer, vendorFiles, type Server } from '../../src/serve.js';
import { rawRequest } from '../helpers/http.js';
import { leaked, makeServeFixture, type ServeFixture } from './serve-fixture.js';

let fx: ServeFixture;
let server: Server;
/** Digests of every file a response may carry: servable files of OUT (symlinks not followed), the viewer, OpenLayers. */
const allowed = new Set<string>();
const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function addFiles(dir: string, keep: (name: string) => boolean): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!keep(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) addFiles(p, keep);
    else if (e.isFile()) allowed.add(digest(fs.readFileSync(p)));
  }
}

beforeAll(async () => {
  fx = makeServeFixture();
  server = await startServer({ root: fx.out, port: 0 });
  addFiles(fx.out, servable);
  addFiles(defaultViewerDir(), () => true);
  for (const file of vendorFiles().values()) allowed.add(digest(fs.readFileSync(file)));
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(fx.dir, { recursive: true, force: true });
});

/** Every byte as %XX, dots and slashes included. */
const percentAll = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

/** Names that lead somewhere in the fixture: symlinks out, the work state, the viewer's routes. */
const ENTRIES = ['planted', 'rootlink', 'outdir', 'up', 'work', 'passwd', '.mudm-work', '0', 'vendor', 'viewer', '..', '.'];
const WORDS = [
  ...ENTRIES, '...', 'etc', 'secret', 'secret.txt', 'out', 'spill', 'unit-0', 'state.json', '.MUDM-WORK', '1', '0.pbf',
  '1.pbf', '0.pbf.tmp-0badc0de-3', 'tileset.json', 'alias.json', 'index.html', 'ol.js', 'constructor', '__proto__',
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

/** A symlink planted somewhere in OUT for one request, pointing out, at the work state, at itself or inside. */
const plant = fc.record({
  where: fc.constantFrom('', '0', '0/0', '.mudm-work'),
  to: fc.constantFrom('/', '/etc', '/etc/passwd', '..', '../..', '../../..', '../secret', '../secret.txt', '.mudm-work', '.mudm-work/state.json', 'tileset.json', 'planted', 'absent'),
});

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
      fc.asyncProperty(target, plant, fc.constantFrom('GET', 'GET', 'HEAD'), async (t, p, method) => {
        const link = path.join(fx.out, p.where, 'planted');
        const to = p.to.startsWith('/') ? p.to : p.to === 'planted' ? 'planted' : path.relative(path.dirname(link), path.join(fx.out, p.to)) || '.';
        fs.symlinkSync(to, link);
        try {
          const r = await rawRequest(server.port, t, { method });
          expect(leaked(r.body, fx)).toEqual([]);
          expect([200, 204, 400, 403, 404, 431]).toContain(r.status);
          if (r.status === 200 && method === 'GET') expect(allowed.has(digest(r.body)), `${t} answered a file not allowed`).toBe(true);
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
