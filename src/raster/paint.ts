// Preview painting: features at full form onto a premultiplied RGBA patch of the preview grid (pure, no I/O).
import { tagsOf, type FlatFeature, type TileGeometry } from '../tiling/flat.js';

/** Coordinates as x, y pairs in plane pixels. */
export type Coords = ArrayLike<number>;

export interface Rgb { r: number; g: number; b: number }

/**
 * A rectangle of the preview grid: its first column and row, its size, and the plane pixels per preview pixel.
 * Preview pixel (i, j) covers plane pixels [i·pixel, (i+1)·pixel) × [j·pixel, (j+1)·pixel).
 */
export interface PatchArea { x: number; y: number; width: number; height: number; pixel: number }

// Opacity (of 255) of outlines, lines and points, and of polygon interiors.
const STROKE = 242;
const FILL = 89;

/**
 * Paints features one at a time onto a patch. A feature touches only the preview pixels its geometry meets:
 * outlines and lines mark every pixel a segment passes through (so a shape smaller than a pixel still shows as that
 * pixel), interiors fill the pixels whose centre is inside (even-odd), points a small disc. Each pixel takes a
 * feature's colour once, outline before interior. So the paint of a pixel depends only on the features meeting it,
 * in the order painted: patches painted apart from the features meeting each, put side by side, give the same bytes
 * as one canvas.
 */
export class PreviewPainter {
  /** Premultiplied RGBA, row by row; transparent where nothing was painted. */
  readonly rgba: Uint8Array;
  private readonly stamp: Int32Array;
  private mark = 0;
  private r = 0; private g = 0; private b = 0;
  private fills: Coords[][] = [];
  private edges = new Float64Array(256);
  private xs = new Float64Array(64);

  /** `pointRadius`: preview pixels around a point's pixel that its disc covers (0: the pixel alone). */
  constructor(readonly area: PatchArea, readonly pointRadius = 2) {
    this.rgba = new Uint8Array(area.width * area.height * 4);
    this.stamp = new Int32Array(area.width * area.height);
  }

  /** Starts a feature painted in `colour`; end it with `end()`. */
  begin(colour: Rgb): void {
    this.mark++;
    this.r = colour.r; this.g = colour.g; this.b = colour.b;
    this.fills.length = 0;
  }

  /** A polygon: its outline now, its interior (even-odd over its rings) at `end()`, after every outline of the feature. */
  polygon(rings: readonly Coords[]): void {
    for (const ring of rings) this.line(ring, true);
    this.fills.push(rings as Coords[]);
  }

  /** A line (or a ring's outline when `closed`). */
  line(c: Coords, closed = false): void {
    const n = c.length >> 1;
    if (n === 0) return;
    if (n === 1) { this.segment(c[0], c[1], c[0], c[1]); return; }
    for (let i = 1; i < n; i++) this.segment(c[i * 2 - 2], c[i * 2 - 1], c[i * 2], c[i * 2 + 1]);
    if (closed && (c[0] !== c[n * 2 - 2] || c[1] !== c[n * 2 - 1])) this.segment(c[n * 2 - 2], c[n * 2 - 1], c[0], c[1]);
  }

  /** Points, each a disc of `pointRadius` around its pixel. */
  points(xy: Coords): void {
    const { area } = this;
    const rad = this.pointRadius, r2 = rad * rad + rad;
    for (let k = 0; k + 1 < xy.length; k += 2) {
      const ci = Math.floor(xy[k] / area.pixel) - area.x, cj = Math.floor(xy[k + 1] / area.pixel) - area.y;
      for (let dj = -rad; dj <= rad; dj++) for (let di = -rad; di <= rad; di++) if (di * di + dj * dj <= r2) this.put(ci + di, cj + dj, STROKE);
    }
  }

  /** Paints the interiors queued since `begin()`. */
  end(): void {
    for (const rings of this.fills) this.fill(rings);
    this.fills.length = 0;
  }

