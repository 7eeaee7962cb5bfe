// The viewer in headless Chromium: a known pyramid served by `serve`, features found and drawn at their pixel positions.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import type { Browser, Page } from 'playwright-core';
import { memorySource } from '../../src/io/read.js';
import { startServer, type Server } from '../../src/serve.js';
import { verifyPyramid } from '../../src/inspect/index.js';
import { tmpDir } from '../helpers/pyramid.js';
import { buildSquares, collection, square, SQUARES } from '../inspect/fixture.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.warn(`skipping the viewer browser test: ${CHROMIUM} is not installed (Debian package chromium)`);

/** Plane c = 1 holds one square of its own, where plane 0 has nothing. */
const PLANE1_SQUARE = { id: 100, featureClass: 'gamma', x: 300, y: 100, s: 80 };
/** A dark block of the preview image, in an empty part of plane 0, near the top (so a flipped image shows). */
const BLOCK = { x: 200, y: 20, w: 80, h: 60, rgb: [32, 32, 32] };
const FILL_ALPHA = 0.55;

interface FoundFeature { id: unknown; layer: string; properties: Record<string, unknown>; type: string }
interface ViewerHandle {
  ready: Promise<boolean>;
  errors: string[];
  featuresAt(px: number, py: number): FoundFeature[];
  toScreen(px: number, py: number): [number, number];
  colourOf(v: unknown): string;
  settle(): Promise<void>;
}
declare const window: { __viewer: ViewerHandle };

let dir: string;
let server: Server;
let browser: Browser | undefined;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  dir = tmpDir('mudm-viewer');
  const out = path.join(dir, 'out');
  const plane1 = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', id: PLANE1_SQUARE.id, featureClass: PLANE1_SQUARE.featureClass, properties: { label: 100 }, geometry: { type: 'Polygon', coordinates: square(PLANE1_SQUARE.x, PLANE1_SQUARE.y, PLANE1_SQUARE.s) } }] });
  await buildSquares({ out }, [
    { source: memorySource('a.json', collection()), layer: 'cells', plane: { c: 0 } },
    { source: memorySource('b.json', plane1), layer: 'cells', plane: { c: 1 } },
  ]);
  // A preview image listed the way --preview lists it: an asset with role raster.
  const png = await sharp({ create: { width: 1000, height: 600, channels: 3, background: '#ffffff' } })
    .composite([{ input: { create: { width: BLOCK.w, height: BLOCK.h, channels: 3, background: { r: BLOCK.rgb[0], g: BLOCK.rgb[1], b: BLOCK.rgb[2] } } }, left: BLOCK.x, top: BLOCK.y }])
    .png().toBuffer();
  fs.writeFileSync(path.join(out, 'preview.png'), png);
  const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as Record<string, unknown>;
  d.assets = [{ role: 'raster', href: 'preview.png', media_type: 'image/png', title: 'preview' }];
  fs.writeFileSync(path.join(out, 'tileset.json'), JSON.stringify(d));
  expect(verifyPyramid(out).problems).toEqual([]);

  server = await startServer({ root: out, port: 0 });
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1000, height: 640 }, deviceScaleFactor: 1 });
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => consoleErrors.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  await page.goto(server.url);
  await page.evaluate(() => window.__viewer.ready);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The rendered page as RGB pixels. */
async function screen(): Promise<(x: number, y: number) => number[]> {
  const { data, info } = await sharp(await page.screenshot({ type: 'png' })).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return (x, y) => {
    const i = (Math.round(y) * info.width + Math.round(x)) * 3;
    return [data[i], data[i + 1], data[i + 2]];
  };
}

async function toScreen(px: number, py: number): Promise<[number, number]> {
  return page.evaluate(([x, y]) => window.__viewer.toScreen(x, y), [px, py] as const);
}

async function featuresAt(px: number, py: number): Promise<FoundFeature[]> {
  return page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [px, py] as const);
}

/** The fill colour of a class over a background, as the canvas composes it. */
async function fillOver(featureClass: string, background: number[]): Promise<number[]> {
  const hex = await page.evaluate((v) => window.__viewer.colourOf(v), featureClass);
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((c, i) => FILL_ALPHA * c + (1 - FILL_ALPHA) * background[i]);
}

function close(a: number[], b: number[], tolerance = 12): boolean {
  return a.every((v, i) => Math.abs(v - b[i]) <= tolerance);
}

