// A pyramid folder laid out as a hostile or careless user leaves it for `serve`: secrets beside it, symlinks out, a work state.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Compression, TileType } from '../../src/archive/pmtiles-format.js';
import { encodeArchive } from '../../src/archive/pmtiles-layout.js';
import { tmpDir } from '../helpers/pyramid.js';

export interface ServeFixture {
  /** The temporary folder holding everything; remove it when done. */
  dir: string;
  /** The pyramid folder given to `serve`. */
  out: string;
  /** A folder beside OUT holding `secret.txt`. */
  secretDir: string;
  /** Unique text found only in files that must never be served (outside OUT, the work state, temporary files). */
  markers: string[];
  /** What the archives OUT lists may answer at tile paths: their tiles, as a client gets them (decompressed). */
  archiveTiles: Buffer[];
}

/** An archive of PBF tiles (or JSON ones, gzip-compressed as a build stores them) holding one tile at each of zooms 0 and 1. */
function archive(text: string, json = false): Uint8Array {
  const tile = (i: number) => Buffer.from(json ? `{"type":"FeatureCollection","features":[],"note":"${text} ${i}"}` : `\x1a\x00${text} ${i}`);
  const tiles = [{ z: 0, x: 0, y: 0, bytes: tile(0) }, { z: 1, x: 1, y: 0, bytes: tile(1) }];
  return encodeArchive(json ? tiles.map((t) => ({ ...t, bytes: gzipSync(t.bytes) })) : tiles, { name: text, vector_layers: [] }, json
    ? { tileType: TileType.Other, tileCompression: Compression.Gzip }
    : { tileType: TileType.Mvt, tileCompression: Compression.None });
}

/** The assets of OUT/tileset.json: archives of plane c = 0 inside OUT, for planes 1..5 archives never to be read, for 6 no archive. */
const ARCHIVE_ASSETS = [
  ['tiles-c0.pbf.pmtiles', 'pbf', 0], ['tiles-c0.json.pmtiles', 'json', 0],
  // A symlink to an archive outside OUT, a path out of OUT, a hidden archive, one in the work state, a build's part.
  ['tiles-c1.pbf.pmtiles', 'pbf', 1], ['../secret/outside.pmtiles', 'pbf', 2], ['.hidden.pmtiles', 'pbf', 3],
  ['.mudm-work/state.pmtiles', 'pbf', 4], ['tiles-c5.pbf.pmtiles.part', 'pbf', 5],
  // A file inside OUT that is no archive.
  ['broken.pmtiles', 'pbf', 6],
].map(([href, format, c]) => ({ role: 'tiles', href, media_type: 'application/vnd.pmtiles', format, c }));

/** Text that begins /etc/passwd on every Unix: a response holding it read a file outside OUT. */
export const PASSWD_MARK = 'root:x:0:0';

export function makeServeFixture(): ServeFixture {
  const dir = tmpDir('mudm-serve-faults');
  const out = path.join(dir, 'out');
  const secretDir = path.join(dir, 'secret');
  const secret = `SECRET-${randomBytes(8).toString('hex')}`;
  const work = `WORKSTATE-${randomBytes(8).toString('hex')}`;
  const partial = `PARTIAL-${randomBytes(8).toString('hex')}`;
  fs.mkdirSync(path.join(out, '0/0'), { recursive: true });
  fs.mkdirSync(path.join(out, '1/0'), { recursive: true });
  fs.mkdirSync(path.join(out, '0/7/0'), { recursive: true });
  fs.mkdirSync(path.join(out, '.mudm-work/spill'), { recursive: true });
  fs.mkdirSync(secretDir);
  fs.writeFileSync(path.join(secretDir, 'secret.txt'), secret);
  fs.writeFileSync(path.join(dir, 'secret.txt'), secret);
  fs.writeFileSync(path.join(out, 'tileset.json'), JSON.stringify({ tilejson: '3.0.0', tiles: ['{zlvl}/{c}/{x}/{y}.pbf'], assets: ARCHIVE_ASSETS }));
  fs.writeFileSync(path.join(out, 'tiles-c0.pbf.pmtiles'), archive('served'));
  fs.writeFileSync(path.join(out, 'tiles-c0.json.pmtiles'), archive('served', true));
  fs.writeFileSync(path.join(secretDir, 'outside.pmtiles'), archive(secret));
  fs.symlinkSync(path.join(secretDir, 'outside.pmtiles'), path.join(out, 'tiles-c1.pbf.pmtiles'));
  fs.writeFileSync(path.join(out, '.hidden.pmtiles'), archive(work));
  fs.writeFileSync(path.join(out, '.mudm-work/state.pmtiles'), archive(work));
  fs.writeFileSync(path.join(out, 'tiles-c5.pbf.pmtiles.part'), archive(partial));
  fs.writeFileSync(path.join(out, 'broken.pmtiles'), 'not an archive');
  fs.writeFileSync(path.join(out, '0/0/0.pbf'), Buffer.from([0x1a, 0x00]));
  fs.writeFileSync(path.join(out, '.mudm-work/state.json'), `{"note":"${work}"}`);
  fs.writeFileSync(path.join(out, '.mudm-work/spill/unit-0'), work);
  // A tile being written by a build in progress, under the sink's temporary name.
  fs.writeFileSync(path.join(out, '1/0/0.pbf.tmp-0badc0de-3'), partial);
  // Files a user may keep beside the pyramid, named like Object.prototype members.
  fs.writeFileSync(path.join(out, 'notes.constructor'), 'a user file');
  fs.writeFileSync(path.join(out, 'notes.__proto__'), 'a user file');
  // Symlinks out of OUT: to a system file, to the root, to a folder, one shaped like a tile, one to the work state.
  fs.symlinkSync('/etc/passwd', path.join(out, 'passwd'));
  fs.symlinkSync('/', path.join(out, 'rootlink'));
  fs.symlinkSync(secretDir, path.join(out, 'outdir'));
  fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(out, '0/7/0/0.pbf'));
  fs.symlinkSync('..', path.join(out, 'up'));
  fs.symlinkSync('.mudm-work', path.join(out, 'work'));
  // A symlink that stays inside OUT is as good as the file it names.
  fs.symlinkSync('tileset.json', path.join(out, 'alias.json'));
  const archiveTiles = ['\x1a\x00served 0', '\x1a\x00served 1', ...[0, 1].map((i) => `{"type":"FeatureCollection","features":[],"note":"served ${i}"}`)].map((t) => Buffer.from(t));
  return { dir, out, secretDir, markers: [secret, work, partial, PASSWD_MARK], archiveTiles };
}

/** The markers a response body holds (none, for a server that keeps to OUT); a gzip body is read decoded. */
export function leaked(body: Buffer, fx: ServeFixture, gzip = false): string[] {
  const text = (gzip ? gunzipSync(body) : body).toString('latin1');
  return fx.markers.filter((m) => text.includes(m));
}
