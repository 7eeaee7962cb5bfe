// --tile-compression: archives of gzipped PBF tiles (and of JSON tiles stored as they are) read, extract, verify and
// shard as the default ones do; the option is refused where there is no archive, and a resume may not change it.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Compression, TileType } from '../../src/archive/pmtiles-format.js';
import { gzipTile } from '../../src/archive/pmtiles-sink.js';
import { transferable } from '../../src/worker/protocol.js';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../../src/cli/io.js';
import { openPyramidReader } from '../../src/inspect/archive-reader.js';
import { extractArchives } from '../../src/inspect/extract.js';
import { formatSummary, inspectPyramid } from '../../src/inspect/summary.js';
import { verifyPyramid } from '../../src/inspect/verify.js';
import { fileSource } from '../../src/io/read.js';
import type { Options } from '../../src/options.js';
import { listFiles } from '../e2e/helpers.js';
import { tmpDir } from '../helpers/pyramid.js';
import { referenceReader, scratchDirs } from './helpers.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../sample-data/slide');
const inputs = () => ['cells.json', 'nuclei.json'].map((f) => ({ source: fileSource(path.join(SAMPLE, f)) }));
const BASE: Partial<Options> = { maxZoom: 3, unitSize: 512, workers: 2 };
const scratch = scratchDirs('compression-usage');

let root = '';
let dirPbf = '';
let gz = '';

/** Tile files of a directory: relative path → bytes. */
function tileFiles(dir: string): Map<string, Buffer> {
  return new Map(listFiles(dir).filter((f) => /^\d+\/.*\.(json|pbf)$/.test(f)).map((f) => [f, fs.readFileSync(path.join(dir, f))]));
}

async function cli(...argv: string[]): Promise<{ code: number; err: string }> {
  const io = memoryIO();
  const code = await main(argv, io);
  return { code, err: io.err() };
}

beforeAll(async () => {
  root = tmpDir('compression');
  dirPbf = path.join(root, 'pbf');
  gz = path.join(root, 'gz.pmtiles');
  await buildPyramid(inputs(), { ...BASE, out: dirPbf, format: 'pbf' });
  await buildPyramid(inputs(), { ...BASE, out: gz, tileCompression: 'gzip' });
}, 120_000);

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('--tile-compression gzip, -o FILE.pmtiles', () => {
  it('stores every PBF tile gzipped, each the directory build\'s tile once decoded, and says so in the header', async () => {
    const bytes = fs.readFileSync(gz);
    const ref = referenceReader(bytes);
    const h = await ref.getHeader();
    const want = tileFiles(dirPbf);
    expect(want.size).toBeGreaterThan(20);
    expect(h).toMatchObject({ tileType: TileType.Mvt, tileCompression: Compression.Gzip, numAddressedTiles: want.size });
    for (const [rel, tile] of want) {
      const [z, x, y] = rel.replace(/\.pbf$/, '').split('/').map(Number);
      const got = await ref.getZxy(z, x, y);
      expect(Buffer.from(got?.data ?? new ArrayBuffer(0)).equals(tile), rel).toBe(true);
    }
    // Stored as gzip: the tile data starts with a gzip member that decodes to a tile of the directory build.
    const first = bytes.subarray(Number(h.tileDataOffset), Number(h.tileDataOffset) + 2);
    expect([...first]).toEqual([0x1f, 0x8b]);
    await buildPyramid(inputs(), { ...BASE, out: path.join(root, 'plain.pmtiles') });
    expect(bytes.length).toBeLessThan(fs.statSync(path.join(root, 'plain.pmtiles')).size * 0.8);
  });

  it('extracts byte for byte the directory build, verifies, and inspect names the archive and its compression', async () => {
    const out = path.join(root, 'extracted');
    await extractArchives(gz, out, { force: false });
    const want = tileFiles(dirPbf);
    const got = tileFiles(out);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [rel, tile] of want) expect(got.get(rel)?.equals(tile), rel).toBe(true);
    const reader = await openPyramidReader(gz);
    try {
      const v = verifyPyramid(reader);
      expect(v.problems).toEqual([]);
      const s = inspectPyramid(reader);
      expect(s.archives).toEqual([{ path: gz, bytes: fs.statSync(gz).size, tileCompression: 'gzip' }]);
      expect(formatSummary(s)).toMatch(/\n {2}archive {5}\S+\/gz\.pmtiles: PMTiles v3, [\d.]+ [KM]iB, tiles gzipped \(sizes below as decoded\)\n/);
      // Sizes are of the tiles as decoded: the directory build's.
      expect(s.totals.bytes).toBe([...want.values()].reduce((n, b) => n + b.length, 0));
    } finally {
      reader.close();
    }
  });

  it('is the same bytes whatever the number of workers, and from shards assembled by finalize', async () => {
    const one = path.join(root, 'one-worker.pmtiles');
    await buildPyramid(inputs(), { ...BASE, workers: 1, out: one, tileCompression: 'gzip' });
    expect(fs.readFileSync(one).equals(fs.readFileSync(gz))).toBe(true);
    const sharded = path.join(root, 'sharded.pmtiles');
    await planShardedBuild(inputs(), { ...BASE, out: sharded, shards: 3, tileCompression: 'gzip' });
    // The shards and finalize take no --tile-compression: they store tiles as the plan says.
    for (const shard of [2, 0, 1]) await buildShard({ out: sharded, workers: 2 }, shard);
    await finalizeShardedBuild({ out: sharded, workers: 2 });
    expect(fs.readFileSync(sharded).equals(fs.readFileSync(gz))).toBe(true);
  });
});

