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
import { close, fillOver as fillHexOver, HAVE_CHROMIUM, launch, openPage, screen as pageScreen, type FoundFeature, type ViewerHandle } from './page.js';

/**
 * Plane c = 1 holds one square of its own, where plane 0 has nothing; its data has fields named `layer` and
 * `geometry`, which OpenLayers' defaults would take for the vector layer and the geometry.
 */
const PLANE1_SQUARE = { id: 100, featureClass: 'gamma', x: 300, y: 100, s: 80, properties: { label: 100, layer: 'tumour region', geometry: 'ellipse' } };
/** A dark block of the background image, in an empty part of plane 0, near the top (so a flipped image shows). */
const BLOCK = { x: 200, y: 20, w: 80, h: 60, rgb: [32, 32, 32] };
/** The quicklook's colour: nowhere on screen, since the viewer never draws it. */
const QUICKLOOK = { r: 200, g: 0, b: 200 };

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
  const plane1 = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', id: PLANE1_SQUARE.id, featureClass: PLANE1_SQUARE.featureClass, properties: PLANE1_SQUARE.properties, geometry: { type: 'Polygon', coordinates: square(PLANE1_SQUARE.x, PLANE1_SQUARE.y, PLANE1_SQUARE.s) } }] });
  await buildSquares({ out }, [
    { source: memorySource('a.json', collection()), layer: 'cells', plane: { c: 0 } },
    { source: memorySource('b.json', plane1), layer: 'cells', plane: { c: 1 } },
  ]);
  // A downsampled slide image as the background (role background); the vector quicklook (role raster) is never drawn.
  const png = await sharp({ create: { width: 1000, height: 600, channels: 3, background: '#ffffff' } })
    .composite([{ input: { create: { width: BLOCK.w, height: BLOCK.h, channels: 3, background: { r: BLOCK.rgb[0], g: BLOCK.rgb[1], b: BLOCK.rgb[2] } } }, left: BLOCK.x, top: BLOCK.y }])
    .png().toBuffer();
  fs.writeFileSync(path.join(out, 'slide.png'), png);
  fs.writeFileSync(path.join(out, 'quicklook.png'), await sharp({ create: { width: 1000, height: 600, channels: 3, background: QUICKLOOK } }).png().toBuffer());
  const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as Record<string, unknown>;
  d.assets = [
    { role: 'raster', href: 'quicklook.png', media_type: 'image/png', title: 'preview' },
    { role: 'background', href: 'slide.png', media_type: 'image/png', title: 'slide' },
  ];
  fs.writeFileSync(path.join(out, 'tileset.json'), JSON.stringify(d));
  expect(verifyPyramid(out).problems).toEqual([]);

  server = await startServer({ root: out, port: 0 });
  browser = await launch();
  page = await openPage(browser, consoleErrors);
  await page.goto(server.url);
  await page.evaluate(() => window.__viewer.ready);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The rendered page as RGB pixels. */
const screen = () => pageScreen(page);

async function toScreen(px: number, py: number): Promise<[number, number]> {
  return page.evaluate(([x, y]) => window.__viewer.toScreen(x, y), [px, py] as const);
}

async function featuresAt(px: number, py: number): Promise<FoundFeature[]> {
  return page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [px, py] as const);
}

