// The sample slide built as PMTiles archives and directory pyramids, damaged and sound, served by `serve` and by plain
// static hosts, and one browser page over them: the shared setup of the archive-* viewer test files.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Compression, TileType } from '../../src/archive/pmtiles-format.js';
import { PmtilesWriter } from '../../src/archive/pmtiles-writer.js';
import { buildPyramid } from '../../src/build/pipeline.js';
import { fileSource, memorySource } from '../../src/io/read.js';
import { startServer, type Server } from '../../src/serve.js';
import { buildArchive, buildArchiveFolder } from '../helpers/archives.js';
import { tmpDir } from '../helpers/pyramid.js';
import { copyViewer, startStaticServer, type StaticServer } from '../helpers/static-server.js';
import { HAVE_CHROMIUM, launch, openPage, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle };

const SLIDE = path.resolve('sample-data/slide');
const OPTIONS = { planeField: 'c=c,z=z', workers: 1, memoryBudget: 64 * 1024 * 1024, name: 'sample slide' };
/** One view for every page: zoom 2 (2 image pixels a screen pixel) over the middle of the slide. */
export const VIEW = 'zoom=2&x=1006&y=671';
export const WHITE = [255, 255, 255];

export interface Cell { id: number; x: number; y: number; c: number; z: number }
type Feature = { id: number; properties: { c: number; z: number }; geometry: { coordinates: number[][][] } };

/** The cells of the sample slide without a hole, with a point inside each (the mean of a star-shaped ring's vertices). */
export function cells(): Cell[] {
  const doc = JSON.parse(fs.readFileSync(path.join(SLIDE, 'cells.json'), 'utf8')) as { features: Feature[] };
  return doc.features.filter((f) => f.geometry.coordinates.length === 1).map((f) => {
    const ring = f.geometry.coordinates[0].slice(0, -1);
    return { id: f.id, x: ring.reduce((s, p) => s + p[0], 0) / ring.length, y: ring.reduce((s, p) => s + p[1], 0) / ring.length, c: f.properties.c, z: f.properties.z };
  });
}

/** The features of one plane (c = 0, z = 0 unless said) of one file, as a collection of its own (a one-plane slide). */
function onePlane(file: string, c = 0, z = 0): string {
  const doc = JSON.parse(fs.readFileSync(path.join(SLIDE, file), 'utf8')) as { features: Feature[] };
  return JSON.stringify({ ...doc, features: doc.features.filter((f) => f.properties.c === c && f.properties.z === z) });
}

const slideInputs = () => ['cells.json', 'nuclei.json'].map((f) => ({ source: fileSource(path.join(SLIDE, f)) }));
const onePlaneInputs = () => ['cells.json', 'nuclei.json'].map((f) => ({ source: memorySource(f, onePlane(f)) }));

/**
 * The builds a test file asks for beyond the one-plane archive every file has (slide.pmtiles, with its copies and
 * damaged versions): each costs about a second, so a file builds only those its tests view.
 */
export type Part =
  /** The slide's directory build (`at.slideDir`), and its copies on the host: slide-dir, elsewhere, `run {c}`. */
  | 'slide-dir'
  /** The one plane's directory build of PBF tiles (`at.planeDir`), and its copy of broken tiles, bad-dir. */
  | 'plane-dir'
  /** The slide as one archive a plane (`at.slideArchives`), and its copies with one plane cut, one missing. */
  | 'slide'
  /** The one plane with gzipped tiles (`at.planeGzip`), and its copy with spoilt tiles (`at.badGzServed`). */
  | 'gzip'
  /** The slide's archives as the CLI writes them, JSON and PBF; the copy swapped, one archive renamed. */
  | 'folder'
  /** The slide's archives as the CLI writes them without a name. */
  | 'nameless run'
  /** The one plane without a name (`at.nameless`). */
  | 'my slide'
  /** Another build (plane c=1, z=2) to replace an archive with. */
  | 'other'
  /** A pyramid of JSON tiles only. */
  | 'json-only'
  /** A pyramid whose channel 1, between 0 and 2, holds nothing. */
  | 'gap';

