// The viewer's panel: folded and unfolded as the window changes size after loading; its legend's "no value" row.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { itLogsNoErrors, useBuiltViewer } from './built.js';
import { HAVE_CHROMIUM, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle };

const square = (x: number, y: number, s: number) => [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]];

/** Cells of 40 px on a 64-px grid, each with a nucleus of 12 px inside; every one has a featureClass, cells a grade. */
const FEATURES = Array.from({ length: 64 }, (_, i) => [300 + (i % 8) * 64, 300 + Math.floor(i / 8) * 64]).flatMap(([x, y], i) => [
  { type: 'Feature', id: i + 1, featureClass: 'cell', properties: { grade: i % 2 ? 'high' : 'low' }, geometry: { type: 'Polygon', coordinates: square(x, y, 40) } },
  { type: 'Feature', id: 1000 + i, featureClass: 'nucleus', parentId: i + 1, properties: {}, geometry: { type: 'Polygon', coordinates: square(x + 14, y + 14, 12) } },
]);

const viewed = useBuiltViewer('panel', () => FEATURES);

const legend = (page: Page) => page.locator('#legend > div').allInnerTexts();
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
      await page.goto('about:blank');
      await page.setViewportSize(size);
      await page.goto(url);
      await page.evaluate(() => window.__viewer.ready);
      await page.evaluate(() => window.__viewer.settle());
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

  it('lists "no value" only for a field some feature drawn lacks', async () => {
    const { page, url } = viewed;
    // A new load (a hash alone would not reload the page, whose panel the test before folded by hand).
    await page.goto('about:blank');
    await page.goto(`${url}#zoom=2&x=524&y=524&colour=featureClass`);
    await page.evaluate(() => window.__viewer.ready);
    await page.evaluate(() => window.__viewer.settle());
    // Every feature has a featureClass: before, a grey "no value" row stood under cell and nucleus all the same.
    expect(await legend(page)).toEqual(['cell', 'nucleus']);
    // The nuclei have no grade: drawn grey, and the legend says what grey is.
    await page.selectOption('#field', 'grade');
    await page.evaluate(() => window.__viewer.settle());
    expect(await legend(page)).toEqual(['high', 'low', 'no value']);
  });

  itLogsNoErrors(viewed);
});