  private put(i: number, j: number, alpha: number): void {
    const { width, height } = this.area;
    if (i < 0 || j < 0 || i >= width || j >= height) return;
    const p = j * width + i;
    if (this.stamp[p] === this.mark) return;
    this.stamp[p] = this.mark;
    const o = p * 4, rgba = this.rgba, keep = 255 - alpha;
    rgba[o] = Math.round((this.r * alpha + rgba[o] * keep) / 255);
    rgba[o + 1] = Math.round((this.g * alpha + rgba[o + 1] * keep) / 255);
    rgba[o + 2] = Math.round((this.b * alpha + rgba[o + 2] * keep) / 255);
    rgba[o + 3] = Math.round((255 * alpha + rgba[o + 3] * keep) / 255);
  }

  /** Every pixel the segment passes through (a grid walk that ends exactly at the last point's pixel). */
  private segment(ax: number, ay: number, bx: number, by: number): void {
    const { x, y, width, height, pixel } = this.area;
    const u0 = ax / pixel - x, v0 = ay / pixel - y, u1 = bx / pixel - x, v1 = by / pixel - y;
    if (Math.max(u0, u1) < 0 || Math.max(v0, v1) < 0 || Math.min(u0, u1) >= width || Math.min(v0, v1) >= height) return;
    let i = Math.floor(u0), j = Math.floor(v0);
    const ei = Math.floor(u1), ej = Math.floor(v1);
    const du = u1 - u0, dv = v1 - v0;
    const si = du > 0 ? 1 : -1, sj = dv > 0 ? 1 : -1;
    let tu = du !== 0 ? ((si > 0 ? i + 1 : i) - u0) / du : Infinity;
    let tv = dv !== 0 ? ((sj > 0 ? j + 1 : j) - v0) / dv : Infinity;
    const stepU = du !== 0 ? si / du : Infinity, stepV = dv !== 0 ? sj / dv : Infinity;
    this.put(i, j, STROKE);
    for (let n = Math.abs(ei - i) + Math.abs(ej - j); n > 0; n--) {
      // Rounding may disagree with the end pixel: once a column or row is reached, only the other one moves.
      if (j === ej || (i !== ei && tu < tv)) { i += si; tu += stepU; } else { j += sj; tv += stepV; }
      this.put(i, j, STROKE);
    }
  }

  /** The pixels whose centre lies inside the rings (even-odd), by rows over the edges that span each row. */
  private fill(rings: readonly Coords[]): void {
    const { x, y, width, height, pixel } = this.area;
    // Edges as (top v, bottom v, u at top, du/dv), kept only when not horizontal.
    let ne = 0, vmin = Infinity, vmax = -Infinity;
    for (const ring of rings) {
      const n = ring.length >> 1;
      for (let k = 0; k < n; k++) {
        const k1 = k + 1 < n ? k + 1 : 0;
        const ua = ring[k * 2] / pixel - x, va = ring[k * 2 + 1] / pixel - y;
        const ub = ring[k1 * 2] / pixel - x, vb = ring[k1 * 2 + 1] / pixel - y;
        if (va === vb) continue;
        if (this.edges.length < (ne + 1) * 4) { const e = new Float64Array(this.edges.length * 2); e.set(this.edges); this.edges = e; }
        const top = va < vb;
        const e = ne * 4;
        this.edges[e] = top ? va : vb; this.edges[e + 1] = top ? vb : va;
        this.edges[e + 2] = top ? ua : ub; this.edges[e + 3] = (ub - ua) / (vb - va);
        vmin = Math.min(vmin, this.edges[e]); vmax = Math.max(vmax, this.edges[e + 1]);
        ne++;
      }
    }
    if (ne === 0) return;
    // Rows whose centre j + 0.5 lies in [top, bottom) of some edge.
    const j0 = Math.max(0, Math.ceil(vmin - 0.5)), j1 = Math.min(height - 1, Math.ceil(vmax - 0.5) - 1);
    if (j0 > j1) return;
    // Edges by top; a row's crossings come from the edges that started above it and end below it.
    const order = Array.from({ length: ne }, (_, k) => k).sort((a, b) => this.edges[a * 4] - this.edges[b * 4]);
    const active: number[] = [];
    let next = 0;
    for (let j = j0; j <= j1; j++) {
      const vc = j + 0.5;
      while (next < ne && this.edges[order[next] * 4] <= vc) active.push(order[next++]);
      let nx = 0;
      for (let a = 0; a < active.length;) {
        const e = active[a] * 4;
        if (this.edges[e + 1] <= vc) { active[a] = active[active.length - 1]; active.pop(); continue; }
        if (this.xs.length <= nx) { const b = new Float64Array(this.xs.length * 2); b.set(this.xs); this.xs = b; }
        this.xs[nx++] = this.edges[e + 2] + (vc - this.edges[e]) * this.edges[e + 3];
        a++;
      }
      const xs = this.xs.subarray(0, nx).sort();
      for (let k = 0; k + 1 < nx; k += 2) {
        const i0 = Math.max(0, Math.ceil(xs[k] - 0.5)), i1 = Math.min(width - 1, Math.ceil(xs[k + 1] - 0.5) - 1);
        for (let i = i0; i <= i1; i++) this.put(i, j, FILL);
      }
    }
  }
}