describe('gzipTile', () => {
  it('gives each tile a buffer of its own, which a worker moves rather than copies with a 16 KiB chunk', () => {
    for (const n of [26, 1000, 40_000]) {
      const tile = Buffer.alloc(n, 'ab');
      const z = gzipTile(tile);
      expect(gunzipSync(z).equals(tile), `${n} bytes`).toBe(true);
      expect([z.byteOffset, z.buffer.byteLength], `${n} bytes`).toEqual([0, z.byteLength]);
      expect(transferable([z])).toEqual([z.buffer]);
    }
  });
});

describe('--tile-compression none, -o DIR --archive pmtiles', () => {
  it('stores JSON tiles as encoded too, each the directory build\'s tile', async () => {
    const dir = path.join(root, 'json-dir');
    const archives = path.join(root, 'json-archives');
    await buildPyramid(inputs(), { ...BASE, maxZoom: 2, out: dir, format: 'json' });
    await buildPyramid(inputs(), { ...BASE, maxZoom: 2, out: archives, format: 'json', archive: 'pmtiles', tileCompression: 'none' });
    const file = path.join(archives, 'tiles.json.pmtiles');
    const bytes = fs.readFileSync(file);
    const h = await referenceReader(bytes).getHeader();
    expect(h).toMatchObject({ tileType: TileType.Other, tileCompression: Compression.None });
    const want = tileFiles(dir);
    const out = path.join(root, 'json-extracted');
    await extractArchives(archives, out, { force: false });
    const got = tileFiles(out);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [rel, tile] of want) expect(got.get(rel)?.equals(tile), rel).toBe(true);
    // Not gzip anywhere: a JSON tile's text is in the file as it is.
    const some = [...want.values()].find((t) => t.length > 100) as Buffer;
    expect(bytes.includes(some)).toBe(true);
    expect(() => gunzipSync(some)).toThrow();
  });
});

describe('--tile-compression usage', () => {
  it('is refused (exit 2) for a directory of tile files, and for a kind it does not know, before anything is written', async () => {
    const dir = scratch();
    const out = path.join(dir, 'out');
    const r = await cli('build', SAMPLE, '-o', out, '--tile-compression', 'gzip');
    expect(r.code).toBe(2);
    expect(r.err).toContain(`error: --tile-compression gzip is how archives store their tiles; -o ${out} is a directory of tile files: write -o FILE.pmtiles or add --archive pmtiles, or drop --tile-compression\n`);
    const bad = await cli('build', SAMPLE, '-o', path.join(dir, 'x.pmtiles'), '--tile-compression', 'zstd');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/error: .*--tile-compression.*zstd/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('is the plan\'s for shards and finalize: a library caller\'s value for them is passed over', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    await planShardedBuild(inputs(), { ...BASE, maxZoom: 2, out: file, shards: 1 });
    await buildShard({ out: file, workers: 1, tileCompression: 'gzip' }, 0);
    await finalizeShardedBuild({ out: file, workers: 1, tileCompression: 'gzip' });
    expect((await referenceReader(fs.readFileSync(file)).getHeader()).tileCompression).toBe(Compression.None);
    // Without an output there is no archive to speak of, and the message says so rather than name a directory.
    await expect(buildPyramid(inputs(), { ...BASE, tileCompression: 'gzip' }, { sink: { } as never })).rejects.toThrow('--tile-compression gzip is how archives store their tiles; this build writes no archive: write -o FILE.pmtiles or add --archive pmtiles, or drop --tile-compression');
  });

  it('may not change on --resume: the interrupted build is named, its work kept', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    // A plan is the work state a build killed after reading leaves.
    expect((await cli('plan', SAMPLE, '-o', file, '--shards', '1', '-q', '--max-zoom', '2')).code).toBe(0);
    const r = await cli('build', SAMPLE, '-o', file, '--resume', '--max-zoom', '2', '--tile-compression', 'gzip');
    expect(r.code).toBe(2);
    expect(r.err).toContain('(--tile-compression was not given, is gzip now); run again with the same ones, or start over with --force (without --resume)');
    expect(fs.existsSync(file)).toBe(false);
    // --archive by the value the flag takes.
    const out = path.join(dir, 'out');
    expect((await cli('plan', SAMPLE, '-o', out, '--archive', 'pmtiles', '--shards', '1', '-q', '--max-zoom', '2')).code).toBe(0);
    const dropped = await cli('build', SAMPLE, '-o', out, '--resume', '--max-zoom', '2');
    expect(dropped.code).toBe(2);
    expect(dropped.err).toContain('(--archive was pmtiles, is not given now)');
  });
});
