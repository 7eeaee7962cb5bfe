// The viewer's panel: folded and unfolded as the window changes size after loading; its legend's "no value" row.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { itLogsNoErrors, useBuiltViewer } from './built.js';
import { close, HAVE_CHROMIUM, screen, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle; location: { hash: string } };

const square = (x: number, y: number, s: number) => [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]];

/** Cells of 40 px on a 64-px grid, each with a nucleus of 12 px inside; every one has a featureClass, cells a grade and a size. */
const FEATURES = Array.from({ length: 64 }, (_, i) => [300 + (i % 8) * 64, 300 + Math.floor(i / 8) * 64]).flatMap(([x, y], i) => [
  { type: 'Feature', id: i + 1, featureClass: 'cell', properties: { grade: i % 2 ? 'high' : 'low', size: 10 + i }, geometry: { type: 'Polygon', coordinates: square(x, y, 40) } },
  { type: 'Feature', id: 1000 + i, featureClass: 'nucleus', parentId: i + 1, properties: {}, geometry: { type: 'Polygon', coordinates: square(x + 14, y + 14, 12) } },
]);

const viewed = useBuiltViewer('panel', () => FEATURES);

const legend = (page: Page) => page.locator('#legend > div').allInnerTexts();
/** A new load of the page at `hash` (a hash alone would not reload a page an earlier test folded or resized), drawn. */
async function load(page: Page, url: string, hash = ''): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${url}${hash}`);
  await page.evaluate(() => window.__viewer.ready);
  await page.evaluate(() => window.__viewer.settle());
}
const folded = (page: Page) => page.evaluate(() => document.getElementById('panel')?.classList.contains('folded'));

describe.skipIf(!HAVE_CHROMIUM)('the viewer\'s panel', () => {
  it('folds when the window is made too small for it after loading, and unfolds when it is made large again', async () => {
    const { page, url } = viewed;
    await page.setViewportSize({ width: 1000, height: 640 });
    await page.goto(url);
    await page.evaluate(() => window.__viewer.ready);
    expect(await folded(page)).toBe(false);
    try {
      // Before, the panel kept its controls over most of a window made 360 × 320 (a phone turned, a
      // window dragged narrow): it only folded on a page loaded small.
      await page.setViewportSize({ width: 360, height: 320 });
      await page.waitForFunction(() => document.getElementById('panel')?.classList.contains('folded'), undefined, { timeout: 5000 });
      expect(await page.locator('#fold').getAttribute('aria-expanded')).toBe('false');
      await page.setViewportSize({ width: 1000, height: 640 });
      await page.waitForFunction(() => !document.getElementById('panel')?.classList.contains('folded'), undefined, { timeout: 5000 });
      expect(await page.locator('#field').isVisible()).toBe(true);
      // Folded by hand on a large window, it stays folded through a resize.
      await page.locator('#fold').click();
      await page.setViewportSize({ width: 900, height: 600 });
      await page.evaluate(() => window.__viewer.settle());
      expect(await folded(page)).toBe(true);
    } finally {
      await page.setViewportSize({ width: 1000, height: 640 });
    }
  });

  it('fits the data again when the window changes size, unless the view was moved; then keeps its centre', async () => {
    const { page, url } = viewed;
    const viewOf = () => page.evaluate(() => ({ centre: window.__viewer.view.getCenter(), zoom: window.__viewer.zoom() }));
    /** The window made `size`, once the map has taken its new size and drawn it. */
    const resize = async (size: { width: number; height: number }) => {
      await page.setViewportSize(size);
      await page.waitForFunction((w) => window.__viewer.map.getSize()?.[0] === w, size.width, { timeout: 5000 });
      await page.evaluate(() => window.__viewer.settle());
    };
    const near = (a: { centre: number[]; zoom: number }, b: { centre: number[]; zoom: number }) => {
      expect(Math.abs(a.zoom - b.zoom), `${a.zoom} against ${b.zoom}`).toBeLessThan(0.01);
      for (const i of [0, 1]) expect(Math.abs(a.centre[i] - b.centre[i]), `${a.centre} against ${b.centre}`).toBeLessThan(1);
    };
    const open = async (size: { width: number; height: number }) => {
      await page.setViewportSize(size);
      await load(page, url);
    };
    const large = { width: 1000, height: 640 }, small = { width: 500, height: 400 };
    try {
      // The views a page opened at each size fits.
      await open(small);
      const fittedSmall = await viewOf();
      await open(large);
      const fittedLarge = await viewOf();
      expect(fittedLarge.zoom).toBeGreaterThan(fittedSmall.zoom + 0.5);
      // Before, a window made smaller kept the larger one's zoom (the data cut off), and made larger again the
      // smaller one's (the data small, off to one side).
      await resize(small);
      near(await viewOf(), fittedSmall);
      await resize(large);
      near(await viewOf(), fittedLarge);
      // Moved by hand: a resize keeps its centre and zoom.
      await page.evaluate(() => window.__viewer.view.setCenter([400, -400]));
      await page.evaluate(() => window.__viewer.settle());
      const moved = await viewOf();
      await resize(small);
      near(await viewOf(), moved);
    } finally {
      await page.setViewportSize({ width: 1000, height: 640 });
    }
  });

  it('takes a link\'s background=off in a pyramid without a background image and does not pass it on; unticks only its own layers', async () => {
    const { page, url } = viewed;
    await load(page, url);
    const ids = await page.locator('#layers input[data-layer]').evaluateAll((b) => b.map((x) => (x as HTMLInputElement).dataset.layer as string));
    await load(page, url, `#hide=${encodeURIComponent(ids[0])}&hide=no%20such%20%26%20layer&background=off`);
    expect(await page.locator('#background-row').isVisible()).toBe(false);
    expect(await page.locator(`#layers input[data-layer="${ids[0]}"]`).isChecked()).toBe(false);
    // Before, the unseen box stayed unticked and every link from this page said background=off.
    const hash = new URLSearchParams((await page.evaluate(() => window.location.hash)).slice(1));
    expect([hash.getAll('hide'), hash.has('background')]).toEqual([[ids[0]], false]);
  });

  it('lists "no value" only for a field some feature drawn lacks', async () => {
    const { page, url } = viewed;
    await load(page, url, '#zoom=2&x=524&y=524&colour=featureClass');
    // Every feature has a featureClass: before, a grey "no value" row stood under cell and nucleus all the same.
    expect(await legend(page)).toEqual(['cell', 'nucleus']);
    // The nuclei have no grade: drawn grey, and the legend says what grey is.
    await page.selectOption('#field', 'grade');
    await page.evaluate(() => window.__viewer.settle());
    expect(await legend(page)).toEqual(['high', 'low', 'no value']);
  });

  it('draws the legend\'s swatches and ramp as the map draws areas of their colours', async () => {
    const { page, url } = viewed;
    await load(page, url, '#zoom=2&x=524&y=524&colour=size');
    /** The screen pixel of image pixel (x, y), inside a cell clear of its outline and nucleus. */
    const inside = async (at: (x: number, y: number) => number[], i: number) => {
      const [x, y] = [300 + (i % 8) * 64 + 7, 300 + Math.floor(i / 8) * 64 + 7];
      const [sx, sy] = await page.evaluate(([px, py]) => window.__viewer.toScreen(px, py), [x, y] as const);
      return at(sx, sy);
    };
    let at = await screen(page, 'legend-ramp');
    const ramp = (await page.locator('#legend .ramp').boundingBox())!;
    // Sizes 10–73: cell i has size 10 + i, at i / 63 of the ramp's length (inside its 1-px border), halfway down it.
    for (const i of [0, 20, 40, 63]) {
      const rampAt = at(Math.floor(ramp.x + 1 + (i / 63) * (ramp.width - 3)), Math.floor(ramp.y + ramp.height / 2));
      const cell = await inside(at, i);
      // Before, the ramp was drawn at the whole colour (size 10: 68,1,84 where the cell is 152,115,161).
      expect(close(rampAt, cell), `size ${10 + i}: ramp ${rampAt} against the cell's ${cell}`).toBe(true);
    }
    // By class: a cell's swatch is filled as its area, the nucleus's whole, as nuclei are.
    await page.selectOption('#field', 'featureClass');
    await page.evaluate(() => window.__viewer.settle());
    at = await screen(page, 'legend-swatches');
    const swatchAt = async (value: string) => {
      const box = (await page.locator('#legend > div', { hasText: value }).locator('.swatch').boundingBox())!;
      return at(Math.floor(box.x + box.width / 2), Math.floor(box.y + box.height / 2));
    };
    const cell = await inside(at, 9);
    const [nx, ny] = await page.evaluate(([px, py]) => window.__viewer.toScreen(px, py), [300 + 64 + 20, 300 + 64 + 20] as const);
    const nucleus = at(nx, ny);
    expect(close(await swatchAt('cell'), cell), `cell: ${await swatchAt('cell')} against ${cell}`).toBe(true);
    expect(close(await swatchAt('nucleus'), nucleus), `nucleus: ${await swatchAt('nucleus')} against ${nucleus}`).toBe(true);
  });

  it('finds the features under the pointer without Chromium\'s warning on canvas readbacks', async () => {
    const { page, url } = viewed;
    const warnings: string[] = [];
    const listen = (m: { type(): string; text(): string }) => { if (m.type() === 'warning') warnings.push(m.text()); };
    page.on('console', listen);
    try {
      await load(page, url, '#zoom=2&x=524&y=524&colour=featureClass');
      // Over a cell of each row, then over nothing, as a pointer moving across the slide does.
      for (let i = 0; i < 64; i += 9) {
        const [sx, sy] = await page.evaluate(([x, y]) => window.__viewer.toScreen(x, y), [300 + (i % 8) * 64 + 7, 300 + Math.floor(i / 8) * 64 + 7] as const);
        await page.mouse.move(sx, sy);
        await page.waitForFunction(() => !document.getElementById('card')?.hidden, undefined, { timeout: 5000 });
        expect(await page.locator('#card').innerText()).toContain(`id\t${i + 1}`);
      }
      await page.mouse.move(600, 100);
      // Before: "Canvas2D: Multiple readback operations using getImageData are faster with the willReadFrequently
      // attribute set to true", from OpenLayers' hit detection, two to three times on every page.
      expect(warnings.filter((w) => /willReadFrequently/.test(w))).toEqual([]);
    } finally {
      page.off('console', listen);
    }
  });

  itLogsNoErrors(viewed);
});
