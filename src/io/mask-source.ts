// A label mask (PNG, TIFF) as a source of features: one polygon per label, or per piece of one (--mask-features piece).
import { labelFlat, labelsOf, MANY_PIECES, type LabelParts } from '../raster/features.js';
import { FeatureTextWriter, stringsOf } from '../raster/feature-text.js';
import { LabelGather } from '../raster/label-gather.js';
import { LabelPieces } from '../raster/label-pieces.js';
import { LabelRows } from '../raster/strips.js';
import { ScatteredLabels } from '../raster/scattered.js';
import type { LabelRings } from '../raster/trace.js';
import { pieceBands, refuseIntensity, wholeRings } from './mask-bands.js';
import { openLabelMask, type MaskFile } from './mask.js';
import { InterruptedError } from '../report/errors.js';
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
 * asks for them (`MadeOptions`, --mask-features piece: `LabelPieces`) or, asked for `auto`, finds the mask numbered
 * afresh in each tile; the pixels are decoded and traced when the build first asks. `bandBytes` is for tests, which
 * cut small masks into bands as large ones are, and `direct` (false: a strip TIFF read through libvips,
 * `openLabelMask`) for tests that compare the two readers.
 */
export function maskSource(path: string, bandBytes = MASK_BAND_BYTES, direct = true): FeatureSource {
  let size: { width: number; height: number } | undefined;
  let members: Record<string, unknown> | undefined;
  let ignored: string | undefined;
  let asPieces = false;
  const scattered = new ScatteredLabels();
  return {
    name: path,
    // The mask's own size, not the extent of its labels: a label-free margin is part of the image.
    imageSize: () => size,
    // What one pixel is, as a GeoJSON input says it in its `multiscale` member; none when the file does not say.
    members: () => members,
    pixelSizeIgnored: () => ignored,
    scattered: () => scattered.found(),
    readAsPieces: () => asPieces,
    features: async function* (made: MadeOptions = {}) {
      const mask = stoppable(await openLabelMask(path, direct), made.signal);
      size = { width: mask.width, height: mask.height };
      members = mask.pixelSize ? { type: 'FeatureCollection', multiscale: pixelSizeMultiscale(mask.pixelSize) } : undefined;
      ignored = mask.pixelSizeIgnored;
      const writer = new FeatureTextWriter();
      let group: (FlatValue | FeatureText)[] = [];
      let valueVertices = 0;
      const labels = made.maskFeatures === 'piece' ? undefined : await maskLabels(path, mask, bandBytes, made, scattered);
      asPieces = labels === undefined;
      for await (const [rings, parts, top] of labels ?? maskPieces(path, mask, bandBytes)) {
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
 * `mask`, each of its reads of rows refused once `signal` is aborted (SIGINT, SIGTERM): a whole slide's first pass over
 * its rows takes minutes before any feature is handed on to the build, which checks between batches, and a stop was
 * not heeded until then.
 */
function stoppable(mask: MaskFile, signal: AbortSignal | undefined): MaskFile {
  if (signal === undefined) return mask;
  return {
    ...mask,
    rows: async (top, count) => {
      if (signal.aborted) throw new InterruptedError('build interrupted');
      return mask.rows(top, count);
    },
  };
}

/** Rows in a band of `bandBytes` (as read), one at least. */
function bandRows(mask: MaskFile, bandBytes: number): number {
  return Math.max(1, Math.floor(bandBytes / Math.max(1, mask.width * mask.bytesPerPixel)));
}

/** Every piece of every label (--mask-features piece), in raster order of their first pixels, read in bands (`pieceBands`). */
async function* maskPieces(path: string, mask: MaskFile, bandBytes: number): AsyncGenerator<[LabelRings, LabelParts, number], void, undefined> {
  const numbering = new LabelPieces();
  for await (const { rings, from, pieces } of pieceBands(path, mask, bandRows(mask, bandBytes), true)) {
    for (const p of pieces) yield [rings, numbering.of(rings, p), from];
  }
}

type Given = AsyncGenerator<[LabelRings, LabelParts, number], void, undefined>;

/**
 * Every label's rings, the mask read whole when it is `bandBytes` or less, else twice by bands: once for each label's
 * last row, then band by band of pieces (`pieceBands`), gathered into their labels' features (`LabelGather`). A
 * label reaching down many bands (a class mask's class, a label of a mask numbered afresh in each tile) is held as
 * its outlines, not its pixels, and so are the labels after it, spilled past `made.outlines`' bytes; the features
 * are those of the mask read whole. Each label given is seen by `scattered`. Labels recurring far apart are told
 * (`made.onRecurring`) from the first pass. An intensity image is refused (`refuseIntensity`) from samples of the
 * rows as they are first read, before they are traced, and from each band's pieces once traced, before any of its
 * labels is given. With `--mask-features auto`, none when the mask is seen numbered afresh in each tile: scattered
 * labels once read whole, or labels recurring once the first pass is over; it is then read by its pieces.
 */
async function maskLabels(path: string, mask: MaskFile, bandBytes: number, made: MadeOptions, scattered: ScatteredLabels): Promise<Given | undefined> {
  const { width, height } = mask;
  const auto = made.maskFeatures === 'auto';
  const rows = bandRows(mask, bandBytes);
  if (rows >= height) {
    const rings = await wholeRings(path, mask);
    // `auto` sees every label before it gives any; `label` as it gives them.
    if (auto) {
      for (const parts of labelsOf(rings)) scattered.see(rings, parts, 0);
      if (scattered.found()) return undefined;
    }
    return (async function* () {
      for (const parts of labelsOf(rings)) {
        if (!auto) scattered.see(rings, parts, 0);
        yield [rings, parts, 0];
      }
    })();
  }
  const labels = new LabelRows();
  let told = false;
  for (let top = 0; top < height; top += rows) {
    const data = await mask.rows(top, Math.min(rows, height - top));
    // Before its labels are counted: 32-bit noise gives one per pixel, a map of them past the memory there is.
    refuseIntensity(path, { width, height: data.length / width, data }, top, height);
    labels.add(data, width, top);
    // `auto` decides once every row is counted: told of a mask it then reads by pieces, a user has nothing to change.
    const recurring = told || auto ? undefined : labels.recurring();
    if (recurring) { told = true; made.onRecurring?.(recurring, false); }
  }
  const numbered = auto ? labels.recurring() : undefined;
  if (numbered) { made.onRecurring?.(numbered, true); return undefined; }
  return (async function* () {
    const gather = new LabelGather((L) => labels.lastRow(L), height, made.outlines);
    try {
      for await (const { rings, from, to, pieces } of pieceBands(path, mask, rows, false)) {
        for (const given of gather.band(rings, pieces, from, to)) {
          scattered.see(...given);
          yield given;
        }
      }
    } finally {
      // Also when the build stops reading (a failure after it): the spill file goes with the read.
      gather.close();
    }
  })();
}
