// Sharded archive builds: each shard writes its own parts, finalize merges them into the one-machine build's bytes;
// a build stopped between two archives' assembly resumes from the parts it kept.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { archiveAssets } from '../../src/archive/archive-names.js';
import { ArchiveSink } from '../../src/archive/archive-sink.js';
import { openPmtiles } from '../../src/archive/pmtiles-reader.js';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { fileSource } from '../../src/io/read.js';
import { mulberry32 } from '../../src/random.js';
import type { OutputLayout } from '../../src/io/sink.js';
import { readRecord } from '../../src/io/written.js';
import type { Options } from '../../src/options.js';
import { WorkStateError } from '../../src/report/errors.js';
import { listFiles } from '../e2e/helpers.js';
import { METADATA, scratchDirs } from './helpers.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../sample-data/slide');
const inputs = () => ['cells.json', 'nuclei.json'].map((f) => ({ source: fileSource(path.join(SAMPLE, f)) }));
const scratch = scratchDirs('archive-sharded');

/** The outputs of a build: every file but the run report (timings), with its bytes. */
function outputs(dir: string): Map<string, Buffer> {
  return new Map(listFiles(dir).filter((f) => !f.endsWith('build-report.json')).map((f) => [f, fs.readFileSync(path.join(dir, f))]));
}

describe('plan, build-shard, finalize into archives', () => {
  it.each([
    ['-o FILE.pmtiles', { out: 'slide.pmtiles', maxZoom: 3 }],
    ['-o DIR --archive pmtiles', { out: 'planes', archive: 'pmtiles', planeField: 'c=c,z=z', maxZoom: 2 }],
  ] as [string, Partial<Options>][])('%s: 3 shards give the one-machine bytes, tiles never re-encoded', async (_, opts) => {
    const base = { ...opts, unitSize: 512, workers: 1 };
    const local = scratch();
    await buildPyramid(inputs(), { ...base, out: path.join(local, opts.out as string) });

    const sharded = scratch();
    const out = path.join(sharded, opts.out as string);
    await planShardedBuild(inputs(), { ...base, out, shards: 3 });
    for (const shard of [2, 0, 1]) await buildShard({ out, workers: 2 }, shard);
    const work = fs.readdirSync(sharded).includes('.slide.pmtiles.mudm-work') ? path.join(sharded, '.slide.pmtiles.mudm-work') : path.join(out, '.mudm-work');
    expect(fs.readdirSync(path.join(work, 'parts')), 'each shard its own parts').toEqual(['shard-0', 'shard-1', 'shard-2']);
    await finalizeShardedBuild({ out, workers: 2 });

    expect(fs.existsSync(work), 'finalize removes the work directory and the parts in it').toBe(false);
    const want = outputs(local);
    const got = outputs(sharded);
    expect([...got.keys()]).toEqual([...want.keys()]);
    expect([...got].filter(([f, b]) => !b.equals(want.get(f) as Buffer)).map(([f]) => f), 'files whose bytes differ').toEqual([]);
  });
});

