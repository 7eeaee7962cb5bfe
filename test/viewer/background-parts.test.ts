// The viewer over a slide image (`--image --preview`): nuclei let the image's stain show through, and are whole without it.
import path from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { tmpDir } from '../helpers/pyramid.js';
import { itLogsNoErrors, useBuiltViewer } from './built.js';
import { close, FILL_ALPHA, HAVE_CHROMIUM, screen, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle };

const square = (x: number, y: number, s: number) => [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]];

/** Cells of 80 px on a 120-px grid, each with a nucleus of 30 px at its centre, over a stained nucleus of the image. */
const GRID = { n: 4, step: 120, origin: 300, cell: 80, nucleus: 30 };
/** The image's stain under each nucleus (hematoxylin's dark purple), a block wider than the nucleus; white elsewhere. */
const STAIN = { rgb: [74, 42, 122], side: 50 };
const WHITE = [255, 255, 255];
const CENTRES = Array.from({ length: GRID.n * GRID.n }, (_, i) => [GRID.origin + (i % GRID.n) * GRID.step, GRID.origin + Math.floor(i / GRID.n) * GRID.step]);

const image = path.join(tmpDir('mudm-background-parts'), 'slide.png');
// Before the build's hook: the build reads the image.
beforeAll(async () => {
  const block = { create: { width: STAIN.side, height: STAIN.side, channels: 3 as const, background: { r: STAIN.rgb[0], g: STAIN.rgb[1], b: STAIN.rgb[2] } } };
  await sharp({ create: { width: 1024, height: 1024, channels: 3, background: '#ffffff' } })
    .composite(CENTRES.map(([x, y]) => ({ input: block, left: x - STAIN.side / 2, top: y - STAIN.side / 2 })))
    .png().toFile(image);
});

const viewed = useBuiltViewer('background-parts', () => CENTRES.flatMap(([x, y], i) => [
  { type: 'Feature', id: i + 1, featureClass: 'cell', properties: {}, geometry: { type: 'Polygon', coordinates: square(x - GRID.cell / 2, y - GRID.cell / 2, GRID.cell) } },
  { type: 'Feature', id: 1000 + i, featureClass: 'nucleus', parentId: i + 1, properties: {}, geometry: { type: 'Polygon', coordinates: square(x - GRID.nucleus / 2, y - GRID.nucleus / 2, GRID.nucleus) } },
]), ['--image', image, '--preview']);

const rgbOf = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
/** `top` filled at the viewer's area alpha over `under`, as the canvas composes it. */
const over = (top: number[], under: number[]) => top.map((c, i) => FILL_ALPHA * c + (1 - FILL_ALPHA) * under[i]);
const distance = (a: number[], b: number[]) => Math.hypot(...a.map((v, i) => v - b[i]));

/** The screen now: the colour at the centre of a nucleus (the sixth), and of the nucleus's legend swatch. */
async function seen(page: Page, name: string): Promise<{ nucleus: number[]; swatch: number[] }> {
  await page.evaluate(() => window.__viewer.settle());
  const at = await screen(page, name);
  const [sx, sy] = await page.evaluate(([x, y]) => window.__viewer.toScreen(x, y), CENTRES[5] as [number, number]);
  const box = (await page.locator('#legend > div', { hasText: 'nucleus' }).locator('.swatch').boundingBox())!;
  return { nucleus: at(sx, sy), swatch: at(Math.floor(box.x + box.width / 2), Math.floor(box.y + box.height / 2)) };
}

describe.skipIf(!HAVE_CHROMIUM)('nuclei over the slide image', () => {
  it('fills a nucleus as an area over the image, whole without it, and draws its swatch as the map does', async () => {
    const { page, url } = viewed;
    const mid = GRID.origin + ((GRID.n - 1) * GRID.step) / 2;
    await page.goto(`${url}#zoom=2&x=${mid}&y=${mid}&colour=featureClass`);
    await page.evaluate(() => window.__viewer.ready);
    expect(await page.locator('#background-row').isVisible()).toBe(true);
    const nucleus = rgbOf(await page.evaluate(() => window.__viewer.colourOf('nucleus')));
    const cell = rgbOf(await page.evaluate(() => window.__viewer.colourOf('cell')));
    const tiles = () => page.evaluate(() => performance.getEntriesByType('resource').filter((e) => /\.pbf$/.test(e.name)).length);

    const shown = await seen(page, 'background-parts-on');
    // The image's stain shows through the nucleus and its cell: before, the nucleus was its whole colour, the stain
    // under it hidden.
    const through = over(nucleus, over(cell, STAIN.rgb));
    expect(close(shown.nucleus, through), `nucleus ${shown.nucleus} against ${through}`).toBe(true);
    expect(distance(shown.nucleus, STAIN.rgb)).toBeLessThan(distance(nucleus, STAIN.rgb) - 50);
    // Its swatch is an area's, as the map now draws it.
    expect(close(shown.swatch, over(nucleus, WHITE)), `swatch ${shown.swatch}`).toBe(true);
    expect(await page.locator('#legend > div', { hasText: 'nucleus' }).locator('.swatch').getAttribute('data-fill')).toBe(String(FILL_ALPHA));

    // Without the image, the nucleus is its legend colour, whole, and so is its swatch; no tile is read again.
    const read = await tiles();
    await page.locator('#background').uncheck();
    const hidden = await seen(page, 'background-parts-off');
    expect(close(hidden.nucleus, nucleus), `nucleus ${hidden.nucleus} against ${nucleus}`).toBe(true);
    expect(close(hidden.swatch, nucleus), `swatch ${hidden.swatch} against ${nucleus}`).toBe(true);

    // Shown again, see-through again.
    await page.locator('#background').check();
    const again = await seen(page, 'background-parts-on-again');
    expect(close(again.nucleus, through), `nucleus ${again.nucleus} against ${through}`).toBe(true);
    expect(close(again.swatch, over(nucleus, WHITE)), `swatch ${again.swatch}`).toBe(true);
    expect(await tiles()).toBe(read);
  });

  itLogsNoErrors(viewed);
});
