// The viewer on a QuPath-style export: a small patch far from the origin, fitted on open, coloured by its class colours.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import type { Browser, Page } from 'playwright-core';
import { buildPyramid } from '../../src/build/pipeline.js';
import { memorySource } from '../../src/io/read.js';
import { startServer, type Server } from '../../src/serve.js';
import { verifyPyramid } from '../../src/inspect/index.js';
import { tmpDir } from '../helpers/pyramid.js';
import { close, fillOver, HAVE_CHROMIUM, launch, openPage, screen, type ViewerHandle } from './page.js';

/** The slide (world side 131072) and the patch of cells at its far corner, as a tool's per-patch export places it. */
const SLIDE = { width: 48000, height: 92000 };
const GRID = { x: 41100, y: 86100, cols: 5, rows: 8, step: 500, side: 300 };
/** QuPath's class colours, as the builder writes them in the layer's `fieldcolors`; Necrosis has none. */
const CLASS_COLOURS: Record<string, string> = { 'Immune cells': '#a05aff', Stroma: '#96c896', Tumor: '#c80000' };
const CLASSES = ['Tumor', 'Stroma', 'Immune cells', 'Tumor', 'Necrosis'];
/** Share of the cells kept per zoom, as the builder writes it in the layer's `kept_fraction` (zoom 8 complete). */
const KEPT: Record<string, number> = { 0: 0.004, 1: 0.01, 2: 0.04, 3: 0.1, 4: 0.2, 5: 0.3, 6: 0.5, 7: 0.7 };
/** The background image: light grey, one pale blue block beside the last column of cells, at 1/50 of the slide. */
const BACKGROUND_GREY = [230, 230, 230];
const BLOCK = { x: 43500, y: 89500, w: 450, h: 450, rgb: [150, 200, 250] };
const MEASUREMENTS = 60;

interface Cell { id: string; cls: string; area: number; x: number; y: number; cx: number; cy: number }
const CELLS: Cell[] = [];
for (let j = 0; j < GRID.rows; j++) {
  for (let i = 0; i < GRID.cols; i++) {
    const k = j * GRID.cols + i;
    const x = GRID.x + i * GRID.step, y = GRID.y + j * GRID.step;
    CELLS.push({ id: `cell-${k}`, cls: CLASSES[k % CLASSES.length], area: 50 + k * 10, x, y, cx: x + GRID.side / 2, cy: y + GRID.side / 2 });
  }
}
const PATCH = { minX: GRID.x, minY: GRID.y, maxX: GRID.x + (GRID.cols - 1) * GRID.step + GRID.side, maxY: GRID.y + (GRID.rows - 1) * GRID.step + GRID.side };

/** The cells with their nested QuPath objects already flattened to dotted names, as PBF tiles carry them. */
function exportJson(): string {
  const features = CELLS.map((c) => {
    const properties: Record<string, unknown> = { objectType: 'cell', 'classification.name': c.cls, 'measurements.Cell: Area': c.area };
    for (let m = 1; m < MEASUREMENTS; m++) properties[`measurements.Channel ${m}: Mean`] = c.area / m;
    const s = GRID.side;
    return { type: 'Feature', id: c.id, properties, geometry: { type: 'Polygon', coordinates: [[[c.x, c.y], [c.x + s, c.y], [c.x + s, c.y + s], [c.x, c.y + s], [c.x, c.y]]] } };
  });
  return JSON.stringify({ type: 'FeatureCollection', features });
}

declare const window: { __viewer: ViewerHandle };
declare const document: { title: string };

let dir: string;
let server: Server;
let browser: Browser | undefined;
let page: Page;
const errors: string[] = [];

