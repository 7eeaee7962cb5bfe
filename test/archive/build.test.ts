// Builds into archives (-o FILE.pmtiles, --archive pmtiles) against directory builds of the same input: every tile,
// the header and metadata through the `pmtiles` reader, extract byte for byte, verify and inspect on archives.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Header } from 'pmtiles';
import { archiveName, PMTILES_MEDIA_TYPE } from '../../src/archive/archive-names.js';
import { Compression, encodeDirectory, encodeHeader, HEADER_BYTES, TileType } from '../../src/archive/pmtiles-format.js';
import { MAX_LISTED, openPmtiles } from '../../src/archive/pmtiles-reader.js';
import { InputError } from '../../src/report/errors.js';
import { PmtilesWriter } from '../../src/archive/pmtiles-writer.js';
import { buildPyramid } from '../../src/build/pipeline.js';
import { ArchiveReader, openPyramidReader } from '../../src/inspect/archive-reader.js';
import { decodeTile } from '../../src/inspect/decode.js';
import { extractArchives } from '../../src/inspect/extract.js';
import { inspectPyramid } from '../../src/inspect/summary.js';
import { verifyPyramid } from '../../src/inspect/verify.js';
import { fileSource } from '../../src/io/read.js';
import type { Options } from '../../src/options.js';
import type { Asset } from '../../src/model/descriptor.js';
import { expectSamePyramid, listFiles } from '../e2e/helpers.js';
import { tmpDir } from '../helpers/pyramid.js';
import { referenceReader } from './helpers.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../sample-data/slide');
const inputs = () => ['cells.json', 'nuclei.json'].map((f) => ({ source: fileSource(path.join(SAMPLE, f)) }));
/** One plane, zooms 0–4 (tiles of 128 px): a few hundred tiles. */
const ONE_PLANE: Partial<Options> = { maxZoom: 4, unitSize: 512, workers: 2 };
/** Six planes (c × z), zooms 0–2, with previews. */
const PLANES: Partial<Options> = { maxZoom: 2, unitSize: 512, workers: 2, planeField: 'c=c,z=z', preview: true };

let root = '';
let dirPbf = '';
let dirPlanes = '';
let file = '';
let planes = '';

beforeAll(async () => {
  root = tmpDir('archive-build');
  dirPbf = path.join(root, 'pbf');
  dirPlanes = path.join(root, 'planes-dir');
  file = path.join(root, 'slide.pmtiles');
  planes = path.join(root, 'planes');
  await buildPyramid(inputs(), { ...ONE_PLANE, out: dirPbf, format: 'pbf' });
  await buildPyramid(inputs(), { ...ONE_PLANE, out: file });
  await buildPyramid(inputs(), { ...PLANES, out: dirPlanes });
  await buildPyramid(inputs(), { ...PLANES, out: planes, archive: 'pmtiles' });
}, 120_000);

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Tile files of a directory build: relative path → bytes. */
function tileFiles(dir: string): Map<string, Buffer> {
  return new Map(listFiles(dir).filter((f) => /^\d+\/.*\.(json|pbf)$/.test(f)).map((f) => [f, fs.readFileSync(path.join(dir, f))]));
}

/** The spec's layout: header, root directory, metadata, leaf directories, tile data, back to back to the end of the file. */
function expectSpecLayout(h: Header, size: number): void {
  expect(h.specVersion).toBe(3);
  expect(h.rootDirectoryOffset).toBe(127);
  expect(h.jsonMetadataOffset).toBe(h.rootDirectoryOffset + h.rootDirectoryLength);
  expect(h.leafDirectoryOffset).toBe(h.jsonMetadataOffset + h.jsonMetadataLength);
  expect(h.tileDataOffset).toBe(h.leafDirectoryOffset + (h.leafDirectoryLength ?? 0));
  expect(h.tileDataOffset + (h.tileDataLength ?? 0)).toBe(size);
  expect(h.internalCompression).toBe(Compression.Gzip);
  expect(h.clustered).toBe(true);
  expect(h.numTileContents).toBeLessThanOrEqual(h.numTileEntries);
}

const json = (f: string): unknown => JSON.parse(fs.readFileSync(f, 'utf8'));

