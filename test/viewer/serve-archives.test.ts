// `serve` over archives: the spec's tile URLs answered from PMTiles archives as from directories, and archive files (any
// file) read by byte ranges, by the `pmtiles` reader itself over HTTP.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { PMTiles } from 'pmtiles';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { memorySource } from '../../src/io/read.js';
import { Compression, TileType } from '../../src/archive/pmtiles-format.js';
import { PmtilesWriter } from '../../src/archive/pmtiles-writer.js';
import { InputError } from '../../src/report/errors.js';
import { startServer, type Server } from '../../src/serve.js';
import { buildArchive, buildArchiveFolder, type ListedArchive } from '../helpers/archives.js';
import { rawRequest, spawnServe, type RawResponse } from '../helpers/http.js';
import { readTree, tmpDir } from '../helpers/pyramid.js';
import { BUILD_OPTIONS, buildSquares, collection, square } from '../inspect/fixture.js';

const BIN = fileURLToPath(new URL('../../bin/mudm-tiles.js', import.meta.url));

const plane1 = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', id: 100, featureClass: 'gamma', properties: { label: 100 }, geometry: { type: 'Polygon', coordinates: square(300, 100, 80) } }] });
const inputs = () => [
  { source: memorySource('a.json', collection()), layer: 'cells', plane: { c: 0 } },
  { source: memorySource('b.json', plane1), layer: 'cells', plane: { c: 1 } },
];

let dir: string;
/** The directory build, every file by path. */
let expected: Map<string, Buffer>;
let listed: ListedArchive[];
let folder: Server;
let single: Server;
let singleFile: string;
let singleDescriptor: Record<string, unknown>;
let singleTiles: Map<string, Buffer>;

beforeAll(async () => {
  dir = tmpDir('mudm-serve-archives');
  await buildSquares({ out: path.join(dir, 'dir') }, inputs());
  expected = readTree(path.join(dir, 'dir'));
  listed = await buildArchiveFolder(inputs(), BUILD_OPTIONS, path.join(dir, 'archives'));
  folder = await startServer({ root: path.join(dir, 'archives'), port: 0 });
  // One plane on its own: the single-file case, beside a directory build of the same input to compare with.
  await buildSquares({ out: path.join(dir, 'one-dir'), format: 'pbf' });
  singleTiles = readTree(path.join(dir, 'one-dir'));
  fs.mkdirSync(path.join(dir, 'one'));
  singleFile = path.join(dir, 'one', 'slide.pmtiles');
  singleDescriptor = await buildArchive([{ source: memorySource('cells.json', collection()) }], BUILD_OPTIONS, singleFile);
  fs.writeFileSync(path.join(dir, 'one', 'secret.txt'), 'beside the archive');
  single = await startServer({ root: singleFile, port: 0 });
}, 60_000);

