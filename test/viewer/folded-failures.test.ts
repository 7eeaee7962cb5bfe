// The viewer's panel folded on a phone: small while all is well, yet saying that tiles failed and why when they do.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { itLogsNoErrors, useBuiltViewer } from './built.js';
import { HAVE_CHROMIUM, screen, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle };

const square = (x: number, y: number, s: number) => [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]];

/** Cells of 40 px on a 64-px grid over most of the image: every tile of zoom 2 holds some. */
const FEATURES = Array.from({ length: 196 }, (_, i) => ({
  type: 'Feature', id: i + 1, properties: { grade: i % 2 ? 'high' : 'low' }, geometry: { type: 'Polygon', coordinates: square(64 + (i % 14) * 64, 64 + Math.floor(i / 14) * 64, 40) },
}));

/** Into archives: one cut inside its tile data keeps its header and directories (the page opens) and fails its tiles. */
const viewed = useBuiltViewer('folded', () => FEATURES, ['--archive', 'pmtiles']);

/** A phone held upright. This one layer's panel leaves the data room below it there: folded by hand. */
const PHONE = { width: 360, height: 640 };

/** A new load of the page (a hash alone would not reload it), drawn; `fold`: the panel folded to its title then. */
async function load(page: Page, url: string, fold = false): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${url}#zoom=2&x=512&y=512`);
  await page.evaluate(() => window.__viewer.ready);
  if (fold) {
    expect(await page.locator('#fold').getAttribute('aria-expanded')).toBe('true');
    await page.locator('#fold').click();
    expect(await page.locator('#fold').getAttribute('aria-expanded')).toBe('false');
  }
  await page.evaluate(() => window.__viewer.settle());
}

/** Whether `selector` is on screen inside the folded panel: shown, of some size, within the window and the panel. */
async function shownInPanel(page: Page, selector: string): Promise<boolean> {
  if (!(await page.locator(selector).isVisible())) return false;
  const box = await page.locator(selector).boundingBox();
  const panel = (await page.locator('#panel').boundingBox())!;
  if (!box || box.width < 10 || box.height < 10) return false;
  return box.x >= panel.x && box.y >= panel.y && box.x + box.width <= panel.x + panel.width && box.y + box.height <= panel.y + panel.height
    && box.x + box.width <= PHONE.width && box.y + box.height <= PHONE.height;
}

describe.skipIf(!HAVE_CHROMIUM)('the viewer\'s panel folded on a phone', () => {
  it('says tiles failed and why, in a few lines with retry, and keeps to its title when all is well', async () => {
    const { page, url, built } = viewed;
    const archive = path.join(built!.out, fs.readdirSync(built!.out).find((f) => f.endsWith('.pbf.pmtiles'))!);
    const whole = fs.readFileSync(archive);
    await page.setViewportSize(PHONE);
    try {
      await load(page, url, true);
      const titleOnly = (await page.locator('#panel').boundingBox())!.height;
      expect(await page.locator('#status').isVisible()).toBe(false);
      expect(await page.locator('#field').isVisible()).toBe(false);
      // Cut inside its tile data (at the start of its tile data, read from the header, and 64 bytes more).
      fs.writeFileSync(archive, whole.subarray(0, Number(whole.readBigUInt64LE(56)) + 64));
      await load(page, url, true);
      const failed = await page.evaluate(() => window.__viewer.errors);
      expect(failed.length).toBeGreaterThan(0);
      for (const e of failed) expect(e).toMatch(/^tile failed to load: 2\/\d+\/\d+ \(bytes \d+–\d+ lie past the end of the archive/);
      await screen(page, 'folded-failures-phone');
      // Before, the status line went with the rest of the panel: an empty map, and nothing said why.
      expect(await shownInPanel(page, '#status')).toBe(true);
      // Only the failure is shown: the summary before it stays folded away with the controls.
      expect(await page.locator('#status').innerText()).toMatch(/^\d+ tile\(s\) failed to load .*\sretry$/s);
      expect(await page.locator('#status .problem').innerText()).toMatch(new RegExp(`^${failed.length} tile\\(s\\) failed to load \\(the last: bytes \\d+–\\d+ lie past the end of the archive \\(HTTP 416\\): it ends before its directories say \\(cut short\\?\\)\\)$`));
      expect(await shownInPanel(page, '#retry')).toBe(true);
      expect(await page.locator('#field').isVisible()).toBe(false);
      // The reason kept to three lines: the panel stays small on a small screen.
      const lineHeight = await page.locator('#status').evaluate((e) => parseFloat(getComputedStyle(e).lineHeight));
      expect((await page.locator('#status .problem').boundingBox())!.height).toBeLessThanOrEqual(3 * lineHeight + 1);
      // A tap on the notice unfolds the panel: the whole status line says it, summary first.
      await page.locator('#status .problem').click();
      expect(await page.locator('#fold').getAttribute('aria-expanded')).toBe('true');
      expect(await page.locator('#status .rest').isVisible()).toBe(true);
      expect(await page.locator('#status').innerText()).toMatch(new RegExp(`^1 layer\\(s\\), zooms 0–2, .*; ${failed.length} tile\\(s\\) failed to load \\(the last: .+\\) retry$`));
      await page.locator('#fold').click();
      // The archive whole again: retry, from the folded panel, reads the tiles, and the panel is its title again.
      fs.writeFileSync(archive, whole);
      await page.locator('#retry').click();
      await page.evaluate(() => window.__viewer.settle());
      expect(await page.locator('#status').isVisible()).toBe(false);
      expect((await page.locator('#panel').boundingBox())!.height).toBe(titleOnly);
      // Read again without a failure: the page's errors are those seen above, and no more.
      expect(await page.evaluate(() => window.__viewer.errors.splice(0))).toEqual(failed);
    } finally {
      fs.writeFileSync(archive, whole);
      await page.setViewportSize({ width: 1000, height: 640 });
    }
    // The failed tiles' requests, logged by the browser: not a fault of the viewer.
    built!.errors.splice(0, built!.errors.length, ...built!.errors.filter((e) => !/416/.test(e)));
  });

  itLogsNoErrors(viewed);
});
