// Measures the PMTiles writer (issue 14): tile compression and directory sizes on a built pyramid, and time and memory at a million tiles.
//
// Usage (after `npm run build`):
//   node bench/archive.js --pyramid DIR    a directory build (e.g. of `bench/generate.js --cells 100000`, zooms 0–8):
//                                          gzip per tile (levels 1 and 6) for PBF and JSON, duplicates, and its PBF
//                                          tiles written into one archive (time, size, directories and metadata
//                                          gzip-compressed against uncompressed)
//   node bench/archive.js --synthetic N    N distinct synthetic tiles of 200–600 bytes added in a scattered order:
//                                          add and finish times, peak RSS, archive size
// Writes its archives to a temporary directory it removes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { PmtilesWriter } from '../dist/archive/pmtiles-writer.js';
import { TileType, Compression, decodeDirectory } from '../dist/archive/pmtiles-format.js';
import { openPmtiles } from '../dist/archive/pmtiles-reader.js';
import { tileHash } from '../dist/archive/pmtiles-layout.js';

const { values: args } = parseArgs({ options: { pyramid: { type: 'string' }, synthetic: { type: 'string' } } });
const MB = (n) => `${(n / 1e6).toFixed(1)} MB`;
const secs = (t0) => `${((performance.now() - t0) / 1000).toFixed(2)} s`;
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-archive-'));
const META = { tilejson: '3.0.0', vector_layers: [{ id: 'bench', fields: {} }] };

/** Tiles of a directory build: [z, x, y, bytes] per file `z/x/y.ext` (a single-plane pyramid). */
function tilesOf(root, ext) {
  const list = [];
  for (const z of fs.readdirSync(root).filter((e) => /^\d+$/.test(e))) {
    for (const x of fs.readdirSync(path.join(root, z))) {
      for (const f of fs.readdirSync(path.join(root, z, x))) {
        if (f.endsWith(`.${ext}`)) list.push([Number(z), Number(x), Number(f.slice(0, -ext.length - 1)), fs.readFileSync(path.join(root, z, x, f))]);
      }
    }
  }
  return list;
}

function compression(ext, tiles) {
  const raw = tiles.reduce((n, t) => n + t[3].length, 0);
  const distinct = new Set(tiles.map((t) => Buffer.from(tileHash(t[3])).toString('base64'))).size;
  console.log(`${ext}: ${tiles.length} tiles, ${MB(raw)}, ${tiles.length - distinct} duplicates`);
  for (const level of [1, 6]) {
    const t0 = performance.now();
    let gz = 0;
    for (const t of tiles) gz += gzipSync(t[3], { level }).length;
    console.log(`  gzip level ${level}: ${MB(gz)} (${((100 * gz) / raw).toFixed(0)}% of raw) in ${secs(t0)}`);
  }
}

async function pyramid(root) {
  const pbf = tilesOf(root, 'pbf');
  compression('pbf', pbf);
  compression('json', tilesOf(root, 'json'));
  const file = path.join(out, 'pyramid.pmtiles');
  const t0 = performance.now();
  const w = new PmtilesWriter(file, { tileType: TileType.Mvt, tileCompression: Compression.None });
  for (const [z, x, y, b] of pbf) w.add(z, x, y, b);
  const { header: h, bytes } = w.finish(JSON.parse(fs.readFileSync(path.join(root, 'tileset.json'), 'utf8')));
  console.log(`archive of the pbf tiles: ${MB(bytes)} in ${secs(t0)}; root ${h.rootDirectoryLength} B, leaves ${h.leafDirectoriesLength} B, metadata ${h.metadataLength} B (gzip)`);
  const fd = fs.openSync(file, 'r');
  const read = (at, n) => {
    const b = Buffer.alloc(n);
    fs.readSync(fd, b, 0, n, at);
    return gunzipSync(b);
  };
  const meta = read(h.metadataOffset, h.metadataLength);
  let rawDirs = read(h.rootDirectoryOffset, h.rootDirectoryLength).length;
  const root0 = decodeDirectory(read(h.rootDirectoryOffset, h.rootDirectoryLength));
  for (let i = 0; i < root0.count; i++) if (root0.runLength[i] === 0) rawDirs += read(h.leafDirectoriesOffset + root0.offset[i], root0.length[i]).length;
  fs.closeSync(fd);
  console.log(`  directories: ${h.rootDirectoryLength + h.leafDirectoriesLength} B gzip vs ${rawDirs} B uncompressed; metadata ${h.metadataLength} B gzip vs ${meta.length} B`);
  const archive = await openPmtiles(file);
  let n = 0;
  const t1 = performance.now();
  for await (const t of archive.tiles()) n += t.length > 0 ? 1 : 0;
  await archive.close();
  console.log(`  listing its ${n} tiles: ${secs(t1)}`);
}

function synthetic(count) {
  const file = path.join(out, 'synthetic.pmtiles');
  const w = new PmtilesWriter(file, { tileType: TileType.Mvt, tileCompression: Compression.None });
  const z = Math.ceil(Math.log2(Math.sqrt(count))) + 1;
  const side = 2 ** z;
  const buf = Buffer.alloc(600);
  let peak = 0;
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    // A scattered order (a stride coprime with the tile count), distinct contents of 200–600 bytes.
    const k = (i * 7919) % (side * side);
    const len = 200 + ((i * 131) % 400);
    buf.fill(i % 251, 0, len);
    buf.writeUInt32LE(i, 0);
    w.add(z, k % side, Math.floor(k / side), buf.subarray(0, len));
    if (i % 65536 === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  const tAdd = secs(t0);
  const t1 = performance.now();
  const { header: h, bytes } = w.finish(META);
  peak = Math.max(peak, process.memoryUsage().rss);
  console.log(`synthetic: ${count} tiles at zoom ${z}: add ${tAdd}, finish ${secs(t1)}, archive ${MB(bytes)}, leaves ${h.leafDirectoriesLength} B, peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`);
}

try {
  if (args.pyramid) await pyramid(args.pyramid);
  if (args.synthetic) synthetic(Number(args.synthetic));
  if (!args.pyramid && !args.synthetic) console.error('bench/archive.js: give --pyramid DIR and/or --synthetic N');
} finally {
  fs.rmSync(out, { recursive: true, force: true });
}
