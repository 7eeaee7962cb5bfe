// inspect, verify and extract on files that are not what they claim: FIFOs, devices, links out of the pyramid, an
// archive whose planes are paths. None may block, fill the memory, read outside the pyramid or write outside OUT.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TileType, Compression } from '../../src/archive/pmtiles-format.js';
import { PmtilesWriter } from '../../src/archive/pmtiles-writer.js';
import { openPmtiles } from '../../src/archive/pmtiles-reader.js';
import { buildPyramid } from '../../src/build/pipeline.js';
import { openPyramidReader } from '../../src/inspect/archive-reader.js';
import { extractArchives } from '../../src/inspect/extract.js';
import { directoryReader } from '../../src/inspect/reader.js';
import { verifyPyramid } from '../../src/inspect/verify.js';
import { fileSource } from '../../src/io/read.js';
import { InputError } from '../../src/report/errors.js';
import { tmpDir } from '../helpers/pyramid.js';
import { METADATA, syntheticTiles } from '../archive/helpers.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../sample-data/slide');
const inputs = () => ['cells.json', 'nuclei.json'].map((f) => ({ source: fileSource(path.join(SAMPLE, f)) }));

let root = '';
let dir = '';
let folder = '';

beforeAll(async () => {
  root = tmpDir('hostile-files');
  dir = path.join(root, 'dir');
  folder = path.join(root, 'folder');
  await buildPyramid(inputs(), { maxZoom: 2, unitSize: 512, workers: 1, out: dir, format: 'pbf' });
  await buildPyramid(inputs(), { maxZoom: 2, unitSize: 512, workers: 1, out: folder, planeField: 'c=c', archive: 'pmtiles' });
}, 120_000);

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('a directory pyramid', () => {
  it('reads only regular files: a FIFO and a link to /dev/zero read as absent, at once; confined, a link out too', () => {
    const d = path.join(root, 'fifo-dir');
    fs.cpSync(dir, d, { recursive: true });
    const outside = path.join(root, 'secret.pbf');
    fs.writeFileSync(outside, 'not the pyramid\'s');
    const tiles = ['2/0/0.pbf', '2/0/1.pbf', '2/1/0.pbf'].map((t) => path.join(d, t));
    for (const t of tiles) expect(fs.existsSync(t), t).toBe(true);
    fs.rmSync(tiles[0]);
    execFileSync('mkfifo', [tiles[0]]);
    fs.rmSync(tiles[1]);
    fs.symlinkSync('/dev/zero', tiles[1]);
    fs.rmSync(tiles[2]);
    fs.symlinkSync(outside, tiles[2]);
    const reader = directoryReader(d);
    for (const t of ['2/0/0.pbf', '2/0/1.pbf']) expect(reader.read(t), t).toBeUndefined();
    // A link out is read (a zoom folder kept on another disk), unless the reader is confined (extract's copies).
    expect(Buffer.from(reader.read('2/1/0.pbf') ?? []).toString()).toBe('not the pyramid\'s');
    expect(directoryReader(d, true).read('2/1/0.pbf')).toBeUndefined();
    expect(reader.read('2/1/1.pbf')?.length).toBeGreaterThan(0);
    // verify finishes, and the tiles are missing or wrong against the report.
    const v = verifyPyramid(d);
    expect(v.checked.tiles).toBeLessThan(verifyPyramid(dir).checked.tiles);
    expect(v.problems.map((p) => p.code)).toContain('report-mismatch');
  });
});

describe('archives', () => {
  it('a FIFO named like an archive is refused, not waited on', async () => {
    const fifo = path.join(root, 'fifo.pmtiles');
    execFileSync('mkfifo', [fifo]);
    await expect(openPmtiles(fifo)).rejects.toThrow(`${fifo} is not a regular file (a FIFO or a device?): no archive`);
  });

  it('an archive whose metadata names a plane that is a path is refused by extract (exit 3), and nothing is written', async () => {
    const file = path.join(root, 'hostile.pmtiles');
    const w = new PmtilesWriter(file, { tileType: TileType.Mvt, tileCompression: Compression.None });
    for (const t of syntheticTiles(1, 2, 0.5)) w.add(t.z, t.x, t.y, t.bytes);
    w.finish({ ...METADATA, tiles: ['{zlvl}/{c}/{x}/{y}.pbf'], bounds: [0, '../../escaped', 0, 0, 0, 0, 0, 0, 1000, 600] });
    const out = path.join(root, 'x', 'out');
    const err = await extractArchives(file, out, { force: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).exitCode).toBe(3);
    expect((err as Error).message).toBe(`${file}: its metadata's bounds name a plane that is no index (t, c, z: non-negative integers): [0,"../../escaped",0,0,0,0,0,0,1000,600]`);
    expect(fs.existsSync(path.join(root, 'escaped'))).toBe(false);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('an archive of a folder linked from outside it is read, and verify notes that serve does not serve it', async () => {
    const f = path.join(root, 'linked-folder');
    fs.cpSync(folder, f, { recursive: true });
    const name = fs.readdirSync(f).find((n) => n.endsWith('.pmtiles')) as string;
    const away = path.join(root, 'away');
    fs.mkdirSync(away);
    fs.renameSync(path.join(f, name), path.join(away, name));
    fs.symlinkSync(path.join(away, name), path.join(f, name));
    const reader = await openPyramidReader(f);
    const v = verifyPyramid(reader);
    reader.close();
    expect(v.problems).toEqual([]);
    expect(v.notes).toContain(`${name} is a symbolic link out of the folder: read here, but serve does not serve it (copy it into the folder to host it)`);
  });
});
