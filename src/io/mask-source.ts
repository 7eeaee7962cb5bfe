// A label mask (PNG, TIFF) as a source of features: one polygon per label, handed to the build as values.
import { ringsToFeatures, type LabelFeature } from '../raster/features.js';
import { LabelRows, type MaskBand } from '../raster/strips.js';
import { traceLabelRings } from '../raster/trace.js';
import { openLabelMask, type MaskFile } from './mask.js';
import { pixelSizeMultiscale } from './pixel-size.js';
import type { FeatureSource } from './source.js';

/** File names read as label masks rather than as JSON. */
export const MASK_FILE = /\.(tif|tiff|png)$/i;

/** Features per group handed on: one await for the reader per group, few traced polygons held at once. */
const GROUP = 64;

/**
 * A mask of more pixels than this (in bytes as read) is read in bands of about this much: a whole slide's labels
 * (80,000 × 60,000 px at 32 bits is 19 GB) do not fit in memory, and only one band is held at a time.
 */
export const MASK_BAND_BYTES = 128 * 1024 * 1024;

/**
 * The mask's features by top row, then label (`labelsToFeatures`); the pixels are decoded and traced when the build
 * first asks. `bandBytes` is for tests, which cut small masks into bands as large ones are.
 */
export function maskSource(path: string, bandBytes = MASK_BAND_BYTES): FeatureSource {
  let size: { width: number; height: number } | undefined;
  let members: Record<string, unknown> | undefined;
  let ignored: string | undefined;
  return {
    name: path,
    // The mask's own size, not the extent of its labels: a label-free margin is part of the image.
    imageSize: () => size,
    // What one pixel is, as a GeoJSON input says it in its `multiscale` member; none when the file does not say.
    members: () => members,
    pixelSizeIgnored: () => ignored,
    features: async function* () {
      const mask = await openLabelMask(path);
      size = { width: mask.width, height: mask.height };
      members = mask.pixelSize ? { type: 'FeatureCollection', multiscale: pixelSizeMultiscale(mask.pixelSize) } : undefined;
      ignored = mask.pixelSizeIgnored;
      let group: LabelFeature[] = [];
      for await (const f of maskFeatures(mask, bandBytes)) {
        group.push(f);
        if (group.length === GROUP) { yield group; group = []; }
      }
      if (group.length > 0) yield group;
    },
  };
}

/**
 * Every label's feature, the mask read whole when it is `bandBytes` or less, else twice by bands: once for each
 * label's first and last row, then each band with the rows below it that its labels reach, traced and giving the
 * labels whose top row is in it. A label is traced whole where it is given, so the features are the same either way.
 */
async function* maskFeatures(mask: MaskFile, bandBytes: number): AsyncGenerator<LabelFeature, void, undefined> {
  const { width, height } = mask;
  const rows = Math.max(1, Math.floor(bandBytes / Math.max(1, width * mask.bytesPerPixel)));
  let bands: MaskBand[] = [{ top: 0, to: height, end: height }];
  let labels: LabelRows | undefined;
  if (rows < height) {
    labels = new LabelRows();
    for (let top = 0; top < height; top += rows) labels.add(await mask.rows(top, Math.min(rows, height - top)), width, top);
    bands = labels.bands(height, rows);
  }
  for (const band of bands) {
    const data = await mask.rows(band.top, band.end - band.top);
    const rings = traceLabelRings({ width, height: band.end - band.top, data });
    const own = labels;
    yield* ringsToFeatures(rings, band.top, own && ((L) => { const y = own.topRow(L); return y >= band.top && y < band.to; }));
  }
}
