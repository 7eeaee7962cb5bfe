// The viewer on QuPath's exports built by the real CLI: fitted on open, coloured by the data's class colours, views in the URL.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import type { Browser, Page } from 'playwright-core';
import { startServer, type Server } from '../../src/serve.js';
import { tmpDir } from '../helpers/pyramid.js';
import { close, fillOver, HAVE_CHROMIUM, launch, openPage, screen, type ViewerHandle } from './page.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const QUPATH = path.join(ROOT, 'sample-data/qupath');
const WHITE = [255, 255, 255];
const MAP = { width: 1000, height: 640 };

type Ring = number[][];
interface Geometry { type: string; coordinates: unknown }
interface QuFeature { id: string; geometry: Geometry; nucleusGeometry?: Geometry; properties: { objectType: string; object_type?: string; classification?: { name?: string; names?: string[]; color?: number[] }; measurements?: Record<string, number | string> } }

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;
const SAMPLE = readJson<{ features: QuFeature[] }>(path.join(QUPATH, 'qupath-0.4.geojson')).features;
const CELLS = SAMPLE.filter((f) => f.properties.objectType === 'cell');
/** QuPath 0.2: objects whose `id` names their type ("PathCellObject"), none with an id of its own. */
const LEGACY = readJson<QuFeature[]>(path.join(QUPATH, 'qupath-0.2.json'));
const PATCHES = fs.readdirSync(path.join(QUPATH, 'patches')).flatMap((f) => readJson<QuFeature[]>(path.join(QUPATH, 'patches', f)));

/** Every position of a geometry, however nested. */
function positions(c: unknown): number[][] {
  return Array.isArray(c) && typeof c[0] === 'number' ? [c as number[]] : (c as unknown[]).flatMap(positions);
}
/** [minX, minY, maxX, maxY] of features, their nuclei included. */
function boundsOf(features: QuFeature[]): number[] {
  const all = features.flatMap((f) => [...positions(f.geometry.coordinates), ...(f.nucleusGeometry ? positions(f.nucleusGeometry.coordinates) : [])]);
  return [Math.min(...all.map((p) => p[0])), Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[0])), Math.max(...all.map((p) => p[1]))];
}
const outer = (f: QuFeature): Ring => (f.geometry.coordinates as Ring[])[0];
const centroid = (r: Ring): number[] => [r.reduce((s, p) => s + p[0], 0) / r.length, r.reduce((s, p) => s + p[1], 0) / r.length];
function inside([x, y]: number[], r: Ring): boolean {
  let hit = false;
  for (let i = 0, j = r.length - 1; i < r.length; j = i++) {
    if ((r[i][1] > y) !== (r[j][1] > y) && x < ((r[j][0] - r[i][0]) * (y - r[i][1])) / (r[j][1] - r[i][1]) + r[i][0]) hit = !hit;
  }
  return hit;
}
/** Cells whose centre no other cell covers, to a few pixels: there a pixel shows that cell's fill alone. */
const CLEAR = CELLS.filter((c) => {
  const [x, y] = centroid(outer(c));
  const around = [[0, 0], [6, 0], [-6, 0], [0, 6], [0, -6]].map(([dx, dy]) => [x + dx, y + dy]);
  return !CELLS.some((o) => o !== c && around.some((p) => inside(p, outer(o))));
});
/** The class as the builder names it (`Tumor: Positive` for a derived class) and QuPath's colour as `#rrggbb`. */
function classOf(f: QuFeature): { name?: string; colour?: string } {
  const c = f.properties.classification;
  if (!c) return {};
  return { name: c.name ?? c.names?.join(': '), colour: c.color && `#${c.color.map((v) => v.toString(16).padStart(2, '0')).join('')}` };
}

/** The patches' world, as the README builds it, and the viewer-only members this test adds by hand (no build writes them). */
const SLIDE = { width: 48000, height: 92000 };
const KEPT: Record<string, number> = { 0: 0.25, 1: 0.5 };
const BACKGROUND_GREY = [230, 230, 230];
const BLOCK = { x: 42300, y: 87300, w: 450, h: 450, rgb: [150, 200, 250] };

