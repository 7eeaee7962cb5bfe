// The viewer on discs that overlap across a tile border: they stack there as they do inside a tile, the later one on top.
import { describe, expect, it } from 'vitest';
import { itLogsNoErrors, pixelsAtZoom2, useBuiltViewer } from './built.js';
import { HAVE_CHROMIUM, nearestOf, type ViewerHandle } from './page.js';

/** Tiles of zoom 2 in a 1,024-px world span 256 px: borders at x = 256 and y = 256. */
const BORDER = 256;
/** Where the two discs of a pair sit along the axis across the border: 2 px either side, so each disc covers the other's centre. */
const NEAR = BORDER - 2;
const FAR = BORDER + 2;
/**
 * Pairs of points, `first` written before `second`: across the horizontal border (first above, then first below) and
 * across the vertical one (first left, then first right), and one pair inside a tile, the picture the others must match.
 */
const PAIRS = [
  { name: 'first above the border', first: [300, NEAR], second: [300, FAR], axis: 'y' },
  { name: 'first below the border', first: [500, FAR], second: [500, NEAR], axis: 'y' },
  { name: 'first left of the border', first: [NEAR, 600], second: [FAR, 600], axis: 'x' },
  { name: 'first right of the border', first: [FAR, 800], second: [NEAR, 800], axis: 'x' },
  { name: 'inside a tile', first: [700, 700 - 2], second: [700, 700 + 2], axis: 'y' },
] as const;

declare const window: { __viewer: ViewerHandle };

const point = (id: number, order: string, c: readonly number[]) => ({ type: 'Feature', id, properties: { order }, geometry: { type: 'Point', coordinates: c } });
const viewed = useBuiltViewer('tile-seams', () => PAIRS.flatMap((p, i) => [point(2 * i + 1, 'first', p.first), point(2 * i + 2, 'second', p.second)]));

describe.skipIf(!HAVE_CHROMIUM)('discs across a tile border', () => {
  it('draws the later of two overlapping discs on top on both sides of a border, whichever tile holds which', async () => {
    // Zoom 2: a screen pixel an image pixel, a point a disc of 4 px radius. OpenLayers draws a point's symbol whole,
    // from the one tile that holds the point, and stacks the tiles in an order of its own: the disc of the tile drawn
    // last lay over its neighbour's along the whole border, a seam where the data's order is the other way round.
    const { page, url } = viewed;
    const pixel = await pixelsAtZoom2(page, url, 'order', 'tile-seams');
    const colourOf = (v: string) => page.evaluate((value) => window.__viewer.colourOf(value), v);
    const nearest = nearestOf({ first: await colourOf('first'), second: await colourOf('second'), white: [255, 255, 255] });
    const seen: Record<string, string[]> = {};
    for (const p of PAIRS) {
      // The pixels 1 px either side of the middle of the pair (the border, for all but the last): in both discs.
      const mid = [(p.first[0] + p.second[0]) / 2, (p.first[1] + p.second[1]) / 2];
      seen[p.name] = [];
      for (const d of [-1, 1]) {
        const [x, y] = p.axis === 'y' ? [mid[0], mid[1] + d] : [mid[0] + d, mid[1]];
        seen[p.name].push(nearest(await pixel(x, y)));
      }
    }
    expect(seen).toEqual(Object.fromEntries(PAIRS.map((p) => [p.name, ['second', 'second']])));
  });

  itLogsNoErrors(viewed);
});
