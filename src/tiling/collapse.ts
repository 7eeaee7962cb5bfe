// Long rings and lines cut down to what a block of tiles can see, so that clipping one to each tile costs what lies near it.
import { BUFFER, EXTENT } from './space.js';
import type { Coords, Flat } from './flat.js';
import { clipPoints, type Rect } from './clip.js';

/**
 * Parts with at least this many positions (a tumour outline, a tissue border across many work units) take the paths
 * below; shorter ones (a cell, a region over a few cells) are clipped whole: taking them too cost 50–170 MiB more at
 * the peak for 3,000 regions of 300 vertices, and saved no time.
 */
export const LONG_PART = 4096;

// A vertex is beyond a side of the region when it lies past it by more than this (tile units): rounding a crossing
// point on an edge between two such vertices cannot bring it back to the side's line.
const MARGIN = 1;

/** Which side of `r` the vertex lies beyond (1 left, 2 right, 3 above, 4 below, by MARGIN), as a bit set. */
function sides(x: number, y: number, r: Rect): number {
  return (x < r.minX - MARGIN ? 1 : 0) | (x > r.maxX + MARGIN ? 2 : 0) | (y < r.minY - MARGIN ? 4 : 0) | (y > r.maxY + MARGIN ? 8 : 0);
}

/**
 * `c` with each run of three or more consecutive vertices that lie beyond one and the same side of `r` cut down to its
 * first and last vertex, and, beyond the top or the bottom, the vertices of least and greatest x between them (the
 * first and last vertex of `c` always stay). Clipping the result to any rectangle inside `r` with the Clipper (rings
 * by Sutherland–Hodgman, rounded or not; lines by Liang–Barsky) gives exactly what clipping `c` gives, degenerate
 * edges along the rectangle included:
 * - a pass against a run's own side drops whatever its edges made, and meets the edges into and out of the run,
 *   which are the same, at the same points;
 * - a run beyond the left side makes nothing in the passes before (none), one beyond the right nothing in the pass
 *   against the left (its vertices are all inside it);
 * - a run beyond the top or the bottom may make points in the x passes before its own, on the lines x = minX and
 *   x = maxX: whether it makes any at all depends only on its extreme x (kept), and the edges from the points around
 *   into what it makes run along those lines, which meet the run's side at the rectangle's corner either way.
 *
 * `test/tiling/collapse.test.ts` checks this on random shapes. Returns `c` itself when nothing is cut.
 */
export function collapse(c: Coords, r: Rect): Coords {
  const n = c.length >> 1;
  let out: Flat | null = null;
  let i = 1;
  while (i < n - 1) {
    const s = sides(c[i * 2], c[i * 2 + 1], r);
    let end = i + 1, side = 0;
    if (s !== 0) {
      // The longest run of one side among those this vertex is beyond (a corner vertex is beyond two).
      for (let bit = 1; bit <= 8; bit <<= 1) {
        if ((s & bit) === 0) continue;
        let j = i + 1;
        while (j < n - 1 && (sides(c[j * 2], c[j * 2 + 1], r) & bit) !== 0) j++;
        if (j > end) { end = j; side = bit; }
      }
    }
    if (end - i >= 3) {
      if (out === null) { out = []; for (let k = 0; k < i * 2; k++) out.push(c[k]); }
      let lo = i, hi = i;
      if (side >= 4) for (let k = i + 1; k < end; k++) { if (c[k * 2] < c[lo * 2]) lo = k; if (c[k * 2] > c[hi * 2]) hi = k; }
      let last = -1;
      for (const k of [i, Math.min(lo, hi), Math.max(lo, hi), end - 1]) if (k > last) { out.push(c[k * 2], c[k * 2 + 1]); last = k; }
    } else if (out !== null) {
      for (let k = i; k < end; k++) out.push(c[k * 2], c[k * 2 + 1]);
    }
    i = end;
  }
  if (out === null) return c;
  for (let k = i; k < n; k++) out.push(c[k * 2], c[k * 2 + 1]);
  return out;
}

/** Rectangle of the tiles x0..x1 × y0..y1 with their buffers, in zoom-global tile units. */
export function tilesRect(x0: number, y0: number, x1: number, y1: number): Rect {
  return { minX: x0 * EXTENT - BUFFER, minY: y0 * EXTENT - BUFFER, maxX: (x1 + 1) * EXTENT + BUFFER, maxY: (y1 + 1) * EXTENT + BUFFER };
}

interface Node { x0: number; y0: number; x1: number; y1: number; c: Coords; kids: (Node | undefined)[] }

/**
 * One long part cut down for each tile of a block (a unit's tiles at one zoom): halves of the block, then halves of
 * those, each cut from its parent's part when first asked for, until a part is short or a block one tile. A tile then
 * clips what lies near it, and the whole part is walked about once per level of halving instead of once per tile.
 * Lines and rings are cut by `collapse`; points (`points`) to those inside the block, which is all a tile keeps of them.
 */
export class PartTree {
  private readonly root: Node;
  private readonly cut: (c: Coords, r: Rect) => Coords;

  constructor(c: Coords, x0: number, y0: number, x1: number, y1: number, points = false) {
    this.cut = points ? clipPoints : collapse;
    this.root = { x0, y0, x1, y1, c: this.cut(c, tilesRect(x0, y0, x1, y1)), kids: [] };
  }

  /** Whether tile (x, y) lies in the block. */
  holds(x: number, y: number): boolean {
    const r = this.root;
    return x >= r.x0 && x <= r.x1 && y >= r.y0 && y <= r.y1;
  }

  /** The part as tile (x, y) of the block needs it for clipping to its buffered rectangle. */
  at(x: number, y: number): Coords {
    let node = this.root;
    while (node.c.length >> 1 >= LONG_PART && (node.x0 < node.x1 || node.y0 < node.y1)) {
      const mx = (node.x0 + node.x1) >> 1, my = (node.y0 + node.y1) >> 1;
      const right = x > mx ? 1 : 0, below = y > my ? 1 : 0;
      const k = right + 2 * below;
      let kid = node.kids[k];
      if (kid === undefined) {
        const x0 = right ? mx + 1 : node.x0, x1 = right ? node.x1 : mx, y0 = below ? my + 1 : node.y0, y1 = below ? node.y1 : my;
        kid = { x0, y0, x1, y1, c: this.cut(node.c, tilesRect(x0, y0, x1, y1)), kids: [] };
        node.kids[k] = kid;
      }
      node = kid;
    }
    return node.c;
  }
}