describe('-o FILE.pmtiles', () => {
  it('holds the PBF pyramid of the plane, each tile equal to the directory build, the descriptor as metadata', async () => {
    expect(fs.readdirSync(root).filter((n) => n.startsWith('slide') || n.startsWith('.slide')).sort(), 'the archive, its report beside, no work directory')
      .toEqual(['slide.build-report.json', 'slide.pmtiles']);
    const bytes = fs.readFileSync(file);
    const ref = referenceReader(bytes);
    const h = await ref.getHeader();
    expectSpecLayout(h, bytes.length);
    const want = tileFiles(dirPbf);
    expect(want.size).toBeGreaterThan(100);
    expect(h).toMatchObject({ tileType: TileType.Mvt, tileCompression: Compression.None, minZoom: 0, maxZoom: 4, numAddressedTiles: want.size });
    expect(await ref.getMetadata()).toEqual(json(path.join(dirPbf, 'tileset.json')));
    for (const [rel, tile] of want) {
      const [z, x, y] = rel.replace(/\.pbf$/, '').split('/').map(Number);
      const got = await ref.getZxy(z, x, y);
      expect(got && Buffer.from(got.data).equals(tile), rel).toBe(true);
    }
  });

  it('extracts to the directory build of the same input, byte for byte', async () => {
    const out = path.join(root, 'extracted-file');
    const r = await extractArchives(file, out, { force: false });
    expect(r.tiles).toBe(tileFiles(dirPbf).size);
    expectSamePyramid(out, dirPbf);
  });

  it('extracts the folders of zooms without a tile too, as a directory build makes them (and records them)', async () => {
    const dir = tmpDir('archive-empty-zooms');
    // Three squares of 0.6 px: with --lod none nothing is left of them above the finest zoom.
    const square = (x: number) => ({ type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [[[x, 10], [x + 0.6, 10], [x + 0.6, 10.6], [x, 10.6], [x, 10]]] } });
    fs.writeFileSync(path.join(dir, 'tiny.json'), JSON.stringify({ type: 'FeatureCollection', features: [square(10), square(500), square(900)] }));
    const opts: Partial<Options> = { imageSize: '4096,4096', lod: 'none', format: 'pbf', workers: 1 };
    const plain = path.join(dir, 'plain'), archive = path.join(dir, 'tiny.pmtiles'), extracted = path.join(dir, 'extracted');
    await buildPyramid([{ source: fileSource(path.join(dir, 'tiny.json')) }], { ...opts, out: plain });
    await buildPyramid([{ source: fileSource(path.join(dir, 'tiny.json')) }], { ...opts, out: archive });
    await extractArchives(archive, extracted, { force: false });
    const zoomDirs = (d: string) => fs.readdirSync(d).filter((n) => /^\d+$/.test(n)).sort((a, b) => Number(a) - Number(b));
    expect(zoomDirs(plain)).toEqual(['0', '1', '2', '3']);
    expect(fs.readdirSync(path.join(plain, '0'))).toEqual([]);
    expect(zoomDirs(extracted)).toEqual(zoomDirs(plain));
    fs.copyFileSync(path.join(dir, 'tiny.build-report.json'), path.join(extracted, 'build-report.json'));
    expectSamePyramid(extracted, plain);
  });

  it('makes zoom folders from metadata zooms a build can make only (an archive of another writer may say anything)', async () => {
    const source = await openPmtiles(file);
    const metadata = await source.metadata() as Record<string, unknown>;
    for (const [name, zooms] of [['far', { maxzoom: 40 }], ['text', { minzoom: '3' }], ['fine', {}]] as const) {
      const crafted = path.join(root, `crafted-${name}.pmtiles`);
      const w = new PmtilesWriter(crafted, { tileType: TileType.Mvt, tileCompression: Compression.None });
      for await (const t of source.tiles()) w.add(t.z, t.x, t.y, await source.tile(t.z, t.x, t.y) as Uint8Array);
      w.finish({ ...metadata, ...zooms });
      const out = path.join(root, `crafted-${name}-out`);
      await extractArchives(crafted, out, { force: false });
      expect(fs.readdirSync(out).filter((n) => /^\d+$/.test(n)).sort(), name).toEqual(['0', '1', '2', '3', '4']);
    }
    await source.close();
  });

  it('gives the same bytes with one worker', async () => {
    const again = path.join(tmpDir('archive-w1'), 'slide.pmtiles');
    await buildPyramid(inputs(), { ...ONE_PLANE, workers: 1, out: again });
    expect(fs.readFileSync(again).equals(fs.readFileSync(file))).toBe(true);
    fs.rmSync(path.dirname(again), { recursive: true });
  });
});

