// Rings of a traced label raster → one Polygon or MultiPolygon feature per label, holes under their outer rings (pure).
import type { MultiPolygon, Polygon, Position } from '../model/geometry.js';
import type { Feature } from '../model/feature.js';
import { traceLabelRings, type LabelMask, type LabelRings } from './trace.js';
import { emptyBox, growBox, type Flat } from '../tiling/flat.js';
import { FlatValue } from '../tiling/flat-value.js';
import { RingTester } from './ring-rows.js';

export interface LabelProperties {
  label: number;
  /** Pixel count, which is also the polygon's area: outlines run along pixel edges. */
  area: number;
  [name: string]: unknown;
}

/** Polygons in one traced feature from which it is named: a binary or class mask, one feature for all its objects. */
export const MANY_PIECES = 1000;

export type LabelFeature = Feature<Polygon | MultiPolygon> & { id: number; properties: LabelProperties };

/**
 * One Polygon or MultiPolygon feature per label, ordered by the label's top row, then by label: `id` and
 * `properties.label` are the label, `properties.area` its pixel count. Holes are inner rings of the outer ring that
 * contains them; a label with several 4-connected components becomes a MultiPolygon, components in raster order of
 * their top-left pixel. Rings are closed, start at their first vertex in raster order (lowest y, then lowest x), and
 * have no collinear vertices. The raster pass runs on the first call to `next()`; features are then built one at a
 * time so that only flat typed arrays are held between them. The order is the one a mask read in bands of rows
 * gives too (src/raster/strips.ts): each band's labels are those whose top row lies in it.
 */
export function* labelsToFeatures(mask: LabelMask): Generator<LabelFeature, void, undefined> {
  const rings = traceLabelRings(mask);
  for (const parts of labelsOf(rings)) yield labelFeature(rings, parts, 0);
}

/**
 * Groups rings by label, in the order of `labelsToFeatures`: by top row, then label. `owns` keeps the labels a band
 * of rows is to give (those whose top row is in it, every one of them within the band's rows).
 */
export function* labelsOf(rings: LabelRings, owns?: (label: number) => boolean): Generator<LabelParts, void, undefined> {
  const { count, label } = rings;
  const order = sortByLabel(label, count);
  // Groups of one label each, in label order: where each starts in `order`, and its top row (a ring starts at its
  // lowest y, so the least of its rings' first y).
  const starts: number[] = [], tops: number[] = [];
  let lowest = 0;
  for (let g = 0; g < count;) {
    const L = label[order[g]];
    let e = g, y = Infinity;
    while (e < count && label[order[e]] === L) { y = Math.min(y, rings.xy[2 * rings.start[order[e]] + 1]); e++; }
    starts.push(g); tops.push(y); lowest = Math.max(lowest, y);
    g = e;
  }
  starts.push(count);
  for (const k of byTopRow(tops, lowest)) {
    const L = label[order[starts[k]]];
    if (owns === undefined || owns(L)) yield labelParts(rings, order.subarray(starts[k], starts[k + 1]), L);
  }
}

/** Group indexes stably ordered by top row (a counting sort: groups come in label order, which ties keep). */
function byTopRow(tops: number[], lowest: number): Uint32Array {
  const bucket = new Uint32Array(lowest + 2);
  for (const y of tops) bucket[y + 1]++;
  for (let k = 1; k < bucket.length; k++) bucket[k] += bucket[k - 1];
  const out = new Uint32Array(tops.length);
  tops.forEach((y, k) => { out[bucket[y]++] = k; });
  return out;
}

/**
 * Ring indexes ordered by label, two stable 16-bit counting passes: rings of a label keep raster discovery order,
 * and it takes linear time where a comparison sort of 10^5–10^6 rings with a callback was the slowest step.
 */
