// A label's 4-connected pieces as features of their own (--mask-features piece), each numbered as it is given.
import type { LabelParts } from './features.js';
import type { LabelRings } from './trace.js';

/**
 * Splits labels into their pieces, in the order they are given: a binary 0/255 or class mask is one label of
 * thousands of objects, and a mask segmented tile by tile and numbered afresh in each gives one label to cells far
 * apart. A piece is one of the label's polygons (its outer ring and the holes in it), in the label's order: raster
 * order of the piece's top-left pixel. Pieces are numbered 1, 2, … across the mask (`id`), in the order the labels
 * come (by top row, then label, whether the mask is read whole or in bands), so the ids do not depend on how the
 * mask was read; `piece` numbers them 1, 2, … within their label, which `label` still names.
 */
export class LabelPieces {
  private next = 1;

  /** The pieces of one label, next in order: each its own polygon, pixel count and vertices. */
  of(rings: LabelRings, parts: LabelParts): LabelParts[] {
    return parts.polygons.map((polygon, k) => {
      let area2 = 0, vertices = 0;
      for (const r of polygon) {
        // A hole's doubled area is negative: the piece's pixels are its outer ring's less its holes'.
        area2 += rings.area2[r];
        vertices += rings.length[r];
      }
      return { label: parts.label, polygons: [polygon], area: area2 / 2, vertices, id: this.next++, piece: k + 1 };
    });
  }
}
