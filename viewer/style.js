// How the viewer draws a feature: its colour as fill and stroke, points as discs, polygons too small to see as discs.

import { BY_LAYER, hexToRgba } from './colours.js';

/**
 * Whether a feature is a part of another (a nucleus of its cell): it has a parent, or says it is a nucleus (QuPath 0.2
 * cells have no id, so their nuclei have no parentId; `--nucleus-features` makes them objectType "nucleus").
 */
export function isChild(props, typed) {
  return props.parentId !== undefined || objectType(props, typed) === 'nucleus' || props.featureClass === 'nucleus';
}

/**
 * A QuPath object's type: its `objectType`, or, in a layer of `typed` (one whose descriptor lists the field) where a
 * coarse zoom carries no such field (`--coarse-fields`), the layer's id, which is the type when layers are split by it
 * (`--layer-by objectType`: layers `annotation`, `cell`, `nucleus`, …). Not in other layers: a file `annotation.json`
 * of cells is no region.
 */
function objectType(props, typed) {
  return props.objectType ?? (typed?.has(props[BY_LAYER]) ? props[BY_LAYER] : undefined);
}

/**
 * Whether a feature is a region drawn around others (QuPath's annotations: a tumour outline, a necrotic area), which
 * QuPath draws as an outline. Filled as a cell is, it tinted every cell inside it off its legend colour (a red region
 * under red and purple cells), and filled the screen with its colour once zoomed in.
 */
export function isRegion(props, typed) {
  return objectType(props, typed) === 'annotation';
}
/** Fill alpha of a region: enough to see where it is (and to point at it), too little to change a colour over it. */
const REGION_FILL = 0.08;
/** Fill alpha of an area: the image or background under a cell still shows through. */
export const AREA_FILL = 0.55;

/**
 * Radius in screen pixels of a point's disc. Points are drawn smaller once an image pixel is under half a screen pixel:
 * there a point mostly stands for a feature too small to draw (a nucleus of a few pixels), and 6 px discs covered the
 * cells around them. A feature with a parent (a nucleus: `parentId`) is a pixel smaller than one without, and drawn
 * after it: a cell and its nucleus, both a point at the same place on a coarse zoom, show as a ring around a dot, not
 * as the nucleus alone.
 */
export function pointRadius(resolution, child) {
  return (resolution >= 2 ? 1.5 : 3) + (child ? 0 : 1);
}

/**
 * Whether a polygon is drawn as a disc: when its box on screen is narrower than the disc a point of its kind gets.
 * A cell kept as a polygon of 2 screen pixels vanished under its nucleus's disc, while a cell of the same size that
 * the build made a point showed as a ring around it: so the class of small cells (lymphocytes, made points) looked
 * more common than that of larger ones. As a disc, a cell weighs the same on screen whichever the build kept.
 */
export function drawnAsDisc(extent, resolution, child) {
  const side = Math.max(extent[2] - extent[0], extent[3] - extent[1]) / resolution;
  return side < 2 * pointRadius(resolution, child);
}

/**
 * A point's own radius in image pixels: its `radius` property (the spec keeps a circular object's radius there, in
 * pixels), when a positive number; else undefined.
 */
export function ownRadius(props) {
  const r = props.radius;
  return typeof r === 'number' && Number.isFinite(r) && r > 0 ? r : undefined;
}

/**
 * Whether a point is drawn as the circle its `radius` gives, at its size in the image: where that circle is wider on
 * screen than the disc a point gets. A nucleus of radius 4 was a 3-px dot at every zoom, a speck in a cell 80 px wide
 * once zoomed in, so nuclei looked a tenth of their size beside the cells drawn as polygons.
 */
export function drawnAsCircle(props, resolution, child) {
  const r = ownRadius(props);
  return r !== undefined && r / resolution > pointRadius(resolution, child);
}

/**
 * Alpha of the dark edge of a disc of `radius` screen pixels: none up to 2.5 px, growing to 0.53 at 4 px (a cell's disc
 * at fine zooms, where it tells touching discs apart). On the discs of coarse zooms (2.5 px, a nucleus's 1.5 px inside)
 * two edges of half a pixel covered the 1-px ring of the cell's colour: every cell read maroon-brown, in no legend row.
 */
