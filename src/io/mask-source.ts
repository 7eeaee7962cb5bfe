// A label mask (PNG, TIFF) as a source of features: one polygon per label, or per piece of one (--mask-features piece).
import { labelFlat, labelsOf, MANY_PIECES, type LabelParts } from '../raster/features.js';
import { FeatureTextWriter, stringsOf } from '../raster/feature-text.js';
import { byFirstPixel, LabelPieces, pieceShapes } from '../raster/label-pieces.js';
import { LabelRows, RunsDown, type MaskBand } from '../raster/strips.js';
import { ScatteredLabels } from '../raster/scattered.js';
import { traceLabelRings, type LabelMask, type LabelRings } from '../raster/trace.js';
import { censusOf, intensityReason, looksLikeIntensity, SAMPLED_FROM, sampleCensus } from '../raster/intensity.js';
import { ImageError } from '../report/errors.js';
import { openLabelMask, type MaskFile } from './mask.js';
import { pixelSizeMultiscale } from './pixel-size.js';
import { FeatureText, type FeatureSource, type MadeOptions } from './source.js';
import type { FlatValue } from '../tiling/flat-value.js';

/** File names read as label masks rather than as JSON. */
export const MASK_FILE = /\.(tif|tiff|png)$/i;

/** Features per group handed on: one await for the reader per group, few traced polygons held at once. */
const GROUP = 64;

/**
 * A label of this many vertices or more goes to the build as a value, not as text: its text could pass the most one
 * feature's text may take (a 20th of the memory budget); and so does one in MANY_PIECES pieces, which the build
 * names (`mask-pieces`) from its value.
 */
const TEXT_VERTICES = 1 << 16;

/**
 * A group is handed on early once its labels given as values hold this many vertices: 64 labels of half a million
 * vertices each (an intensity image or a noise mask given as labels) were 2 GiB of positions held at once.
 */
export const GROUP_VALUE_VERTICES = 1 << 20;

/**
 * A mask of more pixels than this (in bytes as read) is read in bands of about this much: a whole slide's labels
 * (80,000 × 60,000 px at 32 bits is 19 GB) do not fit in memory, and only one band is held at a time.
 */
export const MASK_BAND_BYTES = 128 * 1024 * 1024;

/**
 * The mask's features by top row, then label (`labelsToFeatures`), or its pieces in raster order when the build
 * asks for them (`MadeOptions`, --mask-features piece: `LabelPieces`); the pixels are decoded and traced when the build
 * first asks. `bandBytes` is for tests, which cut small masks into bands as large ones are, and `direct` (false: a
 * strip TIFF read through libvips, `openLabelMask`) for tests that compare the two readers.
 */
export function maskSource(path: string, bandBytes = MASK_BAND_BYTES, direct = true): FeatureSource {
  let size: { width: number; height: number } | undefined;
  let members: Record<string, unknown> | undefined;
  let ignored: string | undefined;
  const scattered = new ScatteredLabels();
  return {
    name: path,
    // The mask's own size, not the extent of its labels: a label-free margin is part of the image.
    imageSize: () => size,
    // What one pixel is, as a GeoJSON input says it in its `multiscale` member; none when the file does not say.
    members: () => members,
    pixelSizeIgnored: () => ignored,
    scattered: () => scattered.found(),
    features: async function* (made: MadeOptions = {}) {
      const mask = await openLabelMask(path, direct);
      size = { width: mask.width, height: mask.height };
      members = mask.pixelSize ? { type: 'FeatureCollection', multiscale: pixelSizeMultiscale(mask.pixelSize) } : undefined;
      ignored = mask.pixelSizeIgnored;
      const writer = new FeatureTextWriter();
      let group: (FlatValue | FeatureText)[] = [];
      let valueVertices = 0;
      const pieces = made.maskFeatures === 'piece';
      for await (const [rings, parts, top] of pieces ? maskPieces(path, mask, bandBytes) : maskLabels(path, mask, bandBytes)) {
        // Pieces are in one polygon each: none is scattered (nor `mask-pieces`), as none is one feature of many.
        if (!pieces) scattered.see(rings, parts);
        const value = parts.vertices >= TEXT_VERTICES || parts.polygons.length >= MANY_PIECES;
        if (value) valueVertices += parts.vertices;
        group.push(value ? labelFlat(rings, parts, top) : new FeatureText(writer.write(rings, parts, top), stringsOf(parts)));
        if (group.length === GROUP || valueVertices >= GROUP_VALUE_VERTICES) {
          yield group;
          group = [];
          valueVertices = 0;
          // The reader has copied the texts it was given.
          writer.reset();
        }
      }
      if (group.length > 0) yield group;
    },
  };
}

/**
 * Extra rows a band of pieces reads below its own at first (an eighth of the band, at least this many): a piece whose
 * top row is in the band and that reaches the last row read is read again down to where it ends (`pieceEnd`).
 */
const PIECE_REACH = 64;

/**
 * Every piece of every label (--mask-features piece), in raster order of their first pixels, read in bands of rows
 * whatever the labels: each band gives the pieces whose top row is in it, read from one row above it (a piece that
 * reaches that row began above and was given there) down to past the lowest of them. A mask segmented tile by tile
 * and numbered afresh in each has labels reaching from top to bottom, which bands by label read whole (800 MB of
 * pixels at 20,000² px and 16 bits, 10 GB for a whole slide), where its pieces are each a cell high.
 */
