// The viewer in headless Chromium over PMTiles archives of the sample slide: through `serve` and from a plain static
// server with Range (no mudm-tiles running), each view drawn as the directory build's view, features at their pixels.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Compression, TileType } from '../../src/archive/pmtiles-format.js';
import { PmtilesWriter } from '../../src/archive/pmtiles-writer.js';
import { buildPyramid } from '../../src/build/pipeline.js';
import { fileSource, memorySource } from '../../src/io/read.js';
import { startServer, type Server } from '../../src/serve.js';
import { buildArchive, buildArchiveFolder } from '../helpers/archives.js';
import { tmpDir } from '../helpers/pyramid.js';
import { copyViewer, startStaticServer, type StaticServer } from '../helpers/static-server.js';
import { close, HAVE_CHROMIUM, launch, openPage, screen, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle & { setPlane(v: Record<string, number>): void } };

const SLIDE = path.resolve('sample-data/slide');
const OPTIONS = { planeField: 'c=c,z=z', workers: 1, memoryBudget: 64 * 1024 * 1024, name: 'sample slide' };
/** One view for every page: zoom 2 (2 image pixels a screen pixel) over the middle of the slide. */
const VIEW = 'zoom=2&x=1006&y=671';
const WHITE = [255, 255, 255];

interface Cell { id: number; x: number; y: number; c: number; z: number }
type Feature = { id: number; properties: { c: number; z: number }; geometry: { coordinates: number[][][] } };

