// A label mask (PNG, TIFF) as a source of newline-delimited features: one polygon per label, into the same pipeline.
import { labelsToFeatures, readLabelMask } from './mask.js';
import type { Source } from './source.js';

/** File names read as label masks rather than as JSON. */
export const MASK_FILE = /\.(tif|tiff|png)$/i;

/** Features are emitted in label order, batched into chunks so the reader sees ordinary NDJSON. */
export function maskSource(path: string): Source {
  return {
    name: path,
    open: async function* () {
      const mask = await readLabelMask(path);
      let chunk = '';
      for (const f of labelsToFeatures(mask)) {
        chunk += `${JSON.stringify(f)}\n`;
        if (chunk.length > 1 << 20) {
          yield new TextEncoder().encode(chunk);
          chunk = '';
        }
      }
      if (chunk) yield new TextEncoder().encode(chunk);
    },
  };
}