describe('finalize tiling shards\' units again', () => {
  it('a level-0 zoom raised after the shards ran (their tiles over the budget): finalize\'s tiles stand over theirs, the one-machine bytes', async () => {
    // 12,000 squares of 5 px over 8,192 px with a budget of 700 bytes: the plan's estimate misses at zoom 4, which the
    // shards tile, so finalize raises it and tiles their units again into its own part.
    const dir = scratch();
    const file = path.join(dir, 'dense.ndjson');
    const random = mulberry32(3);
    const lines: string[] = [];
    for (let i = 0; i < 12000; i++) {
      const x = Math.round(random() * 8180 * 10) / 10, y = Math.round(random() * 8180 * 10) / 10;
      lines.push(JSON.stringify({ type: 'Feature', id: i + 1, properties: {}, geometry: { type: 'Polygon', coordinates: [[[x, y], [x + 5, y], [x + 5, y + 5], [x, y + 5], [x, y]]] } }));
    }
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const base: Partial<Options> = { imageSize: '8192,8192', maxZoom: 6, tileBudget: 700, workers: 1 };
    const local = path.join(dir, 'local', 'x.pmtiles');
    await buildPyramid([{ source: fileSource(file) }], { ...base, out: local });
    const out = path.join(dir, 'sharded', 'x.pmtiles');
    await planShardedBuild([{ source: fileSource(file) }], { ...base, out, shards: 2 });
    for (const shard of [0, 1]) await buildShard({ out, workers: 1 }, shard);
    await finalizeShardedBuild({ out, workers: 1 });
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'sharded', 'x.build-report.json'), 'utf8')) as { tiles: { thinning: { raised: number[] } } };
    expect(report.tiles.thinning.raised).toEqual([4]);
    expect(fs.readFileSync(out).equals(fs.readFileSync(local))).toBe(true);

    // Finalize stopped once its correction removed the shards' tiles and undid their units: the shards, run again,
    // tile those units at the new epoch, over finalize's removals, and the next finalize gives the same bytes.
    const again = path.join(dir, 'again', 'x.pmtiles');
    await planShardedBuild([{ source: fileSource(file) }], { ...base, out: again, shards: 2 });
    for (const shard of [0, 1]) await buildShard({ out: again, workers: 1 }, shard);
    const planPath = path.join(dir, 'again', '.x.pmtiles.mudm-work', 'plan.json');
    const stop = new AbortController();
    const watch = setInterval(() => { if (fs.readFileSync(planPath, 'utf8').includes('"corrections":1')) stop.abort(); }, 2);
    const stopped = await finalizeShardedBuild({ out: again, workers: 1 }, { signal: stop.signal }).then(() => 'finished', (e: unknown) => e);
    clearInterval(watch);
    expect(stopped).toBeInstanceOf(Error);
    await expect(finalizeShardedBuild({ out: again, workers: 1 })).rejects.toThrow(/shard\(s\) 0, 1 not complete/);
    for (const shard of [0, 1]) await buildShard({ out: again, workers: 1 }, shard);
    await finalizeShardedBuild({ out: again, workers: 1 });
    expect(fs.readFileSync(again).equals(fs.readFileSync(local))).toBe(true);
  });
});