describe('-o DIR --archive pmtiles', () => {
  it('writes one archive per plane and format, listed in tileset.json, each tile equal to the directory build', async () => {
    const descriptor = json(path.join(planes, 'tileset.json')) as { assets: Asset[]; tiles: string[] };
    const dirDescriptor = json(path.join(dirPlanes, 'tileset.json')) as { assets: Asset[] };
    const archives = descriptor.assets.filter((a) => a.media_type === PMTILES_MEDIA_TYPE);
    expect(descriptor.assets.slice(0, dirDescriptor.assets.length), 'the previews first, as a directory build lists them').toEqual(dirDescriptor.assets);
    expect(archives).toHaveLength(12);
    expect(archives[0]).toEqual({ role: 'tiles', href: 'tiles-c0-z0.pbf.pmtiles', media_type: PMTILES_MEDIA_TYPE, title: 'PBF tiles of c=0, z=0', format: 'pbf', c: 0, z: 0 });
    expect({ ...descriptor, assets: dirDescriptor.assets }, 'the descriptor of the directory build, and the archives').toEqual(dirDescriptor);
    expect(descriptor.tiles).toEqual(['{zlvl}/{c}/{z}/{x}/{y}.pbf']);
    expect(fs.readdirSync(planes).sort()).toEqual(['.mudm-written', 'build-report.json', 'preview', ...archives.map((a) => a.href).sort(), 'tileset.json']);
    const manifest = JSON.parse(fs.readFileSync(path.join(planes, '.mudm-written', 'manifest.json'), 'utf8')) as { files: string[] };
    expect(manifest.files, 'the record lists every archive').toEqual(expect.arrayContaining(archives.map((a) => a.href)));

    const want = tileFiles(dirPlanes);
    let addressed = 0;
    for (const a of archives) {
      const bytes = fs.readFileSync(path.join(planes, a.href));
      const ref = referenceReader(bytes);
      const h = await ref.getHeader();
      expectSpecLayout(h, bytes.length);
      const pbf = a.format === 'pbf';
      expect(h, a.href).toMatchObject({ tileType: pbf ? TileType.Mvt : TileType.Other, tileCompression: pbf ? Compression.None : Compression.Gzip });
      // The folder's descriptor, and which of its archives this one is (so that renamed or swapped ones are told apart).
      expect(await ref.getMetadata()).toEqual({ ...descriptor, archive: { href: a.href, format: a.format, c: a.c, z: a.z } });
      addressed += h.numAddressedTiles;
    }
    expect(addressed).toBe(want.size);
    for (const [rel, tile] of want) {
      const [z, c, zz, x, y] = rel.replace(/\.\w+$/, '').split('/').map(Number);
      const ref = referenceReader(fs.readFileSync(path.join(planes, archiveName({ t: 0, c, z: zz }, ['c', 'z'], rel.endsWith('.pbf') ? 'pbf' : 'json'))));
      const got = await ref.getZxy(z, x, y);
      expect(got && Buffer.from(got.data).equals(tile), rel).toBe(true);
    }
  });

  it('extracts to the directory build, JSON tiles, overviews and previews included, byte for byte', async () => {
    const out = path.join(root, 'extracted-planes');
    await extractArchives(planes, out, { force: false });
    expectSamePyramid(out, dirPlanes);
  });
});

describe('a plane of meshes alone (no PBF tiles: PBF does not carry meshes)', () => {
  it('gets no PBF archive, which the descriptor does not list; verify passes, serve-side readers see no tiles, extract equals the directory build', async () => {
    const dir = tmpDir('archive-meshes');
    const doc = JSON.stringify({ type: 'FeatureCollection', features: [
      { type: 'Feature', id: 1, properties: { c: 0 }, geometry: { type: 'Polygon', coordinates: [[[10, 10], [40, 10], [40, 40], [10, 40], [10, 10]]] } },
      { type: 'Feature', id: 2, properties: { c: 1 }, geometry: { type: 'TIN', coordinates: [[[[300, 300, 0], [340, 300, 0], [300, 340, 1], [300, 300, 0]]]] } },
    ] });
    fs.writeFileSync(path.join(dir, 'mesh.json'), doc);
    const opts: Partial<Options> = { imageSize: '1000,1000', planeField: 'c=c', workers: 1 };
    const out = path.join(dir, 'archives'), plain = path.join(dir, 'plain');
    await buildPyramid([{ source: fileSource(path.join(dir, 'mesh.json')) }], { ...opts, out, archive: 'pmtiles' });
    await buildPyramid([{ source: fileSource(path.join(dir, 'mesh.json')) }], { ...opts, out: plain });
    expect(listFiles(out).filter((f) => f.endsWith('.pmtiles')).sort()).toEqual(['tiles-c0.json.pmtiles', 'tiles-c0.pbf.pmtiles', 'tiles-c1.json.pmtiles']);
    const assets = (json(path.join(out, 'tileset.json')) as { assets: Asset[] }).assets.filter((a) => a.media_type === PMTILES_MEDIA_TYPE).map((a) => a.href);
    expect(assets).toEqual(['tiles-c0.pbf.pmtiles', 'tiles-c0.json.pmtiles', 'tiles-c1.json.pmtiles']);
    const reader = await openPyramidReader(out);
    expect(verifyPyramid(reader).problems).toEqual([]);
    reader.close();
    const extracted = path.join(dir, 'extracted');
    await extractArchives(out, extracted, { force: false });
    expectSamePyramid(extracted, plain);
  });
});

