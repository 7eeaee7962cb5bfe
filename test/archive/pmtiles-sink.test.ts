// PmtilesSink: a real build routed into archives equals its directory build; the sink's rules (force, resume, paths).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Compression, TileType } from '../../src/archive/pmtiles-format.js';
import { PmtilesSink } from '../../src/archive/pmtiles-sink.js';
import { openPmtiles } from '../../src/archive/pmtiles-reader.js';
import { MemorySink, type TileSink } from '../../src/io/sink.js';
import { OutputError } from '../../src/report/errors.js';
import { buildSquares } from '../inspect/fixture.js';
import { METADATA, referenceReader, scratchDirs } from './helpers.js';

const scratch = scratchDirs('pmtiles-sink');

/** Routes what a build writes: tiles of each format to its archive, the descriptor to both and to memory, the rest to memory. */
class RoutingSink implements TileSink {
  readonly rest = new MemorySink();
  constructor(private readonly archives: Record<string, PmtilesSink>) {}
  private all(): TileSink[] {
    return [...Object.values(this.archives), this.rest];
  }
  async initialize(o: { force: boolean; resume: boolean }) {
    for (const s of this.all()) await s.initialize(o);
  }
  async begin(o: { force: boolean; resume: boolean }) {
    for (const s of this.all()) await s.begin(o);
  }
  private route(rel: string): TileSink[] {
    if (rel === 'tileset.json') return this.all();
    const archive = this.archives[rel.slice(rel.lastIndexOf('.') + 1)];
    return archive && /^\d/.test(rel) ? [archive] : [this.rest];
  }
  async write(rel: string, bytes: Uint8Array | string) {
    for (const s of this.route(rel)) await s.write(rel, bytes);
  }
  async read(rel: string) {
    return this.route(rel)[0].read(rel);
  }
  async remove(rel: string) {
    for (const s of this.route(rel)) await s.remove(rel);
  }
  async finish() {
    for (const s of this.all()) await s.finish();
  }
}

const pbfOptions = { tileType: TileType.Mvt } as const;