/** The fill colour of a class over a background, as the canvas composes it. */
async function fillOver(featureClass: string, background: number[]): Promise<number[]> {
  return fillHexOver(await page.evaluate((v) => window.__viewer.colourOf(v), featureClass), background);
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

  it('draws the squares in their featureClass colours at their screen positions, the background image behind them, never the quicklook', async () => {
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
    // The hole is background; empty image is background (white: the magenta quicklook is not drawn).
    expect(close(at(...(await toScreen(340, 440))), white, 3)).toBe(true);
    expect(close(at(...(await toScreen(600, 60))), white, 3)).toBe(true);
    // The background image's dark block sits at the top of the image, not mirrored to the bottom.
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
    // The layer's ids are integers but for 'cell-x' (a string id, shown from its property `id`): every card shows an
    // input id, and none is noted as maybe a place in the input (it was, under every integer id, up to plan version 12).
    expect(text).not.toMatch(/place in the input/);
    // The pointer's image position, read again when the view moves under a pointer that stays (a wheel zoom).
    const position = async () => (await page.locator('#position').innerText()).match(/^x (\S+), y (\S+) px$/)?.slice(1).map(Number);
    const before = await position();
    expect(before?.[0]).toBeCloseTo(q.x + q.s / 2, 0);
    expect(before?.[1]).toBeCloseTo(q.y + q.s / 2, 0);
    const [cx, cy] = await page.evaluate(() => window.__viewer.view.getCenter());
    const zoom = await page.evaluate(() => window.__viewer.view.getZoom());
    await page.evaluate((z) => window.__viewer.view.setZoom(z + 1), zoom);
    await page.waitForFunction((b) => document.getElementById('position')?.textContent !== b, `x ${before?.[0].toFixed(1)}, y ${before?.[1].toFixed(1)} px`, { timeout: 5000 });
    // Twice the zoom about the centre: the point under the pointer is halfway to the centre.
    const after = await position();
    expect(after?.[0]).toBeCloseTo((before![0] + cx) / 2, 0);
    expect(after?.[1]).toBeCloseTo((before![1] - cy) / 2, 0);
    await page.evaluate((z) => window.__viewer.view.setZoom(z), zoom);
    await page.mouse.move(5, 630);
  });

  it('switches planes with the c selector', async () => {
    expect(await page.locator('#plane-c option').allInnerTexts()).toEqual(['0', '1']);
    expect(await page.locator('#plane-t').count()).toBe(0);
    await page.selectOption('#plane-c', '1');
    await page.evaluate(() => window.__viewer.settle());
    const p = PLANE1_SQUARE;
    const [found, ...more] = await featuresAt(p.x + p.s / 2, p.y + p.s / 2);
    expect(more).toEqual([]);
    expect(found).toMatchObject({ id: p.id, layer: 'cells', properties: { ...p.properties, featureClass: p.featureClass } });
    expect(await featuresAt(140, 140)).toEqual([]);
    await page.selectOption('#plane-c', '0');
    await page.evaluate(() => window.__viewer.settle());
    expect((await featuresAt(140, 140)).map((f) => f.id)).toContain(1);
  });

  it('recolours by the field chosen in the select, fed by the descriptor fields', async () => {
    const options = await page.locator('#field option').evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value));
    // The vector layer, and the data field named `layer`, each an entry of its own.
    expect(options).toEqual(expect.arrayContaining(['(layer)', 'layer', 'featureClass', 'label', 'note', 'score']));
    expect(await page.locator('#background-row').isVisible()).toBe(true);
    await page.selectOption('#field', '(layer)');
    await page.evaluate(() => window.__viewer.settle());
    const at = await screen();
    const want = await fillOver('cells', [255, 255, 255]);
    for (const q of SQUARES) expect(close(at(...(await toScreen(q.x + q.s / 2, q.y + q.s / 2))), want), `square ${q.id}`).toBe(true);
    await page.selectOption('#field', 'featureClass');
  });

  it('keeps the plane and colour-by in the URL hash, and a URL with them restores that view', async () => {
    await page.selectOption('#plane-c', '1');
    await page.selectOption('#field', 'label');
    expect(Object.fromEntries(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)))).toMatchObject({ c: '1', colour: 'label' });
    await page.selectOption('#plane-c', '0');
    await page.selectOption('#field', 'featureClass');

    const shared = await openPage(browser as Browser, consoleErrors);
    try {
      const p = PLANE1_SQUARE;
      await shared.goto(`${server.url}#zoom=1.5&x=${p.x + p.s / 2}&y=${p.y + p.s / 2}&c=1&colour=%28layer%29`);
      await shared.evaluate(() => window.__viewer.ready);
      expect(await shared.locator('#plane-c').inputValue()).toBe('1');
      expect(await shared.locator('#field').inputValue()).toBe('(layer)');
      expect(await shared.evaluate(() => window.__viewer.zoom())).toBeCloseTo(1.5, 5);
      // The square is at the centre of the map, which fills the page.
      expect(await shared.evaluate(([x, y]) => window.__viewer.toScreen(x, y), [p.x + p.s / 2, p.y + p.s / 2] as const)).toEqual([500, 320]);
      expect((await shared.evaluate(([x, y]) => window.__viewer.featuresAt(x, y), [p.x + p.s / 2, p.y + p.s / 2] as const)).map((f) => f.id)).toEqual([p.id]);

      // A hash pasted into the address bar of an open page moves it without a reload.
      await shared.evaluate(() => { location.hash = '#zoom=2.25&x=140&y=140&c=0&colour=label'; });
      await shared.waitForFunction(() => window.__viewer.field() === 'label');
      expect(await shared.locator('#plane-c').inputValue()).toBe('0');
      expect(await shared.evaluate(() => window.__viewer.zoom())).toBeCloseTo(2.25, 5);
      expect(await shared.evaluate(() => window.__viewer.toScreen(140, 140))).toEqual([500, 320]);
      // A hash asking for what the pyramid lacks: said, and the address rewritten to the view shown.
      await shared.evaluate(() => { location.hash = '#zoom=2.25&x=140&y=140&c=7&colour=bogus'; });
      await shared.waitForFunction(() => /c=0/.test(location.hash));
      expect(Object.fromEntries(new URLSearchParams((await shared.evaluate(() => location.hash)).slice(1)))).toMatchObject({ c: '0', colour: 'label' });
      expect(await shared.locator('#status').innerText()).toMatch(/no field "bogus" in this pyramid: coloured by label; no plane c=7 in this pyramid \(c 0–1\)/);

      // A field the pyramid does not have: the default colour-by, and the page says so (a new load, not a hash change).
      await shared.goto('about:blank');
      await shared.goto(`${server.url}#colour=nosuchfield&c=5`);
      await shared.evaluate(() => window.__viewer.ready);
      expect(await shared.locator('#field').inputValue()).toBe('featureClass');
      expect(await shared.locator('#status').innerText()).toMatch(/no field "nosuchfield" in this pyramid: coloured by featureClass/);
      // A plane it does not have: the first one, and the page says so.
      expect(await shared.locator('#plane-c').inputValue()).toBe('0');
      expect(await shared.locator('#status').innerText()).toMatch(/no plane c=5 in this pyramid \(c 0–1\): showing c=0/);
      // A note on the plane shown goes with a switch; one on the view asked for stays.
      await shared.selectOption('#plane-c', '1');
      await shared.evaluate(() => window.__viewer.settle());
      expect(await shared.locator('#status').innerText()).not.toContain('no plane c=5');
      expect(await shared.locator('#status').innerText()).toContain('no field "nosuchfield"');
      // Until another field is chosen: then the note on the one asked for would no longer be true.
      await shared.selectOption('#field', 'label');
      expect(await shared.locator('#status').innerText()).not.toContain('no field');
    } finally {
      await shared.close();
    }
  });

  it('keeps the layers unticked and the background image turned off in the URL hash, and a link with them restores both', async () => {
    const shared = await openPage(browser as Browser, consoleErrors);
    try {
      await shared.goto(server.url);
      await shared.evaluate(() => window.__viewer.ready);
      const ids = await shared.locator('#layers input[data-layer]').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).dataset.layer as string));
      const box = (id: string) => shared.locator(`#layers input[data-layer="${id}"]`);
      await box(ids[0]).uncheck();
      await shared.locator('#background').uncheck();
      const hash = new URLSearchParams((await shared.evaluate(() => location.hash)).slice(1));
      expect([hash.getAll('hide'), hash.get('background')]).toEqual([[ids[0]], 'off']);
      await shared.goto('about:blank');
      await shared.goto(`${server.url}#${hash.toString()}`);
      await shared.evaluate(() => window.__viewer.ready);
      expect(await Promise.all([box(ids[0]).isChecked(), shared.locator('#background').isChecked()])).toEqual([false, false]);
      expect(await shared.evaluate(() => window.__viewer.background.getVisible())).toBe(false);
      // A hash without them, pasted into the open page, ticks both again.
      await shared.evaluate(() => { location.hash = '#zoom=1&x=140&y=140&c=0&colour=label'; });
      await shared.waitForFunction(() => (document.getElementById('background') as HTMLInputElement).checked);
      expect(await Promise.all([box(ids[0]).isChecked(), shared.evaluate(() => window.__viewer.background.getVisible())])).toEqual([true, true]);
      expect(new URLSearchParams((await shared.evaluate(() => location.hash)).slice(1)).has('hide')).toBe(false);
    } finally {
      await shared.close();
    }
  });

  it('says which layers a link hides that the pyramid lacks, and leaves them out of the links it makes', async () => {
    const shared = await openPage(browser as Browser, consoleErrors);
    const status = () => shared.locator('#status').innerText();
    const hides = async () => new URLSearchParams((await shared.evaluate(() => location.hash)).slice(1)).getAll('hide');
    try {
      // A link from another slide: its nucleus layer and a layer renamed since (cels), beside one this pyramid has.
      await shared.goto(`${server.url}#zoom=1&x=140&y=140&c=0&hide=nucleus&hide=cells&hide=cels&hide=nucleus`);
      await shared.evaluate(() => window.__viewer.ready);
      await pageScreen(shared, 'hide-unknown-layers');
      expect(await status()).toContain('; no layers "nucleus", "cels" in this pyramid to hide: left out of the link');
      expect(await shared.locator('#layers input[data-layer="cells"]').isChecked()).toBe(false);
      expect(await hides()).toEqual(['cells']);
      // Ticked again: the link the page makes then names no layer.
      await shared.locator('#layers input[data-layer="cells"]').check();
      expect(await hides()).toEqual([]);
      // A hash pasted into the open page: its own lacking layer said instead, and none once one names none.
      await shared.evaluate(() => { location.hash = '#zoom=1&x=140&y=140&c=0&hide=tumour'; });
      await shared.waitForFunction(() => document.getElementById('status')?.textContent?.includes('tumour'));
      expect(await status()).toContain('; no layer "tumour" in this pyramid to hide: left out of the link');
      expect(await status()).not.toContain('cels');
      expect(await hides()).toEqual([]);
      await shared.evaluate(() => { location.hash = '#zoom=1&x=140&y=140&c=0&hide=cells'; });
      await shared.waitForFunction(() => !document.getElementById('status')?.textContent?.includes('tumour'));
      expect([await status(), await hides()]).toEqual([expect.not.stringContaining('to hide'), ['cells']]);
    } finally {
      await shared.close();
    }
  });

  it('fits the data below the panel on a phone-sized screen, and beside it on a wide one', async () => {
    // The data spans x 20..980, y 20..580 (the line from corner to corner); the panel covers the map's top left.
    const placed = async (p: Page) => p.evaluate(() => {
      const r = (document.getElementById('panel') as unknown as { getBoundingClientRect(): { right: number; bottom: number } }).getBoundingClientRect();
      return { panel: { right: r.right, bottom: r.bottom }, low: window.__viewer.toScreen(20, 20), high: window.__viewer.toScreen(980, 580) };
    });
    const wide = await placed(page);
    expect(wide.low[0]).toBeGreaterThanOrEqual(wide.panel.right);
    expect(wide.high[0]).toBeLessThanOrEqual(1000);
    const phone = await openPage(browser as Browser, consoleErrors, { width: 375, height: 667 });
    try {
      await phone.goto(server.url);
      await phone.evaluate(() => window.__viewer.ready);
      const { panel, low, high } = await placed(phone);
      // Beside the panel there would be a strip a few dozen pixels wide: the data is below it, across the screen.
      expect(panel.right).toBeGreaterThan(375 / 2);
      expect(low[1]).toBeGreaterThanOrEqual(panel.bottom);
      expect(high[1]).toBeLessThanOrEqual(667);
      expect(low[0]).toBeGreaterThanOrEqual(0);
      expect(high[0]).toBeLessThanOrEqual(375);
      expect(high[0] - low[0]).toBeGreaterThan(375 * 0.8);
    } finally {
      await phone.close();
    }
  });

  it('folds the panel to its title on a window it would cover most of, fits the data below it, and unfolds on a click', async () => {
    const small = await openPage(browser as Browser, consoleErrors, { width: 360, height: 440 });
    try {
      await small.goto(server.url);
      await small.evaluate(() => window.__viewer.ready);
      const panel = await small.locator('#panel').boundingBox() as { y: number; height: number };
      expect(await small.locator('#panel').getAttribute('class')).toContain('folded');
      expect(await small.locator('#field').isVisible()).toBe(false);
      expect(await small.locator('#fold').getAttribute('aria-expanded')).toBe('false');
      // The data (x 20..980, y 20..580) below the folded panel, across the window.
      const [low, high] = await small.evaluate(() => [window.__viewer.toScreen(20, 20), window.__viewer.toScreen(980, 580)]);
      expect(low[1]).toBeGreaterThanOrEqual(panel.y + panel.height);
      expect(panel.height).toBeLessThan(60);
      expect(high[0] - low[0]).toBeGreaterThan(360 * 0.8);
      expect(high[1]).toBeLessThanOrEqual(440);
      await small.locator('#fold').click();
      expect(await small.locator('#field').isVisible()).toBe(true);
      expect(await small.locator('#fold').getAttribute('aria-expanded')).toBe('true');
      await small.locator('#fold').click();
      expect(await small.locator('#field').isVisible()).toBe(false);
    } finally {
      await small.close();
    }
  });

  it('keeps the whole panel inside a short window, its controls scrolled within it', async () => {
    const short = await openPage(browser as Browser, consoleErrors, { width: 800, height: 260 });
    try {
      await short.goto(server.url);
      await short.evaluate(() => window.__viewer.ready);
      const box = await short.locator('#panel').evaluate((p) => {
        const e = p as unknown as { getBoundingClientRect(): { bottom: number }; scrollHeight: number; clientHeight: number };
        return { bottom: e.getBoundingClientRect().bottom, scrolls: e.scrollHeight > e.clientHeight };
      });
      // Before: its padding and border were outside its height of the window less 16 px, its bottom at 270.
      expect(box).toEqual({ bottom: 252, scrolls: true });
    } finally {
      await short.close();
    }
  });

  it('writes and reads view hashes, percentages, palettes and card rows (the viewer modules in the page)', async () => {
    // A string, so that the test runner leaves the page's own dynamic imports alone.
    const got = await page.evaluate(`(async () => {
      const state = await import('/viewer/state.js');
      const kept = await import('/viewer/kept.js');
      const colours = await import('/viewer/colours.js');
      const card = await import('/viewer/card.js');
      const style = await import('/viewer/style.js');
      const names = ['classification.name', 'measurements.Cell: Area', 'a&b=c', 'x+y %20', 'ü/#?'];
      const fields = colours.collectFields({ vector_layers: [{ id: 'l', fields: { k: 'String' }, fieldenums: { k: ['A', 'B'] }, fieldcolors: { k: { A: '#E6194B', C: 'red' } } }] });
      const colourOf = colours.colourer('k', fields, ['l']);
      return {
        hashes: names.map((colour) => state.readViewState(state.writeViewState({ zoom: 3.14159, x: 1234.5678, y: 42, resolution: 0.5, plane: { c: 2 }, dims: ['c'], colour }))),
        ignored: state.readViewState('#zoom=2&x=abc&y=1&c=1.5&t=-1'),
        percents: [0.9999, 0.5, 0.123, 0.045, 0.04, 0.004, 0.0004].map(kept.percent),
        kept: kept.keptLines([{ id: 'cells', kept_fraction: { 2: 0.04, 3: 1 } }, { id: 'hidden', kept_fraction: { 2: 0.5 } }], 2, new Set(['hidden'])),
        colours: ['A', 'B', 'C'].map(colourOf),
        legend: colours.legendOf('k', fields, ['l'], colourOf),
        drawnNone: colours.legendOf('k', fields, ['l'], colourOf, new Set(), true).none,
        others: (() => {
          const more = colours.collectFields({ vector_layers: [{ id: 'l', fields: { locked: 'Bool', parent: 'String', area: 'Number' } }] });
          const of = (name) => colours.legendOf(name, more, ['l'], colours.colourer(name, more, ['l']));
          return { locked: of('locked'), parent: of('parent'), area: of('area'), layer: of('(layer)'), absent: of('absent') };
        })(),
        ramps: (() => {
          const two = colours.collectFields({ vector_layers: [{ id: 'cells', fields: { area: 'Number' }, fieldranges: { area: [80, 1000] } }, { id: 'nuclei', fields: { area: 'Number' }, fieldranges: { area: [4, 180] } }] });
          const of = (hidden) => {
            const colourOf = colours.colourer('area', two, ['cells', 'nuclei'], hidden);
            return { ends: colours.legendOf('area', two, ['cells', 'nuclei'], colourOf, hidden).ramp, small: colourOf(4), large: colourOf(180) };
          };
          return { both: of(new Set()), nuclei: of(new Set(['cells'])), none: of(new Set(['cells', 'nuclei'])) };
        })(),
        // Unticked layers leave the legend: their classes, and their row when coloured by layer.
        unticked: (() => {
          const two = colours.collectFields({ vector_layers: [{ id: 'cells', fields: { class: 'String' }, fieldenums: { class: ['tumor', 'stroma'] } }, { id: 'nuclei', fields: { class: 'String' }, fieldenums: { class: ['lymph'] }, fieldcolors: { class: { nucleus: '#00ff00' } } }] });
          const ids = ['cells', 'nuclei'];
          const rows = (field, hidden) => colours.legendOf(field, two, ids, colours.colourer(field, two, ids, hidden), hidden).rows.map((r) => r.value);
          return [rows('class', new Set()), rows('class', new Set(['nuclei'])), rows('class', new Set(['cells'])), rows('class', new Set(ids)), rows('(layer)', new Set(['nuclei'])), rows('(layer)', new Set(ids))];
        })(),
        places: [[100, 100], [990, 100], [100, 630], [990, 630], [500, 320]].map(([x, y]) => card.cardPlace(x, y, 360, 220, 1000, 640)),
        tiny: card.cardPlace(990, 630, 1200, 700, 1000, 640),
        narrow: card.cardPlace(190, 420, 360, 420, 380, 700),
        discs: [[[0, 0, 4, 3], 1, false], [[0, 0, 9, 3], 1, false], [[0, 0, 9, 9], 2, false], [[0, 0, 16, 12], 2, false], [[0, 0, 8, 6], 2, true], [[0, 0, 5, 5], 2, true]]
          .map(([e, r, child]) => style.drawnAsDisc(e, r, child)),
        defaults: [
          { name: 'String', objectType: 'String' }, { '': 'String', z: 'String' }, { name: 'String' },
        ].map((f) => colours.defaultField(colours.collectFields({ vector_layers: [{ id: 'l', fields: f, fieldenums: Object.fromEntries(Object.keys(f).map((k) => [k, ['a', 'b']])) }] }))),
        // Layers split by class: featureClass is "cell" in every one; a field of more values or the layers colour them.
        oneValued: [
          [{ featureClass: ['cell'], class: ['stroma', 'tumor'] }, ['stroma', 'tumor']],
          [{ featureClass: ['cell'] }, ['stroma', 'tumor']],
          [{ featureClass: ['cell'] }, ['cells']],
        ].map(([enums, ids]) => colours.defaultField(colours.collectFields({ vector_layers: ids.map((id) => ({ id, fields: Object.fromEntries(Object.keys(enums).map((k) => [k, 'String'])), fieldenums: enums })) }), ids)),
        children: [{ parentId: 3 }, { objectType: 'nucleus' }, { featureClass: 'nucleus' }, { objectType: 'cell' }, {}].map((p) => style.isChild(p)),
        // A coarse zoom without objectType (--coarse-fields): layers split by it say it.
        byLayer: [[{ [colours.BY_LAYER]: 'nucleus' }, ['nucleus']], [{ [colours.BY_LAYER]: 'annotation' }, ['annotation']], [{ [colours.BY_LAYER]: 'annotation', objectType: 'cell' }, ['annotation']], [{ [colours.BY_LAYER]: 'annotation' }, []]]
          .map(([p, typed]) => [style.isChild(p, new Set(typed)), style.isRegion(p, new Set(typed))]),
        defaultField: colours.defaultField(fields),
        rows: card.cardRows({ id: 'x', layer: 'cells', properties: { id: 'x', 'a.b': 1, plain: 3, 'a.c': 2, '.odd': 4, 'end.': 5, layer: 'own' } }),
        ids: [card.featureId({ id: 'c7' }, 3), card.featureId({}, 3), card.featureId({ parentId: 'c7' }, 2 ** 52 + 5), card.featureId({ id: 'n' }, 2 ** 52 + 5)],
        sequenceIds: [card.featureId({}, 3, 'sequence'), card.featureId({ id: 'c7' }, 3, 'sequence'), card.featureId({}, 3, 'mixed'), card.featureId({}, 3, 'input')],
        noted: card.cardRows({ id: 3, idNote: 'n', layer: 'cells', properties: {} }),
        // A feature without property id in a layer of integer ids and none ("mixed") is noted; in one of "input", not.
        described: ['mixed', 'input'].map((from) => card.describeFeature({ getProperties: () => ({ [colours.BY_LAYER]: 'cells', n: 1 }), getId: () => 3, getType: () => 'Polygon' }, new Map([['cells', from]])).idNote ?? null),
        // --coarse-fields: the card of a coarse zoom says how many fields a finer one shows, and from which zoom.
        leftOut: [2, 4, 5].map((z) => card.fieldsLeftOut({ 'measurements.A': 5, 'measurements.B': 5, id: 4 }, z) ?? null),
        // A feature of a finer tile still on screen has the fields: no note.
        finerTile: card.fieldsLeftOut({ 'measurements.A': 5 }, 2, { 'measurements.A': 1 }) ?? null,
        leftOutRow: card.cardTable([{ id: 3, layer: 'cells', properties: {}, fieldsLeftOut: { count: 2, zoom: 5 } }]).textContent,
      };
    })()`) as Record<string, unknown>;
    expect(got.hashes).toEqual(['classification.name', 'measurements.Cell: Area', 'a&b=c', 'x+y %20', 'ü/#?']
      .map((colour) => ({ view: { zoom: 3.14, x: 1234.57, y: 42 }, plane: { c: 2 }, colour })));
    expect(got.ignored).toEqual({ plane: { t: -1 } });
    expect(got.unticked).toEqual([['lymph', 'nucleus', 'stroma', 'tumor'], ['stroma', 'tumor'], ['lymph', 'nucleus'], ['lymph', 'nucleus', 'stroma', 'tumor'], ['cells'], ['cells', 'nuclei']]);
    expect(got.percents).toEqual(['>99%', '50%', '12%', '4.5%', '4%', '0.4%', '0.04%']);
    expect(got.kept).toEqual(['showing 4% of layer cells at this zoom; zoom in for more']);
    // A's given colour (normalised), B a palette colour far from it (not the palette's first, which A took), C's
    // colour unreadable so it is left to the palette.
    const [a, b] = got.colours as string[];
    expect(a).toBe('#e6194b');
    expect(b).not.toBe('#e6194b');
    // "no value" (grey) once a feature without one is drawn: the descriptor does not say whether any lacks one.
    expect([got.legend, got.drawnNone]).toEqual([{ rows: [{ value: 'A', colour: a }, { value: 'B', colour: b }], more: 0, ramp: null, note: null, none: null, shared: [] }, '#888888']);
    // A Bool's two values get a row each, in two palette colours; a String field the descriptor lists no values of
    // says how it is coloured; a Number field without a range too; a field the layer lacks is grey, "no value".
    const others = got.others as Record<string, { rows: { value: string; colour: string }[]; note: string | null; none: string | null }>;
    expect(others.locked.rows.map((r) => r.value)).toEqual(['false', 'true']);
    expect(new Set(others.locked.rows.map((r) => r.colour)).size).toBe(2);
    expect(others.locked.note).toBeNull();
    for (const name of ['parent', 'area']) expect(others[name]).toMatchObject({ rows: [], note: 'a colour per value (the pyramid does not list its values)', none: null });
    expect([others.layer, others.absent]).toMatchObject([{ rows: [{ value: 'l' }], note: null, none: null }, { rows: [], none: '#888888' }]);
    // A Number field's ramp spans the layers ticked: nuclei alone (4–180) get the whole ramp, not its first fifth
    // under the cells' range (4–1000, where every nucleus was the same dark purple); no layer ticked, every layer.
    const ramps = got.ramps as Record<string, { ends: { min: number; max: number }; small: string; large: string }>;
    expect(ramps.both.ends).toMatchObject({ min: 4, max: 1000 });
    expect([ramps.nuclei.ends, ramps.nuclei.small, ramps.nuclei.large]).toEqual([expect.objectContaining({ min: 4, max: 180 }), '#440154', '#fde725']);
    expect(ramps.none.ends).toMatchObject({ min: 4, max: 1000 });
    // Right of and below the pointer; flipped left or up where the 360 × 220 card would leave the 1000 × 640 window, so
    // that it never covers the pointer; pushed inside only where it fits on neither side.
    expect(got.places).toEqual([[114, 114], [616, 114], [114, 396], [616, 396], [514, 334]]);
    // Too big for either side of a pointer near the bottom right: above it, no taller than the room there.
    expect(got.tiny).toEqual([4, 4, 612]);
    // A phone-wide window, where the card fits beside the pointer neither way: above it (more room there than
    // below), 402 px tall at most, so that it ends 14 px above the pointer.
    expect(got.narrow).toEqual([16, 4, 402]);
    // A polygon narrower on screen than a point's disc (8 px for a cell at an image pixel a screen pixel; 5 px for a
    // cell and 3 for a nucleus at 2 image pixels a screen pixel) is drawn as that disc.
    expect(got.discs).toEqual([true, false, true, false, false, true]);
    // A nucleus without a parentId (QuPath 0.2 cells have no id) is still drawn as a nucleus.
    expect(got.children).toEqual([true, true, true, false, false]);
    // A layer whose descriptor lists no objectType (a file annotation.json of cells) is no region by its name.
    expect(got.byLayer).toEqual([[true, false], [false, true], [false, false], [false, false]]);
    // What classes features comes first (an unclassified QuPath export: objectType, not the annotations' names); never "".
    expect(got.defaults).toEqual(['objectType', 'z', 'name']);
    expect(got.defaultField).toBe('k');
    expect(got.oneValued).toEqual(['class', '(layer)', 'featureClass']);
    expect(got.rows).toEqual([['id', 'x'], ['layer', 'cells'], ['plain', 3], ['.odd', 4], ['end.', 5], ['layer (property)', 'own'], ['a'], ['b', 1], ['c', 2]]);
    // A nucleus the build made has no id of its own to show (its PBF id is 2^52 + a number); the input's id comes first.
    expect(got.ids).toEqual(['c7', 3, undefined, 'n']);
    // A layer's PBF ids that are the build's sequence numbers (feature_ids "sequence") are no id; a string id still is.
    expect(got.sequenceIds).toEqual([undefined, 'c7', 3, 3]);
    expect(got.noted).toEqual([['id', 3, 'n'], ['layer', 'cells']]);
    expect(got.described).toEqual(['in this layer, a feature without an id shows its place in the input (from 0) here', null]);
    expect(got.leftOut).toEqual([{ count: 3, zoom: 4 }, { count: 2, zoom: 5 }, null]);
    expect(got.finerTile).toBeNull();
    expect(got.leftOutRow).toBe('id3layercellsup to 2 fields more from zoom 5: zoom in to see them');
  });

  it('logs no errors', async () => {
    expect(await page.evaluate(() => window.__viewer.errors)).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