describe('inspect and verify', () => {
  it('verify passes archives, and inspect sums them as it sums the directory build', async () => {
    for (const [target, dir] of [[file, dirPbf], [planes, dirPlanes]]) {
      const reader = await openPyramidReader(target);
      expect(reader).toBeInstanceOf(ArchiveReader);
      const v = verifyPyramid(reader);
      expect(v.problems, target).toEqual([]);
      expect(v.checked).toEqual(verifyPyramid(dir).checked);
      // All but where it is, its assets and archive files (the directory has none) and the report's timing.
      const { root: _a, assets: _b, build: _c, archives, ...summary } = inspectPyramid(reader);
      const { root: _d, assets: _e, build: _f, ...fromDir } = inspectPyramid(dir);
      expect(summary).toEqual(fromDir);
      expect(fromDir).not.toHaveProperty('archives');
      // Each archive once, its size on disk; PBF stored as encoded, JSON gzipped (--tile-compression auto).
      const files = target === file ? [file] : fs.readdirSync(planes).filter((n) => n.endsWith('.pmtiles'));
      expect(archives?.map((a) => a.path).sort()).toEqual(files.sort());
      for (const a of archives ?? []) {
        expect(a.bytes).toBe(fs.statSync(target === file ? file : path.join(planes, a.path)).size);
        expect(a.tileCompression, a.path).toBe(a.path.endsWith('.json.pmtiles') ? 'gzip' : 'none');
      }
      reader.close();
    }
  });

  it('verify passes one archive copied without its report, saying the counts were not compared; a folder still needs its report', async () => {
    const lone = path.join(root, 'lone', 'slide.pmtiles');
    fs.mkdirSync(path.dirname(lone));
    fs.copyFileSync(file, lone);
    const reader = await openPyramidReader(lone);
    const v = verifyPyramid(reader);
    reader.close();
    const unknownBudget = 'no build report says which budget the build held (--tile-budget, or none with --lod none): tile sizes are not checked (give --tile-budget to check them)';
    expect([v.ok, v.problems, v.notes]).toEqual([true, [], [unknownBudget, 'no build report beside the archive, so the tile counts were not compared with it']]);
    // A budget given is held: the archive's coarse tiles are over 1 KiB.
    const held = await openPyramidReader(lone);
    expect(verifyPyramid(held, { tileBudget: 1024 }).counts['tile-over-budget']).toBeGreaterThan(0);
    held.close();
    const withReport = await openPyramidReader(file);
    expect(verifyPyramid(withReport).notes).toEqual([]);
    withReport.close();
    // Extracted, it has no report either: said so, not a problem (a build always writes one; its record says none was).
    const out = path.join(root, 'lone-extracted');
    await extractArchives(lone, out, { force: false });
    const x = verifyPyramid(out);
    expect([x.ok, x.problems, x.notes]).toEqual([true, [], [unknownBudget, 'no build report: extracted from an archive that had none beside it, so the tile counts were not compared with it']]);
    const folder = path.join(root, 'no-report');
    fs.cpSync(planes, folder, { recursive: true });
    fs.rmSync(path.join(folder, 'build-report.json'));
    const f = await openPyramidReader(folder);
    expect(verifyPyramid(f).problems.map((p) => p.code)).toEqual(['report-missing']);
    f.close();
    // Its tileset.json edited: every archive says which member differs, so the edit is told from a foreign archive.
    const edited = path.join(root, 'edited');
    fs.cpSync(planes, edited, { recursive: true });
    const d = JSON.parse(fs.readFileSync(path.join(edited, 'tileset.json'), 'utf8')) as { name?: string };
    d.name = 'renamed by hand';
    fs.writeFileSync(path.join(edited, 'tileset.json'), JSON.stringify(d));
    const e = await openPyramidReader(edited);
    const said = new Set(verifyPyramid(e).problems.filter((p) => p.code === 'archive-invalid').map((p) => p.message));
    e.close();
    expect([...said]).toEqual(['its metadata is not the tileset descriptor: they differ in name (tileset.json edited, or the archive another build\'s?)']);
    // Nor is it extracted into a directory that would verify as one archive's extract does.
    const gone = path.join(root, 'no-report-extracted');
    await expect(extractArchives(folder, gone, { force: false })).rejects.toThrow(`${folder} cannot be extracted whole (its build-report.json is missing, which a folder build writes beside its archives); nothing was written`);
    expect(fs.existsSync(gone)).toBe(false);
  });

  it('verify checks the header against the directories: addressed tiles, distinct contents, zooms', async () => {
    const bad = path.join(root, 'header', 'slide.pmtiles');
    fs.mkdirSync(path.dirname(bad));
    const bytes = fs.readFileSync(file);
    const addressed = Number(bytes.readBigUInt64LE(72)), contents = Number(bytes.readBigUInt64LE(88)), maxZoom = bytes[101];
    bytes.writeBigUInt64LE(BigInt(addressed - 2), 72);
    bytes.writeBigUInt64LE(BigInt(contents + 1), 88);
    bytes[101] = maxZoom + 3;
    fs.writeFileSync(bad, bytes);
    const reader = await openPyramidReader(bad);
    const v = verifyPyramid(reader);
    reader.close();
    expect(v.problems.map((p) => p.message)).toEqual([
      `the header says ${addressed - 2} addressed tiles, the directories hold ${addressed}`,
      `the header says ${contents + 1} distinct tile contents, the directories hold ${contents}`,
      `the header says zooms ${bytes[100]}..${maxZoom + 3}, the tiles are at zooms ${bytes[100]}..${maxZoom}`,
    ]);
  });

  it('verify and extract refuse tiles past the tile data section the header gives', async () => {
    const bad = path.join(root, 'data-length', 'slide.pmtiles');
    fs.mkdirSync(path.dirname(bad));
    const bytes = fs.readFileSync(file);
    const dataStart = Number(bytes.readBigUInt64LE(56));
    bytes.writeBigUInt64LE(10n, 64);
    fs.writeFileSync(bad, bytes);
    const reader = await openPyramidReader(bad);
    const v = verifyPyramid(reader);
    reader.close();
    const beyond = v.problems.filter((p) => p.code === 'archive-invalid');
    expect(beyond).toHaveLength(1);
    expect(beyond[0].message).toMatch(new RegExp(`^\\d+ tile\\(s\\) lie past the tile data section the header gives \\(bytes ${dataStart}–${dataStart + 9}\\), the first \\d+/\\d+/\\d+\\.pbf \\(bytes ${dataStart}–\\d+\\)$`));
    await expect(extractArchives(bad, path.join(root, 'data-length-out'), { force: false })).rejects.toThrow(/cannot be extracted whole .*lie past the tile data section/);
    expect(fs.existsSync(path.join(root, 'data-length-out'))).toBe(false);
  });

  it('an archive cut short: verify says so and misses its tiles, extract writes nothing', async () => {
    const cut = path.join(root, 'cut', 'slide.pmtiles');
    fs.mkdirSync(path.dirname(cut));
    const bytes = fs.readFileSync(file);
    const dataStart = Number(bytes.readBigUInt64LE(56));
    const keep = dataStart + Math.floor((bytes.length - dataStart) / 2);
    fs.writeFileSync(cut, bytes.subarray(0, keep));
    fs.copyFileSync(file.replace(/\.pmtiles$/, '.build-report.json'), cut.replace(/\.pmtiles$/, '.build-report.json'));
    const reader = await openPyramidReader(cut);
    const v = verifyPyramid(reader);
    reader.close();
    expect(v.ok).toBe(false);
    expect(v.problems[0]).toEqual({ code: 'archive-invalid', path: cut, message: `its tiles reach byte ${bytes.length}, the file ends at ${keep}: it was cut short` });
    expect(v.counts['report-mismatch']).toBeGreaterThan(0);
    expect(v.checked.tiles).toBeLessThan(verifyPyramid(dirPbf).checked.tiles);
    // A tile the directories address past the end, asked for by address: its bytes are lost, not an empty tile.
    const archive = await openPmtiles(cut);
    let lost: { z: number; x: number; y: number; offset: number; length: number } | undefined;
    for await (const t of archive.tiles()) if (t.offset + t.length > keep && lost === undefined) lost = t;
    await archive.close();
    if (!lost) throw new Error('no tile past the cut');
    const again = await openPyramidReader(cut);
    let thrown: unknown;
    try {
      decodeTile(again, lost.z, lost.x, lost.y);
    } catch (err) {
      thrown = err;
    } finally {
      again.close();
    }
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as InputError).exitCode).toBe(3);
    expect((thrown as InputError).message).toBe(`${cut}: tile ${lost.z}/${lost.x}/${lost.y}.pbf lies at bytes ${lost.offset}–${lost.offset + lost.length - 1}, past the end of the file (${keep} bytes): the archive was cut short`);
    const out = path.join(root, 'cut-out');
    await expect(extractArchives(cut, out, { force: false })).rejects.toThrow(`${cut} cannot be extracted whole (${cut}: its tiles reach byte ${bytes.length}, the file ends at ${keep}: it was cut short); nothing was written; mudm-tiles verify lists what is wrong`);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('verify names an archive of the wrong tile type, one missing and two swapped, with what goes wrong in their tiles', async () => {
    const bad = path.join(root, 'tampered');
    fs.cpSync(planes, bad, { recursive: true });
    fs.copyFileSync(path.join(bad, 'tiles-c0-z0.json.pmtiles'), path.join(bad, 'tiles-c0-z0.pbf.pmtiles'));
    fs.rmSync(path.join(bad, 'tiles-c1-z2.json.pmtiles'));
    // Both formats of two planes swapped: JSON and PBF still agree, only the archives' own metadata tells.
    for (const f of ['json', 'pbf']) {
      fs.renameSync(path.join(bad, `tiles-c1-z0.${f}.pmtiles`), path.join(bad, 'swap'));
      fs.renameSync(path.join(bad, `tiles-c1-z1.${f}.pmtiles`), path.join(bad, `tiles-c1-z0.${f}.pmtiles`));
      fs.renameSync(path.join(bad, 'swap'), path.join(bad, `tiles-c1-z1.${f}.pmtiles`));
    }
    const reader = await openPyramidReader(bad);
    const v = verifyPyramid(reader);
    reader.close();
    expect(v.ok).toBe(false);
    const invalid = v.problems.filter((p) => p.code === 'archive-invalid');
    const swapped = (listed: number, written: number, f: string) => `its metadata says it was written as tiles-c1-z${written}.${f}.pmtiles (c=1, z=${written}, ${f} tiles), but tileset.json lists it as tiles-c1-z${listed}.${f}.pmtiles (c=1, z=${listed}, ${f} tiles): archives renamed or swapped? Put each back under the name it was written as`;
    expect(invalid.map((p) => [p.path, p.message.replace(/cannot read .*/, 'cannot read')])).toEqual([
      ['tiles-c0-z0.pbf.pmtiles', 'holds pbf tiles, so its tile type must be 1, found 0'],
      ['tiles-c0-z0.pbf.pmtiles', 'its metadata says it was written as tiles-c0-z0.json.pmtiles (c=0, z=0, json tiles), but tileset.json lists it as tiles-c0-z0.pbf.pmtiles (c=0, z=0, pbf tiles): archives renamed or swapped? Put each back under the name it was written as'],
      ['tiles-c1-z0.pbf.pmtiles', swapped(0, 1, 'pbf')], ['tiles-c1-z0.json.pmtiles', swapped(0, 1, 'json')],
      ['tiles-c1-z1.pbf.pmtiles', swapped(1, 0, 'pbf')], ['tiles-c1-z1.json.pmtiles', swapped(1, 0, 'json')],
      ['tiles-c1-z2.json.pmtiles', 'cannot read'],
    ]);
    expect(invalid[6].message).toMatch(/cannot read .*tiles-c1-z2\.json\.pmtiles/);
    // Its JSON tiles now sit at PBF paths: they do not decode as PBF.
    expect(v.counts['tile-undecodable']).toBeGreaterThan(0);
    // The missing JSON archive is named once, not once per PBF tile that lacks its twin in it.
    expect(v.counts['format-mismatch']).toBeUndefined();
  });
});