afterAll(async () => {
  await folder?.close();
  await single?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const get = (s: Server, target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> => rawRequest(s.port, target, { headers, method });
const tilePaths = (files: Map<string, Buffer>, ext: string) => [...files.keys()].filter((k) => /^\d+\//.test(k) && k.endsWith(`.${ext}`));

describe('serve OUT with one archive per plane and format', () => {
  it('lists archives of both planes and formats', () => {
    expect(listed.map((a) => a.href)).toEqual(['tiles-c0.json.pmtiles', 'tiles-c0.pbf.pmtiles', 'tiles-c1.json.pmtiles', 'tiles-c1.pbf.pmtiles']);
    expect(fs.readdirSync(path.join(dir, 'archives')).filter((n) => /^\d+$/.test(n))).toEqual([]);
  });

  it('answers every PBF tile URL with the directory build\'s bytes', async () => {
    const paths = tilePaths(expected, 'pbf');
    expect(paths.length).toBeGreaterThan(10);
    for (const p of paths) {
      const r = await get(folder, `/${p}`);
      expect(r.status, p).toBe(200);
      expect(r.headers.get('content-type'), p).toBe('application/x-protobuf');
      expect(r.headers.has('content-encoding'), p).toBe(false);
      expect(r.body.equals(expected.get(p) as Buffer), p).toBe(true);
    }
  });

  it('answers JSON tile URLs gzip-encoded as stored when the client takes gzip, else decoded, both the directory\'s JSON', async () => {
    const paths = tilePaths(expected, 'json');
    expect(paths.length).toBeGreaterThan(10);
    for (const p of paths) {
      const zipped = await get(folder, `/${p}`, { 'Accept-Encoding': 'gzip, deflate, br' });
      expect(zipped.status, p).toBe(200);
      expect(zipped.headers.get('content-type'), p).toBe('application/json');
      expect(zipped.headers.get('content-encoding'), p).toBe('gzip');
      expect(zipped.headers.get('vary'), p).toBe('Accept-Encoding');
      expect(gunzipSync(zipped.body).equals(expected.get(p) as Buffer), p).toBe(true);
      const plain = await get(folder, `/${p}`);
      expect(plain.headers.has('content-encoding'), p).toBe(false);
      expect(plain.body.equals(expected.get(p) as Buffer), p).toBe(true);
    }
    // fetch decodes what it is sent: the overview descriptor of plane 1, whole.
    const overview = await (await fetch(`${folder.url}0/1/0/0.json`)).json();
    expect(overview).toEqual(JSON.parse((expected.get('0/1/0/0.json') as Buffer).toString('utf8')));
  });

  it('answers a tile the archives do not hold as a directory does: PBF 204, JSON 404; HEAD with the length and no body', async () => {
    const absentPbf = [...Array(4).keys()].map((x) => `2/1/${x}/3.pbf`).find((p) => !expected.has(p)) as string;
    expect(absentPbf).toBeDefined();
    expect((await get(folder, `/${absentPbf}`)).status).toBe(204);
    expect((await get(folder, `/${absentPbf.replace('.pbf', '.json')}`)).status).toBe(404);
    // Paths the pyramid cannot hold are not found, not empty: a plane beyond the descriptor's bounds, a zoom beyond
    // its maxzoom, a tile beyond its zoom's grid, a number spelt two ways, a path of another layout.
    const maxzoom = (JSON.parse((expected.get('tileset.json') as Buffer).toString('utf8')) as { maxzoom: number }).maxzoom;
    for (const t of ['/0/7/0/0.pbf', `/${maxzoom + 1}/0/0/0.pbf`, '/1/0/2/0.pbf', '/01/0/0/0.pbf', '/0/0/0.pbf', '/0/0/0/0/0.pbf']) {
      expect((await get(folder, t)).status, t).toBe(404);
    }
    const p = tilePaths(expected, 'pbf')[0];
    const head = await get(folder, `/${p}`, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String((expected.get(p) as Buffer).length));
    expect(head.body.length).toBe(0);
  });

  it('refuses the tiles of an archive under another archive\'s name (swapped): 500 naming both, not another plane\'s tiles', async () => {
    const swapped = path.join(dir, 'swapped');
    await buildPyramid(inputs(), { ...BUILD_OPTIONS, out: swapped, archive: 'pmtiles' });
    const p = tilePaths(expected, 'pbf').find((k) => k.split('/')[1] === '0') as string;
    const s = await startServer({ root: swapped, port: 0 });
    try {
      expect((await get(s, `/${p}`)).body.equals(expected.get(p) as Buffer)).toBe(true);
      fs.renameSync(path.join(swapped, 'tiles-c0.pbf.pmtiles'), path.join(swapped, 'swap'));
      fs.renameSync(path.join(swapped, 'tiles-c1.pbf.pmtiles'), path.join(swapped, 'tiles-c0.pbf.pmtiles'));
      fs.renameSync(path.join(swapped, 'swap'), path.join(swapped, 'tiles-c1.pbf.pmtiles'));
      const r = await get(s, `/${p}`);
      expect([r.status, r.body.toString()]).toEqual([500, 'tiles-c0.pbf.pmtiles holds the tiles of tiles-c1.pbf.pmtiles, the name it was written under (archives renamed or swapped): mudm-tiles verify names them\n']);
    } finally {
      await s.close();
    }
  });

  it('says why a listed archive cut short cannot answer a tile: 500 naming it as listed and the bytes past its end', async () => {
    const cut = path.join(dir, 'cut-folder');
    await buildPyramid(inputs(), { ...BUILD_OPTIONS, out: cut, archive: 'pmtiles' });
    const file = path.join(cut, 'tiles-c0.pbf.pmtiles');
    const size = fs.statSync(file).size - 1;
    fs.truncateSync(file, size);
    const s = await startServer({ root: cut, port: 0 });
    try {
      const answers = await Promise.all(tilePaths(expected, 'pbf').filter((k) => k.split('/')[1] === '0').map((p) => get(s, `/${p}`)));
      const failed = answers.filter((r) => r.status === 500).map((r) => r.body.toString());
      expect(failed.length).toBeGreaterThan(0);
      for (const body of failed) expect(body).toMatch(new RegExp(`^tiles-c0\\.pbf\\.pmtiles: bytes \\d+\\.\\.${size + 1} are past the end of the archive \\(${size} bytes\\)\\n$`));
      // The tiles before the cut are still served.
      expect(answers.some((r) => r.status === 200)).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('opens an archive once for requests that come at once: no handle is left to the garbage collector', async () => {
    const s = await startServer({ root: path.join(dir, 'archives'), port: 0 });
    try {
      const pbf = tilePaths(expected, 'pbf');
      const answers = await Promise.all(pbf.map((t) => get(s, `/${t}`)));
      expect(answers.map((r) => r.status).every((c) => c === 200)).toBe(true);
      const archives = new Set(listed.filter((a) => a.format === 'pbf').map((a) => fs.realpathSync(path.join(dir, 'archives', a.href))));
      const open = fs.readdirSync('/proc/self/fd').map((fd) => {
        try { return fs.readlinkSync(`/proc/self/fd/${fd}`); } catch { return ''; }
      }).filter((target) => archives.has(target));
      // One handle per PBF archive read (the folder's server above holds its own, opened one request at a time).
      expect(open.length).toBeLessThanOrEqual(2 * archives.size);
    } finally {
      await s.close();
    }
  });

  it('serves an archive file by byte ranges that the pmtiles reader reads whole over HTTP', async () => {
    const file = path.join(dir, 'archives', 'tiles-c0.pbf.pmtiles');
    const bytes = fs.readFileSync(file);
    const r = await get(folder, '/tiles-c0.pbf.pmtiles', { Range: 'bytes=0-16383' });
    expect(r.status).toBe(206);
    expect(r.headers.get('content-type')).toBe('application/vnd.pmtiles');
    expect(r.headers.get('accept-ranges')).toBe('bytes');
    expect(r.headers.get('content-range')).toBe(`bytes 0-${Math.min(16383, bytes.length - 1)}/${bytes.length}`);
    expect(r.body.equals(bytes.subarray(0, 16384))).toBe(true);
    const reader = new PMTiles(`${folder.url}tiles-c0.pbf.pmtiles`);
    expect(await reader.getMetadata()).toMatchObject({ tiles: ['{zlvl}/{c}/{x}/{y}.pbf'], vector_layers: [{ id: 'cells' }] });
    for (const p of tilePaths(expected, 'pbf').filter((k) => k.split('/')[1] === '0')) {
      const [z, , x, y] = p.replace('.pbf', '').split('/').map(Number);
      const got = await reader.getZxy(z, x, y);
      expect(got && Buffer.from(got.data).equals(expected.get(p) as Buffer), p).toBe(true);
    }
  });
});

describe('byte ranges of any file', () => {
  const file = () => fs.readFileSync(path.join(dir, 'archives', 'tileset.json'));

  it('sends a range (206), a suffix, an open end, several ranges as one, and the whole file for another unit or a HEAD', async () => {
    const bytes = file();
    const n = bytes.length;
    const cases: [string, number, number][] = [['bytes=0-9', 0, 9], ['bytes=-10', n - 10, n - 1], [`bytes=${n - 5}-`, n - 5, n - 1], ['bytes=2-3, 8-9', 2, 9], [`bytes=10-${n + 100}`, 10, n - 1]];
    for (const [range, start, end] of cases) {
      const r = await get(folder, '/tileset.json', { Range: range });
      expect(r.status, range).toBe(206);
      expect(r.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/${n}`);
      expect(r.headers.get('content-length'), range).toBe(String(end - start + 1));
      expect(r.body.equals(bytes.subarray(start, end + 1)), range).toBe(true);
    }
    const other = await get(folder, '/tileset.json', { Range: 'items=0-1' });
    expect(other.status).toBe(200);
    expect(other.body.equals(bytes)).toBe(true);
    const head = await get(folder, '/tileset.json', { Range: 'bytes=0-9' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(n));
    expect(head.headers.get('accept-ranges')).toBe('bytes');
  });

  it('answers 416 with the size for a range outside the file or a malformed one', async () => {
    const n = file().length;
    for (const range of [`bytes=${n}-`, `bytes=${n + 10}-${n + 20}`, 'bytes=9-2', 'bytes=x-y', 'bytes=-0']) {
      const r = await get(folder, '/tileset.json', { Range: range });
      expect(r.status, range).toBe(416);
      expect(r.headers.get('content-range'), range).toBe(`bytes */${n}`);
    }
  });

  it('sends the range only while If-Range holds the file\'s ETag, else the whole file (a date too: not a strong validator)', async () => {
    const whole = await get(folder, '/tileset.json');
    const etag = whole.headers.get('etag') as string;
    const modified = whole.headers.get('last-modified') as string;
    expect(etag).toMatch(/^"[0-9a-f-]+"$/);
    expect((await get(folder, '/tileset.json', { Range: 'bytes=0-0', 'If-Range': etag })).status).toBe(206);
    expect((await get(folder, '/tileset.json', { Range: 'bytes=0-0', 'If-Range': modified })).status).toBe(200);
    const stale = await get(folder, '/tileset.json', { Range: 'bytes=0-0', 'If-Range': '"0-0-0"' });
    expect(stale.status).toBe(200);
    expect(stale.body.equals(file())).toBe(true);
  });

  it('answers a revalidation of an unchanged file with 304 and no body, and a failed If-Match with 412', async () => {
    // Written a while ago: its Last-Modified is a date to revalidate by (see the next test for a file just written).
    const hourAgo = new Date(Date.now() - 3_600_000);
    fs.utimesSync(path.join(dir, 'archives', 'tileset.json'), hourAgo, hourAgo);
    const whole = await get(folder, '/tileset.json');
    const etag = whole.headers.get('etag') as string;
    const revalidations: Record<string, string>[] = [{ 'If-None-Match': etag }, { 'If-Modified-Since': whole.headers.get('last-modified') as string }];
    for (const headers of revalidations) {
      const r = await get(folder, '/tileset.json', headers);
      expect(r.status).toBe(304);
      expect(r.body.length).toBe(0);
      expect(r.headers.get('etag')).toBe(etag);
    }
    expect((await get(folder, '/tileset.json', { 'If-None-Match': '"0-0-0"' })).body.equals(file())).toBe(true);
    const failed = await get(folder, '/tileset.json', { 'If-Match': '"0-0-0"' });
    expect([failed.status, failed.body.toString()]).toEqual([412, 'precondition failed\n']);
  });

  it('gives no Last-Modified within a second of a change, and confirms no copy by a date of that second', async () => {
    const note = path.join(dir, 'archives', 'note.txt');
    fs.writeFileSync(note, 'a');
    // Changed half a second past a whole second, and "now" for the next 30 s: a copy dated that second may be older.
    const at = new Date((Math.floor(Date.now() / 1000) + 30) * 1000 + 500);
    fs.utimesSync(note, at, at);
    try {
      const fresh = await get(folder, '/note.txt');
      expect(fresh.status).toBe(200);
      expect(fresh.headers.has('last-modified')).toBe(false);
      const r = await get(folder, '/note.txt', { 'If-Modified-Since': new Date(Math.floor(at.getTime() / 1000) * 1000).toUTCString() });
      expect([r.status, r.body.toString()]).toEqual([200, 'a']);
      const past = new Date(at.getTime() - 3_600_000);
      fs.utimesSync(note, past, past);
      const settled = await get(folder, '/note.txt');
      expect(settled.headers.get('last-modified')).toBe(new Date(Math.floor(past.getTime() / 1000) * 1000).toUTCString());
      expect((await get(folder, '/note.txt', { 'If-Modified-Since': settled.headers.get('last-modified') as string })).status).toBe(304);
    } finally {
      fs.rmSync(note);
    }
  });

  it('tags tiles read out of archives by their content: revalidated with 304; sent whole, whatever Range asks', async () => {
    const p = tilePaths(expected, 'pbf')[0];
    const want = expected.get(p) as Buffer;
    const r = await get(folder, `/${p}`);
    const etag = r.headers.get('etag') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(r.headers.has('accept-ranges')).toBe(false);
    const again = await get(folder, `/${p}`, { 'If-None-Match': etag });
    expect([again.status, again.body.length, again.headers.get('vary')]).toEqual([304, 0, 'Accept-Encoding']);
    const part = await get(folder, `/${p}`, { Range: 'bytes=1-4' });
    expect([part.status, part.headers.has('content-range')]).toEqual([200, false]);
    expect(part.body.equals(want)).toBe(true);
    // Another tile, another tag.
    const other = await get(folder, `/${tilePaths(expected, 'pbf').find((q) => !(expected.get(q) as Buffer).equals(want))}`);
    expect(other.headers.get('etag')).not.toBe(etag);
  });

  it('exposes the range headers to the --cors origin', async () => {
    const s = await startServer({ root: path.join(dir, 'archives'), port: 0, cors: 'https://viewer.example' });
    try {
      const r = await get(s, '/tiles-c0.pbf.pmtiles', { Range: 'bytes=0-126', Origin: 'https://viewer.example' });
      expect(r.status).toBe(206);
      expect(r.headers.get('access-control-allow-origin')).toBe('https://viewer.example');
      expect(r.headers.get('access-control-expose-headers')).toBe('Content-Range, Accept-Ranges, ETag, X-Pyramid-Name, X-Pyramid-Archive');
    } finally {
      await s.close();
    }
  });
});

describe('serve slide.pmtiles', () => {
  it('answers /tileset.json with the archive metadata, the descriptor', async () => {
    const r = await get(single, '/tileset.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(r.body.toString('utf8'))).toEqual(singleDescriptor);
    expect(singleDescriptor.tiles).toEqual(['{zlvl}/{x}/{y}.pbf']);
  });

  it('answers the tile URLs of its plane from the archive, equal to a directory build, and nothing else', async () => {
    const paths = tilePaths(singleTiles, 'pbf');
    expect(paths.length).toBeGreaterThan(5);
    // Each tile names the archive it was read from by the archive's own ETag: a page reading tiles by URL sees a
    // replaced archive by it.
    const archiveTag = (await get(single, '/slide.pmtiles', { Range: 'bytes=0-0' })).headers.get('etag');
    expect(archiveTag).toMatch(/^"[0-9a-f-]+"$/);
    for (const p of paths) {
      const r = await get(single, `/${p}`);
      expect(r.status, p).toBe(200);
      expect(r.body.equals(singleTiles.get(p) as Buffer), p).toBe(true);
      expect(r.headers.get('x-pyramid-archive'), p).toBe(archiveTag);
    }
    // A revalidated tile (304) says it too: a browser updates the headers it cached from it.
    const first = await get(single, `/${paths[0]}`);
    const revalidated = await get(single, `/${paths[0]}`, { 'If-None-Match': first.headers.get('etag') as string });
    expect([revalidated.status, revalidated.headers.get('x-pyramid-archive')]).toEqual([304, archiveTag]);
    // A tile of its zooms the archive does not hold is empty; no JSON tiles in a PBF archive, nor PBF paths of
    // another layout or beyond its zooms; files beside it are not served.
    const maxzoom = singleDescriptor.maxzoom as number;
    const absent = [...Array(2 ** maxzoom).keys()].map((x) => `${maxzoom}/${x}/${2 ** maxzoom - 1}.pbf`).find((p) => !singleTiles.has(p)) as string;
    expect(absent).toBeDefined();
    expect((await get(single, `/${absent}`)).status).toBe(204);
    expect((await get(single, '/0/0/0.json')).status).toBe(404);
    for (const t of ['/0/1/0/0.pbf', `/${maxzoom + 1}/0/0.pbf`]) expect((await get(single, t)).status, t).toBe(404);
    for (const t of ['/secret.txt', '/slide.pmtiles.part', '/..%2fsecret.txt', '/one/secret.txt']) expect((await get(single, t)).status, t).toBe(404);
  });

  it('serves the archive under its name by ranges, as the viewer reads it', async () => {
    const bytes = fs.readFileSync(singleFile);
    const r = await get(single, '/slide.pmtiles', { Range: 'bytes=100-199' });
    expect(r.status).toBe(206);
    expect(r.body.equals(bytes.subarray(100, 200))).toBe(true);
    expect(await new PMTiles(`${single.url}slide.pmtiles`).getMetadata()).toEqual(singleDescriptor);
  });

  it('serves a symlink to an archive under the link\'s name, and follows the link when it is retargeted', async () => {
    const dir3 = path.join(dir, 'linked');
    fs.mkdirSync(dir3);
    const first = path.join(dir3, 'build-1.pmtiles');
    const second = path.join(dir3, 'build-2.pmtiles');
    await buildArchive([{ source: memorySource('cells.json', collection()) }], BUILD_OPTIONS, first);
    await buildArchive([{ source: memorySource('cells.json', plane1) }], { ...BUILD_OPTIONS, name: 'second' }, second);
    const link = path.join(dir3, 'current.pmtiles');
    fs.symlinkSync('build-1.pmtiles', link);
    const s = await startServer({ root: link, port: 0 });
    try {
      const whole = await get(s, '/current.pmtiles');
      expect(whole.status).toBe(200);
      expect(whole.body.equals(fs.readFileSync(first))).toBe(true);
      expect((await get(s, '/build-1.pmtiles')).status).toBe(404);
      // The link now names the next build: served from its bytes, metadata and tiles alike.
      fs.symlinkSync('build-2.pmtiles', `${link}.new`);
      fs.renameSync(`${link}.new`, link);
      expect((await get(s, '/current.pmtiles')).body.equals(fs.readFileSync(second))).toBe(true);
      expect(JSON.parse((await get(s, '/tileset.json')).body.toString('utf8')).name).toBe('second');
    } finally {
      await s.close();
    }
  });

  it('follows a folder link when it is retargeted, and answers 404 once it names no folder', async () => {
    const link = path.join(dir, 'current');
    fs.symlinkSync(path.join(dir, 'one-dir'), link);
    const s = await startServer({ root: link, port: 0 });
    const descriptorOf = (folderName: string) => fs.readFileSync(path.join(dir, folderName, 'tileset.json'));
    try {
      expect((await get(s, '/tileset.json')).body.equals(descriptorOf('one-dir'))).toBe(true);
      // The next build: its descriptor, its files and its archives' tiles, from the first request on.
      fs.symlinkSync(path.join(dir, 'archives'), `${link}.new`);
      fs.renameSync(`${link}.new`, link);
      expect((await get(s, '/tileset.json')).body.equals(descriptorOf('archives'))).toBe(true);
      const p = tilePaths(expected, 'pbf')[0];
      const tile = await get(s, `/${p}`);
      expect(tile.status).toBe(200);
      expect(tile.body.equals(expected.get(p) as Buffer)).toBe(true);
      fs.symlinkSync(path.join(dir, 'gone'), `${link}.new`);
      fs.renameSync(`${link}.new`, link);
      expect((await get(s, '/tileset.json')).status).toBe(404);
      expect((await get(s, `/${p}`)).status).toBe(404);
    } finally {
      await s.close();
      fs.rmSync(link);
    }
  });

  it('reads a rebuilt archive from its new bytes (renamed over the old one while served)', async () => {
    const dir2 = path.join(dir, 'rebuild');
    fs.mkdirSync(dir2);
    const file = path.join(dir2, 'slide.pmtiles');
    await buildArchive([{ source: memorySource('cells.json', collection()) }], BUILD_OPTIONS, file);
    const s = await startServer({ root: file, port: 0 });
    try {
      const before = await get(s, '/0/0/0.pbf');
      const etag = (await get(s, '/slide.pmtiles', { Range: 'bytes=0-0' })).headers.get('etag');
      await buildArchive([{ source: memorySource('cells.json', plane1) }], { ...BUILD_OPTIONS, name: 'rebuilt' }, `${file}.new`);
      fs.renameSync(`${file}.new`, file);
      const after = await get(s, '/0/0/0.pbf');
      expect(after.status).toBe(200);
      expect(after.body.equals(before.body)).toBe(false);
      expect(JSON.parse((await get(s, '/tileset.json')).body.toString('utf8')).name).toBe('rebuilt');
      expect((await get(s, '/slide.pmtiles', { Range: 'bytes=0-0' })).headers.get('etag')).not.toBe(etag);
    } finally {
      await s.close();
    }
  });

  it('refuses a file that is not an archive: InputError from the library, exit 3 from the command', async () => {
    const text = path.join(dir, 'one', 'secret.txt');
    await expect(startServer({ root: text, port: 0 })).rejects.toThrow(InputError);
    await expect(startServer({ root: text, port: 0 })).rejects.toThrow(`${text} is neither a pyramid directory nor a PMTiles v3 archive`);
    const run = spawnSync(process.execPath, [BIN, 'serve', text, '--port', '0'], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stderr).toContain(`${text} is neither a pyramid directory nor a PMTiles v3 archive`);
  });

  it('serves an archive another tool wrote, its tiles and metadata as they are, warning that the viewer cannot open it', async () => {
    // Metadata as tippecanoe writes it: no tilejson, no tiles template.
    const foreign = path.join(dir, 'foreign.pmtiles');
    const tile = singleTiles.get('1/0/0.pbf') as Buffer;
    const writer = new PmtilesWriter(foreign, { tileType: TileType.Mvt, tileCompression: Compression.None });
    writer.add(1, 0, 0, tile);
    writer.finish({ name: 'foreign', format: 'pbf', vector_layers: [{ id: 'cells', fields: {} }] });
    const { child, url, stderr } = await spawnServe(BIN, [foreign, '--port', '0']);
    try {
      expect(stderr()).toContain(`${foreign} was not written by mudm-tiles (its metadata is no tileset descriptor): its tiles are served at /{z}/{x}/{y} and its metadata as /tileset.json as they are, but the viewer cannot open it`);
      expect(Buffer.from(await (await fetch(`${url}1/0/0.pbf`)).arrayBuffer()).equals(tile)).toBe(true);
      expect((await (await fetch(`${url}tileset.json`)).json()).name).toBe('foreign');
    } finally {
      child.kill('SIGINT');
    }
  });

  it('names what is wrong with a damaged archive: its root directory cut off, exit 3', async () => {
    const whole = fs.readFileSync(path.join(dir, 'one', 'slide.pmtiles'));
    const cut = path.join(dir, 'cut.pmtiles');
    const [offset, length] = [Number(whole.readBigUInt64LE(8)), Number(whole.readBigUInt64LE(16))];
    fs.writeFileSync(cut, whole.subarray(0, offset + length - 1));
    const why = `${cut}: the root directory (bytes ${offset}–${offset + length - 1}) lies past the end of the archive (${offset + length - 1} bytes): it was cut short or is damaged`;
    await expect(startServer({ root: cut, port: 0 })).rejects.toThrow(why);
    const run = spawnSync(process.execPath, [BIN, 'serve', cut, '--port', '0'], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stderr).toContain(why);
  });

  it('says why a tile of an archive cut inside its tiles cannot be read, naming the archive as served, not its path', async () => {
    const whole = fs.readFileSync(path.join(dir, 'one', 'slide.pmtiles'));
    const cut = path.join(dir, 'cut-tiles', 'slide.pmtiles');
    fs.mkdirSync(path.dirname(cut));
    fs.writeFileSync(cut, whole.subarray(0, whole.length - 1));
    const s = await startServer({ root: cut, port: 0 });
    try {
      const answers = await Promise.all([...singleTiles.keys()].map((p) => get(s, `/${p}`)));
      const failed = answers.filter((r) => r.status === 500).map((r) => r.body.toString());
      expect(failed.length).toBeGreaterThan(0);
      for (const body of failed) expect(body).toMatch(new RegExp(`^slide\\.pmtiles: bytes \\d+\\.\\.${whole.length} are past the end of the archive \\(${whole.length - 1} bytes\\)\\n$`));
    } finally {
      await s.close();
    }
  });
});
