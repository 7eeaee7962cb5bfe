// The viewer on cells a few screen pixels wide with a nucleus point each: every cell shows around its nucleus; zoomed
// in, a nucleus point is drawn at the size its `radius` gives.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { itLogsNoErrors, useBuiltViewer } from './built.js';
import { close, fillOver, HAVE_CHROMIUM, nearestOf, screen, type ViewerHandle } from './page.js';

/**
 * Cells: octagons of 12 px across on a 40-px grid, each with its nucleus point at its centre, given right before it
 * (as some exporters write them): the nucleus must still be drawn over its cell.
 */
const GRID = { n: 12, step: 40, origin: 100, radius: 6 };
/** Each nucleus point's `radius` property, in image pixels (the spec's place for a circular object's radius). */
const NUCLEUS_RADIUS = 3;

declare const window: { __viewer: ViewerHandle };

function octagon(cx: number, cy: number, r: number): number[][][] {
  const ring = Array.from({ length: 8 }, (_, i) => [cx + r * Math.cos((i * Math.PI) / 4), cy + r * Math.sin((i * Math.PI) / 4)].map((v) => Math.round(v * 100) / 100));
  return [[...ring, ring[0]]];
}

const CENTRES = Array.from({ length: GRID.n * GRID.n }, (_, i) => [GRID.origin + (i % GRID.n) * GRID.step, GRID.origin + Math.floor(i / GRID.n) * GRID.step]);

const viewed = useBuiltViewer('small-cells', () => CENTRES.flatMap(([x, y], i) => [
  { type: 'Feature', id: 10000 + i, featureClass: 'nucleus', parentId: i + 1, properties: { radius: NUCLEUS_RADIUS }, geometry: { type: 'Point', coordinates: [x, y] } },
  { type: 'Feature', id: i + 1, featureClass: 'cell', properties: {}, geometry: { type: 'Polygon', coordinates: octagon(x, y, GRID.radius) } },
]));

/** The alpha a legend row's swatch is filled at (`data-fill`), as the map filled the features of its colour. */
async function fillOf(page: Page, value: string): Promise<string | null> {
  return page.locator('#legend > div', { hasText: value }).locator('.swatch').getAttribute('data-fill');
}

/** The page at zoom 0 over the grid, coloured by featureClass, drawn. */
async function atZoom0(page: Page, url: string): Promise<void> {
  const mid = GRID.origin + ((GRID.n - 1) * GRID.step) / 2;
  await page.goto(`${url}#zoom=0&x=${mid}&y=${mid}&colour=featureClass`);
  await page.evaluate(() => window.__viewer.ready);
  await page.evaluate(() => window.__viewer.settle());
}