// Set by `useArchiveSite`'s hooks, read by the tests (live bindings): each test file has a module of its own.
export let dir: string;
/** One page, loaded anew for each view (a new page costs as much again). */
export let page: Page;
export const consoleErrors: string[] = [];
/** Where each pyramid is viewed: `serve` of the directory builds (the reference), of the archives, and a static host. */
export const at: Record<string, string> = {};

/** Builds the site with `parts`, serves it and opens a page before the file's tests, and closes all after (nothing without Chromium). */
export function useArchiveSite(parts: Part[]): void {
  const has = (p: Part) => parts.includes(p);
  const servers: { close(): Promise<void> }[] = [];
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (!HAVE_CHROMIUM) return;
    dir = tmpDir('mudm-archive-viewer');
    const site = path.join(dir, 'site');
    if (has('slide-dir')) await buildPyramid(slideInputs(), { ...OPTIONS, out: path.join(dir, 'slide-dir') });
    if (has('plane-dir')) await buildPyramid(onePlaneInputs(), { ...OPTIONS, planeField: undefined, out: path.join(dir, 'plane-dir'), format: 'pbf' });
    if (has('slide')) await buildArchiveFolder(slideInputs(), OPTIONS, path.join(site, 'slide'));
    await buildArchive(onePlaneInputs(), { ...OPTIONS, planeField: undefined }, path.join(site, 'slide.pmtiles'));
    // The same plane with its PBF tiles gzipped (--tile-compression gzip), as a build writes it.
    if (has('gzip')) await buildPyramid(onePlaneInputs(), { ...OPTIONS, planeField: undefined, out: path.join(site, 'slide-gz.pmtiles'), tileCompression: 'gzip' });
    // As the CLI writes them (`--archive pmtiles`): every archive's metadata lists its siblings; JSON archives too.
    if (has('folder')) await buildPyramid(slideInputs(), { ...OPTIONS, out: path.join(site, 'folder'), archive: 'pmtiles', format: 'json,pbf' });
    if (has('nameless run')) await buildPyramid(slideInputs(), { ...OPTIONS, name: undefined, out: path.join(site, 'nameless run'), archive: 'pmtiles', format: 'pbf' });
    if (has('slide-dir')) {
      // A static host of a directory build: empty tiles are missing files there (404), not 204s.
      fs.cpSync(path.join(dir, 'slide-dir'), path.join(site, 'slide-dir'), { recursive: true });
      // A descriptor whose tile template points where no tile is.
      fs.cpSync(path.join(dir, 'slide-dir'), path.join(site, 'elsewhere'), { recursive: true });
      const moved = JSON.parse(fs.readFileSync(path.join(site, 'elsewhere', 'tileset.json'), 'utf8')) as { tiles: string[] };
      moved.tiles = moved.tiles.map((t) => `nothere/${t}`);
      fs.writeFileSync(path.join(site, 'elsewhere', 'tileset.json'), JSON.stringify(moved));
      // A folder whose name holds braces, as a template's placeholders do.
      fs.cpSync(path.join(dir, 'slide-dir'), path.join(site, 'run {c}'), { recursive: true });
    }
    // One archive served on its own, then deleted while viewed.
    fs.mkdirSync(path.join(dir, 'alone'));
    fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(dir, 'alone', 'gone.pmtiles'));
    // One archive served on its own, then replaced by another build (of plane c=1, z=2) while viewed.
    fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(dir, 'alone', 'swap.pmtiles'));
    if (has('other')) await buildArchive(['cells.json', 'nuclei.json'].map((f) => ({ source: memorySource(f, onePlane(f, 1, 2)) })), { ...OPTIONS, planeField: undefined }, path.join(dir, 'other.pmtiles'));
    // An archive cut inside its tile data: its header, directories and metadata read, its tiles fail.
    const whole = fs.readFileSync(path.join(site, 'slide.pmtiles'));
    fs.writeFileSync(path.join(site, 'cut.pmtiles'), whole.subarray(0, Number(whole.readBigUInt64LE(56)) + 64));
    fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(site, 'slide #1.pmtiles'));
    // Archives shorter than a header: empty, and cut inside it.
    fs.writeFileSync(path.join(site, 'empty.pmtiles'), '');
    fs.writeFileSync(path.join(site, 'short.pmtiles'), whole.subarray(0, 50));
    // Damaged where the header says gzip: the root directory, the metadata, each gzipped tile (bytes flipped); and a web
    // page under an archive's name.
    const spoilt = (from: Buffer, at: number, length: number) => {
      const copy = Buffer.from(from);
      for (let i = at; i < at + length; i++) copy[i] ^= 0xa5;
      return copy;
    };
    fs.writeFileSync(path.join(site, 'bad-root.pmtiles'), spoilt(whole, Number(whole.readBigUInt64LE(8)), Number(whole.readBigUInt64LE(16))));
    fs.writeFileSync(path.join(site, 'bad-meta.pmtiles'), spoilt(whole, Number(whole.readBigUInt64LE(24)), Number(whole.readBigUInt64LE(32))));
    if (has('gzip')) {
      const gz = fs.readFileSync(path.join(site, 'slide-gz.pmtiles'));
      fs.writeFileSync(path.join(site, 'bad-gz-tiles.pmtiles'), spoilt(gz, Number(gz.readBigUInt64LE(56)), Number(gz.readBigUInt64LE(64))));
    }
    fs.writeFileSync(path.join(site, 'page.pmtiles'), `<!doctype html><title>Not found</title>${' '.repeat(200)}`);
    // An archive as another tool writes it: tippecanoe-like metadata, no tileset descriptor.
    const foreign = new PmtilesWriter(path.join(site, 'foreign.pmtiles'), { tileType: TileType.Mvt, tileCompression: Compression.None });
    foreign.add(0, 0, 0, new Uint8Array([0x1a, 0]));
    foreign.finish({ name: 'foreign', format: 'pbf', vector_layers: [{ id: 'cells', fields: {} }] });
    fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(site, 'replaced.pmtiles'));
    fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(site, 'replaced-weak.pmtiles'));
    // Without a name: the viewer calls it by its file name.
    if (has('my slide')) await buildArchive(onePlaneInputs(), { ...OPTIONS, planeField: undefined, name: undefined }, path.join(site, 'my slide #2 (50%?).pmtiles'));
    // Cut inside its tile data: a tile whose range runs past the end comes back short (206 with fewer bytes).
    const dataStart = Number(whole.readBigUInt64LE(56));
    fs.writeFileSync(path.join(site, 'cut-mid.pmtiles'), whole.subarray(0, dataStart + Math.floor((whole.length - dataStart) * 0.6)));
    if (has('slide')) {
      // A folder whose archive of one plane is cut short: its tiles fail, the other plane's do not.
      fs.cpSync(path.join(site, 'slide'), path.join(site, 'slide-cut'), { recursive: true });
      const c0 = fs.readFileSync(path.join(site, 'slide', 'tiles-c0-z0.pbf.pmtiles'));
      fs.writeFileSync(path.join(site, 'slide-cut', 'tiles-c0-z0.pbf.pmtiles'), c0.subarray(0, Number(c0.readBigUInt64LE(56)) + 64));
    }
    if (has('folder')) {
      // A folder (as the CLI writes it) whose PBF archives of two planes were swapped: each names itself in its metadata.
      fs.cpSync(path.join(site, 'folder'), path.join(site, 'swapped'), { recursive: true });
      fs.renameSync(path.join(site, 'swapped', 'tiles-c0-z0.pbf.pmtiles'), path.join(site, 'swapped', 'swap'));
      fs.renameSync(path.join(site, 'swapped', 'tiles-c1-z2.pbf.pmtiles'), path.join(site, 'swapped', 'tiles-c0-z0.pbf.pmtiles'));
      fs.renameSync(path.join(site, 'swapped', 'swap'), path.join(site, 'swapped', 'tiles-c1-z2.pbf.pmtiles'));
      // One archive of a folder, renamed.
      fs.copyFileSync(path.join(site, 'folder', 'tiles-c1-z2.pbf.pmtiles'), path.join(site, 'renamed.pmtiles'));
    }
    if (has('slide')) {
      // A folder whose archive of one plane is gone.
      fs.cpSync(path.join(site, 'slide'), path.join(site, 'slide-missing'), { recursive: true });
      fs.rmSync(path.join(site, 'slide-missing', 'tiles-c1-z2.pbf.pmtiles'));
    }
    if (has('plane-dir')) {
      // A directory build whose PBF tiles are cut in half: they do not decode.
      fs.cpSync(path.join(dir, 'plane-dir'), path.join(site, 'bad-dir'), { recursive: true });
      for (const f of fs.readdirSync(path.join(site, 'bad-dir'), { recursive: true, encoding: 'utf8' })) {
        if (!f.endsWith('.pbf')) continue;
        const tile = fs.readFileSync(path.join(site, 'bad-dir', f));
        fs.writeFileSync(path.join(site, 'bad-dir', f), tile.subarray(0, tile.length >> 1));
      }
    }
    if (has('json-only')) await buildPyramid(onePlaneInputs(), { ...OPTIONS, planeField: undefined, out: path.join(site, 'json-only'), format: 'json', maxZoom: 1 });
    if (has('gap')) {
      // Channels 0 and 2 hold the cells, channel 1 nothing: a plane within the pyramid's range without features.
      const gap = (c: number) => ({ source: memorySource(`c${c}.json`, onePlane('cells.json')), plane: { c }, layer: 'cells' });
      await buildPyramid([gap(0), gap(2)], { ...OPTIONS, planeField: undefined, out: path.join(site, 'gap'), format: 'pbf', maxZoom: 1 });
    }
    copyViewer(site);
    const serve = async (root: string) => {
      const s: Server = await startServer({ root, port: 0 });
      servers.push(s);
      return s.url;
    };
    if (has('slide-dir')) at.slideDir = await serve(path.join(dir, 'slide-dir'));
    if (has('plane-dir')) at.planeDir = await serve(path.join(dir, 'plane-dir'));
    if (has('slide')) at.slideArchives = await serve(path.join(site, 'slide'));
    at.planeArchive = await serve(path.join(site, 'slide.pmtiles'));
    if (has('gzip')) at.planeGzip = await serve(path.join(site, 'slide-gz.pmtiles'));
    // The whole site through serve: its archives with ETags, as a range reader compares them.
    at.site = await serve(site);
    if (has('my slide')) at.nameless = await serve(path.join(site, 'my slide #2 (50%?).pmtiles'));
    at.gone = await serve(path.join(dir, 'alone', 'gone.pmtiles'));
    at.swap = await serve(path.join(dir, 'alone', 'swap.pmtiles'));
    fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(dir, 'alone', 'flaky.pmtiles'));
    at.flaky = await serve(path.join(dir, 'alone', 'flaky.pmtiles'));
    // Damaged archives at serve's root, their tiles by URL: cut inside its tiles, and its gzipped tiles spoilt.
    at.cutServed = await serve(path.join(site, 'cut.pmtiles'));
    if (has('gzip')) at.badGzServed = await serve(path.join(site, 'bad-gz-tiles.pmtiles'));
    const host: StaticServer = await startStaticServer(site);
    servers.push(host);
    at.host = host.url;
    const weak: StaticServer = await startStaticServer(site, { weakEtags: true });
    servers.push(weak);
    at.weak = weak.url;
    const perRange: StaticServer = await startStaticServer(site, { weakEtags: 'per-range' });
    servers.push(perRange);
    at.perRange = perRange.url;
    const noRanges: StaticServer = await startStaticServer(site, { ranges: false });
    servers.push(noRanges);
    at.noRanges = noRanges.url;
    browser = await launch();
    page = await openPage(browser, consoleErrors);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
}

/** The page showing `url` (a new load, even when only the hash differs), once its first view is drawn. */
export async function view(url: string): Promise<void> {
  await page.goto('about:blank');
  await page.goto(url);
  await page.evaluate(() => window.__viewer.ready);
  await page.evaluate(() => window.__viewer.settle());
}

/** The viewer's errors: every tile that failed, every problem it reported. */
export async function errorsOf(): Promise<string[]> {
  return page.evaluate(() => window.__viewer.errors);
}
