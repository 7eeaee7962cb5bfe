// Telling an intensity image (grey levels, noise) from a label mask by its pieces, before its tiling and mostly before its trace (pure).
import { traceLabelRings, type LabelMask, type LabelRings } from './trace.js';

/**
 * Measured on masks traced whole (helper-61): 16-bit noise 1.00 px a piece; a fluorescence-like 16-bit image (blurred
 * gradient and blobs, shot noise) 1.03, the same without noise 1.92, in 8 bits 1.41. Real masks: 100,000 round cells
 * 352 px, a 0/255 mask of spots of radius 1–4 px 24, one of spots of 1–5 px 2.2, a class mask 25,762. The spots of
 * 2.2 px lie apart on background, where the grey levels of an image border one another: so both are asked.
 */
export const MEAN_PIECE_PX = 4;
/**
 * Share of the pieces' outlines (in pixel edges) against another label rather than background: 1.000 in every image
 * above (0.993 in 8-bit noise, whose 0 is background), 0.000 in the spot and cell masks, 0.757 in the class mask.
 */
export const TOUCHING_SHARE = 0.5;
/** So few pieces prove nothing: a small mask of a few one-pixel labels is a mask (the tests' masks are). */
export const MIN_PIECES = 10_000;

/**
 * Rows of a mask of more pixels than this are sampled before they are traced; fewer are traced whole at once and their
 * pieces counted: 4 Mi pixels of noise are 4 million rings, about 250 MiB, where sampling them would cost a tenth of
 * their trace again (16 windows: 0.1–0.4 s) for nothing.
 */
export const SAMPLED_FROM = 1 << 22;

/** Side of a window traced as a sample, and how many across and down at most. */
const WINDOW = 256;
const GRID = 4;

/** What the pieces of a mask (or a part of it) are. */
export interface PieceCensus {
  /** Distinct labels among the pieces; counted only when the pieces look like grey levels (else 0), to be said. */
  labels: number;
  /** 4-connected pieces of one label: outer rings. */
  pieces: number;
  /** Labelled pixels. */
  pixels: number;
  /** Pixel edges between two labels, and between a label and background (0). */
  touching: number;
  bordering: number;
}

/** Labels, pieces and pixels of traced rings, and the edges of `mask`, which was traced into them. */
export function censusOf(rings: LabelRings, mask: LabelMask): PieceCensus {
  const { pieces, pixels } = piecesIn(rings);
  // The edges are a pass over every pixel, and the labels a sort of every ring's: only when the pieces are tiny.
  if (pieces < MIN_PIECES || pixels >= MEAN_PIECE_PX * pieces) return { labels: 0, pieces, pixels, touching: 0, bordering: 0 };
  return { labels: distinct(rings.label.subarray(0, rings.count)), pieces, pixels, ...edgesOf(mask) };
}

/** Pieces (outer rings) of traced rings, and the pixels their rings enclose (holes taken off). */
function piecesIn(rings: LabelRings): { pieces: number; pixels: number } {
  let pieces = 0, area2 = 0;
  for (let r = 0; r < rings.count; r++) {
    area2 += rings.area2[r];
    if (rings.area2[r] > 0) pieces++;
  }
  return { pieces, pixels: area2 / 2 };
}

/**
 * The census of windows of up to 256 × 256 px on a grid of up to 4 × 4 over `mask` (rows of a mask), edge to edge, each
 * traced on its own: pieces cut by a window's edge count as pieces, which makes large objects smaller, never tiny.
 * `windows` is how many were traced.
 */
export function sampleCensus(mask: LabelMask): PieceCensus & { windows: number } {
  const { width, height, data } = mask;
  const w = Math.min(WINDOW, width), h = Math.min(WINDOW, height);
  const cols = Math.max(1, Math.min(GRID, Math.floor(width / WINDOW))), rows = Math.max(1, Math.min(GRID, Math.floor(height / WINDOW)));
  const sum: PieceCensus = { labels: 0, pieces: 0, pixels: 0, touching: 0, bordering: 0 };
  const labels: Uint32Array[] = [];
  for (let j = 0; j < rows; j++) {
    for (let i = 0; i < cols; i++) {
      const x0 = at(i, cols, width - w), y0 = at(j, rows, height - h);
      const window = { width: w, height: h, data: data.slice(0, w * h) };
      for (let y = 0; y < h; y++) window.data.set(data.subarray((y0 + y) * width + x0, (y0 + y) * width + x0 + w), y * w);
      const rings = traceLabelRings(window);
      labels.push(rings.label.slice(0, rings.count));
      const { pieces, pixels } = piecesIn(rings);
      sum.pieces += pieces;
      sum.pixels += pixels;
      const edges = edgesOf(window);
      sum.touching += edges.touching;
      sum.bordering += edges.bordering;
    }
  }
  const all = new Uint32Array(labels.reduce((n, l) => n + l.length, 0));
  let filled = 0;
  for (const l of labels) { all.set(l, filled); filled += l.length; }
  return { ...sum, labels: distinct(all), windows: rows * cols };
}

/** Where window `i` of `n` starts, spread from 0 to `last` (the middle for one). */
function at(i: number, n: number, last: number): number {
  return n === 1 ? Math.floor(last / 2) : Math.floor((last * i) / (n - 1));
}

/** Whether the pieces are those of grey levels: many, of a few pixels, mostly bordering one another. */
export function looksLikeIntensity(c: PieceCensus): boolean {
  return c.pieces >= MIN_PIECES && c.pixels < MEAN_PIECE_PX * c.pieces && c.touching > TOUCHING_SHARE * (c.touching + c.bordering);
}

/** Why the pieces make a file no label mask; `scope` says where they were counted ('' for the whole file). */
export function intensityReason(c: PieceCensus, scope: string): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const share = Math.round((100 * c.touching) / Math.max(1, c.touching + c.bordering));
  return `${n(c.labels)} labels in ${n(c.pieces)} separate pieces of on average ${(c.pixels / c.pieces).toFixed(1)} px${scope}, `
    + `${share}% of their outlines against another label rather than background: this looks like an intensity image, not a label mask `
    + '(one integer label per object, 0 background): its grey levels would be traced as labels, a piece every few pixels; '
    + 'segment it first (Cellpose, StarDist, QuPath, skimage.measure.label of a threshold) and give the label image, or give it as --image, the slide the annotations lie on';
}

/** Pixel edges between two different labels, and between a label and background, inside the mask. */
function edgesOf(mask: LabelMask): { touching: number; bordering: number } {
  const { width, height, data } = mask;
  let touching = 0, bordering = 0;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i++) {
      const v = data[i];
      if (x + 1 < width && data[i + 1] !== v) { if (v !== 0 && data[i + 1] !== 0) touching++; else bordering++; }
      if (y + 1 < height && data[i + width] !== v) { if (v !== 0 && data[i + width] !== 0) touching++; else bordering++; }
    }
  }
  return { touching, bordering };
}

/** Distinct values, counted in a sorted copy (tens of millions of 32-bit labels overflow a Set). */
function distinct(values: Uint32Array): number {
  const sorted = values.slice().sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) n++;
  return n;
}
