// The viewer on points drawn as their circles (a `radius`) near a tile border: the circle shows whole across it.
import { describe, expect, it } from 'vitest';
import { itLogsNoErrors, pixelsAtZoom2, useBuiltViewer } from './built.js';
import { fillOver, HAVE_CHROMIUM, nearestOf, type ViewerHandle } from './page.js';

/** Tiles of zoom 2 in a 1,024-px world span 256 px, with a buffer of 4 px: borders at x = 256 and y = 256. */
const BORDER = 256;
const RADIUS = 10;
/**
 * Circles whose centre is 6 px from a border (beyond the neighbour's buffer) on either side, across both borders, and
 * one inside a tile. `beyond`: the unit step from the centre across the border.
 */
const SPOTS = [
  { name: 'above the border', centre: [300, BORDER - 6], beyond: [0, 1] },
  { name: 'below the border', centre: [500, BORDER + 6], beyond: [0, -1] },
  { name: 'left of the border', centre: [BORDER - 6, 600], beyond: [1, 0] },
  { name: 'right of the border', centre: [BORDER + 6, 800], beyond: [-1, 0] },
  { name: 'inside a tile', centre: [700, 700], beyond: [0, 1] },
] as const;

declare const window: { __viewer: ViewerHandle };

const viewed = useBuiltViewer('circle-seams', () => SPOTS.map((s, i) => ({ type: 'Feature', id: i + 1, properties: { kind: 'spot', radius: RADIUS }, geometry: { type: 'Point', coordinates: s.centre } })));

describe.skipIf(!HAVE_CHROMIUM)('circles across a tile border', () => {
  it('draws a circle whose centre is near a border whole on the far side too, as inside a tile', async () => {
    // Zoom 2: a screen pixel an image pixel; a circle of radius 10 is wider than a point's disc, so drawn as itself.
    // The far side's tile did not hold the point (its centre beyond that tile's buffer): the circle was cut flat there.
    const { page, url } = viewed;
    const pixel = await pixelsAtZoom2(page, url, 'kind', 'circle-seams');
    const colour = await page.evaluate(() => window.__viewer.colourOf('spot'));
    const nearest = nearestOf({ fill: fillOver(colour, [255, 255, 255]), edge: colour, white: [255, 255, 255] });
    const seen: Record<string, string[]> = {};
    for (const s of SPOTS) {
      seen[s.name] = [];
      // 8 px from the centre across the border (2 px beyond it; inside the circle), and 13 px (outside it).
      for (const d of [8, 13]) {
        const [x, y] = [s.centre[0] + d * s.beyond[0], s.centre[1] + d * s.beyond[1]];
        seen[s.name].push(nearest(await pixel(x, y)) === 'white' ? 'white' : 'circle');
      }
    }
    expect(seen).toEqual(Object.fromEntries(SPOTS.map((s) => [s.name, ['circle', 'white']])));
  });

  itLogsNoErrors(viewed);
});
