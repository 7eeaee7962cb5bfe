// PMTiles writer: round trips through the `pmtiles` reader, directories, dedupe, clustering, determinism, parts, atomic rename.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { HEADER_BYTES, ROOT_WINDOW, TileType, Compression, decodeDirectory, zxyToTileId } from '../../src/archive/pmtiles-format.js';
import { encodeArchive } from '../../src/archive/pmtiles-layout.js';
import { PmtilesWriter, assembleArchive, mergeParts } from '../../src/archive/pmtiles-writer.js';
import { TilePart, readPartIndex } from '../../src/archive/pmtiles-part.js';
import { PmtilesArchive, memoryRangeSource, openPmtiles } from '../../src/archive/pmtiles-reader.js';
import { DataError, InputError, WorkStateError, OutputError } from '../../src/report/errors.js';
import { METADATA, referenceReader, scratchDirs, shuffled, syntheticTiles, type SyntheticTile } from './helpers.js';

const MVT = { tileType: TileType.Mvt, tileCompression: Compression.None } as const;
const scratch = scratchDirs('pmtiles');

function writeArchive(file: string, tiles: readonly SyntheticTile[], metadata: object = METADATA): void {
  const w = new PmtilesWriter(file, MVT);
  for (const t of tiles) w.add(t.z, t.x, t.y, t.bytes);
  w.finish(metadata);
}

/** Every tile equals what was written, read by the reference reader; tiles never written are absent. */
async function expectTiles(bytes: Uint8Array, tiles: readonly SyntheticTile[], every = 1): Promise<void> {
  const ref = referenceReader(bytes);
  for (let i = 0; i < tiles.length; i += every) {
    const t = tiles[i];
    const got = await ref.getZxy(t.z, t.x, t.y);
    if (!got || !Buffer.from(got.data).equals(t.bytes)) expect({ tile: [t.z, t.x, t.y], got: got && [...new Uint8Array(got.data)] }).toEqual({ tile: [t.z, t.x, t.y], got: [...t.bytes] });
  }
}