/** The cells of the sample slide without a hole, with a point inside each (the mean of a star-shaped ring's vertices). */
function cells(): Cell[] {
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

let dir: string;
const servers: { close(): Promise<void> }[] = [];
let browser: Browser | undefined;
/** One page, loaded anew for each view (a new page costs as much again). */
let page: Page;
const consoleErrors: string[] = [];
/** Where each pyramid is viewed: `serve` of the directory builds (the reference), of the archives, and a static host. */
const at: Record<string, string> = {};

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  dir = tmpDir('mudm-archive-viewer');
  const site = path.join(dir, 'site');
  await buildPyramid(slideInputs(), { ...OPTIONS, out: path.join(dir, 'slide-dir') });
  await buildPyramid(onePlaneInputs(), { ...OPTIONS, planeField: undefined, out: path.join(dir, 'plane-dir'), format: 'pbf' });
  await buildArchiveFolder(slideInputs(), OPTIONS, path.join(site, 'slide'));
  await buildArchive(onePlaneInputs(), { ...OPTIONS, planeField: undefined }, path.join(site, 'slide.pmtiles'));
  // The same plane with its PBF tiles gzipped (--tile-compression gzip), as a build writes it.
  await buildPyramid(onePlaneInputs(), { ...OPTIONS, planeField: undefined, out: path.join(site, 'slide-gz.pmtiles'), tileCompression: 'gzip' });
  // As the CLI writes them (`--archive pmtiles`): every archive's metadata lists its siblings; JSON archives too.
  await buildPyramid(slideInputs(), { ...OPTIONS, out: path.join(site, 'folder'), archive: 'pmtiles', format: 'json,pbf' });
  await buildPyramid(slideInputs(), { ...OPTIONS, name: undefined, out: path.join(site, 'nameless run'), archive: 'pmtiles', format: 'pbf' });
  // A static host of a directory build: empty tiles are missing files there (404), not 204s.
  fs.cpSync(path.join(dir, 'slide-dir'), path.join(site, 'slide-dir'), { recursive: true });
  // A descriptor whose tile template points where no tile is.
  fs.cpSync(path.join(dir, 'slide-dir'), path.join(site, 'elsewhere'), { recursive: true });
  const moved = JSON.parse(fs.readFileSync(path.join(site, 'elsewhere', 'tileset.json'), 'utf8')) as { tiles: string[] };
  moved.tiles = moved.tiles.map((t) => `nothere/${t}`);
  fs.writeFileSync(path.join(site, 'elsewhere', 'tileset.json'), JSON.stringify(moved));
  // A folder whose name holds braces, as a template's placeholders do.
  fs.cpSync(path.join(dir, 'slide-dir'), path.join(site, 'run {c}'), { recursive: true });
  // One archive served on its own, then deleted while viewed.
  fs.mkdirSync(path.join(dir, 'alone'));
  fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(dir, 'alone', 'gone.pmtiles'));
  // One archive served on its own, then replaced by another build (of plane c=1, z=2) while viewed.
  fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(dir, 'alone', 'swap.pmtiles'));
  await buildArchive(['cells.json', 'nuclei.json'].map((f) => ({ source: memorySource(f, onePlane(f, 1, 2)) })), { ...OPTIONS, planeField: undefined }, path.join(dir, 'other.pmtiles'));
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
  const gz = fs.readFileSync(path.join(site, 'slide-gz.pmtiles'));
  fs.writeFileSync(path.join(site, 'bad-gz-tiles.pmtiles'), spoilt(gz, Number(gz.readBigUInt64LE(56)), Number(gz.readBigUInt64LE(64))));
  fs.writeFileSync(path.join(site, 'page.pmtiles'), `<!doctype html><title>Not found</title>${' '.repeat(200)}`);
  // An archive as another tool writes it: tippecanoe-like metadata, no tileset descriptor.
  const foreign = new PmtilesWriter(path.join(site, 'foreign.pmtiles'), { tileType: TileType.Mvt, tileCompression: Compression.None });
  foreign.add(0, 0, 0, new Uint8Array([0x1a, 0]));
  foreign.finish({ name: 'foreign', format: 'pbf', vector_layers: [{ id: 'cells', fields: {} }] });
  fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(site, 'replaced.pmtiles'));
  fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(site, 'replaced-weak.pmtiles'));
  // Without a name: the viewer calls it by its file name.
  await buildArchive(onePlaneInputs(), { ...OPTIONS, planeField: undefined, name: undefined }, path.join(site, 'my slide #2 (50%?).pmtiles'));
  // Cut inside its tile data: a tile whose range runs past the end comes back short (206 with fewer bytes).
  const dataStart = Number(whole.readBigUInt64LE(56));
  fs.writeFileSync(path.join(site, 'cut-mid.pmtiles'), whole.subarray(0, dataStart + Math.floor((whole.length - dataStart) * 0.6)));
  // A folder whose archive of one plane is cut short: its tiles fail, the other plane's do not.
  fs.cpSync(path.join(site, 'slide'), path.join(site, 'slide-cut'), { recursive: true });
  const c0 = fs.readFileSync(path.join(site, 'slide', 'tiles-c0-z0.pbf.pmtiles'));
  fs.writeFileSync(path.join(site, 'slide-cut', 'tiles-c0-z0.pbf.pmtiles'), c0.subarray(0, Number(c0.readBigUInt64LE(56)) + 64));
  // A folder (as the CLI writes it) whose PBF archives of two planes were swapped: each names itself in its metadata.
  fs.cpSync(path.join(site, 'folder'), path.join(site, 'swapped'), { recursive: true });
  fs.renameSync(path.join(site, 'swapped', 'tiles-c0-z0.pbf.pmtiles'), path.join(site, 'swapped', 'swap'));
  fs.renameSync(path.join(site, 'swapped', 'tiles-c1-z2.pbf.pmtiles'), path.join(site, 'swapped', 'tiles-c0-z0.pbf.pmtiles'));
  fs.renameSync(path.join(site, 'swapped', 'swap'), path.join(site, 'swapped', 'tiles-c1-z2.pbf.pmtiles'));
  // One archive of a folder, renamed.
  fs.copyFileSync(path.join(site, 'folder', 'tiles-c1-z2.pbf.pmtiles'), path.join(site, 'renamed.pmtiles'));
  // A folder whose archive of one plane is gone.
  fs.cpSync(path.join(site, 'slide'), path.join(site, 'slide-missing'), { recursive: true });
  fs.rmSync(path.join(site, 'slide-missing', 'tiles-c1-z2.pbf.pmtiles'));
  // A directory build whose PBF tiles are cut in half: they do not decode.
  fs.cpSync(path.join(dir, 'plane-dir'), path.join(site, 'bad-dir'), { recursive: true });
  for (const f of fs.readdirSync(path.join(site, 'bad-dir'), { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.pbf')) continue;
    const tile = fs.readFileSync(path.join(site, 'bad-dir', f));
    fs.writeFileSync(path.join(site, 'bad-dir', f), tile.subarray(0, tile.length >> 1));
  }
  await buildPyramid(onePlaneInputs(), { ...OPTIONS, planeField: undefined, out: path.join(site, 'json-only'), format: 'json', maxZoom: 1 });
  // Channels 0 and 2 hold the cells, channel 1 nothing: a plane within the pyramid's range without features.
  const gap = (c: number) => ({ source: memorySource(`c${c}.json`, onePlane('cells.json')), plane: { c }, layer: 'cells' });
  await buildPyramid([gap(0), gap(2)], { ...OPTIONS, planeField: undefined, out: path.join(site, 'gap'), format: 'pbf', maxZoom: 1 });
  copyViewer(site);
  const serve = async (root: string) => {
    const s: Server = await startServer({ root, port: 0 });
    servers.push(s);
    return s.url;
  };
  at.slideDir = await serve(path.join(dir, 'slide-dir'));
  at.planeDir = await serve(path.join(dir, 'plane-dir'));
  at.slideArchives = await serve(path.join(site, 'slide'));
  at.planeArchive = await serve(path.join(site, 'slide.pmtiles'));
  at.planeGzip = await serve(path.join(site, 'slide-gz.pmtiles'));
  // The whole site through serve: its archives with ETags, as a range reader compares them.
  at.site = await serve(site);
  at.nameless = await serve(path.join(site, 'my slide #2 (50%?).pmtiles'));
  at.gone = await serve(path.join(dir, 'alone', 'gone.pmtiles'));
  at.swap = await serve(path.join(dir, 'alone', 'swap.pmtiles'));
  fs.copyFileSync(path.join(site, 'slide.pmtiles'), path.join(dir, 'alone', 'flaky.pmtiles'));
  at.flaky = await serve(path.join(dir, 'alone', 'flaky.pmtiles'));
  // Damaged archives at serve's root, their tiles by URL: cut inside its tiles, and its gzipped tiles spoilt.
  at.cutServed = await serve(path.join(site, 'cut.pmtiles'));
  at.badGzServed = await serve(path.join(site, 'bad-gz-tiles.pmtiles'));
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

/** The page showing `url` (a new load, even when only the hash differs), once its first view is drawn. */
async function view(url: string): Promise<void> {
  await page.goto('about:blank');
  await page.goto(url);
  await page.evaluate(() => window.__viewer.ready);
  await page.evaluate(() => window.__viewer.settle());
}

/**
 * Ids found at each cell's point, and the screen colour there, for every third cell of a plane on screen beside the
 * panel; `name` saves the screenshot under $VIEWER_SCREENSHOTS.
 */
async function probe(plane: { c: number; z: number }, name: string): Promise<{ ids: number[][]; colours: number[][]; cells: Cell[] }> {
  const pixel = await screen(page, name);
  const panelRight = ((await page.locator('#panel').boundingBox())?.width ?? 0) + 16;
  const onPlane = cells().filter((c, i) => c.c === plane.c && c.z === plane.z && i % 3 === 0);
  // One call for all: where each point is on screen, and which features the map finds there.
  const found = await page.evaluate((points) => points.map(([x, y]) => ({
    at: window.__viewer.toScreen(x, y), ids: window.__viewer.featuresAt(x, y).map((f) => Number(f.id)).sort((a, b) => a - b),
  })), onPlane.map((c) => [c.x, c.y] as const));
  const shown: Cell[] = [];
  const ids: number[][] = [];
  const colours: number[][] = [];
  found.forEach(({ at: [sx, sy], ids: here }, i) => {
    if (sx < panelRight || sx > 990 || sy < 10 || sy > 630) return;
    shown.push(onPlane[i]);
    ids.push(here);
    colours.push(pixel(sx, sy));
  });
  return { ids, colours, cells: shown };
}

async function errorsOf(): Promise<string[]> {
  return page.evaluate(() => window.__viewer.errors);
}

describe.skipIf(!HAVE_CHROMIUM)('viewer over PMTiles archives', () => {
  it('shows every plane of the slide from its archives, through serve and from a static host, as from the directory build', async () => {
    for (const plane of [{ c: 0, z: 0 }, { c: 1, z: 2 }]) {
      const hash = `#${VIEW}&c=${plane.c}&z=${plane.z}`;
      await view(`${at.slideDir}${hash}`);
      const want = await probe(plane, `directory-c${plane.c}-z${plane.z}`);
      // Enough cells on screen to mean something, each found at its point (the nucleus inside it too) and drawn there.
      expect(want.cells.length).toBeGreaterThan(60);
      want.cells.forEach((cell, i) => expect(want.ids[i], `cell ${cell.id}`).toContain(cell.id));
      want.colours.forEach((c, i) => expect(close(c, WHITE, 24), `cell ${want.cells[i].id} drawn`).toBe(false));
      for (const [name, url] of [['serve-archives', `${at.slideArchives}${hash}`], ['static-archives', `${at.host}index.html?tileset=slide/tileset.json${hash}`]]) {
        await view(url);
        const got = await probe(plane, `${name}-c${plane.c}-z${plane.z}`);
        expect(got.cells.map((c) => c.id), name).toEqual(want.cells.map((c) => c.id));
        expect(got.ids, name).toEqual(want.ids);
        got.colours.forEach((c, i) => expect(close(c, want.colours[i], 2), `${name}: cell ${got.cells[i].id} ${c} vs ${want.colours[i]}`).toBe(true));
        expect(await errorsOf(), name).toEqual([]);
      }
    }
  });

  it('switches planes from archive to archive on a static host', async () => {
    await view(`${at.host}index.html?tileset=slide/tileset.json#${VIEW}&c=0&z=0`);
    expect(await page.locator('#plane-c option').allInnerTexts()).toEqual(['0', '1']);
    expect(await page.locator('#plane-z option').allInnerTexts()).toEqual(['0', '1', '2']);
    await page.selectOption('#plane-z', '1');
    await page.evaluate(() => window.__viewer.settle());
    const plane = { c: 0, z: 1 };
    const got = await probe(plane, 'static-archives-switched-c0-z1');
    expect(got.cells.length).toBeGreaterThan(60);
    got.cells.forEach((cell, i) => expect(got.ids[i], `cell ${cell.id}`).toContain(cell.id));
    got.colours.forEach((c, i) => expect(close(c, WHITE, 24), `cell ${got.cells[i].id} drawn`).toBe(false));
    // A cell of the plane left is no longer there.
    const other = cells().find((c) => c.c === 0 && c.z === 0 && got.cells.every((g) => Math.hypot(g.x - c.x, g.y - c.y) > 30)) as Cell;
    expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [other.x, other.y] as const)).map((f) => f.id)).not.toContain(other.id);
    expect(await errorsOf()).toEqual([]);
    // A hash that switches one dimension and names a plane the pyramid lacks in the other: the switch is made, and
    // the note on what it lacks stays once the new plane's tiles are in.
    await page.evaluate((v) => { location.hash = `#${v}&c=1&z=9`; }, VIEW);
    await page.waitForFunction(() => /c=1&z=1/.test(location.hash));
    await page.evaluate(() => window.__viewer.settle());
    expect(await page.locator('#status').innerText()).toContain('no plane z=9 in this pyramid (z 0–2): showing z=1');
  });

  it('shows one archive (slide.pmtiles, and gzipped) through serve, by its tile URLs and read by ranges, and from a static host, as its directory build', async () => {
    const plane = { c: 0, z: 0 };
    await view(`${at.planeDir}#${VIEW}`);
    const want = await probe(plane, 'one-plane-directory');
    expect(want.cells.length).toBeGreaterThan(60);
    want.cells.forEach((cell, i) => expect(want.ids[i], `cell ${cell.id}`).toContain(cell.id));
    want.colours.forEach((c, i) => expect(close(c, WHITE, 24), `cell ${want.cells[i].id} drawn`).toBe(false));
    for (const [name, url] of [['serve-file', `${at.planeArchive}#${VIEW}`], ['serve-file-ranges', `${at.planeArchive}?tileset=slide.pmtiles#${VIEW}`], ['static-file', `${at.host}index.html?tileset=slide.pmtiles#${VIEW}`], ['static-file-hash-in-name', `${at.host}index.html?tileset=slide%20%231.pmtiles#${VIEW}`],
      ['serve-file-gzip', `${at.planeGzip}#${VIEW}`], ['serve-file-gzip-ranges', `${at.planeGzip}?tileset=slide-gz.pmtiles#${VIEW}`],
      ['static-file-gzip', `${at.host}index.html?tileset=slide-gz.pmtiles#${VIEW}`]]) {
      // The archive's start (header and root directory) is asked of the host once, though two readers read it.
      // Nor is any other range asked twice: tiles the fit read are drawn from those bytes.
      const ranges: string[] = [];
      const onRequest = (r: { url(): string; headers(): Record<string, string> }) => {
        if (/\.pmtiles$/.test(r.url()) && r.headers().range) ranges.push(r.headers().range);
      };
      page.on('request', onRequest);
      await view(url);
      page.off('request', onRequest);
      if (url.includes('?tileset=')) {
        expect(ranges.filter((r) => r.startsWith('bytes=0-')), name).toHaveLength(1);
        expect(ranges.length, name).toBeGreaterThan(2);
        expect(ranges.filter((r, i) => ranges.indexOf(r) !== i), name).toEqual([]);
      }
      expect(await page.locator('#title').innerText(), name).toBe('sample slide');
      const got = await probe(plane, name);
      expect(got.ids, name).toEqual(want.ids);
      got.colours.forEach((c, i) => expect(close(c, want.colours[i], 2), `${name}: cell ${got.cells[i].id}`).toBe(true));
      expect(await errorsOf(), name).toEqual([]);
    }
  });

  it('calls a pyramid without a name by its archive\'s file name, decoded, from a static host and through serve', async () => {
    // '#', '?' and '%' in the file name, sent escaped in the query as a link to it is.
    await view(`${at.host}index.html?tileset=${encodeURIComponent('my slide #2 (50%?).pmtiles')}#${VIEW}`);
    expect(await page.locator('#title').innerText()).toBe('my slide #2 (50%?).pmtiles');
    expect(await page.title()).toBe('my slide #2 (50%?).pmtiles — mudm-tiles viewer');
    expect(await errorsOf()).toEqual([]);
    // Served on its own, at the root: the URL names no file, serve does.
    await view(`${at.nameless}#${VIEW}`);
    expect(await page.locator('#title').innerText()).toBe('my slide #2 (50%?).pmtiles');
    expect(await errorsOf()).toEqual([]);
  });

  it('fits the first view to the data from an archive as from the directory', async () => {
    const centre = async (url: string) => {
      await view(url);
      const got = await page.evaluate(() => [...window.__viewer.view.getCenter(), window.__viewer.zoom()]);
      await screen(page, `fit-${url.includes('?') ? 'static' : 'directory'}`);
      return got;
    };
    const want = await centre(at.planeDir);
    const ranges: string[] = [];
    const onRequest = (r: { url(): string; headers(): Record<string, string> }) => {
      if (/\.pmtiles$/.test(r.url()) && r.headers().range) ranges.push(r.headers().range);
    };
    page.on('request', onRequest);
    const got = await centre(`${at.host}index.html?tileset=slide.pmtiles`);
    page.off('request', onRequest);
    got.forEach((v, i) => expect(v).toBeCloseTo(want[i], 6));
    // The tiles the fit read are drawn from those bytes: no range is asked of the host twice.
    expect(ranges.length).toBeGreaterThan(2);
    expect(ranges.filter((r, i) => ranges.indexOf(r) !== i)).toEqual([]);
  });

  it('spans the ramp of a number over the layers ticked: nuclei alone by area get the whole ramp', async () => {
    await view(`${at.slideDir}#${VIEW}&c=0&z=0&colour=area`);
    const d = JSON.parse(fs.readFileSync(path.join(dir, 'slide-dir', 'tileset.json'), 'utf8')) as { vector_layers: { id: string; fieldranges: Record<string, number[]> }[] };
    const range = (id: string) => d.vector_layers.find((l) => l.id === id)!.fieldranges.area;
    const [cellsRange, nucleiRange] = [range('cells'), range('nuclei')];
    expect(await page.locator('#legend .ramp-ends').innerText()).toBe(`${nucleiRange[0]} … ${cellsRange[1]}`);
    await page.locator('#layers label', { hasText: 'cells' }).locator('input').uncheck();
    await page.evaluate(() => window.__viewer.settle());
    // Before, the cells' range stayed: every nucleus was coloured in the ramp's first fifth, one dark purple.
    expect(await page.locator('#legend .ramp-ends').innerText()).toBe(`${nucleiRange[0]} … ${nucleiRange[1]}`);
    expect(await page.evaluate((v) => window.__viewer.colourOf(v), nucleiRange[1])).toBe('#fde725');
    await page.locator('#layers label', { hasText: 'cells' }).locator('input').check();
    await page.evaluate(() => window.__viewer.settle());
    expect(await page.locator('#legend .ramp-ends').innerText()).toBe(`${nucleiRange[0]} … ${cellsRange[1]}`);
  });

  it('shows a directory build from a static host, its missing (empty) tiles as empty, asking only for tiles over the data', async () => {
    const plane = { c: 1, z: 2 };
    const hash = `#${VIEW}&c=${plane.c}&z=${plane.z}`;
    await view(`${at.slideDir}${hash}`);
    const want = await probe(plane, 'directory-reference');
    const asked: string[] = [];
    const onRequest = (r: { url(): string }) => { if (/\.pbf$/.test(r.url())) asked.push(r.url()); };
    page.on('request', onRequest);
    // Over the slide's bottom-right corner, at its finest tiles (512 px): the row below y 1536 holds nothing.
    for (const url of [`${at.host}index.html?tileset=slide-dir/tileset.json${hash}`, `${at.host}index.html?tileset=slide-dir/tileset.json#zoom=3&x=1900&y=1300&c=1&z=2`]) {
      await view(url);
      expect(await errorsOf(), url).toEqual([]);
    }
    page.off('request', onRequest);
    await view(`${at.host}index.html?tileset=slide-dir/tileset.json${hash}`);
    const got = await probe(plane, 'static-directory');
    expect(got.ids).toEqual(want.ids);
    got.colours.forEach((c, i) => expect(close(c, want.colours[i], 2), `cell ${got.cells[i].id}`).toBe(true));
    // The slide is 2012 × 1342 px in a 2048 px world: nothing asked for starts past x 2012 or y 1342 (plus the
    // view's margin, 1/64 of 2012 px); without the bounds, row 3 of zoom 2 was asked for, and 404 was an error.
    expect(asked.length).toBeGreaterThan(0);
    for (const url of asked) {
      const [z, x, y] = url.split('/').slice(-3).map((v) => parseInt(v, 10));
      const tilePx = 2048 / 2 ** z;
      expect(x * tilePx, url).toBeLessThan(2012 + 2012 / 64);
      expect(y * tilePx, url).toBeLessThan(1342 + 2012 / 64);
    }
  });

  it('opens one archive of a folder directly at its own plane, and the other planes from the archives beside it', async () => {
    await view(`${at.host}index.html?tileset=folder/tiles-c1-z2.pbf.pmtiles#${VIEW}`);
    expect(await page.evaluate(() => ({ ...(window.__viewer as unknown as { plane: object }).plane }))).toEqual({ t: 0, c: 1, z: 2 });
    const got = await probe({ c: 1, z: 2 }, 'folder-archive-direct-c1-z2');
    expect(got.cells.length).toBeGreaterThan(60);
    got.cells.forEach((cell, i) => expect(got.ids[i], `cell ${cell.id}`).toContain(cell.id));
    await page.selectOption('#plane-c', '0');
    await page.selectOption('#plane-z', '0');
    await page.evaluate(() => window.__viewer.settle());
    const other = await probe({ c: 0, z: 0 }, 'folder-archive-direct-switched-c0-z0');
    expect(other.cells.length).toBeGreaterThan(60);
    other.cells.forEach((cell, i) => expect(other.ids[i], `cell ${cell.id}`).toContain(cell.id));
    expect(await errorsOf()).toEqual([]);
    // Built without a name: called by its folder, not by the archive of the plane it opened at.
    await view(`${at.host}index.html?tileset=${encodeURIComponent('nameless run/tiles-c1-z2.pbf.pmtiles')}#${VIEW}`);
    expect(await page.locator('#title').innerText()).toBe('nameless run');
  });

  it('shows no plane from an archive under another plane\'s name (swapped), and says which it holds', async () => {
    await view(`${at.host}index.html?tileset=swapped/tileset.json#${VIEW}&c=0&z=0`);
    const problem = /swapped\/tiles-c0-z0\.pbf\.pmtiles holds the tiles of tiles-c1-z2\.pbf\.pmtiles, the name it was written under \(archives renamed or swapped\): mudm-tiles verify names them$/;
    expect(await page.locator('#status').innerText()).toMatch(/plane c=0, z=0 cannot be shown: /);
    expect(await page.locator('#status').innerText()).toMatch(problem);
    expect(await errorsOf()).toEqual([expect.stringMatching(problem)]);
    // One archive of a folder opened directly under another name: not shown as the plane its place would say.
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=renamed.pmtiles`);
    const renamed = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(renamed).toBe(`${at.host}renamed.pmtiles was written as tiles-c1-z2.pbf.pmtiles, one archive of a folder build, and renamed: open the folder's tileset.json, or this archive under its own name beside the others`);
    await view(`${at.host}index.html?tileset=swapped/tileset.json#${VIEW}&c=0&z=0`);
    // Another plane, whose archive is its own, is shown.
    await page.evaluate(() => window.__viewer.setPlane({ c: 1, z: 1 }));
    await page.evaluate(() => window.__viewer.settle());
    const cell = cells().filter((c) => c.c === 1 && c.z === 1)[0];
    expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id)).toContain(cell.id);
  });

  it('refuses an archive of JSON tiles with a message saying so, once, and what to open instead', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=folder/tiles-c0-z0.json.pmtiles`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toMatch(/tiles-c0-z0\.json\.pmtiles holds tiles of PMTiles type 0, not vector tiles \(MVT, type 1\): open the pyramid's PBF archive or its tileset\.json$/);
    expect(await page.locator('#status').innerText()).toBe(`cannot show this pyramid: ${failure}`);
    expect(await errorsOf()).toEqual([failure]);
    // The title and the reason; no controls with nothing to act on.
    for (const id of ['fit', 'field', 'layers', 'legend']) expect(await page.locator(`#${id}`).isVisible(), id).toBe(false);
    expect(await page.locator('#title').isVisible()).toBe(true);
  });

  it('says a pyramid of JSON tiles only is not one it draws', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=json-only/tileset.json`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toMatch(/json-only\/tileset\.json: this descriptor names JSON tiles only, and the viewer draws PBF tiles: open the pyramid's tileset\.json, which names its PBF tiles when it has them; a pyramid of JSON tiles only needs a build with --format json,pbf \(or pbf\)$/);
    expect(await errorsOf()).toEqual([failure]);
  });

  it('says a descriptor cut short is not JSON, naming it and its size', async () => {
    const site = path.join(dir, 'site');
    fs.mkdirSync(path.join(site, 'cut'), { recursive: true });
    fs.writeFileSync(path.join(site, 'cut', 'tileset.json'), '{"tilejson": "3.0.0", "tiles": ["{zlvl}/{x}/{y}.pbf"');
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=cut/tileset.json`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toMatch(/^http:\/\/[^ ]+\/cut\/tileset\.json: the descriptor is not JSON \(.+; 52 bytes: cut short, or a build still writing it\?\)$/);
    expect(await page.locator('#status').innerText()).toBe(`cannot show this pyramid: ${failure}`);
  });

  it('says an archive another tool wrote is not a mudm-tiles pyramid', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=foreign.pmtiles`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toBe(`${at.host}foreign.pmtiles: the descriptor has no tiles template: this is not a mudm-tiles pyramid (an archive written by another tool carries no tileset descriptor)`);
    expect(await errorsOf()).toEqual([failure]);
  });

  it('reads an archive from a host whose weak ETags are of each range, not of the file (no false "replaced")', async () => {
    const cell = cells().filter((c) => c.c === 0 && c.z === 0)[0];
    await view(`${at.perRange}index.html?tileset=slide.pmtiles#${VIEW}`);
    expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id)).toContain(cell.id);
    expect(await page.locator('#status').innerText()).not.toMatch(/replaced|failed/);
    expect(await errorsOf()).toEqual([]);
  });

  it('opens a pyramid folder given as ?tileset= (as serve, inspect and verify take OUT) by its tileset.json', async () => {
    const cell = cells().find((c) => c.c === 1 && c.z === 2)!;
    // Before: "HTTP 404 (no descriptor there: not a pyramid, or its build has not finished)" for a built pyramid.
    const logged = consoleErrors.length;
    for (const url of [`${at.host}index.html?tileset=slide-dir`, `${at.host}index.html?tileset=slide-dir/`, `${at.site}?tileset=slide-dir/`, `${at.site}?tileset=slide-dir`]) {
      await view(`${url}#zoom=4&x=${cell.x}&y=${cell.y}&c=1&z=2`);
      expect(await page.locator('#title').innerText(), url).toBe('sample slide');
      expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id), url).toContain(cell.id);
      expect(await errorsOf(), url).toEqual([]);
    }
    // Its tileset.json is asked for first: the folder's own URL was, answered 404, and the browser logged that.
    expect(consoleErrors.slice(logged)).toEqual([]);
  });

  it('says a folder without a descriptor is not a pyramid, or not built yet', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=unbuilt/tileset.json`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toBe(`${at.host}unbuilt/tileset.json: HTTP 404 (no descriptor there: not a pyramid, or its build has not finished)`);
    // A folder on the page's own host, with or without its slash: its tileset.json alone is asked for, and named. Before,
    // `unbuilt` was asked for too: two 404s in the browser's console, and both URLs in the message.
    for (const [base, given] of [[at.host, 'unbuilt/'], [at.host, 'unbuilt'], [at.site, 'unbuilt'], [at.site, 'nowhere']]) {
      const logged = consoleErrors.length;
      await page.goto('about:blank');
      await page.goto(`${base}index.html?tileset=${given}`);
      expect(await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message))).toBe(`no pyramid at ${base}${given}: ${base}${given.replace(/\/$/, '')}/tileset.json answered HTTP 404 (not a pyramid's folder, or its build has not finished)`);
      expect(await page.locator('#status').innerText()).toBe(`cannot show this pyramid: no pyramid at ${base}${given}: ${base}${given.replace(/\/$/, '')}/tileset.json answered HTTP 404 (not a pyramid's folder, or its build has not finished)`);
      // The one request's 404, which the browser logs whatever the page does.
      expect(consoleErrors.slice(logged), `${base}${given}`).toEqual([expect.stringMatching(/404/)]);
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('says a host that sends the whole archive for a range does not answer Range requests, and where to host it', async () => {
    await page.goto('about:blank');
    await page.goto(`${at.noRanges}index.html?tileset=slide.pmtiles`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    // Before: the pmtiles reader's "Server returned no content-length header or content-length exceeding request.
    // Check that your storage backend supports HTTP Byte Serving."
    const size = fs.statSync(path.join(dir, 'site', 'slide.pmtiles')).size;
    expect(failure).toBe(`${at.noRanges}slide.pmtiles: the host sent the whole file (${size} bytes) for a range of 16384: it does not answer HTTP Range requests, by which archives are read (Python's http.server does not); host the archive where they are answered (nginx, Apache, Caddy, an object store) or with mudm-tiles serve`);
    expect(await page.locator('#status').innerText()).toBe(`cannot show this pyramid: ${failure}`);
  });

  it('names an archive it cannot find', async () => {
    for (const base of [at.host, at.site]) {
      const logged = consoleErrors.length;
      await page.goto('about:blank');
      await page.goto(`${base}index.html?tileset=nowhere.pmtiles`);
      const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
      // Before: "Bad response code: 404", the reader's words, after a HEAD asked for its size: a second 404.
      expect(failure).toBe(`${base}nowhere.pmtiles: HTTP 404 (no such file on the host: not copied there, moved, or misnamed)`);
      expect(await errorsOf()).toEqual([failure]);
      expect(consoleErrors.slice(logged), base).toEqual([expect.stringMatching(/404/)]);
    }
    // Shorter than a header: the reader's own words (a "non-matching ETag" for the 416 of an empty file, a DataView
    // error) would not say it.
    for (const [name, bytes] of [['empty', 0], ['short', 50]] as const) {
      await page.goto('about:blank');
      await page.goto(`${at.host}index.html?tileset=${name}.pmtiles`);
      const why = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
      expect(why).toBe(`${at.host}${name}.pmtiles: it holds ${bytes} bytes, fewer than the 127 of a PMTiles header: not an archive, or cut short`);
    }
    // The page's own request of the missing file is logged by the browser: not a fault of the viewer.
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404|416/.test(e)));
  });

  it('says an archive whose gzipped parts do not decode is damaged, and a file that is no archive is none', async () => {
    const damaged = 'that do not decode as gzip, which the archive\'s header says they are: the archive is damaged (mudm-tiles verify names the parts)';
    // Before: "Failed to fetch (the host is down, or, on another origin, does not allow this page: CORS)", the browser's
    // words for a stream that does not decode, and "Failed to fetch" for the metadata.
    for (const [name, part] of [['bad-root', 8], ['bad-meta', 24]] as const) {
      await page.goto('about:blank');
      await page.goto(`${at.host}index.html?tileset=${name}.pmtiles`);
      const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
      const length = Number(fs.readFileSync(path.join(dir, 'site', `${name}.pmtiles`)).readBigUInt64LE(part + 8));
      expect(failure, name).toBe(`${at.host}${name}.pmtiles: ${length} bytes ${damaged}`);
    }
    // Its tiles: each fails for that reason, and the status line says it.
    await view(`${at.host}index.html?tileset=bad-gz-tiles.pmtiles#${VIEW}`);
    const errors = await errorsOf();
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatch(new RegExp(`^tile failed to load: \\d+/\\d+/\\d+ \\(\\d+ bytes ${damaged.replace(/[()]/g, '\\$&')}\\)$`));
    expect(await page.locator('#status').innerText()).toMatch(new RegExp(`${errors.length} tile\\(s\\) failed to load \\(the last: \\d+ bytes ${damaged.replace(/[()]/g, '\\$&')}\\) retry$`));
    // A web page under an archive's name. Before: "Wrong magic number for PMTiles archive".
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=page.pmtiles`);
    expect(await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message))).toBe(`${at.host}page.pmtiles: it does not begin as a PMTiles archive does (the bytes "PMTiles" and the version, 3): not an archive (a web page a host sent for it?), or damaged`);
  });

  it('names a descriptor it cannot fetch (no host there), and opens the default one for an empty ?tileset=', async () => {
    // A port nothing listens on (taken, then let go).
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as net.AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    await page.goto('about:blank');
    await page.goto(`${at.host}index.html?tileset=${encodeURIComponent(`http://127.0.0.1:${port}/tileset.json`)}`);
    const failure = await page.evaluate(() => window.__viewer.ready.then(() => 'ready', (e: Error) => e.message));
    expect(failure).toBe(`http://127.0.0.1:${port}/tileset.json: Failed to fetch (the host is down, or, on another origin, does not allow this page: CORS)`);
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/ERR_CONNECTION_REFUSED/.test(e)));
    await view(`${at.planeDir}?tileset=#${VIEW}`);
    expect(await errorsOf()).toEqual([]);
    expect(await page.locator('#status').innerText()).toMatch(/^2 layer\(s\)/);
  });

  it('reports tiles it cannot read from an archive, in its errors and on the status line, from a static host and through serve (ETags)', async () => {
    for (const base of [at.host, at.site]) {
      await page.goto('about:blank');
      await page.goto(`${base}index.html?tileset=cut.pmtiles#${VIEW}`);
      await page.evaluate(() => window.__viewer.ready);
      await page.evaluate(() => window.__viewer.settle());
      const errors = await errorsOf();
      expect(errors.length, base).toBeGreaterThan(0);
      // A range past the end is a 416, which the range reader reports as an ETag that changed: with the archive's ETag
      // unchanged, the viewer says what it is.
      for (const e of errors) expect(e, base).toMatch(/^tile failed to load: \d+\/\d+\/\d+ \(.*lie past the end of the archive \(HTTP 416\).*\)$/);
      // With why, the last to fail: the count alone said nothing of it but in errors, out of a person's sight.
      expect(await page.locator('#status').innerText(), base).toMatch(new RegExp(`${errors.length} tile\\(s\\) failed to load \\(the last: bytes \\d+–\\d+ lie past the end of the archive \\(HTTP 416\\): it ends before its directories say \\(cut short\\?\\)\\) retry$`));
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/416/.test(e)));
  });

  it('shows no tiles, and says why, for a plane whose archive is missing: switched to, or opened at', async () => {
    const problem = /^plane c=1, z=2 cannot be shown: http:\/\/127\.0\.0\.1:\d+\/slide-missing\/tiles-c1-z2\.pbf\.pmtiles: .*404/;
    const other = cells().filter((c) => c.c === 0 && c.z === 0)[0];
    await view(`${at.host}index.html?tileset=slide-missing/tileset.json#${VIEW}&c=0&z=0`);
    expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [other.x, other.y] as const)).map((f) => f.id)).toContain(other.id);
    await page.evaluate(() => window.__viewer.setPlane({ c: 1, z: 2 }));
    await page.evaluate(() => window.__viewer.settle());
    await screen(page, 'missing-plane-switched');
    // The plane before is gone from the map, not left under the new plane's name.
    expect(await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [other.x, other.y] as const)).toEqual([]);
    expect(await page.locator('#status').innerText()).toMatch(/plane c=1, z=2 cannot be shown: .*tiles-c1-z2\.pbf\.pmtiles/);
    expect(await errorsOf()).toEqual([expect.stringMatching(problem)]);
    // Opened at that plane: the page opens, with its plane selectors, and says why the map is empty.
    await view(`${at.host}index.html?tileset=slide-missing/tileset.json#${VIEW}&c=1&z=2`);
    expect(await page.locator('#plane-c option').allInnerTexts()).toEqual(['0', '1']);
    expect(await page.locator('#status').innerText()).toMatch(/plane c=1, z=2 cannot be shown/);
    // Its tiles could not be read: nothing is known of its features, so nothing is said of them.
    expect(await page.locator('#status').innerText()).not.toContain('no features');
    expect(await errorsOf()).toEqual([expect.stringMatching(problem)]);
    // The archive put back: the plane is asked for again when switched to, and shown (no reload).
    const site = path.join(dir, 'site');
    const missing = path.join(site, 'slide-missing', 'tiles-c1-z2.pbf.pmtiles');
    fs.copyFileSync(path.join(site, 'slide', 'tiles-c1-z2.pbf.pmtiles'), missing);
    try {
      await page.evaluate(() => window.__viewer.setPlane({ c: 0, z: 0 }));
      await page.evaluate(() => window.__viewer.setPlane({ c: 1, z: 2 }));
      await page.evaluate(() => window.__viewer.settle());
      const back = cells().filter((c) => c.c === 1 && c.z === 2)[0];
      expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [back.x, back.y] as const)).map((f) => f.id)).toContain(back.id);
      expect(await page.locator('#status').innerText()).not.toMatch(/cannot be shown/);
    } finally {
      fs.rmSync(missing);
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('reports tiles that arrive short or do not decode, and still opens, saying why: an archive cut inside a tile, a directory of broken tiles, damaged archives through serve', async () => {
    for (const [name, url, reason] of [
      ['cut inside a tile', `${at.host}index.html?tileset=cut-mid.pmtiles#${VIEW}`, /(asked, \d+ sent: the archive ends before its directories say|lie past the end of the archive \(HTTP 416\): it ends before its directories say) \(cut short\?\)/],
      // Before: the decoder's words alone ("Unimplemented type: 3"), or another of its errors.
      ['broken tiles', `${at.host}index.html?tileset=bad-dir/tileset.json#${VIEW}`, /\(\d+ bytes that do not decode as a vector tile \(.+\)\)$/],
      // Before: "HTTP 500" alone, serve's words in its answer left unread.
      ['cut, through serve', `${at.cutServed}#${VIEW}`, /\(http:\/\/127\.0\.0\.1:\d+\/\d+\/\d+\/\d+\.pbf: HTTP 500 \(cut\.pmtiles: bytes \d+\.\.\d+ are past the end of the archive \(\d+ bytes\)\)\)$/],
      // Before: "Failed to fetch", the browser's words for a body whose gzip does not decode.
      ['gzip damaged, through serve', `${at.badGzServed}#${VIEW}`, /\(http:\/\/127\.0\.0\.1:\d+\/\d+\/\d+\/\d+\.pbf: HTTP 200, but the tile did not arrive \(Failed to fetch\): its gzip does not decode \(the tile or its archive is damaged: mudm-tiles verify names them\), or the connection broke\)$/],
    ] as const) {
      await page.goto('about:blank');
      await page.goto(url);
      await page.evaluate(() => window.__viewer.ready);
      await page.evaluate(() => window.__viewer.settle());
      const errors = (await errorsOf()).filter((e) => e.startsWith('tile failed to load'));
      expect(errors.length, name).toBeGreaterThan(0);
      for (const e of errors) expect(e, name).toMatch(/^tile failed to load: \d+\/\d+\/\d+ \(.+\)$/);
      expect(errors.some((e) => reason.test(e)), `${name}: ${errors.join('; ')}`).toBe(true);
      expect(await errorsOf(), name).toEqual(errors);
      expect(await page.locator('#status').innerText(), name).toContain(`${errors.length} tile(s) failed to load`);
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/416|500|ERR_CONTENT_DECODING_FAILED/.test(e)));
  });

  /** The cells of plane c=1, z=2 (`now`, replacing the archive), and one of c=0, z=0 near its first (`was`): both lie in the tiles on screen. */
  const replacing = () => {
    const now = cells().filter((c) => c.c === 1 && c.z === 2);
    const was = cells().filter((c) => c.c === 0 && c.z === 0).sort((a, b) => Math.hypot(a.x - now[0].x, a.y - now[0].y) - Math.hypot(b.x - now[0].x, b.y - now[0].y))[0];
    return { now, was };
  };
  const idsAt = (c: { x: number; y: number }) => page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y).map((f) => f.id), [c.x, c.y] as const);
  /** Zoom 4 over image pixel (x, y), drawn. */
  const goTo = async (x: number, y: number) => {
    await page.evaluate(([cx, cy]) => { window.__viewer.view.setZoom(4); window.__viewer.view.setCenter([cx, -cy]); }, [x, y] as const);
    await page.evaluate(() => window.__viewer.settle());
  };

  it.each([
    ['through serve (a strong ETag)', 'site', 'replaced'],
    ['on a host of weak ETags (W/"…", which the pmtiles reader drops)', 'weak', 'replaced-weak'],
  ])('says when an archive is replaced while viewed %s, and reads the new one', async (_, host, name) => {
    const file = path.join(dir, 'site', `${name}.pmtiles`);
    const { now, was } = replacing();
    // Close in (its tiles over part of the slide only), then away to tiles not read yet.
    await view(`${at[host]}index.html?tileset=${name}.pmtiles#zoom=4&x=${was.x}&y=${was.y}`);
    expect(await page.locator('#status').innerText()).not.toContain('replaced since');
    expect(await idsAt(was)).toContain(was.id);
    // Another build: the slide's plane c=1, z=2, its tiles at other offsets.
    fs.writeFileSync(file, fs.readFileSync(path.join(dir, 'site', 'slide', 'tiles-c1-z2.pbf.pmtiles')));
    const far = cells().filter((c) => c.c === 1 && c.z === 2).sort((a, b) => Math.hypot(b.x - was.x, b.y - was.y) - Math.hypot(a.x - was.x, a.y - was.y))[0];
    await goTo(far.x, far.y);
    expect(await page.locator('#status').innerText()).toContain(`${name}.pmtiles was replaced since this page opened: reload the page to see its layers and fields`);
    // Back where it was: the tiles read from the old archive are not shown again, the new archive's are.
    await goTo(was.x, was.y);
    expect(await idsAt(now[0])).toContain(now[0].id);
    expect(await idsAt(was)).not.toContain(was.id);
    expect(await errorsOf()).toEqual([]);
  });

  it('says when the archive serve serves at its root is replaced while viewed (tiles by URL), and reads the new one', async () => {
    const { now, was } = replacing();
    await view(`${at.swap}#zoom=4&x=${was.x}&y=${was.y}`);
    expect(await idsAt(was)).toContain(was.id);
    // Another build renamed over it, as a rebuild does.
    const file = path.join(dir, 'alone', 'swap.pmtiles');
    fs.copyFileSync(path.join(dir, 'other.pmtiles'), `${file}.new`);
    fs.renameSync(`${file}.new`, file);
    const far = now.sort((a, b) => Math.hypot(b.x - was.x, b.y - was.y) - Math.hypot(a.x - was.x, a.y - was.y))[0];
    await goTo(far.x, far.y);
    expect(await page.locator('#status').innerText()).toContain('swap.pmtiles was replaced since this page opened: reload the page to see its layers and fields');
    // Back where it was: the old build's tiles are read again from the new one, not left beside its tiles.
    await goTo(was.x, was.y);
    const near = cells().filter((c) => c.c === 1 && c.z === 2).sort((a, b) => Math.hypot(a.x - was.x, a.y - was.y) - Math.hypot(b.x - was.x, b.y - was.y))[0];
    expect(await idsAt(near)).toContain(near.id);
    expect(await idsAt(was)).not.toContain(was.id);
    expect(await errorsOf()).toEqual([]);
  });

  it('reads failed tiles again on "retry", once the archive is back: by URL through serve, and by ranges from a static host', async () => {
    const cell = cells().filter((c) => c.c === 0 && c.z === 0)[0];
    const cases: [string, string][] = [[`${at.flaky}#${VIEW}`, path.join(dir, 'alone', 'flaky.pmtiles')], [`${at.host}index.html?tileset=flaky.pmtiles#${VIEW}`, path.join(dir, 'site', 'flaky.pmtiles')]];
    fs.copyFileSync(path.join(dir, 'site', 'slide.pmtiles'), cases[1][1]);
    for (const [url, file] of cases) {
      await view(url);
      // Away, then tiles not read yet are asked for (zoom 0).
      fs.renameSync(file, `${file}.away`);
      await page.evaluate(() => window.__viewer.view.setZoom(0));
      await page.evaluate(() => window.__viewer.settle());
      expect(await page.locator('#status').innerText(), url).toMatch(/\d+ tile\(s\) failed to load \(the last: .*HTTP 404.*\) retry$/);
      expect(await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const), url).toEqual([]);
      fs.renameSync(`${file}.away`, file);
      await page.click('#retry');
      await page.evaluate(() => window.__viewer.settle());
      expect(await page.locator('#status').innerText(), url).not.toContain('failed');
      expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id), url).toContain(cell.id);
    }
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('says so when no tile of the coarsest zoom holds a feature (a tile template pointing where no tile is)', async () => {
    await view(`${at.host}index.html?tileset=elsewhere/tileset.json`);
    expect(await page.locator('#status').innerText()).toContain('no features in the tiles of zoom 0 of this plane (c=0, z=0: it may hold none, another plane the data): every one empty or missing (does the tiles template point where the tiles are?)');
    // The page's own requests of the missing tiles are logged by the browser: not a fault of the viewer.
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
    // A sound pyramid says nothing of the kind.
    await view(`${at.host}index.html?tileset=slide-dir/tileset.json`);
    expect(await page.locator('#status').innerText()).not.toContain('no features');
  });

  it('says a plane switched to holds no features, naming it, and says nothing of one that does', async () => {
    // Opened on the empty plane: nothing tells yet whether the tiles template points where the tiles are.
    await view(`${at.host}index.html?tileset=gap/tileset.json#c=1`);
    expect(await page.locator('#status').innerText()).toContain('no features in the tiles of zoom 0 of this plane (c=1: it may hold none, another plane the data)');
    await view(`${at.host}index.html?tileset=gap/tileset.json#c=0`);
    expect(await page.locator('#status').innerText()).not.toContain('no features');
    // Switched to from a plane that showed its cells: the template is sound, the plane holds none, and no more is said
    // (it asked whether the template pointed where the tiles are).
    await page.evaluate(() => window.__viewer.setPlane({ c: 1 }));
    await expect.poll(() => page.locator('#status').innerText()).toContain('no features on plane c=1: its tiles are empty (other planes hold the data)');
    expect(await page.locator('#status').innerText()).not.toContain('template');
    await page.evaluate(() => window.__viewer.setPlane({ c: 2 }));
    await expect.poll(() => page.locator('#status').innerText()).not.toContain('no features');
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('fits the data below the panel on a phone, once the panel has its full height', async () => {
    await page.setViewportSize({ width: 360, height: 640 });
    try {
      await view(`${at.host}index.html?tileset=slide-dir/tileset.json`);
      const panel = await page.locator('#panel').boundingBox();
      const shown = cells().filter((c) => c.c === 0 && c.z === 0);
      const [, top] = await page.evaluate(([x, y]) => window.__viewer.toScreen(x, y), [shown[0].x, Math.min(...shown.map((c) => c.y))] as const);
      expect(top, `data top ${top}, panel bottom ${panel?.y ?? 0} + ${panel?.height ?? 0}`).toBeGreaterThan((panel?.y ?? 0) + (panel?.height ?? 0));
    } finally {
      await page.setViewportSize({ width: 1000, height: 640 });
    }
  });

  it('reads a pyramid whose folder name holds braces, from a static host and through serve', async () => {
    const cell = cells().filter((c) => c.c === 0 && c.z === 0)[0];
    for (const base of [at.host, at.site]) {
      await view(`${base}index.html?tileset=${encodeURIComponent('run {c}/tileset.json')}#${VIEW}&c=0&z=0`);
      expect((await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cell.x, cell.y] as const)).map((f) => f.id), base).toContain(cell.id);
      expect(await errorsOf(), base).toEqual([]);
    }
  });

  it('counts tiles as failed, not empty, once the archive serve serves is deleted while viewed', async () => {
    await view(`${at.gone}#${VIEW}`);
    expect(await errorsOf()).toEqual([]);
    fs.rmSync(path.join(dir, 'alone', 'gone.pmtiles'));
    await page.evaluate(() => window.__viewer.view.setZoom(0));
    await page.evaluate(() => window.__viewer.settle());
    const errors = await errorsOf();
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatch(/^tile failed to load: 0\/\d+\/\d+ \(.*HTTP 404 \(from serve: not a tile of this pyramid, or its archive is gone\)\)$/);
    expect(await page.locator('#status').innerText()).toContain(`${errors.length} tile(s) failed to load`);
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/404/.test(e)));
  });

  it('counts the failed tiles of the plane shown: switched to a sound plane, the count of the one before is gone', async () => {
    await view(`${at.host}index.html?tileset=slide-cut/tileset.json#${VIEW}&c=0&z=0`);
    expect(await page.locator('#status').innerText()).toMatch(/\d+ tile\(s\) failed to load/);
    const before = (await errorsOf()).length;
    expect(before).toBeGreaterThan(0);
    await page.evaluate(() => window.__viewer.setPlane({ c: 1, z: 2 }));
    await page.evaluate(() => window.__viewer.settle());
    expect(await page.locator('#status').innerText()).not.toContain('failed to load');
    expect(await page.locator('#status').getAttribute('class')).toBe('');
    // Every failure stays listed in errors, whichever plane it was of.
    expect((await errorsOf()).length).toBe(before);
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !/416/.test(e)));
  });

  it('logs no errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