/** A feature in the tiler's form, in its class colour; meshes by the outlines of their faces. */
export function paintFeature(p: PreviewPainter, f: FlatFeature): void {
  const tags = tagsOf(f);
  const at = tags.keys.indexOf('featureClass');
  const cls = at >= 0 ? tags.values[at] : undefined;
  p.begin(classColour(typeof cls === 'string' ? cls : undefined));
  paintGeometry(p, f.geom);
  p.end();
}

function paintGeometry(p: PreviewPainter, g: TileGeometry): void {
  switch (g.k) {
    case 'points': p.points(g.xy); return;
    case 'lines': for (const l of g.parts) p.line(l); return;
    case 'polygons': for (const poly of g.polys) p.polygon(poly); return;
    case 'mesh': for (const face of g.geometry.coordinates ?? []) for (const r of face) p.line(r.flatMap((q) => [q[0], q[1]]), true); return;
    case 'collection': for (const m of g.members) paintGeometry(p, m); return;
  }
}

const UNCLASSIFIED: Rgb = { r: 0x36, g: 0xd6, b: 0xe7 };

/** A class keeps its colour across previews and builds: the hue comes from a hash of its name (FNV-1a). */
export function classColour(featureClass: string | undefined): Rgb {
  if (featureClass === undefined) return UNCLASSIFIED;
  let h = 0x811c9dc5;
  for (let i = 0; i < featureClass.length; i++) h = Math.imul(h ^ featureClass.charCodeAt(i), 0x01000193);
  const hue = (h >>> 0) % 360, s = 0.75, l = 0.58;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + hue / 30) % 12;
    return Math.round((l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))) * 255);
  };
  return { r: f(0), g: f(8), b: f(4) };
}

/** Smallest power of two of plane pixels per preview pixel that brings the longest side to `maxSide` or less. */
export function previewPixel(width: number, height: number, maxSide: number): number {
  return 2 ** Math.max(0, Math.ceil(Math.log2(Math.max(width, height) / maxSide)));
}

/** Copies a patch's pixels into a larger canvas of the same grid (both premultiplied RGBA), clipped to it. */
export function placePatch(canvas: Uint8Array, canvasWidth: number, canvasHeight: number, patch: Uint8Array, at: PatchArea): void {
  for (let j = 0; j < at.height; j++) {
    const cj = at.y + j;
    if (cj < 0 || cj >= canvasHeight) continue;
    const i0 = Math.max(0, -at.x), i1 = Math.min(at.width, canvasWidth - at.x);
    if (i0 >= i1) continue;
    canvas.set(patch.subarray((j * at.width + i0) * 4, (j * at.width + i1) * 4), ((cj * canvasWidth) + at.x + i0) * 4);
  }
}

/** Opaque RGB: the premultiplied canvas over a background of the same size (RGB), or over one colour. */
export function overBackground(canvas: Uint8Array, pixels: number, background: Uint8Array | Rgb): Uint8Array {
  const out = new Uint8Array(pixels * 3);
  const flat = !(background instanceof Uint8Array);
  for (let p = 0; p < pixels; p++) {
    const keep = 255 - canvas[p * 4 + 3];
    for (let c = 0; c < 3; c++) {
      const bg = flat ? (c === 0 ? background.r : c === 1 ? background.g : background.b) : background[p * 3 + c];
      out[p * 3 + c] = Math.min(255, canvas[p * 4 + c] + Math.round((bg * keep) / 255));
    }
  }
  return out;
}