declare const window: { __viewer: ViewerHandle };
declare const document: { title: string };

function cli(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('node', [path.join(ROOT, 'bin/mudm-tiles.js'), ...args], { cwd: ROOT }, (error, _stdout, stderr) => (error ? reject(new Error(`${args.join(' ')}: ${stderr}`)) : resolve()));
  });
}

let dir: string;
type Built = 'sample' | 'patches' | 'coarse' | 'legacy';
const servers: Record<Built, Server> = {} as Record<Built, Server>;
let browser: Browser | undefined;
let page: Page;
const errors: string[] = [];

async function open(which: Built, hash = ''): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${servers[which].url}${hash}`);
  await page.evaluate(() => window.__viewer.ready);
  await page.evaluate(() => window.__viewer.settle());
}
const toScreen = (x: number, y: number): Promise<[number, number]> => page.evaluate(([px, py]) => window.__viewer.toScreen(px, py), [x, y] as const);
const viewerField = (): Promise<string> => page.evaluate(() => window.__viewer.field());
/** Unticks every layer but `keep`, so that a pixel shows one feature's fill over the page. */
async function showOnly(keep: string): Promise<void> {
  for (const label of await page.locator('#layers label').all()) {
    if ((await label.innerText()).trim() !== keep) await label.locator('input').uncheck();
  }
  await page.evaluate(() => window.__viewer.settle());
}
/** The data's bounds on screen fill the map beside the panel along one side at least. */
async function expectFitted(b: number[]): Promise<void> {
  const [left, top] = await toScreen(b[0], b[1]);
  const [right, bottom] = await toScreen(b[2], b[3]);
  const panel = (await page.locator('#panel').boundingBox())!;
  expect(left).toBeGreaterThanOrEqual(panel.x + panel.width);
  expect(right).toBeLessThanOrEqual(MAP.width);
  expect(top).toBeGreaterThanOrEqual(0);
  expect(bottom).toBeLessThanOrEqual(MAP.height);
  expect(Math.max((right - left) / (MAP.width - panel.x - panel.width), (bottom - top) / MAP.height)).toBeGreaterThan(0.85);
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  dir = tmpDir('mudm-viewer-qupath');
  // The README's "From QuPath" commands, with a name for the page title and one worker for the shared machine.
  const sample = path.join(dir, 'sample');
  const patches = path.join(dir, 'patches');
  await cli(['build', path.join(QUPATH, 'qupath-0.4.geojson'), '-o', sample, '--layer-by', 'objectType', '--nucleus-features', '--name', 'QuPath sample', '--workers', '1']);
  await cli(['build', path.join(QUPATH, 'patches'), '-o', patches, '--image-size', `${SLIDE.width},${SLIDE.height}`, '--workers', '1']);
  const legacy = path.join(dir, 'legacy');
  await cli(['build', path.join(QUPATH, 'qupath-0.2.json'), '-o', legacy, '--layer-by', 'objectType', '--nucleus-features', '--workers', '1']);
  // Its coarsest zoom (3) has 18 tiles over the slide, most empty.
  const coarse = path.join(dir, 'coarse');
  await cli(['build', path.join(QUPATH, 'patches'), '-o', coarse, '--image-size', `${SLIDE.width},${SLIDE.height}`, '--min-zoom', '3', '--workers', '1']);
  const scale = 50;
  const slide = await sharp({ create: { width: SLIDE.width / scale, height: SLIDE.height / scale, channels: 3, background: { r: BACKGROUND_GREY[0], g: BACKGROUND_GREY[1], b: BACKGROUND_GREY[2] } } })
    .composite([{ input: { create: { width: BLOCK.w / scale, height: BLOCK.h / scale, channels: 3, background: { r: BLOCK.rgb[0], g: BLOCK.rgb[1], b: BLOCK.rgb[2] } } }, left: BLOCK.x / scale, top: BLOCK.y / scale }])
    .png().toBuffer();
  fs.writeFileSync(path.join(patches, 'slide.png'), slide);
  fs.writeFileSync(path.join(patches, 'quicklook.png'), await sharp({ create: { width: 480, height: 920, channels: 3, background: '#ff00ff' } }).png().toBuffer());
  const d = readJson<{ vector_layers: Array<Record<string, unknown>>; assets?: unknown[]; bounds: number[] }>(path.join(patches, 'tileset.json'));
  // The descriptor's bounds are the slide, not the patches: fitting them would show the cells as a dot in a corner.
  expect(d.bounds).toEqual([0, 0, SLIDE.width, SLIDE.height]);
  d.vector_layers[0].kept_fraction = KEPT;
  d.assets = [
    { role: 'raster', href: 'quicklook.png', media_type: 'image/png', title: 'preview' },
    { role: 'background', href: 'slide.png', media_type: 'image/png', title: 'slide', bbox: [0, 0, SLIDE.width, SLIDE.height] },
  ];
  fs.writeFileSync(path.join(patches, 'tileset.json'), JSON.stringify(d));

  servers.sample = await startServer({ root: sample, port: 0 });
  servers.patches = await startServer({ root: patches, port: 0 });
  servers.coarse = await startServer({ root: coarse, port: 0 });
  servers.legacy = await startServer({ root: legacy, port: 0 });
  browser = await launch();
  page = await openPage(browser, errors);
  await open('sample');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await servers.sample?.close();
  await servers.patches?.close();
  await servers.coarse?.close();
  await servers.legacy?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_CHROMIUM)('viewer on the QuPath sample, built by the CLI', () => {
  it('opens fitted to the data, titled with the tileset name', async () => {
    expect(await page.evaluate(() => document.title)).toMatch(/^QuPath sample/);
    expect(await page.locator('#title').innerText()).toBe('QuPath sample');
    await expectFitted(boundsOf(SAMPLE));
  });

  it('colours by classification.name in QuPath\'s class colours, on the cells and in the legend', async () => {
    expect(await viewerField()).toBe('classification.name');
    expect(await page.locator('#field').inputValue()).toBe('classification.name');
    const legend = await page.locator('#legend > div:not(.shared)').evaluateAll((rows) => rows.map((r) => [(r as unknown as { innerText: string }).innerText.replace(/\s+/g, ' ').trim(), (r.querySelector('.swatch') as unknown as { dataset: { colour: string } }).dataset.colour]));
    // QuPath's Immune cells and Tumor: Negative are 81 RGB levels apart, Tumor and Tumor: Positive 75, under NEAR:
    // kept, and the legend says so.
    expect(legend).toEqual([['Immune cells ¹', '#a05aa0'], ['Necrosis', '#323232'], ['Stroma', '#96c896'], ['Tumor ²', '#c80000'], ['Tumor: Negative ¹', '#6e6edc'], ['Tumor: Positive ²', '#dc3c28'], ['no value', '#888888']]);
    expect(await page.locator('#legend > div.shared').allInnerTexts()).toEqual(['¹', '²'].map((mark) => `${mark} 2 values share nearly one colour in the data: point at a feature to see which`));

    await screen(page, 'qupath-fit-by-class');
    await showOnly('cell');
    const at = await screen(page, "qupath-cells-only");
    const unclassified = await page.evaluate(() => window.__viewer.colourOf(undefined));
    // Each cell's centre shows its class colour (grey when it has none), where no other cell covers it.
    expect(CLEAR.length).toBeGreaterThan(CELLS.length / 2);
    for (const c of CLEAR) {
      const centre = centroid(outer(c));
      const { name, colour } = classOf(c);
      const [sx, sy] = await toScreen(centre[0], centre[1]);
      const want = fillOver(colour ?? unclassified, WHITE);
      expect(close(at(sx, sy), want), `${c.id} (${name}) at ${sx},${sy}: ${at(sx, sy)} vs ${want}`).toBe(true);
    }
  });

  it('draws a QuPath annotation as QuPath does, an outline, so the cells inside it keep their legend colours', async () => {
    await open('sample', '#zoom=4.5&x=1400&y=1000&colour=classification.name');
    // Nuclei hidden, so that a cell's centre shows its own fill; the annotations stay.
    await page.locator('#layers label', { hasText: 'nucleus' }).locator('input').uncheck();
    await page.evaluate(() => window.__viewer.settle());
    const at = await screen(page, 'qupath-cells-in-region');
    const region = SAMPLE.find((f) => f.properties.objectType === 'annotation' && classOf(f).name === 'Tumor')!;
    const within = CLEAR.filter((c) => inside(centroid(outer(c)), outer(region)));
    expect(within.length).toBeGreaterThan(20);
    // Filled at 0.55 like a cell, the region tinted every cell in it: Tumor: Negative read mauve, Tumor: Positive
    // red on red, off their legend colours by up to 50 levels.
    for (const c of within) {
      const [sx, sy] = await toScreen(...(centroid(outer(c)) as [number, number]));
      if (sx < 0 || sy < 0 || sx >= MAP.width || sy >= MAP.height) continue;
      const want = fillOver(classOf(c).colour ?? await page.evaluate(() => window.__viewer.colourOf(undefined)), WHITE);
      expect(close(at(sx, sy), want), `${c.id} (${classOf(c).name}) at ${sx},${sy}: ${at(sx, sy)} vs ${want}`).toBe(true);
    }
    // The region still shows: its outline in its class colour, and its card where no cell is.
    const ring = outer(region);
    const mids = await Promise.all(ring.slice(1).map((p, i) => toScreen((p[0] + ring[i][0]) / 2, (p[1] + ring[i][1]) / 2)));
    // One on the map beside the panel.
    const edge = mids.find(([x, y]) => x > 300 && x < MAP.width - 10 && y > 10 && y < MAP.height - 10)!;
    const dark = [-1, 0, 1].flatMap((dx) => [-1, 0, 1].map((dy) => at(edge[0] + dx, edge[1] + dy))).some((p) => p[1] < 120);
    expect(dark, `no outline near ${edge}`).toBe(true);
    await page.locator('#layers label', { hasText: 'nucleus' }).locator('input').check();
  });

  it('restores zoom, centre and colour-by from the URL, keeps them there, and fits again on demand', async () => {
    const c = CLEAR[7];
    const [cx, cy] = centroid(outer(c));
    const area = c.properties.measurements!['Cell: Area'] as number;
    await open('sample', `#zoom=5.5&x=${cx}&y=${cy}&colour=${encodeURIComponent('measurements.Cell: Area')}`);
    expect(await viewerField()).toBe('measurements.Cell: Area');
    expect(await page.locator('#field').inputValue()).toBe('measurements.Cell: Area');
    expect(await page.evaluate(() => window.__viewer.zoom())).toBeCloseTo(5.5, 5);
    expect(await toScreen(cx, cy)).toEqual([500, 320]);
    // The cell is drawn in the ramp colour of its area; the legend shows the ramp's range.
    await showOnly('cell');
    const at = await screen(page, 'qupath-url-by-area');
    const want = fillOver(await page.evaluate((v) => window.__viewer.colourOf(v), area), WHITE);
    expect(close(at(500, 320), want), `${at(500, 320)} vs ${want}`).toBe(true);
    const areas = CELLS.map((f) => f.properties.measurements!['Cell: Area'] as number);
    expect(await page.locator('#legend .ramp-ends').innerText()).toBe(`${Math.min(...areas)} … ${Math.max(...areas)}`);

    // Moving the view rewrites the hash: reading it back gives the new centre.
    await page.evaluate(() => { window.__viewer.view.setCenter([1500, -1000]); return window.__viewer.settle(); });
    const params = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
    const hidden = params.getAll('hide');
    params.delete('hide');
    expect(Object.fromEntries(params)).toEqual({ zoom: '5.5', x: '1500', y: '1000', colour: 'measurements.Cell: Area' });
    // The layers unticked (all but cell) are in the link too.
    const layers = await page.locator('#layers input[data-layer]').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).dataset.layer as string));
    expect(hidden).toEqual(layers.filter((l) => l !== 'cell').sort());

    await page.click('#fit');
    await page.waitForFunction(() => window.__viewer.zoom() < 5);
    await page.evaluate(() => window.__viewer.settle());
    await expectFitted(boundsOf(SAMPLE));
  });

  it('shows one id and the grouped class and measurements in a card bounded by the window', async () => {
    await open('sample', '#zoom=6&x=1900&y=1050&colour=classification.name');
    await showOnly('cell');
    const c = CELLS.find((f) => { const [x, y] = centroid(outer(f)); return f.properties.classification?.name && Math.abs(x - 1900) < 150 && Math.abs(y - 1050) < 100; })!;
    const [sx, sy] = await toScreen(...(centroid(outer(c)) as [number, number]));
    await page.mouse.move(sx, sy);
    await page.waitForFunction(() => !(document as unknown as { getElementById(id: string): { hidden: boolean } }).getElementById('card').hidden);
    const text = await page.locator('#card').innerText();
    expect(text.match(/^id\b/gm)).toEqual(['id']);
    expect(text).toMatch(new RegExp(`^id\\s+${c.id}$`, 'm'));
    expect(text).toMatch(/^layer\s+cell$/m);
    expect(text).toMatch(/^classification$/m);
    expect(text).toMatch(new RegExp(`^name\\s+${c.properties.classification!.name}$`, 'm'));
    expect(text).toMatch(/^measurements$/m);
    expect(text).toMatch(new RegExp(`^Cell: Area\\s+${c.properties.measurements!['Cell: Area']}$`, 'm'));
    const box = (await page.locator('#card').boundingBox())!;
    expect(box.height).toBeLessThanOrEqual(420);
    expect(box.width).toBeLessThanOrEqual(360);
    expect(box.y + box.height).toBeLessThanOrEqual(MAP.height);
    await page.keyboard.press('Escape');
  });

  it('names the cell under the pointer, not the tumour region drawn around it, whichever tile holds it', async () => {
    // At this zoom OpenLayers listed the region first for 9 of the 30 cells in it (those in tiles whose neighbour it
    // tested first), and the card showed the region with "+ 2 more here".
    await open('sample', '#zoom=5&x=1400&y=1000&colour=classification.name');
    const region = SAMPLE.find((f) => f.properties.objectType === 'annotation' && f.geometry.type === 'Polygon' && classOf(f).name === 'Tumor')!;
    const within = CELLS.filter((c) => inside(centroid(outer(c)), outer(region)));
    expect(within.length).toBeGreaterThan(20);
    const first = await page.evaluate((points) => points.map(([x, y]) => window.__viewer.featuresAt(x, y)[0]?.layer), within.map((c) => centroid(outer(c))));
    expect(first.filter((l) => l !== undefined).length).toBeGreaterThan(20);
    expect(first.filter((l) => l === 'annotation')).toEqual([]);
    // A nucleus is drawn over its cell and lies inside it: at its centre the card names the nucleus.
    const c = within[0];
    const n = centroid((c.nucleusGeometry!.coordinates as Ring[])[0]);
    const [sx, sy] = await toScreen(n[0], n[1]);
    await page.mouse.move(sx, sy);
    await page.waitForFunction(() => !(document as unknown as { getElementById(id: string): { hidden: boolean } }).getElementById('card').hidden);
    expect(await page.locator('#card').innerText()).toMatch(/^layer\s+nucleus$/m);
    await page.keyboard.press('Escape');
  });
});

