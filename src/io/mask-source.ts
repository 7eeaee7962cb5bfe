// A label mask (PNG, TIFF) as a source of features: one polygon per label, handed to the build as values.
import { labelsToFeatures } from '../raster/features.js';
import { readLabelMask } from './mask.js';
import { pixelSizeMultiscale } from './pixel-size.js';
import type { FeatureSource } from './source.js';

/** File names read as label masks rather than as JSON. */
export const MASK_FILE = /\.(tif|tiff|png)$/i;

/** Features per group handed on: one await for the reader per group, few traced polygons held at once. */
const GROUP = 64;

/** The mask's features in label order; the pixels are decoded and traced when the build first asks. */
export function maskSource(path: string): FeatureSource {
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
      const mask = await readLabelMask(path);
      size = { width: mask.width, height: mask.height };
      members = mask.pixelSize ? { type: 'FeatureCollection', multiscale: pixelSizeMultiscale(mask.pixelSize) } : undefined;
      ignored = mask.pixelSizeIgnored;
      let group = [];
      for (const f of labelsToFeatures(mask)) {
        group.push(f);
        if (group.length === GROUP) { yield group; group = []; }
      }
      if (group.length > 0) yield group;
    },
  };
}
