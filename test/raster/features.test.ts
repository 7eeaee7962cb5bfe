// Traced features of masks where one label has many components (a class mask, a thresholded 0/255 mask).
import { describe, expect, it } from 'vitest';
import { labelsToFeatures } from '../../src/raster/features.js';

/** `n` × `n` rings of 3 × 3 px with a one-pixel hole, 4 px apart, all of label 1. */
function donuts(n: number): { width: number; height: number; data: Uint8Array } {
  const W = 4 * n, data = new Uint8Array(W * W);
  for (let gy = 0; gy < n; gy++) {
    for (let gx = 0; gx < n; gx++) {
      for (let y = 0; y < 3; y++) for (let x = 0; x < 3; x++) if (x !== 1 || y !== 1) data[(4 * gy + y) * W + 4 * gx + x] = 1;
    }
  }
  return { width: W, height: W, data };
}

describe('labelsToFeatures: one label in many pieces', () => {
  // Each hole was tested against every outer ring (9.5 s here); the grid of their boxes makes it linear. No timing is
  // asserted (tests never time): this checks that the grid finds each hole's own ring.
  it('puts each of 22,500 holes of one label under its own ring', () => {
    const features = [...labelsToFeatures(donuts(150))];
    expect(features).toHaveLength(1);
    const g = features[0].geometry;
    expect(g.type).toBe('MultiPolygon');
    const polygons = g.type === 'MultiPolygon' ? g.coordinates : [];
    expect(polygons).toHaveLength(150 * 150);
    for (const [k, [outer, ...holes]] of polygons.entries()) {
      // Components in raster order of their top-left pixel: row by row of rings.
      const x = 4 * (k % 150), y = 4 * Math.floor(k / 150);
      expect(outer[0]).toEqual([x, y]);
      expect(holes).toEqual([[[x + 1, y + 1], [x + 1, y + 2], [x + 2, y + 2], [x + 2, y + 1], [x + 1, y + 1]]]);
    }
    expect(features[0].properties.area).toBe(150 * 150 * 8);
  });
});
