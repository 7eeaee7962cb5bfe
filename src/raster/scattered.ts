// Labels whose pieces lie far apart: the sign of a mask segmented tile by tile and numbered afresh in each.
import { MANY_PIECES, type LabelParts } from './features.js';
import type { LabelRings } from './trace.js';

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

  see(rings: LabelRings, parts: LabelParts): void {
    this.total++;
    const pieces = parts.polygons.length;
    if (pieces < 2 || pieces >= MANY_PIECES) return;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    const { xy, start, length } = rings;
    // The outer rings bound the label: a hole lies within its own.
    for (const [outer] of parts.polygons) {
      for (let i = 2 * start[outer], end = i + 2 * length[outer]; i < end; i += 2) {
        if (xy[i] < x0) x0 = xy[i];
        if (xy[i] > x1) x1 = xy[i];
        if (xy[i + 1] < y0) y0 = xy[i + 1];
        if (xy[i + 1] > y1) y1 = xy[i + 1];
      }
    }
    const width = x1 - x0, height = y1 - y0;
    if (Math.max(width, height) < SCATTERED_SPREAD * Math.sqrt(parts.area)) return;
    this.count++;
    this.first ??= { label: parts.label, pieces, width, height, area: parts.area };
  }

  /** What to warn of, once the mask is read: nothing under SCATTERED_LABELS scattered labels. */
  found(): Scattered | undefined {
    return this.count >= SCATTERED_LABELS && this.first ? { labels: this.count, of: this.total, first: this.first } : undefined;
  }
}