describe('PmtilesWriter', () => {
  it('writes an archive the pmtiles reader opens: header, metadata and every tile', async () => {
    const file = path.join(scratch(), 'slide.pmtiles');
    const tiles = syntheticTiles(1, 6, 0.3);
    writeArchive(file, shuffled(tiles, 2));
    const bytes = fs.readFileSync(file);
    const ref = referenceReader(bytes);
    const h = await ref.getHeader();
    expect(h).toMatchObject({
      specVersion: 3, clustered: true, internalCompression: Compression.Gzip, tileCompression: Compression.None, tileType: TileType.Mvt,
      minZoom: 0, maxZoom: 6, numAddressedTiles: tiles.length, numTileEntries: tiles.length, numTileContents: tiles.length,
      rootDirectoryOffset: HEADER_BYTES, leafDirectoryLength: 0,
    });
    expect(h.tileDataOffset + (h.tileDataLength ?? 0)).toBe(bytes.length);
    expect(h.tileDataLength).toBe(tiles.reduce((n, t) => n + t.bytes.length, 0));
    expect(await ref.getMetadata()).toEqual(METADATA);
    await expectTiles(bytes, tiles);
    const missing = [...Array(64).keys()].map((x) => ({ z: 6, x, y: 5 })).find((m) => !tiles.some((t) => t.z === 6 && t.x === m.x && t.y === 5));
    expect(missing).toBeDefined();
    expect(await ref.getZxy(6, missing!.x, 5)).toBeUndefined();
  });

  it('puts the tiles in tile-id order, back to back (clustered)', async () => {
    const file = path.join(scratch(), 'slide.pmtiles');
    const tiles = syntheticTiles(3, 5, 0.5);
    writeArchive(file, shuffled(tiles, 4));
    const bytes = fs.readFileSync(file);
    const archive = await PmtilesArchive.open(memoryRangeSource(file, bytes));
    const listed = [];
    for await (const t of archive.tiles()) listed.push(t);
    const ids = tiles.map((t) => zxyToTileId(t.z, t.x, t.y)).sort((a, b) => a - b);
    expect(listed.map((t) => t.tileId)).toEqual(ids);
    let at = archive.header.tileDataOffset;
    for (const t of listed) {
      expect(t.offset).toBe(at);
      at += t.length;
    }
    // The data section is the tiles themselves, in id order.
    const byId = new Map(tiles.map((t) => [zxyToTileId(t.z, t.x, t.y), t.bytes]));
    expect(Buffer.from(bytes.subarray(archive.header.tileDataOffset)).equals(Buffer.concat(ids.map((id) => byId.get(id) as Uint8Array)))).toBe(true);
  });

  it('stores identical tiles once: a run-length entry for consecutive ids, a shared offset for others', async () => {
    const same = new TextEncoder().encode('same tile');
    const other = new TextEncoder().encode('other');
    // Zoom-1 ids 1..4 are (0,0), (0,1), (1,1), (1,0); zoom 2 starts at id 5.
    const tiles = [
      { z: 1, x: 0, y: 0, bytes: same }, { z: 1, x: 0, y: 1, bytes: same }, { z: 1, x: 1, y: 1, bytes: same },
      { z: 1, x: 1, y: 0, bytes: other }, { z: 2, x: 0, y: 0, bytes: same }, { z: 0, x: 0, y: 0, bytes: other },
    ];
    const bytes = encodeArchive(shuffled(tiles, 1), METADATA, MVT);
    const archive = await PmtilesArchive.open(memoryRangeSource('mem', bytes));
    expect(archive.header).toMatchObject({ addressedTiles: 6, tileEntries: 4, tileContents: 2, tileDataLength: same.length + other.length });
    const root = decodeDirectory(gunzipSync(bytes.subarray(archive.header.rootDirectoryOffset, archive.header.metadataOffset)));
    expect([...root.tileId]).toEqual([0, 1, 4, 5]);
    expect([...root.runLength]).toEqual([1, 3, 1, 1]);
    expect([...root.offset]).toEqual([0, other.length, 0, other.length]);
    await expectTiles(bytes, tiles);
  });

  it('writes leaf directories when the root would pass 16 KiB, and every tile stays readable', async () => {
    const tiles = syntheticTiles(5, 9, 0.2);
    expect(tiles.length).toBeGreaterThan(50_000);
    const bytes = encodeArchive(tiles, METADATA, MVT);
    const archive = await PmtilesArchive.open(memoryRangeSource('mem', bytes));
    const h = archive.header;
    expect(h.leafDirectoriesLength).toBeGreaterThan(0);
    expect(h.rootDirectoryOffset + h.rootDirectoryLength).toBeLessThanOrEqual(ROOT_WINDOW);
    const root = decodeDirectory(gunzipSync(bytes.subarray(h.rootDirectoryOffset, h.rootDirectoryOffset + h.rootDirectoryLength)));
    expect([...root.runLength].every((r) => r === 0)).toBe(true);
    // Leaves in ascending id order, back to back in the leaf section.
    for (let i = 1; i < root.count; i++) {
      expect(root.tileId[i]).toBeGreaterThan(root.tileId[i - 1]);
      expect(root.offset[i]).toBe(root.offset[i - 1] + root.length[i - 1]);
    }
    expect(root.offset[root.count - 1] + root.length[root.count - 1]).toBe(h.leafDirectoriesLength);
    const sorted = [...tiles].sort((a, b) => zxyToTileId(a.z, a.x, a.y) - zxyToTileId(b.z, b.x, b.y));
    const listed: number[] = [];
    for await (const t of archive.tiles()) listed.push(t.tileId);
    expect(listed).toEqual(sorted.map((t) => zxyToTileId(t.z, t.x, t.y)));
    // The reference reader through its own leaf lookup: a sample across all leaves, and the ends.
    await expectTiles(bytes, sorted, 97);
    await expectTiles(bytes, [sorted[0], sorted[sorted.length - 1]]);
    const ours = await PmtilesArchive.open(memoryRangeSource('mem', bytes));
    for (let i = 0; i < sorted.length; i += 13) {
      expect(Buffer.from((await ours.tile(sorted[i].z, sorted[i].x, sorted[i].y)) as Uint8Array).equals(sorted[i].bytes)).toBe(true);
    }
  });

  it('gives the same bytes whatever the order tiles come in, in memory and on disk', () => {
    const tiles = syntheticTiles(7, 6, 0.4, 0.2);
    const a = encodeArchive(tiles, METADATA, MVT);
    const b = encodeArchive(shuffled(tiles, 9), METADATA, MVT);
    expect(Buffer.from(a).equals(b)).toBe(true);
    const file = path.join(scratch(), 'slide.pmtiles');
    writeArchive(file, shuffled(tiles, 10));
    expect(fs.readFileSync(file).equals(a)).toBe(true);
  });

  it('copies tiles larger than its buffers (1.5 MiB, 9 MiB) between small ones', async () => {
    const file = path.join(scratch(), 'big.pmtiles');
    const big = (n: number, fill: number) => new Uint8Array(n).fill(fill).map((v, i) => (i % 4093 === 0 ? i & 255 : v));
    const tiles = [
      { z: 1, x: 0, y: 0, bytes: Uint8Array.of(1) }, { z: 1, x: 0, y: 1, bytes: big(9 << 20, 2) },
      { z: 1, x: 1, y: 1, bytes: Uint8Array.of(3) }, { z: 1, x: 1, y: 0, bytes: big(1.5 * 2 ** 20, 4) }, { z: 0, x: 0, y: 0, bytes: Uint8Array.of(5) },
    ];
    writeArchive(file, shuffled(tiles, 3));
    const archive = await openPmtiles(file);
    for (const t of tiles) expect(Buffer.from((await archive.tile(t.z, t.x, t.y)) as Uint8Array).equals(t.bytes)).toBe(true);
    await archive.close();
  });

  it('names the part of an archive that does not decompress: the root directory, the metadata, with their bytes', async () => {
    const file = path.join(scratch(), 'flipped.pmtiles');
    writeArchive(file, syntheticTiles(1, 2, 1));
    const whole = fs.readFileSync(file);
    const at = (o: number) => Number(whole.readBigUInt64LE(o));
    const gzip = whole[97] === Compression.Gzip;
    expect(gzip).toBe(true);
    for (const [offsetAt, lengthAt, what] of [[8, 16, 'the root directory'], [24, 32, 'the metadata']] as const) {
      const bytes = Buffer.from(whole);
      const [offset, length] = [at(offsetAt), at(lengthAt)];
      bytes[offset + Math.floor(length / 2)] ^= 0xff;
      fs.writeFileSync(file, bytes);
      const open = async () => {
        const archive = await openPmtiles(file);
        try {
          return await archive.metadata();
        } finally {
          await archive.close();
        }
      };
      await expect(open()).rejects.toThrow(`${file}: ${what} (bytes ${offset}–${offset + length - 1}) does not decompress:`);
    }
  });

  it('refuses metadata that decompresses to more than 64 MiB (a gzip bomb) with the part named, in bounded memory', async () => {
    const file = path.join(scratch(), 'bomb.pmtiles');
    writeArchive(file, syntheticTiles(1, 2, 1));
    const whole = fs.readFileSync(file);
    // 65 MiB of one byte, gzipped to about 65 KiB, put after the archive and named as its metadata.
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(65 * 1024 * 1024, 0x78), Buffer.from('"}')]), { level: 1 });
    const bytes = Buffer.concat([whole, bomb]);
    bytes.writeBigUInt64LE(BigInt(whole.length), 24);
    bytes.writeBigUInt64LE(BigInt(bomb.length), 32);
    fs.writeFileSync(file, bytes);
    const archive = await openPmtiles(file);
    try {
      const err = await archive.metadata().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).message).toBe(`${file}: the metadata (bytes ${whole.length}–${whole.length + bomb.length - 1}) decompresses to more than 64 MiB: the archive is damaged`);
    } finally {
      await archive.close();
    }
  });

  it('places the header bounds on the finest tiles as a Web Mercator client reads z/x/y, the centre at the coarsest zoom', async () => {
    const tiles = [{ z: 1, x: 0, y: 0 }, { z: 2, x: 1, y: 1 }, { z: 2, x: 2, y: 3 }].map((t) => ({ ...t, bytes: Uint8Array.of(t.x, t.y) }));
    const h = await referenceReader(encodeArchive(tiles, METADATA, MVT)).getHeader();
    const north = (Math.atan(Math.sinh(Math.PI / 2)) * 180) / Math.PI; // top of tile row 1 of 4
    expect(h).toMatchObject({ minZoom: 1, maxZoom: 2, centerZoom: 1, minLon: -90, maxLon: 90, centerLon: 0 });
    expect(h.maxLat).toBeCloseTo(north, 6);
    expect(h.minLat).toBeCloseTo(-85.0511288, 6);
    // The map's middle of rows 1 to 3 of 4 (row 2.5), not the mean of the bounds' latitudes.
    expect(h.centerLat).toBeCloseTo((Math.atan(Math.sinh(Math.PI * (1 - (2 * 2.5) / 4))) * 180) / Math.PI, 6);
  });

  it('refuses an empty tile and a tile outside its zoom', () => {
    const w = new PmtilesWriter(path.join(scratch(), 'slide.pmtiles'), MVT);
    expect(() => w.add(3, 1, 2, new Uint8Array(0))).toThrow(/tile 3\/1\/2 is empty/);
    expect(() => w.add(1, 2, 0, Uint8Array.of(1))).toThrow(/outside zoom 1/);
    w.abort();
  });

  it('refuses MVT metadata without vector_layers', () => {
    const one = [{ z: 0, x: 0, y: 0, bytes: Uint8Array.of(1) }];
    expect(() => encodeArchive(one, { name: 'x' }, MVT)).toThrow(OutputError);
    expect(() => encodeArchive(one, { name: 'x' }, { tileType: TileType.Other, tileCompression: Compression.Gzip })).not.toThrow();
  });

  it('refuses an archive of no tile: a directory must have an entry (spec section 4.1)', () => {
    expect(() => encodeArchive([], METADATA, MVT)).toThrow(DataError);
    expect(() => encodeArchive([], METADATA, MVT)).toThrow('there is no tile to store');
  });
});