describe('the steps of one work directory, and parts lost between them', () => {
  const base = { maxZoom: 3, unitSize: 512, workers: 1 };
  const setUp = async (shards: number) => {
    const dir = scratch();
    const out = path.join(dir, 'slide.pmtiles');
    await planShardedBuild(inputs(), { ...base, out, shards });
    return { out, work: path.join(dir, '.slide.pmtiles.mudm-work') };
  };

  it('a shard whose part was lost or cut short after it finished: finalize refuses naming it, the shard run again tiles it anew', async () => {
    const local = scratch();
    await buildPyramid(inputs(), { ...base, out: path.join(local, 'slide.pmtiles') });
    const want = fs.readFileSync(path.join(local, 'slide.pmtiles'));
    const { out, work } = await setUp(2);
    for (const shard of [0, 1]) await buildShard({ out, workers: 1 }, shard);
    // Lost: the shard's folder of parts, gone between two steps of a workflow.
    fs.rmSync(path.join(work, 'parts', 'shard-1'), { recursive: true });
    const lost = finalizeShardedBuild({ out, workers: 1 });
    await expect(lost).rejects.toThrow('cannot finalize: the archive part slide.pmtiles.part is missing, of shard 1 in ');
    await expect(lost).rejects.toBeInstanceOf(WorkStateError);
    const warnings: string[] = [];
    await buildShard({ out, workers: 1 }, 1, { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([expect.stringMatching(/^shard 1: its archive parts were damaged \(slide\.pmtiles\.part is missing\): its \d+ unit\(s\) are tiled again$/)]);
    // Cut short: 5,000 bytes off its end.
    const part = path.join(work, 'parts', 'shard-1', 'slide.pmtiles.part');
    fs.truncateSync(part, fs.statSync(part).size - 5000);
    const cut = finalizeShardedBuild({ out, workers: 1 });
    await expect(cut).rejects.toThrow(/^cannot finalize: the archive part slide\.pmtiles\.part holds \d+ bytes, \d+ when the shard finished it \(cut short, or an earlier or other copy\), of shard 1 in .*: run build-shard --shard 1 again \(it tiles its units anew\)$/);
    await expect(cut).rejects.toBeInstanceOf(WorkStateError);
    await buildShard({ out, workers: 1 }, 1, { onWarning: (m) => warnings.push(m) });
    expect(warnings[1]).toMatch(/^shard 1: its archive parts were damaged \(archive part .* holds \d+ bytes of whole records, but \d+ had been written: it was cut short\)/);
    // A few bytes past what was flushed (as a kill mid-append leaves them): dropped, the units keep their tiles.
    const shard0 = path.join(work, 'parts', 'shard-0', 'slide.pmtiles.part');
    fs.appendFileSync(shard0, Buffer.from([1, 2, 3, 4, 5, 6]));
    await expect(finalizeShardedBuild({ out, workers: 1 })).rejects.toThrow(/slide\.pmtiles\.part holds \d+ bytes, \d+ when the shard finished it .*: run build-shard --shard 0 again/);
    const r = await buildShard({ out, workers: 1 }, 0, { onWarning: (m) => warnings.push(m) });
    expect(r.skipped, 'every unit kept').toBe(r.units);
    expect(warnings).toHaveLength(2);
    await finalizeShardedBuild({ out, workers: 1 });
    expect(fs.readFileSync(out).equals(want), 'the one-machine bytes').toBe(true);
  });

  it.each([
    ['-o FILE.pmtiles', 'slide.pmtiles', '.slide.pmtiles.mudm-work', {}],
    ['-o DIR --archive pmtiles', 'planes', 'planes/.mudm-work', { archive: 'pmtiles', planeField: 'c=c,z=z' }],
  ] as [string, string, string, Partial<Options>][])('%s: finalize killed after naming its archives, run again, names them anew', async (_, name, workName, extra) => {
    const dir = scratch();
    const out = path.join(dir, name);
    const work = path.join(dir, workName);
    await planShardedBuild(inputs(), { ...base, ...extra, out, shards: 2 });
    for (const shard of [0, 1]) await buildShard({ out, workers: 1 }, shard);
    const kept = path.join(scratch(), 'work');
    fs.cpSync(work, kept, { recursive: true });
    await finalizeShardedBuild({ out, workers: 1 });
    const want = outputs(dir);
    // As a finalize killed between naming its archives and removing its work directory leaves the output.
    fs.cpSync(kept, work, { recursive: true });
    await finalizeShardedBuild({ out, workers: 1 });
    expect(fs.existsSync(work)).toBe(false);
    const got = outputs(dir);
    expect([...got.keys()]).toEqual([...want.keys()]);
    expect([...got].filter(([f, b]) => !b.equals(want.get(f) as Buffer)).map(([f]) => f), 'files whose bytes differ').toEqual([]);
  });

  it('an earlier copy of a finished shard\'s part (a stopped attempt\'s, whole in itself): finalize refuses, the shard run again heals it', async () => {
    const local = scratch();
    await buildPyramid(inputs(), { ...base, out: path.join(local, 'slide.pmtiles') });
    const want = fs.readFileSync(path.join(local, 'slide.pmtiles'));
    const { out, work } = await setUp(2);
    // The first attempt stops after a few units: what it flushed is a whole part of fewer tiles.
    const stop = new AbortController();
    await expect(buildShard({ out, workers: 1 }, 0, { signal: stop.signal, onProgress: (e) => { if (e.phase === 'tile' && e.units >= 3) stop.abort(); } })).rejects.toThrow();
    const part = path.join(work, 'parts', 'shard-0', 'slide.pmtiles.part');
    const early = fs.readFileSync(part);
    await buildShard({ out, workers: 1 }, 0);
    await buildShard({ out, workers: 1 }, 1);
    expect(fs.statSync(part).size).toBeGreaterThan(early.length);
    // A workflow's merge brings the first attempt's part.
    fs.writeFileSync(part, early);
    const refused = finalizeShardedBuild({ out, workers: 1 });
    await expect(refused).rejects.toThrow(`cannot finalize: the archive part slide.pmtiles.part holds ${early.length} bytes, `);
    await expect(refused).rejects.toBeInstanceOf(WorkStateError);
    const warnings: string[] = [];
    // The run that tiles anew is stopped too: the next one continues it (the old marker's sizes are gone with it).
    const again = new AbortController();
    await expect(buildShard({ out, workers: 1 }, 0, { signal: again.signal, onWarning: (m) => warnings.push(m), onProgress: (e) => { if (e.phase === 'tile' && e.units >= 3) again.abort(); } })).rejects.toThrow();
    expect(warnings).toEqual([expect.stringMatching(/^shard 0: its archive parts were damaged \(slide\.pmtiles\.part holds \d+ bytes, \d+ when the shard finished it \(cut short, or an earlier or other copy\)\): its \d+ unit\(s\) are tiled again$/)]);
    const last = await buildShard({ out, workers: 1 }, 0, { onWarning: (m) => warnings.push(m) });
    expect(last.skipped, 'the stopped run\'s units kept').toBeGreaterThan(0);
    expect(warnings).toHaveLength(1);
    await finalizeShardedBuild({ out, workers: 1 });
    expect(fs.readFileSync(out).equals(want), 'the one-machine bytes').toBe(true);
  });

  it('unit logs of another plan copied in without their shard\'s marker are passed over: its units are tiled, the bytes whole', async () => {
    const local = scratch();
    await buildPyramid(inputs(), { ...base, out: path.join(local, 'slide.pmtiles') });
    const want = fs.readFileSync(path.join(local, 'slide.pmtiles'));
    // Another plan of the same input (the same unit keys), its shard 0 done: as a workflow that merges every work
    // directory it finds might bring in from an earlier run.
    const earlier = await setUp(2);
    await buildShard({ out: earlier.out, workers: 1 }, 0);
    const { out, work } = await setUp(2);
    const logs = fs.readdirSync(path.join(earlier.work, 'units'));
    // Named past this plan's own logs, so that its frames are read last and would win.
    fs.mkdirSync(path.join(work, 'units'), { recursive: true });
    for (const f of logs) fs.copyFileSync(path.join(earlier.work, 'units', f), path.join(work, 'units', f.replace(/^\d+/, '000009')));
    const r = await buildShard({ out, workers: 1 }, 0);
    expect(r.skipped, 'no unit of shard 0 taken for done').toBe(0);
    await buildShard({ out, workers: 1 }, 1);
    await finalizeShardedBuild({ out, workers: 1 });
    expect(fs.readFileSync(out).equals(want), 'the one-machine bytes').toBe(true);
  });

  it('a build and shards do not continue each other\'s archive parts: refused, naming the way on', async () => {
    const { out, work } = await setUp(3);
    await buildShard({ out, workers: 1 }, 0);
    await expect(buildPyramid(inputs(), { ...base, out, resume: true })).rejects.toThrow(`--resume: ${work} was planned for shards, and shards have written archive parts there: continue with build-shard and finalize, or start over with --force`);
    // The parts of an interrupted build (here only their folder) are not a shard's.
    fs.mkdirSync(path.join(work, 'parts', 'build'));
    await expect(buildShard({ out, workers: 1 }, 1)).rejects.toThrow(`build-shard: ${work} holds the archive parts of an interrupted build: continue it with build --resume, or start over with plan --force`);
    await expect(finalizeShardedBuild({ out, workers: 1 })).rejects.toThrow(`finalize: ${work} holds the archive parts of an interrupted build`);
  });

  it('shards and finalize refuse a plan whose records are gone before any shard ran (exit 4, not a crash), naming them and the way on', async () => {
    const { out, work } = await setUp(2);
    // A copy of the work directory that left level-0 out (an interrupted build's is refused before: it is no plan).
    fs.rmSync(path.join(work, 'level-0'), { recursive: true });
    const redo = 'give it the work directory whole, every record of level-0 as plan wrote it, or plan again with plan --force';
    await expect(buildShard({ out, workers: 1 }, 0)).rejects.toThrow(`build-shard: ${work} lacks the plan's records (level-0), which its units read: ${redo}`);
    await expect(finalizeShardedBuild({ out, workers: 1 })).rejects.toThrow(`finalize: ${work} lacks the plan's records (level-0), which finalize reads to tile a zoom anew where the shards' tiles pass the tile budget: ${redo}`);
  });
});

describe('files a build did not write, at the names it writes', () => {
  it('-o FILE.pmtiles: a file at the archive\'s name when a shard runs stays, and finalize refuses it', async () => {
    const dir = scratch();
    const out = path.join(dir, 'slide.pmtiles');
    await planShardedBuild(inputs(), { out, maxZoom: 2, unitSize: 512, workers: 1, shards: 2 });
    fs.writeFileSync(out, 'precious: the archive a server still serves');
    for (const shard of [0, 1]) await buildShard({ out, workers: 1 }, shard);
    expect(fs.readFileSync(out, 'utf8')).toBe('precious: the archive a server still serves');
    // Refused before anything is written: the file is no archive of a build.
    await expect(finalizeShardedBuild({ out, workers: 1 })).rejects.toThrow(`${out} was not written by a mudm-tiles build`);
    expect(fs.readFileSync(out, 'utf8')).toBe('precious: the archive a server still serves');
  });

  it('-o DIR --archive pmtiles: a file at an archive\'s name when a shard runs stays', async () => {
    const dir = scratch();
    const out = path.join(dir, 'planes');
    await planShardedBuild(inputs(), { out, archive: 'pmtiles', planeField: 'c=c,z=z', maxZoom: 2, unitSize: 512, workers: 1, shards: 2 });
    const planted = path.join(out, 'tiles-c0-z0.pbf.pmtiles');
    fs.writeFileSync(planted, 'a user\'s file');
    for (const shard of [0, 1]) await buildShard({ out, workers: 1 }, shard);
    expect(fs.readFileSync(planted, 'utf8')).toBe('a user\'s file');
    await expect(finalizeShardedBuild({ out, workers: 1 })).rejects.toThrow(`${planted}: not written by a mudm-tiles build`);
    expect(fs.readFileSync(planted, 'utf8')).toBe('a user\'s file');
  });

  it('-o FILE.pmtiles: a report that appears beside the archive while the build runs is not replaced', async () => {
    const dir = scratch();
    const out = path.join(dir, 'slide.pmtiles');
    const report = path.join(dir, 'slide.build-report.json');
    const sink = new ArchiveSink({ mode: 'file', out, partsDir: path.join(dir, 'work') });
    await sink.initialize({ force: false, resume: false });
    await sink.begin({ force: false, resume: false, layout: { dims: [], planes: [{ t: 0, c: 0, z: 0 }], formats: { json: false, pbf: true }, maxZoom: 1 } });
    await sink.write('0/0/0.pbf', Uint8Array.of(0x1a, 0));
    await sink.write('tileset.json', JSON.stringify(METADATA));
    await sink.write('build-report.json', '{"ours":true}');
    fs.writeFileSync(report, 'a user\'s notes');
    await expect(sink.finish()).rejects.toThrow(`${report} appeared while this build ran`);
    expect(fs.readFileSync(report, 'utf8')).toBe('a user\'s notes');
    await sink.close();
  });
});

describe('ArchiveSink', () => {
  const layout: OutputLayout = { dims: ['c'], planes: [{ t: 0, c: 0, z: 0 }, { t: 0, c: 1, z: 0 }], formats: { json: false, pbf: true }, maxZoom: 2 };
  const tiles = ['0/0/0/0.pbf', '1/0/1/1.pbf', '0/1/0/0.pbf', '2/1/3/2.pbf'];
  /** A descriptor listing the layout's archives, which the sink writes. */
  const descriptor = JSON.stringify({ ...METADATA, assets: archiveAssets(layout.dims, layout.planes, layout.formats) });

  it('keeps its parts until the whole output is written: a build stopped between two archives finishes them whole on resume', async () => {
    const dir = scratch();
    const out = path.join(dir, 'out');
    const partsDir = path.join(dir, 'work', 'parts', 'build');
    const first = new ArchiveSink({ mode: 'planes', out, partsDir });
    await first.initialize({ force: false, resume: false });
    await first.begin({ force: false, resume: false, layout });
    for (const [i, t] of tiles.entries()) await first.write(t, Uint8Array.of(i + 1, 7));
    await first.flush();
    await first.write('build-report.json', '{"tiles":{}}');
    expect(Buffer.from(await first.read('build-report.json') as Uint8Array).toString()).toBe('{"tiles":{}}');
    await first.write('tileset.json', descriptor);
    // The second archive cannot be renamed into place: the first is whole, then finish stops.
    fs.mkdirSync(path.join(out, 'tiles-c1.pbf.pmtiles'));
    await expect(first.finish()).rejects.toThrow(/tiles-c1\.pbf\.pmtiles/);
    await first.close();
    expect(fs.existsSync(path.join(out, 'tiles-c0.pbf.pmtiles'))).toBe(true);
    expect(fs.existsSync(path.join(out, 'tileset.json')), 'no descriptor: the output is not whole').toBe(false);
    expect(fs.existsSync(path.join(out, 'build-report.json')), 'no report of archives that are not there').toBe(false);
    fs.rmdirSync(path.join(out, 'tiles-c1.pbf.pmtiles'));

    // Every unit was marked done: the resumed run writes no tile, only the descriptor.
    const second = new ArchiveSink({ mode: 'planes', out, partsDir });
    await second.initialize({ force: false, resume: true });
    await second.begin({ force: false, resume: true, layout });
    await second.write('tileset.json', descriptor);
    await second.finish();
    const held: string[] = [];
    for (const name of ['tiles-c0.pbf.pmtiles', 'tiles-c1.pbf.pmtiles']) {
      const archive = await openPmtiles(path.join(out, name));
      for await (const t of archive.tiles()) held.push(`${name} ${t.z}/${t.x}/${t.y} ${Buffer.from((await archive.tile(t.z, t.x, t.y)) as Uint8Array).toString('hex')}`);
      await archive.close();
    }
    expect(held).toEqual(['tiles-c0.pbf.pmtiles 0/0/0 0107', 'tiles-c0.pbf.pmtiles 1/1/1 0207', 'tiles-c1.pbf.pmtiles 0/0/0 0307', 'tiles-c1.pbf.pmtiles 2/3/2 0407']);
    expect(fs.readdirSync(out).sort()).toEqual(['.mudm-written', 'tiles-c0.pbf.pmtiles', 'tiles-c1.pbf.pmtiles', 'tileset.json']);
    // The record lists the archives: what a later --force may remove.
    const manifest = JSON.parse(fs.readFileSync(path.join(out, '.mudm-written', 'manifest.json'), 'utf8')) as { files: string[] };
    expect(manifest.files).toEqual(['tiles-c0.pbf.pmtiles', 'tiles-c1.pbf.pmtiles', 'tileset.json']);
  });

  it('a file that appears at an archive\'s name while the build runs is not recorded as the build\'s: --force later keeps it', async () => {
    const dir = scratch();
    const out = path.join(dir, 'out');
    const sink = new ArchiveSink({ mode: 'planes', out, partsDir: path.join(dir, 'work') });
    await sink.initialize({ force: false, resume: false });
    await sink.begin({ force: false, resume: false, layout });
    for (const [i, t] of tiles.entries()) await sink.write(t, Uint8Array.of(i + 1, 7));
    await sink.write('tileset.json', descriptor);
    const planted = path.join(out, 'tiles-c1.pbf.pmtiles');
    fs.writeFileSync(planted, 'a user\'s file');
    await expect(sink.finish()).rejects.toThrow(`${planted} appeared while this build ran (another build, or a file put there): left as it is; move it away and run the build again`);
    await sink.close();
    // The archive it did write is the build's; the user's file is not.
    expect([...readRecord(out).files].sort()).toEqual(['tiles-c0.pbf.pmtiles']);
    const again = new ArchiveSink({ mode: 'planes', out, partsDir: path.join(dir, 'work2') });
    await expect(again.initialize({ force: true, resume: false })).rejects.toThrow(`${planted}: not written by a mudm-tiles build`);
    expect(fs.readFileSync(planted, 'utf8')).toBe('a user\'s file');
    // Once the user moves it away, a build writes the archive there and records it again.
    fs.renameSync(planted, path.join(dir, 'kept'));
    await again.initialize({ force: true, resume: false });
    await again.begin({ force: true, resume: false, layout });
    for (const [i, t] of tiles.entries()) await again.write(t, Uint8Array.of(i + 1, 7));
    await again.write('tileset.json', descriptor);
    await again.finish();
    await again.close();
    expect([...readRecord(out).files].sort()).toEqual(['tiles-c0.pbf.pmtiles', 'tiles-c1.pbf.pmtiles', 'tileset.json']);
  });

  it('writes the report beside one archive only once the archive has its name; a failed archive leaves neither', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const report = path.join(dir, 'slide.build-report.json');
    const oneLayout: OutputLayout = { dims: [], planes: [{ t: 0, c: 0, z: 0 }], formats: { json: false, pbf: true }, maxZoom: 1 };
    const sink = new ArchiveSink({ mode: 'file', out: file, partsDir: path.join(dir, '.parts'), layout: oneLayout });
    await sink.initialize({ force: false, resume: false });
    await sink.begin({ force: false, resume: false, layout: oneLayout });
    await sink.write('0/0/0.pbf', Uint8Array.of(1, 2));
    await sink.write('build-report.json', '{"report":1}');
    expect(fs.existsSync(report)).toBe(false);
    expect(Buffer.from((await sink.read('build-report.json')) as Uint8Array).toString()).toBe('{"report":1}');
    await sink.write('tileset.json', JSON.stringify(METADATA));
    // A file put at the archive's name while it was built: the archive is not written, nor its report.
    fs.writeFileSync(file, 'theirs');
    await expect(sink.finish()).rejects.toThrow(`${file} appeared while this build ran`);
    expect(fs.readdirSync(dir).filter((n) => !n.startsWith('.')).sort()).toEqual(['slide.pmtiles']);
    await sink.close();
    fs.rmSync(file);
    const again = new ArchiveSink({ mode: 'file', out: file, partsDir: path.join(dir, '.parts2'), layout: oneLayout });
    await again.initialize({ force: false, resume: false });
    await again.begin({ force: false, resume: false, layout: oneLayout });
    await again.write('0/0/0.pbf', Uint8Array.of(1, 2));
    await again.write('build-report.json', '{"report":1}');
    await again.write('tileset.json', JSON.stringify(METADATA));
    await again.finish();
    await again.close();
    expect(fs.readFileSync(report, 'utf8')).toBe('{"report":1}');
    expect(fs.statSync(report).mtimeMs).toBeGreaterThanOrEqual(fs.statSync(file).mtimeMs);
  });

  it('replaces an earlier archive whose second link (what a killed assembly left in the work directory) went while it ran', async () => {
    const dir = scratch();
    const file = path.join(dir, 'slide.pmtiles');
    const oneLayout: OutputLayout = { dims: [], planes: [{ t: 0, c: 0, z: 0 }], formats: { json: false, pbf: true }, maxZoom: 1 };
    const build = async (bytes: Uint8Array, between = () => {}) => {
      const sink = new ArchiveSink({ mode: 'file', out: file, partsDir: path.join(dir, '.parts'), layout: oneLayout });
      await sink.initialize({ force: true, resume: false });
      between();
      await sink.begin({ force: true, resume: false, layout: oneLayout });
      await sink.write('0/0/0.pbf', bytes);
      await sink.write('build-report.json', '{"features":{},"tiles":{}}');
      await sink.write('tileset.json', JSON.stringify({ ...METADATA, tilejson: '3.0.0', scale_factor: 2, format: 'pbf' }));
      await sink.finish();
      await sink.close();
    };
    await build(Uint8Array.of(1));
    const link = path.join(dir, '.parts', 'slide.pmtiles.part.archive-0badcafe');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.linkSync(file, link);
    // --force removes the work directory, and the link with it, after it found the archive: its ctime changes.
    await build(Uint8Array.of(2), () => fs.rmSync(link));
    const archive = await openPmtiles(file);
    expect(await archive.tile(0, 0, 0)).toEqual(Buffer.of(2));
    await archive.close();
    // Rewritten in place meanwhile, its size and mtime kept (rsync --inplace -a): someone else's now, left as it is.
    // (A whole second, which utimes puts back exactly.)
    fs.utimesSync(file, 1000, 1000);
    const rewrite = () => {
      const bytes = fs.readFileSync(file);
      bytes[bytes.length - 1] ^= 0xff;
      fs.writeFileSync(file, bytes);
      fs.utimesSync(file, 1000, 1000);
    };
    await expect(build(Uint8Array.of(3), rewrite)).rejects.toThrow(`${file} appeared while this build ran`);
  });

  it('refuses a tile path of no plane of the layout, and a zoom past what PMTiles holds', async () => {
    const dir = scratch();
    const sink = new ArchiveSink({ mode: 'planes', out: dir, partsDir: path.join(dir, '.parts'), layout });
    await expect(sink.write('1/0/1/1/0.pbf', Uint8Array.of(1))).rejects.toThrow(`${dir}: 1/0/1/1/0.pbf is not a tile path of this build's planes`);
    await expect(sink.begin({ force: false, resume: false, layout: { ...layout, maxZoom: 27 } }))
      .rejects.toThrow("a PMTiles archive holds zooms 0..26; this pyramid's finest zoom is 27: lower --max-zoom or write a directory");
  });
});