function sortByLabel(label: Uint32Array, count: number): Uint32Array {
  let src = new Uint32Array(count), dst = new Uint32Array(count);
  for (let i = 0; i < count; i++) src[i] = i;
  const bucket = new Uint32Array(65537);
  for (const shift of [0, 16]) {
    bucket.fill(0);
    for (let i = 0; i < count; i++) bucket[((label[src[i]] >>> shift) & 0xffff) + 1]++;
    for (let k = 1; k <= 65536; k++) bucket[k] += bucket[k - 1];
    for (let i = 0; i < count; i++) { const r = src[i]; dst[bucket[(label[r] >>> shift) & 0xffff]++] = r; }
    const swap = src; src = dst; dst = swap;
  }
  return src;
}

function ringPositions(rings: LabelRings, r: number, top: number): Position[] {
  const s = rings.start[r], n = rings.length[r], xy = rings.xy;
  const out: Position[] = new Array(n + 1);
  for (let i = 0; i < n; i++) out[i] = [xy[2 * (s + i)], top + xy[2 * (s + i) + 1]];
  out[n] = [out[0][0], out[0][1]];
  return out;
}

/**
 * A label's polygons as ring indexes (each its outer ring, then its holes), its pixel count and its vertices. A piece
 * of a label given as a feature of its own (`LabelPieces`) has its own `id` and its number within the label, `piece`.
 */
export interface LabelParts { label: number; polygons: number[][]; area: number; vertices: number; id?: number; piece?: number }

/** Groups a label's rings (`members`) into polygons: each hole under the outer ring that contains it. */
export function labelParts(rings: LabelRings, members: ArrayLike<number>, L: number): LabelParts {
  const outers: number[] = [];
  const holes: number[] = [];
  let area2 = 0, vertices = 0;
  for (let k = 0; k < members.length; k++) {
    const r = members[k];
    area2 += rings.area2[r];
    vertices += rings.length[r];
    if (rings.area2[r] > 0) outers.push(r); else holes.push(r);
  }
  const polygons = outers.map((o) => [o]);
  if (outers.length === 1) {
    // One at a time: a spread of a tissue outline's 360,000 holes overflowed the call stack.
    for (const h of holes) polygons[0].push(h);
  } else if (holes.length > 0) {
    const near = nearOuters(rings, outers);
    const tester = new RingTester(rings);
    for (const h of holes) polygons[ownerOf(rings, h, outers, near, tester)].push(h);
  }
  return { label: L, polygons, area: area2 / 2, vertices };
}

/** The label's feature as GeoJSON, `top` added to every y. */
export function labelFeature(rings: LabelRings, parts: LabelParts, top: number): LabelFeature {
  const polygons = parts.polygons.map((p) => p.map((r) => ringPositions(rings, r, top)));
  const geometry: Polygon | MultiPolygon = polygons.length === 1
    ? { type: 'Polygon', coordinates: polygons[0] }
    : { type: 'MultiPolygon', coordinates: polygons };
  return { type: 'Feature', id: labelId(parts), geometry, properties: labelProperties(parts) };
}

/** A label's id, or a piece's own (`--mask-features piece`). */
function labelId(parts: LabelParts): number {
  return parts.id ?? parts.label;
}

/** `label` and `area`, and a piece's number within its label. */
function labelProperties(parts: LabelParts): LabelProperties {
  const properties: LabelProperties = { label: parts.label, area: parts.area };
  if (parts.piece !== undefined) properties.piece = parts.piece;
  return properties;
}

/**
 * The label's feature with its polygons flat (`FlatValue`), `top` added to every y: the numbers, in the order, that
 * `flatten` gives of `labelFeature`'s geometry, without its position arrays.
 */
export function labelFlat(rings: LabelRings, parts: LabelParts, top: number): FlatValue {
  const polys = parts.polygons.map((p) => p.map((r) => ringFlat(rings, r, top)));
  return new FlatValue(
    { type: 'Feature', id: labelId(parts), geometry: null, properties: labelProperties(parts) },
    { k: 'polygons', type: polys.length === 1 ? 'Polygon' : 'MultiPolygon', polys },
  );
}