describe('parts', () => {
  it('merge into the same bytes as one writer, however the tiles were split and in whatever order', () => {
    const dir = scratch();
    const tiles = syntheticTiles(11, 6, 0.4, 0.2);
    const whole = encodeArchive(tiles, METADATA, MVT);
    for (const [split, seed] of [[2, 1], [3, 2], [5, 3]]) {
      const paths = Array.from({ length: split }, (_, k) => path.join(dir, `shard-${seed}-${k}.part`));
      const parts = paths.map((p) => TilePart.create(p));
      shuffled(tiles, seed).forEach((t, i) => parts[(i * 7 + seed) % split].add(t.z, t.x, t.y, t.bytes));
      for (const p of parts) p.close();
      const file = path.join(dir, `merged-${split}.pmtiles`);
      mergeParts(shuffled(paths, seed), file, METADATA, MVT);
      expect(fs.readFileSync(file).equals(whole)).toBe(true);
    }
  });

  it('assembled a window at a time, read where the tiles lie (run by run), give the same bytes', () => {
    const dir = scratch();
    // A tile longer than a window goes through in pieces.
    const tiles = [...syntheticTiles(12, 6, 0.5, 0.2).filter((t) => !(t.z === 6 && t.x === 63 && t.y === 63)), { z: 6, x: 63, y: 63, bytes: new Uint8Array(2500).fill(7) }];
    const whole = encodeArchive(tiles, METADATA, MVT);
    const paths = [0, 1].map((k) => path.join(dir, `w-${k}.part`));
    const parts = paths.map((p) => TilePart.create(p));
    // As units write them: groups of tiles adjacent in tile-id order, the groups in another order, into either part.
    const byId = [...tiles].sort((a, b) => zxyToTileId(a.z, a.x, a.y) - zxyToTileId(b.z, b.x, b.y));
    const groups = Array.from({ length: Math.ceil(byId.length / 20) }, (_, g) => byId.slice(g * 20, g * 20 + 20));
    shuffled(groups, 4).forEach((g, i) => { for (const t of g) parts[i % 2].add(t.z, t.x, t.y, t.bytes); });
    for (const p of parts) p.close();
    const indexed = paths.map((p) => ({ path: p, index: readPartIndex(p) }));
    for (const window of [311, 3000, 1 << 20]) {
      const file = path.join(dir, `w-${window}.pmtiles`);
      assembleArchive(indexed, file, METADATA, MVT, undefined, window);
      expect(fs.readFileSync(file).equals(whole), `window ${window}`).toBe(true);
    }
  });

  it('keep the last write of a tile in a part, drop removed tiles, and accept a tile two parts agree on', async () => {
    const dir = scratch();
    const a = TilePart.create(path.join(dir, 'a.part'));
    const b = TilePart.create(path.join(dir, 'b.part'));
    a.add(1, 0, 0, Uint8Array.of(1));
    a.add(1, 0, 0, Uint8Array.of(2));
    a.add(1, 1, 0, Uint8Array.of(3));
    a.remove(1, 1, 0);
    a.add(2, 3, 3, Uint8Array.of(4));
    b.add(2, 3, 3, Uint8Array.of(6));
    b.add(2, 3, 3, Uint8Array.of(4));
    b.add(0, 0, 0, Uint8Array.of(5));
    expect(a.read(1, 0, 0)).toEqual(Buffer.of(2));
    expect(a.read(1, 1, 0)).toBeUndefined();
    a.close();
    b.close();
    const file = path.join(dir, 'out.pmtiles');
    mergeParts([a.path, b.path], file, METADATA, MVT);
    const archive = await openPmtiles(file);
    const listed = [];
    for await (const t of archive.tiles()) listed.push([t.z, t.x, t.y]);
    expect(listed).toEqual([[0, 0, 0], [1, 0, 0], [2, 3, 3]]);
    expect(await archive.tile(1, 0, 0)).toEqual(Buffer.of(2));
    await archive.close();
  });

  it('a part cut short after its records were read is refused, naming it, and no archive is left', () => {
    const dir = scratch();
    const a = TilePart.create(path.join(dir, 'a.part'));
    a.add(1, 0, 0, new Uint8Array(100).fill(1));
    a.add(1, 1, 1, new Uint8Array(100).fill(2));
    a.close();
    const index = readPartIndex(a.path);
    const whole = fs.readFileSync(a.path);
    fs.writeFileSync(a.path, whole.subarray(0, 150));
    const file = path.join(dir, 'out.pmtiles');
    let err: unknown;
    try { assembleArchive([{ path: a.path, index }], file, METADATA, MVT); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toBe(`archive part ${a.path} is shorter than its records say (byte 150)`);
    expect(fs.readdirSync(dir).sort()).toEqual(['a.part']);
  });

  it('refuse a tile two parts hold with different bytes, naming it', () => {
    const dir = scratch();
    const a = TilePart.create(path.join(dir, 'a.part'));
    const b = TilePart.create(path.join(dir, 'b.part'));
    a.add(3, 5, 6, Uint8Array.of(1));
    b.add(3, 5, 6, Uint8Array.of(2));
    a.close();
    b.close();
    const file = path.join(dir, 'out.pmtiles');
    expect(() => mergeParts([a.path, b.path], file, METADATA, MVT)).toThrow(/tile 3\/5\/6 is in parts 0 and 1 with different bytes/);
    expect(fs.readdirSync(dir).sort()).toEqual(['a.part', 'b.part']);
  });

  it('of parts holding a tile, the record of the latest epoch stands: a correction\'s removal over the tile, a tile made after it over the removal', async () => {
    const dir = scratch();
    const tilesOf = async (file: string) => {
      const archive = await openPmtiles(file);
      const listed: [number, number, number, number][] = [];
      for await (const t of archive.tiles()) listed.push([t.z, t.x, t.y, (await archive.tile(t.z, t.x, t.y) as Uint8Array)[0]]);
      await archive.close();
      return listed;
    };
    // Shards tiled at epoch 0; finalize raised the rule (epoch 1: removals) and tiled their units again (epoch 2).
    const shard = TilePart.create(path.join(dir, 'shard-0.part'));
    const other = TilePart.create(path.join(dir, 'shard-1.part'));
    shard.add(4, 0, 0, Uint8Array.of(1));
    shard.add(4, 1, 0, Uint8Array.of(2));
    shard.add(4, 2, 0, Uint8Array.of(3));
    other.add(4, 3, 0, Uint8Array.of(4));
    shard.close();
    other.close();
    const file = path.join(dir, 'slide.pmtiles');
    const w = new PmtilesWriter(file, { ...MVT, partPath: path.join(dir, 'finalize.part'), parts: [shard.path, other.path] });
    w.remove(4, 0, 0, 1);
    w.remove(4, 1, 0, 1);
    w.add(4, 0, 0, Uint8Array.of(9), 2);
    w.finish(METADATA);
    expect(await tilesOf(file)).toEqual([[4, 0, 0, 9], [4, 2, 0, 3], [4, 3, 0, 4]]);
    // Finalize killed after its removals: a shard run again tiles the units at epoch 2, over finalize's removals.
    const again = TilePart.resume(shard.path);
    again.add(4, 0, 0, Uint8Array.of(9), 2);
    again.add(4, 1, 0, Uint8Array.of(7), 2);
    again.close();
    const killed = TilePart.create(path.join(dir, 'killed.part'));
    killed.remove(4, 0, 0, 1);
    killed.remove(4, 1, 0, 1);
    killed.close();
    const f2 = path.join(dir, 'again.pmtiles');
    const w2 = new PmtilesWriter(f2, { ...MVT, partPath: killed.path, resume: true, parts: [again.path, other.path] });
    w2.finish(METADATA);
    expect(await tilesOf(f2)).toEqual([[4, 0, 0, 9], [4, 1, 0, 7], [4, 2, 0, 3], [4, 3, 0, 4]]);
    // Parts must agree at one epoch.
    const a = TilePart.create(path.join(dir, 'a.part')), b = TilePart.create(path.join(dir, 'b.part'));
    a.add(4, 5, 5, Uint8Array.of(1), 2); b.add(4, 5, 5, Uint8Array.of(2), 2); b.add(4, 6, 6, Uint8Array.of(2), 1);
    a.close(); b.close();
    const v = new PmtilesWriter(path.join(dir, 'two.pmtiles'), { ...MVT, partPath: path.join(dir, 'v.part'), parts: [a.path, b.path] });
    v.remove(4, 6, 6, 1);
    expect(() => v.finish(METADATA)).toThrow(/tile 4\/5\/5 is in parts 1 and 2 with different bytes/);
  });

  it('resume after the last whole record of a part cut short, and refuse to merge a part cut short', () => {
    const dir = scratch();
    const p = path.join(dir, 'a.part');
    const part = TilePart.create(p);
    part.add(2, 1, 1, Uint8Array.of(1, 2, 3));
    part.flush();
    const flushed = fs.statSync(p).size;
    part.add(2, 1, 2, new Uint8Array(100).fill(7));
    part.close();
    // A kill while the second record was being written: its head and some of its bytes are on disk.
    fs.truncateSync(p, fs.statSync(p).size - 10);
    fs.writeFileSync(p, Buffer.concat([fs.readFileSync(p).subarray(0, 8), Buffer.from(new BigUint64Array([BigInt(flushed)]).buffer), fs.readFileSync(p).subarray(16)]));
    expect(() => readPartIndex(p)).toThrow(InputError);
    expect(() => readPartIndex(p)).toThrow(/ends in a partial record/);
    const resumed = TilePart.resume(p);
    expect(resumed.index.count).toBe(1);
    expect(resumed.read(2, 1, 2)).toBeUndefined();
    resumed.add(2, 1, 2, new Uint8Array(100).fill(7));
    resumed.close();
    const index = readPartIndex(p);
    expect([...index.tileId]).toEqual([zxyToTileId(2, 1, 1), zxyToTileId(2, 1, 2)]);
  });

  it('refuse to resume a part that lost records written before its last flush (units marked done would lose tiles)', () => {
    const p = path.join(scratch(), 'a.part');
    const part = TilePart.create(p);
    part.add(2, 1, 1, Uint8Array.of(1, 2, 3));
    part.add(2, 1, 2, new Uint8Array(100).fill(7));
    part.close();
    const size = fs.statSync(p).size;
    fs.truncateSync(p, size - 10);
    expect(() => TilePart.resume(p)).toThrow(WorkStateError);
    expect(() => TilePart.resume(p)).toThrow(`archive part ${p} holds ${size - 100 - 32} bytes of whole records, but ${size} had been written: it was cut short or damaged since, and the units marked done would lose tiles; start over with --force`);
  });

  it('a tile larger than the write buffer counts as flushed, and a finished part cut at a record\'s end is refused', () => {
    const p = path.join(scratch(), 'big.part');
    const part = TilePart.create(p);
    part.add(2, 1, 1, new Uint8Array(100).fill(1));
    part.flush();
    part.add(2, 1, 2, new Uint8Array(2 << 20).fill(2));
    part.close();
    const whole = fs.statSync(p).size;
    // Cut at the end of the first record: the large one, on disk before, is lost.
    fs.truncateSync(p, 16 + 32 + 100);
    expect(() => TilePart.resume(p)).toThrow(`archive part ${p} holds ${16 + 32 + 100} bytes of whole records, but ${whole} had been written`);
    expect(() => readPartIndex(p)).toThrow(`archive part ${p} holds ${16 + 32 + 100} bytes of whole records, but ${whole} had been written: it was cut short`);
  });

  it('refuse a file that is not a part', () => {
    const p = path.join(scratch(), 'x.part');
    fs.writeFileSync(p, 'hello, not a part at all');
    expect(() => readPartIndex(p)).toThrow(/is not an archive part/);
  });
});

describe('atomic writing', () => {
  it('names nothing FILE until finish, and leaves only FILE after it', () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const w = new PmtilesWriter(file, MVT);
    for (const t of syntheticTiles(1, 3, 1)) w.add(t.z, t.x, t.y, t.bytes);
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.readdirSync(dir)).toEqual([expect.stringMatching(/^slide\.pmtiles\.tmp-[0-9a-f]{8}\.part$/)]);
    w.finish(METADATA);
    expect(fs.readdirSync(dir)).toEqual(['slide.pmtiles']);
  });

  it('with a part it names (a work directory), assembles beside the part, under a name of its own', async () => {
    const dir = scratch();
    const work = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const partPath = path.join(work, 'slide.part');
    // What a killed assembly left: the work directory's owner removes it with the directory.
    fs.writeFileSync(`${partPath}.archive-0badcafe`, 'half an archive a kill left');
    fs.writeFileSync(`${file}.tmp-0badcafe`, 'not the writer\'s');
    const w = new PmtilesWriter(file, { ...MVT, partPath });
    const tiles = syntheticTiles(1, 3, 1);
    for (const t of tiles) w.add(t.z, t.x, t.y, t.bytes);
    w.finish(METADATA);
    expect(fs.readdirSync(dir).sort()).toEqual(['slide.pmtiles', 'slide.pmtiles.tmp-0badcafe']);
    expect(fs.readdirSync(work)).toEqual(['slide.part.archive-0badcafe']);
    const archive = await openPmtiles(file);
    for (const t of tiles) expect(Buffer.from((await archive.tile(t.z, t.x, t.y)) as Uint8Array).equals(t.bytes)).toBe(true);
    await archive.close();
  });

  const shm = fs.existsSync('/dev/shm') && fs.statSync('/dev/shm').dev !== fs.statSync(os.tmpdir()).dev ? '/dev/shm' : undefined;
  it.skipIf(!shm)('assembled on another file system (a work directory elsewhere), the archive is copied beside its name, then named', async () => {
    const dir = scratch();
    const work = fs.mkdtempSync(path.join(shm as string, 'mudm-part-'));
    try {
      const file = path.join(dir, 'slide.pmtiles');
      const w = new PmtilesWriter(file, { ...MVT, partPath: path.join(work, 'slide.part') });
      const tiles = syntheticTiles(1, 3, 1);
      for (const t of tiles) w.add(t.z, t.x, t.y, t.bytes);
      w.finish(METADATA);
      expect(fs.readdirSync(dir)).toEqual(['slide.pmtiles']);
      expect(fs.readdirSync(work)).toEqual([]);
      const archive = await openPmtiles(file);
      for (const t of tiles) expect(Buffer.from((await archive.tile(t.z, t.x, t.y)) as Uint8Array).equals(t.bytes)).toBe(true);
      await archive.close();
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it('syncs the assembled archive to disk before naming it, and the folder after (whole after a power loss too)', () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const w = new PmtilesWriter(file, MVT);
    for (const t of syntheticTiles(1, 3, 1)) w.add(t.z, t.x, t.y, t.bytes);
    const order: string[] = [];
    const sync = vi.spyOn(fs, 'fsyncSync').mockImplementation((fd) => { order.push(`sync ${fs.readlinkSync(`/proc/self/fd/${fd}`)}`); });
    const link = vi.spyOn(fs, 'linkSync');
    link.mockImplementation((from, to) => { order.push(`link ${String(to)}`); link.mockRestore(); fs.linkSync(from, to); });
    try {
      w.finish(METADATA);
    } finally {
      sync.mockRestore();
      link.mockRestore();
    }
    expect(order).toEqual([expect.stringMatching(/^sync .*slide\.pmtiles\.tmp-[0-9a-f]{8}$/), `link ${file}`, `sync ${fs.realpathSync(dir)}`]);
  });

  it('leaves no FILE and no temporaries when aborted', () => {
    const dir = scratch();
    const w = new PmtilesWriter(path.join(dir, 'slide.pmtiles'), MVT);
    w.add(0, 0, 0, Uint8Array.of(1));
    w.abort();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('leaves no FILE and no temporaries when finishing fails, and an old FILE as it was', () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const w = new PmtilesWriter(file, MVT);
    w.add(0, 0, 0, Uint8Array.of(1));
    expect(() => w.finish({ name: 'no vector_layers' })).toThrow(OutputError);
    expect(fs.readdirSync(dir)).toEqual([]);

    // The rename fails (a directory is in the way): the assembled temporary goes too.
    fs.mkdirSync(path.join(file, 'in-the-way'), { recursive: true });
    const w2 = new PmtilesWriter(file, MVT);
    w2.add(0, 0, 0, Uint8Array.of(1));
    expect(() => w2.finish(METADATA)).toThrow(OutputError);
    expect(fs.readdirSync(dir)).toEqual(['slide.pmtiles']);
    expect(fs.statSync(file).isDirectory()).toBe(true);
  });

  it('never writes over a file: one at the name when it finishes (put there while it ran) stays, and finish fails naming it', () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const w = new PmtilesWriter(file, MVT);
    w.add(0, 0, 0, Uint8Array.of(9));
    fs.writeFileSync(file, 'a user\'s file');
    expect(() => w.finish(METADATA)).toThrow(`${file} appeared while this build ran (another build, or a file put there): left as it is; this build's archive was not written`);
    expect(fs.readFileSync(file, 'utf8')).toBe('a user\'s file');
    expect(fs.readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
    // Without a file in the way, the whole archive appears at once under its name.
    fs.rmSync(file);
    writeArchive(file, syntheticTiles(1, 2, 1));
    expect(fs.readFileSync(file).subarray(0, 7).toString()).toBe('PMTiles');
  });

  it('a part whose file vanished fails the assembly with the part named, leaving nothing', () => {
    const dir = scratch();
    const p = TilePart.create(path.join(dir, 'a.part'));
    p.add(0, 0, 0, Uint8Array.of(1));
    p.close();
    const index = p.index;
    fs.rmSync(p.path);
    expect(() => assembleArchive([{ path: p.path, index }], path.join(dir, 'x.pmtiles'), METADATA, MVT)).toThrow(`cannot read archive part ${p.path}`);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
