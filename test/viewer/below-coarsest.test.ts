// The viewer zoomed out past the coarsest zoom built (`--min-zoom`): that zoom's picture, shrunk, not its discs piled up.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { itLogsNoErrors, useBuiltViewer } from './built.js';
import { HAVE_CHROMIUM, screen, type ViewerHandle } from './page.js';

declare const window: { __viewer: ViewerHandle };

/** A cell point and its nucleus point at each node of a 16-px grid over the middle of the 1,024-px world. */
const STEP = 16;
const NODES = Array.from({ length: 33 * 33 }, (_, i) => [256 + (i % 33) * STEP, 256 + Math.floor(i / 33) * STEP]);
/** The image box whose screen pixels are averaged: inside the grid, right of the panel at both zooms. */
const BOX = [544, 352, 736, 672];

const viewed = useBuiltViewer('below-coarsest', () => NODES.flatMap(([x, y], i) => [
  { type: 'Feature', id: i + 1, featureClass: 'cell', properties: {}, geometry: { type: 'Point', coordinates: [x, y] } },
  { type: 'Feature', id: 10000 + i, featureClass: 'nucleus', parentId: i + 1, properties: {}, geometry: { type: 'Point', coordinates: [x, y] } },
]), ['--min-zoom', '2']);

/** The mean colour of the screen over BOX at a pyramid zoom, and the tile zoom drawn. */
async function meanAt(page: Page, url: string, zoom: number): Promise<{ mean: number[]; tileZoom: number }> {
  await page.goto(`${url}#zoom=${zoom}&x=640&y=512&colour=featureClass`);
  await page.evaluate(() => window.__viewer.ready);
  await page.evaluate(() => window.__viewer.settle());
  const at = await screen(page, `below-coarsest-${zoom}`);
  const [x0, y0] = await page.evaluate(([x, y]) => window.__viewer.toScreen(x, y), [BOX[0], BOX[1]] as const);
  const [x1, y1] = await page.evaluate(([x, y]) => window.__viewer.toScreen(x, y), [BOX[2], BOX[3]] as const);
  const sum = [0, 0, 0];
  let n = 0;
  for (let y = Math.ceil(y0); y < y1; y++) {
    for (let x = Math.ceil(x0); x < x1; x++) {
      at(x, y).forEach((v, i) => { sum[i] += v; });
      n++;
    }
  }
  return { mean: sum.map((v) => v / n), tileZoom: await page.evaluate(() => window.__viewer.tileZoom()) };
}

describe.skipIf(!HAVE_CHROMIUM)('the viewer below the coarsest zoom built', () => {
  it('draws the coarsest zoom shrunk: the same mean colour, not nuclei piled over the cells', async () => {
    const { page, url } = viewed;
    // Zoom 2 (built): a cell is a disc of 4 screen px radius around its nucleus's of 3, 16 px apart.
    const built = await meanAt(page, url, 2);
    // Zoom 0: the zoom-2 tiles at a quarter of their size. With discs of a fixed screen size, 4 px apart, the cells
    // covered the whole box and the nuclei over them most of it: a green box, where zoom 2 is white with rings.
    const below = await meanAt(page, url, 0);
    expect([built.tileZoom, below.tileZoom]).toEqual([2, 2]);
    const distance = Math.hypot(...below.mean.map((v, i) => v - built.mean[i]));
    expect(distance, `mean colour at zoom 0 ${below.mean.map(Math.round)}, at zoom 2 ${built.mean.map(Math.round)}`).toBeLessThan(20);
  }, 30_000);

  itLogsNoErrors(viewed);
});