describe.skipIf(!HAVE_CHROMIUM)('small cells in the viewer', () => {
  it('draws a cell kept as a polygon of 3 screen pixels as a disc a ring wider than its nucleus, as a cell made a point', async () => {
    // Zoom 0 of a 1,024-px world at 4 image pixels a screen pixel: a 12-px cell spans 3 screen pixels, still a
    // polygon in the tiles (wider than a display pixel), its nucleus a disc of 1.5 px radius drawn after it.
    const { page, url } = viewed;
    await atZoom0(page, url);
    expect(await page.evaluate(() => window.__viewer.tileZoom())).toBe(0);
    const under = await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y).map((f) => [f.id, f.type]), [CENTRES[0][0], CENTRES[0][1]] as const);
    expect(under).toEqual([[10000, 'Point'], [1, 'Polygon']]);
    const at = await screen(page, 'small-cells');
    const cell = await page.evaluate(() => window.__viewer.colourOf('cell'));
    const nucleus = await page.evaluate(() => window.__viewer.colourOf('nucleus'));
    const nearest = nearestOf({ cell, nucleus, white: [255, 255, 255] });
    let rings = 0, dots = 0;
    for (const [x, y] of CENTRES) {
      const [sx, sy] = await page.evaluate(([px, py]) => window.__viewer.toScreen(px, py), [x, y] as const);
      if (nearest(at(sx, sy)) === 'nucleus') dots++;
      // Two screen pixels from the centre: beyond the nucleus's disc, inside the cell's (its edge and the discs'
      // dark outlines blend in: the colour nearest to the pixel's).
      const around = [[2, 0], [-2, 0], [0, 2], [0, -2]].filter(([dx, dy]) => nearest(at(sx + dx, sy + dy)) === 'cell');
      if (around.length >= 3) rings++;
    }
    expect(dots).toBe(CENTRES.length);
    expect(rings).toBe(CENTRES.length);
    // The hover card finds the cell where its disc shows beyond the nucleus.
    const found = await page.evaluate(([x, y]) => window.__viewer.featuresAt(x, y).map((f) => f.id), [CENTRES[5][0] + 8, CENTRES[5][1]] as const);
    expect(found).toContain(6);
  });

  it('draws a small cell\'s disc around its nucleus in the legend\'s colours, not darkened by the discs\' edges', async () => {
    // Zoom 0: a cell is a disc of 2.5 screen px, its nucleus one of 1.5 px over it, a ring of 1 px between them. The
    // dark edges of both discs, half a pixel each, covered most of the ring: every cell read maroon-brown.
    const { page, url } = viewed;
    await atZoom0(page, url);
    const at = await screen(page, 'small-cells-colour');
    const legendColour = async (value: string) => {
      const hex = await page.locator('#legend > div', { hasText: value }).locator('.swatch').getAttribute('data-colour');
      return [1, 3, 5].map((i) => parseInt(hex!.slice(i, i + 2), 16));
    };
    const [cell, nucleus] = [await legendColour('cell'), await legendColour('nucleus')];
    // What a 7 × 7 px window around a cell averages to when its discs (16-sided polygons: 3.06 r² px each) are drawn
    // in the legend's colours over white, their edges aside.
    const polygon = (r: number) => 8 * Math.sin(Math.PI / 8) * r * r;
    const [ring, dot] = [polygon(2.5) - polygon(1.5), polygon(1.5)];
    const expected = [0, 1, 2].map((k) => Math.round((ring * cell[k] + dot * nucleus[k] + (49 - ring - dot) * 255) / 49));
    const sums = [0, 0, 0];
    for (const [x, y] of CENTRES) {
      const [sx, sy] = await page.evaluate(([px, py]) => window.__viewer.toScreen(px, py), [x, y] as const);
      for (let dy = -3; dy <= 3; dy++) for (let dx = -3; dx <= 3; dx++) at(Math.floor(sx) + dx, Math.floor(sy) + dy).forEach((v, k) => { sums[k] += v; });
    }
    const mean = sums.map((v) => Math.round(v / (49 * CENTRES.length)));
    // Measured: 191,158,156 with the edges (30 below in each channel), 218,175,174 without them.
    expect(close(mean, expected, 18), `the cells' mean ${mean} against ${expected} of the legend's colours`).toBe(true);
    // Every cell here is a disc, filled whole: so is its swatch (it was at 55%, as an area's, beside solid discs).
    expect(await fillOf(page, 'cell')).toBe('1');
  });

  it('draws a nucleus point at the size of its radius once that is wider than a point\'s disc, and finds it there', async () => {
    const { page, url } = viewed;
    // Zoom 6: 16 screen pixels an image pixel. The nucleus (radius 3) spans 48 screen pixels around its centre, inside
    // its cell (radius 6); it was a disc of 4 px whatever the zoom, a speck in its cell.
    const [x, y] = CENTRES[0];
    await page.goto(`${url}#zoom=6&x=${x}&y=${y}&colour=featureClass`);
    await page.evaluate(() => window.__viewer.ready);
    await page.evaluate(() => window.__viewer.settle());
    const at = await screen(page, 'nucleus-radius');
    const [sx, sy] = await page.evaluate(([px, py]) => window.__viewer.toScreen(px, py), [x, y] as const);
    const cell = fillOver(await page.evaluate(() => window.__viewer.colourOf('cell')), [255, 255, 255]);
    // The nucleus shows the colour of its legend entry. Filled at 55% over its cell's fill, it was a third colour the
    // legend does not show (the sample slide's green nuclei read olive inside their red cells).
    const legend = await page.locator('#legend div').evaluateAll((rows) => rows.map((r) => [r.textContent, (r.firstChild as unknown as { dataset?: { colour?: string } })?.dataset?.colour]));
    const swatch = legend.find(([value]) => value === 'nucleus')?.[1] ?? '';
    const nucleus = [1, 3, 5].map((i) => parseInt(swatch.slice(i, i + 2), 16));
    // 30 px from the centre (under 48: in the nucleus), and 70 px (in the cell only), each way.
    for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) {
      expect(close(at(sx + 30 * dx, sy + 30 * dy), nucleus), `${at(sx + 30 * dx, sy + 30 * dy)} against the legend's ${swatch}`).toBe(true);
      expect(close(at(sx + 70 * dx, sy + 70 * dy), cell)).toBe(true);
    }
    // Drawn as areas here, the cells' swatch is filled as an area is; the nucleus's whole, as it is drawn.
    expect([await fillOf(page, 'cell'), await fillOf(page, 'nucleus')]).toEqual(['0.55', '1']);
    // The card names the nucleus where it is drawn, 2 image pixels (32 screen pixels) from its point.
    const found = await page.evaluate(([px, py]) => window.__viewer.featuresAt(px, py).map((f) => f.id), [x + 2, y] as const);
    expect(found).toEqual([10000, 1]);
  });

  itLogsNoErrors(viewed);
});