async function open(hash = ''): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${server.url}${hash}`);
  await page.evaluate(() => window.__viewer.ready);
}

const toScreen = (x: number, y: number): Promise<[number, number]> => page.evaluate(([px, py]) => window.__viewer.toScreen(px, py), [x, y] as const);
const viewerField = (): Promise<string> => page.evaluate(() => window.__viewer.field());

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  dir = tmpDir('mudm-viewer-qupath');
  const out = path.join(dir, 'out');
  await buildPyramid([{ source: memorySource('Single_cells.geojson', exportJson()), layer: 'cells' }],
    { out, imageSize: `${SLIDE.width},${SLIDE.height}`, name: 'QuPath patch', workers: 1, memoryBudget: 64 * 1024 * 1024 });
  const scale = 50;
  const slide = await sharp({ create: { width: SLIDE.width / scale, height: SLIDE.height / scale, channels: 3, background: { r: BACKGROUND_GREY[0], g: BACKGROUND_GREY[1], b: BACKGROUND_GREY[2] } } })
    .composite([{ input: { create: { width: BLOCK.w / scale, height: BLOCK.h / scale, channels: 3, background: { r: BLOCK.rgb[0], g: BLOCK.rgb[1], b: BLOCK.rgb[2] } } }, left: BLOCK.x / scale, top: BLOCK.y / scale }])
    .png().toBuffer();
  fs.writeFileSync(path.join(out, 'slide.png'), slide);
  fs.writeFileSync(path.join(out, 'quicklook.png'), await sharp({ create: { width: 480, height: 920, channels: 3, background: '#ff00ff' } }).png().toBuffer());
  const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as { vector_layers: Array<Record<string, unknown>>; assets?: unknown[]; bounds: number[] };
  // The descriptor's bounds are the slide, not the patch: fitting them would show the cells as a dot in a corner.
  expect(d.bounds).toEqual([0, 0, SLIDE.width, SLIDE.height]);
  d.vector_layers[0].fieldcolors = { 'classification.name': CLASS_COLOURS };
  d.vector_layers[0].kept_fraction = KEPT;
  d.assets = [
    { role: 'raster', href: 'quicklook.png', media_type: 'image/png', title: 'preview' },
    { role: 'background', href: 'slide.png', media_type: 'image/png', title: 'slide', bbox: [0, 0, SLIDE.width, SLIDE.height] },
  ];
  fs.writeFileSync(path.join(out, 'tileset.json'), JSON.stringify(d));
  expect(verifyPyramid(out).problems).toEqual([]);

  server = await startServer({ root: out, port: 0 });
  browser = await launch();
  page = await openPage(browser, errors);
  await open();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_CHROMIUM)('viewer on a QuPath-style export', () => {
  it('opens fitted to the patch, titled with the tileset name', async () => {
    expect(await page.evaluate(() => document.title)).toMatch(/^QuPath patch/);
    expect(await page.locator('#title').innerText()).toBe('QuPath patch');
    const [left, top] = await toScreen(PATCH.minX, PATCH.minY);
    const [right, bottom] = await toScreen(PATCH.maxX, PATCH.maxY);
    const panelRight = (await page.locator('#panel').boundingBox())!.x + (await page.locator('#panel').boundingBox())!.width;
    // On screen, beside the panel, and large: the patch spans most of the 640-px-high map.
    expect(left).toBeGreaterThanOrEqual(panelRight);
    expect(right).toBeLessThanOrEqual(1000);
    expect(top).toBeGreaterThanOrEqual(0);
    expect(bottom).toBeLessThanOrEqual(640);
    expect(bottom - top).toBeGreaterThan(0.85 * 640);
  });

  it('colours by classification.name with the class colours of the descriptor, in the map and the legend', async () => {
    expect(await viewerField()).toBe('classification.name');
    expect(await page.locator('#field').inputValue()).toBe('classification.name');
    const legend = await page.locator('#legend > div').evaluateAll((rows) => rows.map((r) => [(r as unknown as { innerText: string }).innerText.trim(), (r.querySelector('.swatch') as unknown as { dataset: { colour: string } }).dataset.colour]));
    const necrosis = await page.evaluate(() => window.__viewer.colourOf('Necrosis'));
    expect(legend).toEqual([['Immune cells', '#a05aff'], ['Necrosis', necrosis], ['Stroma', '#96c896'], ['Tumor', '#c80000']]);
    expect(Object.values(CLASS_COLOURS)).not.toContain(necrosis);

    const at = await screen(page, 'qupath-fit-by-class');
    for (const c of CELLS) {
      const [sx, sy] = await toScreen(c.cx, c.cy);
      const want = fillOver(CLASS_COLOURS[c.cls] ?? necrosis, BACKGROUND_GREY);
      expect(close(at(sx, sy), want), `${c.id} (${c.cls}) at ${sx},${sy}: ${at(sx, sy)} vs ${want}`).toBe(true);
    }
    // Between cells: the slide image (grey, its blue block in place), never the magenta quicklook.
    expect(close(at(...(await toScreen(GRID.x + GRID.side + 100, GRID.y + 100))), BACKGROUND_GREY, 4)).toBe(true);
    expect(close(at(...(await toScreen(BLOCK.x + BLOCK.w / 2, BLOCK.y + BLOCK.h / 2))), BLOCK.rgb, 6)).toBe(true);
  });

  it('says which share of the cells a thinned zoom shows, and nothing at a complete zoom', async () => {
    const z = await page.evaluate(() => window.__viewer.tileZoom());
    expect(Object.keys(KEPT)).toContain(String(z));
    expect(await page.locator('#kept').innerText()).toBe(`showing ${KEPT[z] * 100}% of layer cells at this zoom; zoom in for more`);
    await open(`#zoom=2&x=${PATCH.minX}&y=${PATCH.minY}`);
    expect(await page.locator('#kept').innerText()).toMatch(/^showing 4% of layer cells/);
    await open(`#zoom=1&x=${PATCH.minX}&y=${PATCH.minY}`);
    expect(await page.locator('#kept').innerText()).toMatch(/^showing 1% of layer cells/);
    await open(`#zoom=0&x=${PATCH.minX}&y=${PATCH.minY}`);
    expect(await page.locator('#kept').innerText()).toMatch(/^showing 0\.4% of layer cells/);
    await open(`#zoom=8&x=${CELLS[0].cx}&y=${CELLS[0].cy}`);
    expect(await page.locator('#kept').isVisible()).toBe(false);
  });

  it('restores zoom, centre and colour-by from the URL, keeps them there, and fits again on demand', async () => {
    const c = CELLS[7];
    await open(`#zoom=7.5&x=${c.cx}&y=${c.cy}&colour=${encodeURIComponent('measurements.Cell: Area')}`);
    expect(await viewerField()).toBe('measurements.Cell: Area');
    expect(await page.locator('#field').inputValue()).toBe('measurements.Cell: Area');
    expect(await page.evaluate(() => window.__viewer.zoom())).toBeCloseTo(7.5, 5);
    expect(await toScreen(c.cx, c.cy)).toEqual([500, 320]);
    // The cell is drawn in the ramp colour of its area; the legend shows the ramp's range.
    const at = await screen(page, 'qupath-url-by-area');
    const want = fillOver(await page.evaluate((v) => window.__viewer.colourOf(v), c.area), BACKGROUND_GREY);
    expect(close(at(500, 320), want), `${at(500, 320)} vs ${want}`).toBe(true);
    expect(await page.locator('#legend .ramp-ends').innerText()).toBe(`50 … ${50 + (CELLS.length - 1) * 10}`);

    // Moving the view rewrites the hash: reading it back gives the new centre.
    await page.evaluate(([x, y]) => { window.__viewer.view.setCenter([x, -y]); return window.__viewer.settle(); }, [CELLS[0].cx, CELLS[0].cy] as const);
    const hash = Object.fromEntries(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)));
    expect(hash).toEqual({ zoom: '7.5', x: String(CELLS[0].cx), y: String(CELLS[0].cy), colour: 'measurements.Cell: Area' });

    await page.click('#fit');
    await page.waitForFunction(() => window.__viewer.zoom() < 7);
    await page.evaluate(() => window.__viewer.settle());
    const [left, top] = await toScreen(PATCH.minX, PATCH.minY);
    const [, bottom] = await toScreen(PATCH.maxX, PATCH.maxY);
    expect(left).toBeGreaterThan(0);
    expect(top).toBeGreaterThanOrEqual(0);
    expect(bottom - top).toBeGreaterThan(0.85 * 640);
  });

  it('shows one id and the grouped measurements in a bounded card that scrolls once pinned', async () => {
    await open('#colour=classification.name');
    const c = CELLS[12];
    const [sx, sy] = await toScreen(c.cx, c.cy);
    await page.mouse.move(sx, sy);
    await page.waitForFunction(() => !(document as unknown as { getElementById(id: string): { hidden: boolean } }).getElementById('card').hidden);
    const text = await page.locator('#card').innerText();
    expect(text.match(/^id\b/gm)).toEqual(['id']);
    expect(text).toMatch(new RegExp(`^id\\s+${c.id}$`, 'm'));
    expect(text).toMatch(/^classification$/m);
    expect(text).toMatch(new RegExp(`^name\\s+${c.cls}$`, 'm'));
    expect(text).toMatch(/^measurements$/m);
    expect(text).toMatch(new RegExp(`^Cell: Area\\s+${c.area}$`, 'm'));
    const box = (await page.locator('#card').boundingBox())!;
    expect(box.height).toBeLessThanOrEqual(420);
    expect(box.width).toBeLessThanOrEqual(360);
    expect(box.y + box.height).toBeLessThanOrEqual(640);
    expect(await page.locator('#card').evaluate((e) => e.scrollHeight > e.clientHeight)).toBe(true);

    await page.mouse.click(sx, sy);
    await page.waitForFunction(() => (document as unknown as { getElementById(id: string): { className: string } }).getElementById('card').className === 'pinned');
    await screen(page, 'qupath-card-pinned');
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, 200);
    await page.waitForFunction(() => (document as unknown as { getElementById(id: string): { scrollTop: number } }).getElementById('card').scrollTop > 0);
    await page.keyboard.press('Escape');
    expect(await page.locator('#card').isVisible()).toBe(false);
  });

  it('logs no errors', async () => {
    expect(await page.evaluate(() => window.__viewer.errors)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
