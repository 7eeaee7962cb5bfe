// The label mask module with each opened mask telling of every read of rows: what a band of a mask source holds at once.
import type * as MaskModule from '../../src/io/mask.js';

/** `real`, its `openLabelMask` giving masks that call `read` with the rows of each read before making it. */
export function countingReads(real: typeof MaskModule, read: (rows: number) => void): typeof MaskModule {
  return {
    ...real,
    openLabelMask: async (...args: Parameters<typeof real.openLabelMask>) => {
      const mask = await real.openLabelMask(...args);
      return { ...mask, rows: (top: number, rows: number) => { read(rows); return mask.rows(top, rows); } };
    },
  };
}