export function discEdge(radius) {
  return Math.round(0.53 * Math.min(1, Math.max(0, (radius - 2.5) / 1.5)) * 100) / 100;
}

/** Sides of the polygon a circle is drawn as: round to the eye at the few hundred screen pixels a nucleus spans. */
const CIRCLE_SIDES = 48;
/** Sides of a disc's polygon: round to the eye at the 4 screen pixels (12 device pixels on a 3× screen) of its radius. */
const DISC_SIDES = 16;
const DISC_COS = Array.from({ length: DISC_SIDES + 1 }, (_, i) => Math.cos((2 * Math.PI * i) / DISC_SIDES));
const DISC_SIN = Array.from({ length: DISC_SIDES + 1 }, (_, i) => Math.sin((2 * Math.PI * i) / DISC_SIDES));
/** Styles kept before the cache starts again: one per colour, kind, size and, for discs, view resolution. */
const MAX_STYLES = 512;

/**
 * Discs (points, and polygons too small to see) are polygons, not OpenLayers point symbols. A symbol is drawn whole by
 * the one tile that holds its point, and the tiles' symbols stacked in an order of OpenLayers' own (the tile below or
 * to the right first): along a tile border the discs of one tile lay over their neighbours' whatever the data's order,
 * a line of whole discs across the map. A polygon is drawn by every tile that holds it (the tiles' buffers hold what
 * reaches into them, 4 screen pixels at the tile's zoom: wider than a disc's radius and outline), cut at the tile's
 * edge, in the tile's order, which is the data's in every tile: both sides of a border show what one tile would.
 */
function discsOf(ol, centres, radius) {
  const n = centres.length / 2;
  const flat = new Array(n * 2 * (DISC_SIDES + 1));
  const ends = [];
  for (let k = 0, o = 0; k < n; k++) {
    const x = centres[2 * k], y = centres[2 * k + 1];
    for (let i = 0; i <= DISC_SIDES; i++, o += 2) {
      flat[o] = x + radius * DISC_COS[i];
      flat[o + 1] = y + radius * DISC_SIN[i];
    }
    ends.push([o]);
  }
  return n === 1 ? new ol.geom.Polygon(flat, 'XY', ends[0]) : new ol.geom.MultiPolygon(flat, 'XY', ends);
}

/**
 * `styleOf(feature, colour, resolution, child, overImage)`: an OpenLayers style, one object per colour, kind and radius;
 * `overImage`: the slide image is shown under the features. `styleOf.filledWhole(style)`: whether a style it made
 * fills whole, as the legend is to show its colour (a disc; a part away from the slide image), known as it is made,
 * not read back from its colour for every feature drawn.
 * `coarsest`: the resolution of the coarsest zoom built. Zoomed out past it, the map shows that zoom's tiles, each
 * smaller on screen than a tile is meant to be: its features are drawn as at that zoom, shrunk with it (discs and
 * their outlines too). At a fixed screen size, the discs of a pyramid built from zoom 3 covered one another several deep
 * in its opening view (zoom 1.8), and the nuclei drawn over the cells painted a slide of as many cells as nuclei green.
 * `typed`: the layers whose descriptor lists `objectType` (`isRegion`).
 */