describe('damaged and hostile archives', () => {
  /** A copy of `from` (file or folder) under a new name in `root`. */
  const copyOf = (from: string, name: string): string => {
    const to = path.join(root, name);
    fs.cpSync(from, to, { recursive: true });
    if (!fs.statSync(from).isDirectory()) fs.copyFileSync(from.replace(/\.pmtiles$/, '.build-report.json'), to.replace(/\.pmtiles$/, '.build-report.json'));
    return to;
  };

  it('a JSON tile whose gzip is damaged: verify names it, inspect leaves it out, extract writes nothing', async () => {
    const bad = copyOf(planes, 'gzip-damaged');
    const member = path.join(bad, 'tiles-c0-z0.json.pmtiles');
    const archive = await openPmtiles(member);
    let hit: { z: number; x: number; y: number; offset: number; length: number } | undefined;
    for await (const t of archive.tiles()) if (t.z > 0 && hit === undefined) hit = t;
    await archive.close();
    if (!hit) throw new Error('no tile below zoom 0');
    const bytes = fs.readFileSync(member);
    // The deflate stream's middle: the gzip trailer's CRC no longer matches (or the stream no longer inflates).
    bytes.fill(0, hit.offset + 12, hit.offset + Math.min(hit.length - 8, 40));
    fs.writeFileSync(member, bytes);
    const tile = `${hit.z}/0/0/${hit.x}/${hit.y}.json`;

    const reader = await openPyramidReader(bad);
    const v = verifyPyramid(reader);
    const summary = inspectPyramid(reader);
    reader.close();
    expect(v.ok).toBe(false);
    const undecodable = v.problems.filter((p) => p.code === 'tile-undecodable');
    expect(undecodable.map((p) => p.path)).toEqual([tile]);
    expect(undecodable[0].message).toContain(`${member}: tile ${tile} does not gunzip`);
    expect(summary.unreadable?.map((u) => u.path)).toEqual([tile]);
    const out = path.join(root, 'gzip-damaged-out');
    await expect(extractArchives(bad, out, { force: false })).rejects.toThrow(`${bad} cannot be extracted whole (${member}: tile ${tile} does not gunzip`);
    expect(fs.existsSync(out), 'nothing of the extract is left').toBe(false);
    // Over an earlier extract with --force: the damage is found before anything of the earlier output goes.
    const earlier = await extractArchives(planes, out, { force: false });
    const before = listFiles(out).map((f) => `${f} ${fs.readFileSync(path.join(out, f)).toString('base64')}`);
    await expect(extractArchives(bad, out, { force: true })).rejects.toThrow(`${bad} cannot be extracted whole (${member}: tile ${tile} does not gunzip`);
    expect(earlier.files).toBeGreaterThan(0);
    expect(listFiles(out).map((f) => `${f} ${fs.readFileSync(path.join(out, f)).toString('base64')}`), 'the earlier output, whole').toEqual(before);
  });

  it('a PBF archive whose header says tile type 0: verify and extract go by the descriptor, and say so', async () => {
    const bad = copyOf(file, 'type0.pmtiles');
    const bytes = fs.readFileSync(bad);
    bytes[99] = TileType.Other;
    fs.writeFileSync(bad, bytes);
    const reader = await openPyramidReader(bad);
    const v = verifyPyramid(reader);
    reader.close();
    expect(v.problems[0]).toEqual({ code: 'archive-invalid', path: bad, message: 'holds pbf tiles, so its tile type must be 1, found 0' });
    const out = path.join(root, 'type0-out');
    await expect(extractArchives(bad, out, { force: false })).rejects.toThrow(`${bad} cannot be extracted whole (${bad}: holds pbf tiles, so its tile type must be 1, found 0); nothing was written`);
    expect(fs.existsSync(out)).toBe(false);
  });

  /**
   * An archive by hand: the sample's descriptor as metadata, one tile every entry points to, the entries' ids and runs
   * as given; a run of 0 points to the one leaf directory, holding `leaf`'s entries.
   */
  async function handMade(name: string, entries: [tileId: number, runLength: number][], maxZoom: number, leaf: [tileId: number, runLength: number][] = []): Promise<string> {
    const meta = Buffer.from(JSON.stringify(await (await openPmtiles(file)).metadata()));
    const tile = Buffer.from([0x1a, 0x00]);
    const directory = (es: [number, number][], leafLength: number) => encodeDirectory({
      count: es.length, tileId: Float64Array.from(es, (e) => e[0]), offset: new Float64Array(es.length),
      length: Uint32Array.from(es, (e) => (e[1] === 0 ? leafLength : tile.length)), runLength: Uint32Array.from(es, (e) => e[1]),
    });
    const leafDir = directory(leaf, 0);
    const dir = directory(entries, leafDir.length);
    const leaves = HEADER_BYTES + dir.length + meta.length;
    const at = leaves + leafDir.length;
    const header = encodeHeader({
      rootDirectoryOffset: HEADER_BYTES, rootDirectoryLength: dir.length, metadataOffset: HEADER_BYTES + dir.length, metadataLength: meta.length,
      leafDirectoriesOffset: leaves, leafDirectoriesLength: leafDir.length, tileDataOffset: at, tileDataLength: tile.length, addressedTiles: 0,
      tileEntries: entries.length + leaf.length, tileContents: 1,
      clustered: true, internalCompression: Compression.None, tileCompression: Compression.None, tileType: TileType.Mvt, minZoom: 0, maxZoom,
      minLon: 0, minLat: 0, maxLon: 1, maxLat: 1, centerZoom: 0, centerLon: 0, centerLat: 0,
    });
    const out = path.join(root, name);
    fs.writeFileSync(out, Buffer.concat([header, dir, meta, leafDir, tile]));
    return out;
  }

  it('refuses directories a reader searching them cannot follow: a leaf\'s tiles outside its entry\'s range, runs that overlap', async () => {
    const messages = async (name: string, entries: [number, number][], leaf: [number, number][] = []) => {
      const reader = await ArchiveReader.open(await handMade(name, entries, 4, leaf)) as ArchiveReader;
      reader.close();
      return reader.problems.map((p) => p.message);
    };
    // The leaf the root points to from id 5 holds ids 5 and 6; the root's next entry takes over at 6: id 6 is never found.
    expect(await messages('past.pmtiles', [[5, 0], [6, 1]], [[5, 2]])).toEqual([
      'a leaf directory\'s entry addresses tile ids 5–6, past the ids 5–5 of the entry pointing to it: readers searching the directories never find those beyond',
    ]);
    // A leaf holding an id below the one its entry starts at.
    expect(await messages('below.pmtiles', [[5, 0]], [[3, 1], [5, 1]])).toEqual([
      'a leaf directory\'s entry addresses tile id 3, outside the ids from 5 of the entry pointing to it: readers searching the directories never find it',
    ]);
    expect(await messages('overlap.pmtiles', [[1, 3], [2, 1]])).toEqual(['a directory entry addresses tile ids 2–2, though the entries before it reach 3: runs overlap']);
    // Within its range a leaf is read as the root is: its tiles listed, none missing.
    const good = await ArchiveReader.open(await handMade('good.pmtiles', [[1, 1], [5, 0], [9, 1]], 4, [[5, 2], [8, 1]])) as ArchiveReader;
    good.close();
    expect(good.problems.filter((p) => /directory|leaf|overlap/.test(p.message))).toEqual([]);
  });

  it('a run of 2^31 tiles, and tiles past the header\'s zooms, are refused at once, not listed', async () => {
    const run = await handMade('run.pmtiles', [[0, 2 ** 31]], 26);
    // Listing the run tile by tile would take minutes and gigabytes: refused from the entry alone.
    const reader = await ArchiveReader.open(run) as ArchiveReader;
    expect(reader.problems).toEqual([{ code: 'archive-invalid', path: run, message: `the directories address more than ${MAX_LISTED} tiles, more than a build writes` }]);
    reader.close();
    const deep = await handMade('deep.pmtiles', [[(4 ** 5 - 1) / 3, 1]], 4);
    const r2 = await ArchiveReader.open(deep) as ArchiveReader;
    expect(r2.problems.map((p) => p.message)).toEqual([`a directory entry addresses tile ids up to ${(4 ** 5 - 1) / 3}, past the last of zoom 4 (${(4 ** 5 - 1) / 3 - 1}), the header's maximum`]);
    r2.close();
    const twice = await handMade('twice.pmtiles', [[1, 1], [1, 1]], 4);
    const r3 = await ArchiveReader.open(twice) as ArchiveReader;
    expect(r3.problems.map((p) => p.message)).toContain('tile 1/0/0.pbf is addressed twice in it');
    r3.close();
  });

  it('extract refuses an output that is its input, or lies inside it, and leaves the input as it was', async () => {
    const folder = copyOf(planes, 'self');
    const before = listFiles(folder);
    await expect(extractArchives(folder, folder, { force: true })).rejects.toThrow(`extract cannot write ${folder}: it is the input ${folder}; choose an output outside it`);
    await expect(extractArchives(folder, path.join(folder, 'x'), { force: true })).rejects.toThrow(`extract cannot write ${path.join(folder, 'x')}: it lies inside the input ${folder}`);
    const one = copyOf(file, 'self-one.pmtiles');
    await expect(extractArchives(one, root, { force: true })).rejects.toThrow(`extract cannot write ${root}: it holds the input ${one}`);
    expect(listFiles(folder)).toEqual(before);
  });
});