describe.skipIf(!HAVE_CHROMIUM)('viewer in Chromium', () => {
  it('finds every square at its pixel position, with its properties, and nothing at the mirrored y', async () => {
    for (const q of SQUARES) {
      const cx = q.x + q.s / 2, cy = q.y + q.s / 2;
      const found = await featuresAt(cx, cy);
      expect(found.map((f) => f.id), `square ${q.id} at ${cx},${cy}`).toContain(q.id);
      expect(found.find((f) => f.id === q.id)).toMatchObject({ layer: 'cells', properties: { featureClass: q.featureClass, label: q.label, note: `square ${q.id}` } });
    }
    // Square 1 spans y 100..180; with y not negated it would show at 420..500.
    expect(await featuresAt(140, 460)).toEqual([]);
    // The hole of feature 7 (320..360 × 420..460) holds nothing; its ring does.
    expect((await featuresAt(340, 440)).map((f) => f.id)).not.toContain(7);
    expect((await featuresAt(310, 410)).map((f) => f.id)).toContain(7);
  });

  it('draws the squares in their featureClass colours at their screen positions, the preview image behind them', async () => {
    const at = await screen();
    const white = [255, 255, 255];
    for (const q of SQUARES) {
      const [sx, sy] = await toScreen(q.x + q.s / 2, q.y + q.s / 2);
      const want = await fillOver(q.featureClass, white);
      expect(close(at(sx, sy), want), `square ${q.id} (${q.featureClass}) at screen ${sx},${sy}: ${at(sx, sy)} vs ${want}`).toBe(true);
    }
    // Colours differ by class: alpha, beta and gamma are told apart on screen.
    const [a, b, g] = await Promise.all(['alpha', 'beta', 'gamma'].map((c) => fillOver(c, white)));
    expect(close(a, b) || close(b, g) || close(a, g)).toBe(false);
    // The hole is background; empty image is background.
    expect(close(at(...(await toScreen(340, 440))), white, 3)).toBe(true);
    expect(close(at(...(await toScreen(600, 60))), white, 3)).toBe(true);
    // The preview's dark block sits at the top of the image, not mirrored to the bottom.
    expect(close(at(...(await toScreen(BLOCK.x + BLOCK.w / 2, BLOCK.y + BLOCK.h / 2))), BLOCK.rgb, 6)).toBe(true);
    expect(close(at(...(await toScreen(BLOCK.x + BLOCK.w / 2, 600 - BLOCK.y - BLOCK.h / 2))), white, 3)).toBe(true);
  });

  it('shows a hover card with the feature properties', async () => {
    const q = SQUARES[1];
    const [sx, sy] = await toScreen(q.x + q.s / 2, q.y + q.s / 2);
    await page.mouse.move(sx, sy);
    await page.waitForFunction(() => !(document.getElementById('card') as { hidden: boolean }).hidden, undefined, { timeout: 5000 });
    const text = await page.locator('#card').innerText();
    expect(text).toMatch(new RegExp(`id\\s+${q.id}`));
    expect(text).toMatch(/featureClass\s+beta/);
    expect(text).toMatch(/note\s+square 2/);
    expect(text).toMatch(/layer\s+cells/);
    await page.mouse.move(5, 630);
  });

  it('switches planes with the c selector', async () => {
    expect(await page.locator('#plane-c option').allInnerTexts()).toEqual(['0', '1']);
    expect(await page.locator('#plane-t').count()).toBe(0);
    await page.selectOption('#plane-c', '1');
    await page.evaluate(() => window.__viewer.settle());
    const p = PLANE1_SQUARE;
    expect((await featuresAt(p.x + p.s / 2, p.y + p.s / 2)).map((f) => f.id)).toEqual([p.id]);
    expect(await featuresAt(140, 140)).toEqual([]);
    await page.selectOption('#plane-c', '0');
    await page.evaluate(() => window.__viewer.settle());
    expect((await featuresAt(140, 140)).map((f) => f.id)).toContain(1);
  });

  it('recolours by the field chosen in the select, fed by the descriptor fields', async () => {
    const options = await page.locator('#field option').evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value));
    expect(options).toEqual(expect.arrayContaining(['layer', 'featureClass', 'label', 'note', 'score']));
    expect(await page.locator('#background-row').isVisible()).toBe(true);
    await page.selectOption('#field', 'layer');
    await page.evaluate(() => window.__viewer.settle());
    const at = await screen();
    const want = await fillOver('cells', [255, 255, 255]);
    for (const q of SQUARES) expect(close(at(...(await toScreen(q.x + q.s / 2, q.y + q.s / 2))), want), `square ${q.id}`).toBe(true);
    await page.selectOption('#field', 'featureClass');
  });

  it('logs no errors', async () => {
    expect(await page.evaluate(() => window.__viewer.errors)).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
