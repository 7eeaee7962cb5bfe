// Where the data is: the extent of the features of a plane, read from a few of the pyramid's tiles, and a view fitted to it.
//
// The descriptor's `bounds` are the world (the image, or the data from the origin): tile coordinates map through them,
// so they start at 0 even when the features sit in a small patch far from the origin. The coarsest zoom's tiles hold
// the whole plane in a few requests, but there small features are points and dense tiles thinned (uniformly, so the
// extent of what is kept is the data's); the tiles of a finer zoom over that first extent give it to a few pixels.

import { mvtFormat } from './tiles.js';

/** At most this many tiles are read per round of refining. */
const MAX_TILES = 16;
/**
 * At most this many of the coarsest zoom's tiles are read: a pyramid built with --min-zoom 3 over a whole slide has
 * 18 there, most of them empty, and the view opened on the whole image with the data a speck in it.
 */
const MAX_FIRST_TILES = 64;
/** An extent that spans this many pixels of a zoom is placed finely enough for a fitted view. */
const FIT_PIXELS = 128;

/** Tile columns and rows at `zoom` over a map extent (y up: rows count down from the top, map y = -row * size). */
function tileRange(extent, size) {
  return {
    x0: Math.max(0, Math.floor(extent[0] / size)), x1: Math.max(0, Math.ceil(extent[2] / size) - 1),
    y0: Math.max(0, Math.floor(-extent[3] / size)), y1: Math.max(0, Math.ceil(-extent[1] / size) - 1),
  };
}

const count = (r) => (r.x1 - r.x0 + 1) * (r.y1 - r.y0 + 1);

/** The extent of the features of the tiles of a range, or null when they hold none (or cannot be read). */
async function featureExtent(ol, projection, tile, zoom, size, r) {
  const format = mvtFormat(ol);
  const extent = ol.extent.createEmpty();
  const jobs = [];
  for (let x = r.x0; x <= r.x1; x++) {
    for (let y = r.y0; y <= r.y1; y++) {
      jobs.push((async () => {
        const bytes = await tile(zoom, x, y);
        if (!bytes) return;
        const tileExtent = [x * size, -(y + 1) * size, (x + 1) * size, -y * size];
        for (const f of format.readFeatures(bytes, { extent: tileExtent, featureProjection: projection })) {
          ol.extent.extend(extent, f.getExtent());
        }
      })());
    }
  }
  // A tile that cannot be read only costs the fit; the map reports its own load errors. Nothing found is only known
  // when every tile was read (null); with one failed, undefined: not known.
  const results = await Promise.allSettled(jobs);
  if (!ol.extent.isEmpty(extent)) return extent;
  return results.some((r) => r.status === 'rejected') ? undefined : null;
}

/**
 * Extent `[minX, minY, maxX, maxY]` in map coordinates (y up, as the map shows pixel (x, y) at (x, -y)) of the plane's
 * features; null when the coarsest zoom's tiles were all read and hold none, undefined when that is not known (too
 * many to read, or one failed). `tile(z, x, y)` reads a tile's PBF bytes (null when there is none: tile URLs and
 * archives alike, tiles.js); `world` is `[width, height]` in image pixels, `side` the world square's side.
 */
export async function dataExtent({ ol, projection, tile, minZoom, maxZoom, side, world }) {
  const worldExtent = [0, -world[1], world[0], 0];
  const first = tileRange(worldExtent, side / 2 ** minZoom);
  if (count(first) > MAX_FIRST_TILES) return undefined;
  let zoom = minZoom;
  let extent = await featureExtent(ol, projection, tile, zoom, side / 2 ** zoom, first);
  if (!extent) return extent;
  // A feature drawn as a point is smaller than one display pixel (a 256th of a tile) of its zoom.
  const pixel = (z) => side / 2 ** z / 256;
  const around = ol.extent.buffer(extent, pixel(zoom));
  // Finer tiles only while the extent spans few of this zoom's pixels (a small patch of a large world): a whole
  // slide is placed to within a pixel of a fitted view by the coarsest zoom already, and its 16 zoom-2 tiles (3 MB
  // at 100,000 cells) were read for nothing.
  const span = (z) => Math.max(ol.extent.getWidth(around), ol.extent.getHeight(around)) / pixel(z);
  let finer = zoom;
  while (finer < maxZoom && span(finer) < FIT_PIXELS && count(tileRange(around, side / 2 ** (finer + 1))) <= MAX_TILES) finer++;
  if (finer > zoom) {
    const refined = await featureExtent(ol, projection, tile, finer, side / 2 ** finer, tileRange(around, side / 2 ** finer));
    if (refined) [zoom, extent] = [finer, refined];
  }
  // Features clipped with a buffer may reach past the world's edge: keep the extent on the image.
  return ol.extent.getIntersection(ol.extent.buffer(extent, pixel(zoom) / 2), worldExtent);
}

/**
 * Fits a map's view to an extent beside the panel that covers the map's top left, or on a narrow screen (a phone),
 * where that leaves less than half the width, below it, while that leaves a third of the height (else the caller folds
 * it: `crowded`). `fitTo` returns the padding it used: the panel may grow once drawn, and the caller fits again when
 * `padding()` then differs; `refit()` fits the last extent again to a map of another size, unless the view was moved.
 */
export function fitter(ol, map, view, panelElement) {
  const padding = () => {
    const panel = panelElement.getBoundingClientRect();
    const [width, height] = map.getSize();
    if (panel.right + 16 <= width / 2) return [16, 48, 16, Math.round(panel.right) + 16];
    return [panel.bottom + 16 <= (height * 2) / 3 ? Math.round(panel.bottom) + 16 : 16, 16, 16, 16];
  };
  /** Whether the panel leaves the data neither half the map's width beside it nor two thirds of its height below it. */
  const crowded = () => {
    const panel = panelElement.getBoundingClientRect();
    const [width, height] = map.getSize();
    return panel.right + 16 > width / 2 && panel.bottom + 16 > (height * 2) / 3;
  };
  // The last fit: its extent, and the view it left, to tell whether anyone has panned or zoomed since.
  let fitted;
  const fitTo = (e) => {
    // A lone point or a tiny patch still gets some room around it.
    const margin = Math.max(0, 32 - Math.min(ol.extent.getWidth(e), ol.extent.getHeight(e)) / 2);
    const used = padding();
    view.fit(ol.extent.buffer(e, margin), { padding: used });
    fitted = { extent: e, center: view.getCenter(), resolution: view.getResolution() };
    return used;
  };
  const untouched = () => {
    const c = view.getCenter();
    const tolerance = view.getResolution() / 100;
    return fitted !== undefined && c !== undefined && view.getResolution() === fitted.resolution
      && Math.abs(c[0] - fitted.center[0]) <= tolerance && Math.abs(c[1] - fitted.center[1]) <= tolerance;
  };
  /**
   * After the map changed size: fitted again while the view is the one the last fit left (a window made smaller cut the
   * slide off, one made larger left it small in a corner), else left to OpenLayers, which keeps the view's centre.
   */
  const refit = () => {
    if (untouched()) fitTo(fitted.extent);
  };
  return { fitTo, refit, padding, crowded };
}