async function* maskPieces(path: string, mask: MaskFile, bandBytes: number): AsyncGenerator<[LabelRings, LabelParts, number], void, undefined> {
  const { width, height } = mask;
  const rows = Math.max(1, Math.floor(bandBytes / Math.max(1, width * mask.bytesPerPixel)));
  const numbering = new LabelPieces();
  for (let top = 0; top < height;) {
    const from = Math.max(0, top - 1);
    let to = Math.min(height, top + rows);
    let end = Math.min(height, to + Math.max(PIECE_REACH, rows >> 3));
    for (let again = false; ; again = true) {
      const rings = await bandRings(path, mask, { top: from, to, end }, true);
      // Read to the bottom, every piece below the band's top is whole: the band gives them all (a class mask's web).
      if (end === height) to = height;
      const own = pieceShapes(rings).filter((p) => p.top + from >= top && p.top + from < to);
      const cut = end < height ? own.filter((p) => p.bottom + from === end) : [];
      if (cut.length > 0) {
        // One row past where the cut pieces end, none reaches the band's new last row, unless one turns up and down
        // below it: cut again, the band grows by half as much again at least, so that a winding piece is not read once a turn.
        const past = (await pieceEnd(mask, new Set(cut.map((p) => p.label)), end - 1, rows)) + 2;
        end = Math.min(height, again ? Math.max(past, end + ((end - from) >> 1)) : past);
        continue;
      }
      for (const p of own.sort(byFirstPixel)) yield [rings, numbering.of(rings, p), from];
      break;
    }
    top = to;
  }
}

/** The last row that runs of `labels` in row `from` reach, followed down (`RunsDown`), read `rows` at a time. */
async function pieceEnd(mask: MaskFile, labels: ReadonlySet<number>, from: number, rows: number): Promise<number> {
  const runs = new RunsDown(labels);
  for (let top = from; top < mask.height; top += rows) {
    if (!runs.add(await mask.rows(top, Math.min(rows, mask.height - top)), mask.width, top)) break;
  }
  return runs.last;
}

/**
 * Every label's rings, the mask read whole when it is `bandBytes` or less, else twice by bands: once for each label's
 * first and last row, then each band with the rows below it that its labels reach, traced and giving the labels whose
 * top row is in it (with the band's first row, to add to their y). A label is traced whole where it is given, so the
 * features are the same either way. An intensity image is refused (`refuseIntensity`) from samples of the rows as they
 * are first read, before they are traced, and from each band's pieces once traced, before any of its labels is given.
 */
async function* maskLabels(path: string, mask: MaskFile, bandBytes: number): AsyncGenerator<[LabelRings, LabelParts, number], void, undefined> {
  const { width, height } = mask;
  const rows = Math.max(1, Math.floor(bandBytes / Math.max(1, width * mask.bytesPerPixel)));
  let bands: MaskBand[] = [{ top: 0, to: height, end: height }];
  let labels: LabelRows | undefined;
  if (rows < height) {
    labels = new LabelRows();
    for (let top = 0; top < height; top += rows) {
      const data = await mask.rows(top, Math.min(rows, height - top));
      // Before its labels are counted: 32-bit noise gives one per pixel, a map of them past the memory there is.
      refuseIntensity(path, { width, height: data.length / width, data }, top, height);
      labels.add(data, width, top);
    }
    bands = labels.bands(height, rows);
  }
  for (const band of bands) {
    const rings = await bandRings(path, mask, band, labels === undefined);
    const own = labels;
    for (const parts of labelsOf(rings, own && ((L) => { const y = own.topRow(L); return y >= band.top && y < band.to; }))) yield [rings, parts, band.top];
  }
}

/**
 * The rings of one band, its pixels let go before its labels are given (a class mask is one band: 400 MB of pixels at
 * 20,000² px, held while every class was built and parsed). `sample`: its rows were not sampled before.
 */
async function bandRings(path: string, mask: MaskFile, band: MaskBand, sample: boolean): Promise<LabelRings> {
  const part = { width: mask.width, height: band.end - band.top, data: await mask.rows(band.top, band.end - band.top) };
  // Sampled before the trace: 36 million pixels of noise are as many rings, 2–3 GiB.
  if (sample) refuseIntensity(path, part, band.top, mask.height);
  const rings = traceLabelRings(part);
  const census = censusOf(rings, part);
  if (looksLikeIntensity(census)) throw new ImageError(path, intensityReason(census, part.height === mask.height ? '' : ` in rows ${band.top}–${band.end - 1}`));
  return rings;
}

/**
 * Refuses rows of a mask (from row `top` of `height`) whose sampled windows hold the pieces of an intensity image
 * (`looksLikeIntensity`): tiny, bordering one another. Windows of a real mask say nothing against it, and rows of
 * SAMPLED_FROM pixels or fewer are not sampled: the trace is checked whole after.
 */
function refuseIntensity(path: string, part: LabelMask, top: number, height: number): void {
  if (part.width * part.height <= SAMPLED_FROM) return;
  const sample = sampleCensus(part);
  if (!looksLikeIntensity(sample)) return;
  const where = part.height === height ? 'across it' : `from rows ${top}–${top + part.height - 1}`;
  throw new ImageError(path, intensityReason(sample, ` in ${sample.windows} windows of up to 256 × 256 px sampled ${where}`));
}