export function featureStyler(ol, coarsest = Infinity, typed = new Set()) {
  const styles = new Map();
  const whole = new WeakSet();
  // The centre of a polygon's box, or the positions of a point (each of a MultiPoint), as flat x, y pairs.
  const centre = (f) => {
    const e = f.getExtent();
    return [(e[0] + e[2]) / 2, (e[1] + e[3]) / 2];
  };
  const positions = (f) => {
    const flat = f.getFlatCoordinates();
    const stride = f.getStride ? f.getStride() : 2;
    if (stride === 2) return flat;
    const out = [];
    for (let i = 0; i < flat.length; i += stride) out.push(flat[i], flat[i + 1]);
    return out;
  };
  // The circles of a point (or of each point of a MultiPoint) at its own radius, in image pixels (map units), as
  // polygons: the vector tile renderer draws no Circle geometry a style gives it.
  const circles = (f) => {
    const flat = f.getFlatCoordinates();
    const stride = f.getStride ? f.getStride() : 2;
    const r = ownRadius(f.getProperties());
    const out = [];
    for (let i = 0; i < flat.length; i += stride) out.push(ol.geom.Polygon.fromCircle(new ol.geom.Circle([flat[i], flat[i + 1]], r), CIRCLE_SIDES));
    return out.length === 1 ? out[0] : new ol.geom.MultiPolygon(out);
  };
  // A part (a nucleus) is drawn over its whole (its cell) whatever their order in the tile: an export that lists nuclei
  // first, or a nucleus layer named before the cells', hid every nucleus under its cell's disc. Discs go over the areas
  // of their level, as they did as point symbols (drawn after every polygon).
  const make = (colour, kind, radius, child, overImage, resolution, shrink) => {
    const level = child ? 2 : 0;
    if (kind === 'area' || kind === 'line' || kind === 'region' || kind === 'circle') {
      const stroke = new ol.style.Stroke({ color: colour, width: kind === 'area' || kind === 'circle' ? 1.25 : 2 });
      // A part (not a region, which stays an outline) is filled whole: at 55% over its whole's fill it took a third
      // colour, in no legend entry (a green nucleus in a red cell read olive). Over the slide image it is filled as an
      // area is: whole, it hid the stained nucleus of the image that a pathologist checks it against.
      const alpha = kind === 'region' ? REGION_FILL : child && !overImage ? 1 : AREA_FILL;
      const fill = new ol.style.Fill({ color: hexToRgba(colour, alpha) });
      // A circle is filled and outlined as a polygon is: it is one, drawn from its centre and radius.
      const style = new ol.style.Style(kind === 'circle' ? { stroke, fill, zIndex: level, geometry: circles } : { stroke, fill, zIndex: level });
      if (alpha === 1) whole.add(style);
      return style;
    }
    // A disc of `radius` screen pixels at this resolution, in map units; a polygon's at the centre of its box.
    const r = radius * resolution;
    const geometry = kind === 'disc' ? (f) => discsOf(ol, centre(f), r) : (f) => discsOf(ol, positions(f), r);
    const edge = discEdge(radius * shrink);
    const stroke = edge > 0 ? new ol.style.Stroke({ color: `rgba(0, 0, 0, ${edge})`, width: 0.5 * shrink }) : undefined;
    const disc = new ol.style.Style({ fill: new ol.style.Fill({ color: colour }), stroke, geometry, zIndex: level + 1 });
    whole.add(disc);
    return disc;
  };
  const styleOf = (feature, colour, viewResolution, child, overImage = false) => {
    // Sized as at the coarsest zoom, then shrunk on screen with its tiles (1: not shrunk).
    const resolution = Math.min(viewResolution, coarsest);
    const shrink = resolution / viewResolution;
    const type = feature.getType();
    const point = type === 'Point' || type === 'MultiPoint';
    const polygon = type === 'Polygon' || type === 'MultiPolygon';
    const kind = point ? (drawnAsCircle(feature.getProperties(), resolution, child) ? 'circle' : 'point') : polygon && drawnAsDisc(feature.getExtent(), resolution, child) ? 'disc' : polygon ? (isRegion(feature.getProperties(), typed) ? 'region' : 'area') : 'line';
    const radius = kind === 'point' || kind === 'disc' ? pointRadius(resolution, child) : 0;
    // A disc's style holds its radius in map units: one per resolution drawn at.
    const key = `${colour}|${kind}|${radius}|${child ? 1 : 0}${child && overImage ? 'i' : ''}|${radius ? `${resolution}|${shrink}` : ''}`;
    let s = styles.get(key);
    if (!s) {
      if (styles.size >= MAX_STYLES) styles.clear();
      styles.set(key, (s = make(colour, kind, radius, child, overImage, resolution, shrink)));
    }
    return s;
  };
  return Object.assign(styleOf, { filledWhole: (style) => whole.has(style) });
}