describe.skipIf(!HAVE_CHROMIUM)('viewer on a QuPath 0.2 export, whose objects have no id', () => {
  it('shows no id on the card: the PBF ids are the build\'s sequence numbers, which the descriptor says', async () => {
    const d = readJson<{ vector_layers: Array<{ id: string; feature_ids?: string }> }>(path.join(dir, 'legacy', 'tileset.json'));
    expect(d.vector_layers.map((l) => [l.id, l.feature_ids])).toEqual([['annotation', 'sequence'], ['cell', 'sequence'], ['detection', 'sequence'], ['nucleus', 'sequence']]);
    const cells = LEGACY.filter((f) => f.properties.object_type === 'cell');
    const c = cells[Math.floor(cells.length / 2)];
    const [cx, cy] = centroid(outer(c));
    await open('legacy', `#zoom=4&x=${cx}&y=${cy}`);
    await showOnly('cell');
    const [sx, sy] = await toScreen(cx, cy);
    await page.mouse.move(sx, sy);
    await page.waitForFunction(() => !(document as unknown as { getElementById(id: string): { hidden: boolean } }).getElementById('card').hidden);
    await screen(page, 'qupath-0.2-card');
    const text = await page.locator('#card').innerText();
    // Before, "id 21": the cell's place in the file, which a pathologist takes for QuPath's object id.
    expect(text).not.toMatch(/^id\b/m);
    expect(text).toMatch(/^layer\s+cell$/m);
    expect(text).toMatch(new RegExp(`^Cell: Area\\s+${(c.properties.measurements as unknown as Array<{ name: string; value: number }>).find((m) => m.name === 'Cell: Area')!.value}$`, 'm'));
    // Nor does any feature of any layer there have one for a script: the annotation around it, the nucleus inside it.
    for (const label of await page.locator('#layers label').all()) await label.locator('input').check();
    await page.evaluate(() => window.__viewer.settle());
    const found = await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [cx, cy] as const);
    expect(found.length).toBeGreaterThan(0);
    expect(found.map((f) => f.id)).toEqual(found.map(() => undefined));
    await page.keyboard.press('Escape');
  });
});

