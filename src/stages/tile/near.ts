// The polygons of a feature of many pieces near a unit's cell: a class mask's label spans the slide, and the unit
// holding it whole quantised all of it at every zoom to place the few pieces its tiles hold.
import { exteriorBoxes, type Flat, type TileGeometry } from '../../tiling/flat.js';

/** From this many polygons a feature's polygons are picked by their exteriors' boxes before quantising. */
const NEAR_POLYGONS = 64;

/**
 * The exteriors' boxes of a feature's polygons as read (`whole`), worked out once per tiling call: each zoom's
 * polygons (`drawnMany` keeps a subsequence of them) are looked up in it.
 */
export class PolygonBoxes {
  private boxes: Float64Array | undefined;

  constructor(private readonly whole: TileGeometry) {}

  /**
   * The polygons of `g` (the whole's, or a subsequence of them) whose exterior's box meets [x0, x1] × [y0, y1]: `g`
   * itself when it is no polygons of many, or all of them meet it. A polygon whose exterior's box misses a tile is
   * none of its clip (Quantiser.clip), and quantising is polygon by polygon, so what a tile inside the rectangle
   * holds of the ones picked is what it held of all.
   */
  near(g: TileGeometry, x0: number, y0: number, x1: number, y1: number): TileGeometry {
    const whole = this.whole;
    if (g.k !== 'polygons' || whole.k !== 'polygons' || g.polys.length < NEAR_POLYGONS) return g;
    const b = (this.boxes ??= exteriorBoxes(whole.polys));
    const polys: Flat[][] = [];
    // `g`'s polygons in the whole's order: walked alongside it, each found where the one before was.
    let k = 0;
    for (const poly of g.polys) {
      while (k < whole.polys.length && whole.polys[k] !== poly) k++;
      if (k === whole.polys.length) return g;
      if (b[4 * k] <= x1 && b[4 * k + 2] >= x0 && b[4 * k + 1] <= y1 && b[4 * k + 3] >= y0) polys.push(poly);
    }
    return polys.length === g.polys.length ? g : { k: 'polygons', type: g.type, polys };
  }
}