describe('PmtilesSink', () => {
  it('holds every tile of a build, equal to the directory build, and the descriptor as metadata', async () => {
    const dir = scratch();
    const expected = (await buildSquares()) as MemorySink;
    const pbf = new PmtilesSink(path.join(dir, 'slide.pmtiles'), pbfOptions);
    const json = new PmtilesSink(path.join(dir, 'slide-json.pmtiles'), { tileType: TileType.Other });
    await buildSquares({ sink: new RoutingSink({ pbf, json }) });

    const descriptor = JSON.parse(Buffer.from(expected.files.get('tileset.json') as Uint8Array).toString('utf8'));
    for (const [archive, ext, type, compression] of [[pbf, 'pbf', TileType.Mvt, Compression.None], [json, 'json', TileType.Other, Compression.Gzip]] as const) {
      const want = [...expected.files].filter(([k]) => /^\d/.test(k) && k.endsWith(`.${ext}`));
      expect(want.length).toBeGreaterThan(5);
      const bytes = fs.readFileSync(archive.file);
      const ref = referenceReader(bytes);
      expect(await ref.getHeader()).toMatchObject({ tileType: type, tileCompression: compression, minZoom: 0, maxZoom: 2, numAddressedTiles: want.length });
      expect(await ref.getMetadata()).toEqual(descriptor);
      for (const [rel, tile] of want) {
        const [z, x, y] = rel.replace(/\.\w+$/, '').split('/').map(Number);
        const got = await ref.getZxy(z, x, y);
        expect(got && Buffer.from(got.data).equals(tile), rel).toBe(true);
      }
      expect(archive.result?.bytes).toBe(bytes.length);
    }
    expect(fs.readdirSync(dir).sort()).toEqual(['slide-json.pmtiles', 'slide.pmtiles']);
  });

  it('refuses an existing archive without force or resume, and a directory in its place', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    fs.writeFileSync(file, 'old');
    const sink = new PmtilesSink(file, pbfOptions);
    await expect(sink.initialize({ force: false, resume: false })).rejects.toThrow(`output ${file} exists; use --force to replace it`);
    await expect(sink.initialize({ force: false, resume: false })).rejects.toBeInstanceOf(OutputError);
    await sink.initialize({ force: true, resume: false });
    const inTheWay = path.join(dir, 'dir.pmtiles');
    fs.mkdirSync(inTheWay);
    await expect(new PmtilesSink(inTheWay, pbfOptions).initialize({ force: true, resume: false })).rejects.toThrow(/is a directory, not an archive file/);
  });

  it('removes the old archive at begin, and no file it did not write (temporaries of that name included)', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    for (const n of ['slide.pmtiles', 'slide.pmtiles.tmp-0123abcd', 'slide.pmtiles.tmp-89abcdef.part', 'other.pmtiles.tmp-0123abcd', 'slide.pmtiles.tmp-notmine', 'notes.txt']) {
      fs.writeFileSync(path.join(dir, n), 'x');
    }
    const sink = new PmtilesSink(file, pbfOptions);
    await sink.initialize({ force: true, resume: false });
    await sink.begin({ force: true, resume: false });
    expect(fs.readdirSync(dir).sort()).toEqual([
      'notes.txt', 'other.pmtiles.tmp-0123abcd', 'slide.pmtiles.part', 'slide.pmtiles.tmp-0123abcd', 'slide.pmtiles.tmp-89abcdef.part', 'slide.pmtiles.tmp-notmine',
    ]);
    sink.abort();
    expect(fs.existsSync(path.join(dir, 'slide.pmtiles.part'))).toBe(false);
  });

  it('continues a killed build with resume: tiles written before stay, the archive comes out whole', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const first = new PmtilesSink(file, pbfOptions);
    await first.initialize({ force: false, resume: false });
    await first.begin({ force: false, resume: false });
    await first.write('1/0/0.pbf', Uint8Array.of(1));
    await first.write('1/1/1.pbf', Uint8Array.of(2));
    await first.flush();
    await first.write('2/0/0.pbf', Uint8Array.of(4));
    // Killed here, the last tile still in the buffer: no finish. A new process resumes.
    const second = new PmtilesSink(file, pbfOptions);
    await second.initialize({ force: false, resume: true });
    await second.begin({ force: false, resume: true });
    expect(await second.read('1/0/0.pbf')).toEqual(Buffer.of(1));
    expect(await second.read('2/0/0.pbf')).toBeUndefined();
    await second.write('1/1/1.pbf', Uint8Array.of(2));
    await second.write('0/0/0.pbf', Uint8Array.of(3));
    await second.write('tileset.json', JSON.stringify(METADATA));
    await second.finish();
    expect(fs.readdirSync(dir)).toEqual(['slide.pmtiles']);
    const archive = await openPmtiles(file);
    const tiles = [];
    for await (const t of archive.tiles()) tiles.push(`${t.z}/${t.x}/${t.y}`);
    expect(tiles).toEqual(['0/0/0', '1/0/0', '1/1/1']);
    expect(await archive.metadata()).toEqual(METADATA);
    await archive.close();
  });

  it('takes only its tiles and the descriptor, naming what it refuses', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const sink = new PmtilesSink(file, pbfOptions);
    await sink.initialize({ force: false, resume: false });
    await expect(sink.write('0/0/0.pbf', Uint8Array.of(1))).rejects.toThrow(/not open for writing/);
    await sink.begin({ force: false, resume: false });
    await sink.write('3/0/1/2/5/6.pbf', Uint8Array.of(1));
    await expect(sink.write('build-report.json', '{}')).rejects.toThrow(`${file}: an archive holds tiles and tileset.json only, not build-report.json`);
    await expect(sink.write('3/0/1/2/5/6.json', '{}')).rejects.toThrow(/holds \.pbf tiles, not 3\/0\/1\/2\/5\/6\.json/);
    // A name no build writes is no tile (read as 3/0/1/2/5/6 it took that tile's place).
    for (const p of ['3/0/1/2/5/06.pbf', '3/0/1/2/05/6.pbf', '03/0/1/2/5/6.pbf']) {
      await expect(sink.write(p, Uint8Array.of(2)), p).rejects.toThrow(`${file}: an archive holds tiles and tileset.json only, not ${p}`);
    }
    expect([...(await sink.read('3/0/1/2/5/6.pbf')) ?? []]).toEqual([1]);
    await expect(sink.write('3/0/1/3/5/6.pbf', Uint8Array.of(1))).rejects.toThrow(/one plane \(as 3\/0\/1\/2\/5\/6\.pbf\), not 3\/0\/1\/3\/5\/6\.pbf/);
    await expect(sink.write('2/0/1/2/5/6.pbf', Uint8Array.of(1))).rejects.toThrow(/2\/0\/1\/2\/5\/6\.pbf is not a tile of zoom 0\.\.26/);
    await expect(sink.finish()).rejects.toThrow(/no tileset\.json was written/);
    await sink.remove('3/0/1/2/5/6.pbf');
    expect(await sink.read('3/0/1/2/5/6.pbf')).toBeUndefined();
    await sink.write('3/0/1/2/5/7.pbf', Uint8Array.of(2));
    await sink.write('tileset.json', JSON.stringify(METADATA));
    await sink.finish();
    const archive = await openPmtiles(file);
    expect(archive.header.addressedTiles).toBe(1);
    expect(await archive.tile(3, 5, 6)).toBeUndefined();
    expect([...(await archive.tile(3, 5, 7)) ?? []]).toEqual([2]);
    await archive.close();
  });

  it('gzips JSON tiles, and reads them back as they were written', async () => {
    const dir = scratch();
    const file = path.join(dir, 'tiles.pmtiles');
    const sink = new PmtilesSink(file, { tileType: TileType.Other });
    await sink.initialize({ force: false, resume: false });
    await sink.begin({ force: false, resume: false });
    const text = JSON.stringify({ type: 'FeatureCollection', features: Array.from({ length: 50 }, (_, i) => ({ type: 'Feature', id: i })) });
    await sink.write('2/1/3.json', text);
    expect(Buffer.from((await sink.read('2/1/3.json')) as Uint8Array).toString()).toBe(text);
    await sink.write('tileset.json', '{"tilejson":"3.0.0"}');
    await sink.finish();
    const archive = await openPmtiles(file);
    expect(archive.header.tileCompression).toBe(Compression.Gzip);
    expect(((await archive.storedTile(2, 1, 3)) as Uint8Array).length).toBeLessThan(text.length / 2);
    expect(Buffer.from((await archive.tile(2, 1, 3)) as Uint8Array).toString()).toBe(text);
    await archive.close();
  });
});