/** One ring as flat x, y numbers, closed, `top` added to every y. */
function ringFlat(rings: LabelRings, r: number, top: number): Flat {
  const s = 2 * rings.start[r], n = 2 * rings.length[r], xy = rings.xy;
  const out = new Array<number>(n + 2);
  for (let i = 0; i < n; i += 2) { out[i] = xy[s + i]; out[i + 1] = top + xy[s + i + 1]; }
  out[n] = out[0];
  out[n + 1] = out[1];
  return out;
}

/**
 * The outer ring a hole belongs to. The probe is the centre of the labelled pixel beside the hole's first edge: a
 * half-integer point is never on an outline, and that pixel belongs to the hole's own component. An outer ring of
 * a component that surrounds this one (the component sits in its hole) contains the probe too; the innermost,
 * i.e. the smallest containing outer ring, is the owner. Only the outer rings whose boxes hold the probe are tested.
 */
function ownerOf(rings: LabelRings, h: number, outers: number[], near: (px: number, py: number) => Iterable<number>, tester: RingTester): number {
  const xy = rings.xy, s = rings.start[h];
  const x0 = xy[2 * s], y0 = xy[2 * s + 1];
  const dx = Math.sign(xy[2 * s + 2] - x0), dy = Math.sign(xy[2 * s + 3] - y0);
  const px = x0 + 0.5 * dx - 0.5 * dy, py = y0 + 0.5 * dy + 0.5 * dx;
  let best = 0, bestArea = Infinity;
  for (const k of near(px, py)) {
    const o = outers[k];
    if (rings.area2[o] < bestArea && tester.contains(o, px, py)) { best = k; bestArea = rings.area2[o]; }
  }
  return best;
}

/**
 * The outer rings (indexes into `outers`, ascending) whose boxes hold a point, from a grid of about one cell per
 * ring. A class mask (QuPath's label export by class, a thresholded 0/255 mask) gives one label thousands of
 * components and holes: testing each hole against every outer ring took 30 s at 7,744 rings and grew as their square.
 */
function nearOuters(rings: LabelRings, outers: number[]): (px: number, py: number) => Iterable<number> {
  const n = outers.length;
  const box = new Float64Array(4 * n);
  // Every ring's box, then theirs (a box is two positions, so growing by boxes is their union).
  for (let k = 0; k < n; k++) {
    const s = rings.start[outers[k]];
    growBox(emptyBox(box.subarray(4 * k, 4 * k + 4)), rings.xy.subarray(2 * s, 2 * (s + rings.length[outers[k]])));
  }
  const all = emptyBox(new Float64Array(4));
  growBox(all, box);
  const [minX, minY, maxX, maxY] = all;
  const side = Math.max(1, Math.sqrt(((maxX - minX) * (maxY - minY)) / n));
  const cols = Math.max(1, Math.ceil((maxX - minX) / side)), rows = Math.max(1, Math.ceil((maxY - minY) / side));
  const col = (x: number) => Math.min(cols - 1, Math.floor((x - minX) / side));
  const row = (y: number) => Math.min(rows - 1, Math.floor((y - minY) / side));
  const cells: number[][] = Array.from({ length: cols * rows }, () => []);
  for (let k = 0; k < n; k++) {
    for (let r = row(box[4 * k + 1]); r <= row(box[4 * k + 3]); r++) {
      for (let c = col(box[4 * k]); c <= col(box[4 * k + 2]); c++) cells[r * cols + c].push(k);
    }
  }
  return (px, py) => {
    if (px < minX || px > maxX || py < minY || py > maxY) return [];
    return cells[row(py) * cols + col(px)].filter((k) => px > box[4 * k] && px < box[4 * k + 2] && py > box[4 * k + 1] && py < box[4 * k + 3]);
  };
}
