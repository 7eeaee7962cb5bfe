// A label's 4-connected pieces as features of their own (--mask-features piece): found per band, numbered in raster order.
import { labelsOf, type LabelParts } from './features.js';
import type { LabelRings } from './trace.js';

/** One piece of a traced band: its label, polygon (outer ring, then holes), and its outer ring's reach in the band's rows. */
export interface PieceShape {
  label: number;
  polygon: number[];
  /** Its first pixel in raster order: top row and that row's leftmost x (where its outer ring starts). */
  top: number;
  left: number;
  /** The bottom edge of its lowest row: the band's row count when it reaches the band's last row. */
  bottom: number;
}

/** Every piece of every label in the rings, in no particular order. */
export function pieceShapes(rings: LabelRings): PieceShape[] {
  const out: PieceShape[] = [];
  const xy = rings.xy;
  for (const parts of labelsOf(rings)) {
    for (const polygon of parts.polygons) {
      // An outer ring starts at its first vertex in raster order (trace.ts): the top-left corner of the first pixel.
      const s = rings.start[polygon[0]], n = rings.length[polygon[0]];
      let bottom = -Infinity;
      for (let i = 0; i < n; i++) bottom = Math.max(bottom, xy[2 * (s + i) + 1]);
      out.push({ label: parts.label, polygon, top: xy[2 * s + 1], left: xy[2 * s], bottom });
    }
  }
  return out;
}

/** Raster order of their first pixels: how the ids of a mask's pieces run, read whole or in bands. */
export function byFirstPixel(a: PieceShape, b: PieceShape): number {
  return a.top - b.top || a.left - b.left;
}

/** Labels up to this are counted in an array; larger ones (random 32-bit labels) in a map. */
const DENSE = 1 << 24;

/**
 * Numbers pieces as they are given, in raster order of their first pixels across the mask (the order
 * `skimage.measure.label` numbers components in): `id` 1, 2, … across the mask, `piece` 1, 2, … within its label,
 * which `label` still names. A binary 0/255 or class mask is one label of thousands of objects, and a mask segmented
 * tile by tile and numbered afresh in each gives one label to cells far apart.
 */
export class LabelPieces {
  private next = 1;
  private dense = new Uint32Array(1024);
  private readonly sparse = new Map<number, number>();

  /** The piece as a feature's parts: its own polygon, pixel count, vertices, id and number within its label. */
  of(rings: LabelRings, shape: PieceShape): LabelParts {
    let area2 = 0, vertices = 0;
    for (const r of shape.polygon) {
      // A hole's doubled area is negative: the piece's pixels are its outer ring's less its holes'.
      area2 += rings.area2[r];
      vertices += rings.length[r];
    }
    return { label: shape.label, polygons: [shape.polygon], area: area2 / 2, vertices, id: this.next++, piece: this.count(shape.label) };
  }

  /** One more piece of the label: how many it has had so far. */
  private count(L: number): number {
    if (L >= DENSE) {
      const k = (this.sparse.get(L) ?? 0) + 1;
      this.sparse.set(L, k);
      return k;
    }
    if (L >= this.dense.length) {
      let cap = this.dense.length * 2;
      while (cap <= L) cap *= 2;
      const d = new Uint32Array(cap);
      d.set(this.dense);
      this.dense = d;
    }
    return ++this.dense[L];
  }
}
