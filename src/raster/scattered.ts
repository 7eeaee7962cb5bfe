// Labels whose pieces lie far apart: the sign of a mask segmented tile by tile and numbered afresh in each.
import { MANY_PIECES, type LabelParts } from './features.js';
import type { LabelRings } from './trace.js';
import { emptyBox, growBox } from '../tiling/flat.js';

/** A label is scattered when its box is this many times the side of a square of its area, or more, across. */
export const SCATTERED_SPREAD = 32;
/** Scattered labels are warned of from this many: one or two are a region annotated in parts, many a numbering. */
export const SCATTERED_LABELS = 10;
/**
 * A mask of this many values or fewer, one of which lies in half the rows that hold any label or more, is a class
 * mask (tumour, stroma, necrosis, … each over regions and specks all over the slide): its values recur far apart
 * because each is a class, not because a tiled segmentation numbered its objects afresh, whose densest tile holds
 * more objects than this and whose every label lies in the few rows of its objects.
 */
export const CLASS_VALUES = 32;

/** Whether a mask of `values` label values, the widest of which lies in `widest` of the `labelled` rows holding any, is a class mask. */
export function classMask(values: number, widest: number, labelled: number): boolean {
  return values <= CLASS_VALUES && 2 * widest >= labelled;
}

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
  /** Per row, the last of the first CLASS_VALUES labels lying in it (1, 2, …; 0 none): the rows of each, and of any. */
  private rowLabel = new Uint8Array(0);
  private labelled = 0;
  private widest = 0;

  /** Sees a label's rings, traced from row `top` of the mask. */
  see(rings: LabelRings, parts: LabelParts, top: number): void {
    this.total++;
    if (this.total <= CLASS_VALUES) this.seeRows(rings, parts, top);
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

  /** Counts the rows the label's pieces lie in (their outer rings' rows: a hole's lie within), and the rows of any label. */
  private seeRows(rings: LabelRings, parts: LabelParts, top: number): void {
    const { xy, start, length } = rings, stamp = this.total, box = this.box;
    let rows = 0;
    for (const [outer] of parts.polygons) {
      growBox(emptyBox(box), xy.subarray(2 * start[outer], 2 * (start[outer] + length[outer])));
      const from = top + box[1], to = top + box[3];
      if (to > this.rowLabel.length) {
        const grown = new Uint8Array(Math.max(to, 2 * this.rowLabel.length));
        grown.set(this.rowLabel);
        this.rowLabel = grown;
      }
      // Vertices are pixel corners: the piece's rows are [top, bottom).
      for (let y = from; y < to; y++) {
        const was = this.rowLabel[y];
        if (was === stamp) continue;
        if (was === 0) this.labelled++;
        this.rowLabel[y] = stamp;
        rows++;
      }
    }
    this.widest = Math.max(this.widest, rows);
  }

  /**
   * What to warn of, once the mask is read: nothing under SCATTERED_LABELS scattered labels, nor for a class mask
   * (`classMask`), whose scattered labels are classes in specks all over it.
   */
  found(): Scattered | undefined {
    if (classMask(this.total, this.widest, this.labelled)) return undefined;
    return this.count >= SCATTERED_LABELS && this.first ? { labels: this.count, of: this.total, first: this.first } : undefined;
  }
}