describe.skipIf(!HAVE_CHROMIUM)('viewer on per-patch bare arrays far from the origin', () => {
  it('opens fitted to the patches, not the slide, over the slide image', async () => {
    await open('patches');
    await expectFitted(boundsOf(PATCHES));
    const at = await screen(page, 'qupath-patches-fit');
    // Beside the cells: the slide image (grey, its blue block in place), never the magenta quicklook.
    const [bx, by] = await toScreen(BLOCK.x + BLOCK.w / 2, BLOCK.y + BLOCK.h / 2);
    expect(close(at(bx, by), BLOCK.rgb, 6), `${at(bx, by)}`).toBe(true);
    const b = boundsOf(PATCHES);
    const [gx, gy] = await toScreen(b[2] - 5, b[1] + 5);
    expect(close(at(gx, gy), BACKGROUND_GREY, 4), `${at(gx, gy)}`).toBe(true);
  });

  it('opens fitted to the patches when the coarsest zoom built is 3 (18 tiles over the slide)', async () => {
    await open('coarse');
    await expectFitted(boundsOf(PATCHES));
  });

  it('says which share of the features a thinned zoom shows, and nothing at a complete zoom', async () => {
    const b = boundsOf(PATCHES);
    for (const z of [0, 1]) {
      await open('patches', `#zoom=${z}&x=${b[0]}&y=${b[1]}`);
      expect(await page.locator('#kept').innerText()).toBe(`showing ${KEPT[z] * 100}% of layer patches at this zoom; zoom in for more`);
    }
    await open('patches', `#zoom=8&x=${b[0]}&y=${b[1]}`);
    expect(await page.locator('#kept').isVisible()).toBe(false);
  });
});

describe.skipIf(!HAVE_CHROMIUM)('viewer console', () => {
  it('logs no errors', async () => {
    expect(await page.evaluate(() => window.__viewer.errors)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
