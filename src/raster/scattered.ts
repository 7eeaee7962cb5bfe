// Labels whose pieces lie far apart: the sign of a mask segmented tile by tile and numbered afresh in each.
import { MANY_PIECES, type LabelParts } from './features.js';
import type { LabelRings } from './trace.js';
import { emptyBox, growBox } from '../tiling/flat.js';

/** A label is scattered when its box is this many times the side of a square of its area, or more, across. */
export const SCATTERED_SPREAD = 32;
/** Scattered labels are warned of from this many: one or two are a region annotated in parts, many a numbering. */
export const SCATTERED_LABELS = 10;

/** The scattered labels of a mask: how many of all, and the first (its pieces, its box's size, its area in pixels). */
export interface Scattered { labels: number; of: number; first: { label: number; pieces: number; width: number; height: number; area: number } }

/**
 * Counts labels in 2 to MANY_PIECES pieces spread over far more than their area: each is one feature, one hover card,
 * for cells that were numbered alike in different tiles of a segmentation (a label in more pieces is `mask-pieces`).
 */
export class ScatteredLabels {
  private count = 0;
  private total = 0;
  private first: Scattered['first'] | undefined;
  private readonly box = new Float64Array(4);

  see(rings: LabelRings, parts: LabelParts): void {
    this.total++;
    const pieces = parts.polygons.length;
    if (pieces < 2 || pieces >= MANY_PIECES) return;
    const { xy, start, length } = rings, box = emptyBox(this.box);
    // The outer rings bound the label: a hole lies within its own.
    for (const [outer] of parts.polygons) growBox(box, xy.subarray(2 * start[outer], 2 * (start[outer] + length[outer])));
    const width = box[2] - box[0], height = box[3] - box[1];
    if (Math.max(width, height) < SCATTERED_SPREAD * Math.sqrt(parts.area)) return;
    this.count++;
    this.first ??= { label: parts.label, pieces, width, height, area: parts.area };
  }

  /** What to warn of, once the mask is read: nothing under SCATTERED_LABELS scattered labels. */
  found(): Scattered | undefined {
    return this.count >= SCATTERED_LABELS && this.first ? { labels: this.count, of: this.total, first: this.first } : undefined;
  }
}
