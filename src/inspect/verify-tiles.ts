// verify: each tile on its own (decodes, is valid, lies in its grid, bounds and budget) and JSON against PBF, returning problems.
import { setOwn } from '../model/own.js';
import type { Feature, FeatureCollection } from '../model/feature.js';
import type { Geometry, Position } from '../model/geometry.js';
import { BUFFER, EXTENT, tileSize } from '../tiling/space.js';
import { radiusValue } from '../tiling/reach.js';
import { validateDocument } from '../validate/index.js';
import { issueText } from '../validate/issue.js';
import { decodePbf, ringArea2, type PbfFeature, type PbfLayer, type PbfValue } from './decode.js';
import type { Pyramid, TileRef } from './layout.js';
import { decodeJsonBytes, problem, type Problem } from './verify-problems.js';

const TOLERANCE = 1e-6;

/** What the checks of one zoom's tiles need. */
export interface ZoomFrame {
  p: Pyramid;
  budget: number;
  layerIds: ReadonlySet<string>;
  /** Tile side and buffer in pixels at the zoom. */
  ts: number;
  bufferPx: number;
}

export function zoomFrame(p: Pyramid, z: number, budget: number, layerIds: ReadonlySet<string>): ZoomFrame {
  const ts = tileSize(p.side, z);
  return { p, budget, layerIds, ts, bufferPx: (BUFFER * ts) / EXTENT };
}

// ───────────────────────────── JSON against PBF ─────────────────────────────

/** A leaf geometry as MVT holds it: type and parts (points one per part, line parts, rings in order). */
interface Leaf { type: 1 | 2 | 3; parts: Position[][] }

function leaves(g: Geometry | null, into: Leaf[]): void {
  if (g === null) return;
  switch (g.type) {
    case 'Point': into.push({ type: 1, parts: [[g.coordinates]] }); break;
    case 'MultiPoint': if (g.coordinates.length) into.push({ type: 1, parts: g.coordinates.map((c) => [c]) }); break;
    case 'LineString': if (g.coordinates.length) into.push({ type: 2, parts: [g.coordinates] }); break;
    case 'MultiLineString': if (g.coordinates.length) into.push({ type: 2, parts: g.coordinates }); break;
    case 'Polygon': if (g.coordinates.length) into.push({ type: 3, parts: g.coordinates }); break;
    case 'MultiPolygon': if (g.coordinates.length) into.push({ type: 3, parts: g.coordinates.flat() }); break;
    case 'GeometryCollection': for (const m of g.geometries) leaves(m, into); break;
    default: break; // meshes: JSON tiles only
  }
}

function tagValue(v: unknown): PbfValue | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  return JSON.stringify(v);
}

/**
 * The tags a JSON tile feature should have in PBF, from the spec decisions (not from the encoder, so that this is an
 * independent check): an id that cannot be the PBF id (a string, a negative or unsafe integer) as `id`, then
 * `featureClass`, `parentId`, `ref`, then properties; a name is used once, members first; nulls are dropped (MVT has
 * no null); a nested object's members are `parent.child` tags at any depth; arrays become JSON text.
 */
function expectedTags(f: Feature): Record<string, PbfValue> {
  const out: Record<string, PbfValue> = {};
  const add = (k: string, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [ik, iv] of Object.entries(v)) add(`${k}.${ik}`, iv);
      return;
    }
    if (Object.prototype.hasOwnProperty.call(out, k)) return;
    const t = tagValue(v);
    if (t !== undefined) setOwn(out, k, t);
  };
  if (f.id !== undefined && !(typeof f.id === 'number' && Number.isSafeInteger(f.id) && f.id >= 0)) add('id', f.id);
  add('featureClass', f.featureClass);
  add('parentId', f.parentId);
  add('ref', f.ref);
  if (f.properties && typeof f.properties === 'object') for (const [k, v] of Object.entries(f.properties)) add(k, v);
  return out;
}

/** A JSON tile's features as the PBF tags they make, by layer in order of first feature (`FieldCheck` of a pyramid without PBF tiles). */
export function jsonTagLayers(fc: FeatureCollection): TagLayer[] {
  const layers = new Map<string, Array<{ tags: Record<string, PbfValue> }>>();
  for (const f of fc.features) {
    if (typeof f?.layer !== 'string') continue; // the tile's own check names it
    let l = layers.get(f.layer);
    if (l === undefined) layers.set(f.layer, (l = []));
    l.push({ tags: expectedTags(f) });
  }
  return [...layers].map(([name, features]) => ({ name, features }));
}

/** Features of a layer by their tags alone: a PBF tile's, or those a JSON tile's would make. */
export interface TagLayer { name: string; features: ReadonlyArray<{ tags: Record<string, PbfValue> }> }

function tagsDiffer(want: Record<string, PbfValue>, got: Record<string, PbfValue>): string | null {
  const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
  for (const k of keys) {
    const a = Object.prototype.hasOwnProperty.call(want, k) ? want[k] : undefined;
    const b = Object.prototype.hasOwnProperty.call(got, k) ? got[k] : undefined;
    if (a !== b) return `tag ${JSON.stringify(k)}: JSON gives ${JSON.stringify(a)}, PBF has ${JSON.stringify(b)}`;
  }
  return null;
}

function partsDiffer(want: Position[][], got: Position[][]): string | null {
  if (want.length !== got.length) return `${want.length} parts/rings in JSON, ${got.length} in PBF`;
  for (let i = 0; i < want.length; i++) {
    const a = want[i], b = got[i];
    if (a.length !== b.length) return `part ${i}: ${a.length} positions in JSON, ${b.length} in PBF`;
    for (let j = 0; j < a.length; j++) {
      if (Math.abs(a[j][0] - b[j][0]) > TOLERANCE || Math.abs(a[j][1] - b[j][1]) > TOLERANCE) {
        return `part ${i} position ${j}: JSON [${a[j][0]}, ${a[j][1]}], PBF [${b[j][0]}, ${b[j][1]}]`;
      }
    }
  }
  return null;
}

/** First difference between a JSON tile and its PBF twin, or null when they hold the same features in the same order. */
export function compareTile(json: FeatureCollection, pbf: PbfLayer[]): string | null {
  const want: { index: number; f: Feature; leaf: Leaf }[] = [];
  json.features.forEach((f, index) => {
    const ls: Leaf[] = [];
    leaves(f.geometry, ls);
    for (const leaf of ls) want.push({ index, f, leaf });
  });
  const got: PbfFeature[] = pbf.flatMap((l) => l.features);
  const n = Math.min(want.length, got.length);
  for (let i = 0; i < n; i++) {
    const { index, f, leaf } = want[i];
    const g = got[i];
    const where = `PBF feature ${i} (JSON feature ${index}${f.id !== undefined ? `, id ${JSON.stringify(f.id)}` : ''})`;
    if (f.layer !== g.layer) return `${where}: layer ${JSON.stringify(f.layer)} in JSON, ${JSON.stringify(g.layer)} in PBF`;
    if (typeof f.id === 'number' && Number.isSafeInteger(f.id) && f.id >= 0 && g.id !== f.id) return `${where}: id ${f.id} in JSON, ${g.id} in PBF`;
    const td = tagsDiffer(expectedTags(f), g.tags);
    if (td) return `${where}: ${td}`;
    if (leaf.type !== g.type) return `${where}: geometry type ${['unknown', 'point', 'line', 'polygon'][leaf.type]} in JSON, ${['unknown', 'point', 'line', 'polygon'][g.type]} in PBF`;
    const gd = partsDiffer(leaf.parts, g.parts);
    if (gd) return `${where}: geometry ${gd}`;
  }
  if (want.length !== got.length) {
    return `JSON holds ${want.length} PBF-encodable feature(s) (${json.features.length} features), PBF holds ${got.length}`;
  }
  return null;
}

/** How many PBF features the JSON tile's features make (meshes make none). */
export function pbfEncodable(fc: FeatureCollection | null): number {
  const l: Leaf[] = [];
  for (const f of fc?.features ?? []) leaves(f.geometry ?? null, l);
  return l.length;
}

/** Visits each position a tile's features hold, in global pixels: the JSON tile's (meshes aside), else the PBF tile's. */
export function eachPosition(json: FeatureCollection | null, pbf: readonly PbfLayer[] | null, visit: (x: number, y: number) => void): void {
  if (json) {
    for (const f of json.features) {
      const ls: Leaf[] = [];
      try { leaves(f?.geometry ?? null, ls); } catch { continue; } // malformed: the tile's own check names it
      for (const l of ls) for (const part of l.parts) for (const pos of part) if (Array.isArray(pos)) visit(pos[0], pos[1]);
    }
  } else if (pbf) {
    for (const l of pbf) for (const f of l.features) for (const part of f.parts) for (const pos of part) visit(pos[0], pos[1]);
  }
}

// ───────────────────────────── one tile ─────────────────────────────

function within(v: number, lo: number, hi: number): boolean {
  return v >= lo - TOLERANCE && v <= hi + TOLERANCE;
}

/** What the message adds of a point drawn as its circle (radius `r` in tile units of `px` pixels): it may lie that far out, no farther. */
function farther(r: number, px: number): string {
  return r > 0 ? `, farther from the tile than its radius (${r * px} px)` : '';
}

/** Whether (x, y) lies within `r` of the square [lo, hi]² (a point's circle reaching into a tile, `pointsReaching`). */
function reaches(x: number, y: number, lo: number, hi: number, r: number): boolean {
  const gx = Math.max(0, lo - x, x - hi), gy = Math.max(0, lo - y, y - hi);
  return r > 0 && gx * gx + gy * gy <= (r + TOLERANCE) ** 2;
}

/** Where a tile lies: inside its zoom's grid, its plane and the bounds; one problem at most (none: it is placed). */
export function checkPlacement(ctx: ZoomFrame, t: TileRef): Problem[] {
  const { p } = ctx;
  const n = 2 ** t.z;
  if (t.x >= n || t.y >= n) return [problem('tile-outside-grid', t.path, `zoom ${t.z} has ${n} × ${n} tiles; x ${t.x}, y ${t.y} is outside`)];
  for (const d of p.dims) {
    if (t.plane[d] < p.planeLo[d] || t.plane[d] > p.planeHi[d]) {
      return [problem('tile-outside-bounds', t.path, `plane ${d} = ${t.plane[d]} is outside the bounds ${p.planeLo[d]}–${p.planeHi[d]}`)];
    }
  }
  const b = ctx.bufferPx;
  const x0 = t.x * ctx.ts - b, y0 = t.y * ctx.ts - b, x1 = (t.x + 1) * ctx.ts + b, y1 = (t.y + 1) * ctx.ts + b;
  const [bx0, by0, bx1, by1] = p.box;
  if (x0 >= bx1 || x1 <= bx0 || y0 >= by1 || y1 <= by0) {
    return [problem('tile-outside-bounds', t.path, `tile covers pixels [${t.x * ctx.ts}, ${t.y * ctx.ts}, ${(t.x + 1) * ctx.ts}, ${(t.y + 1) * ctx.ts}], outside the bounds [${bx0}, ${by0}, ${bx1}, ${by1}]`)];
  }
  return [];
}

/** A tile below the finest zoom within the byte budget. */
export function checkBudget(ctx: ZoomFrame, t: TileRef, bytes: number): Problem[] {
  if (t.z < ctx.p.maxZoom && bytes > ctx.budget) {
    return [problem('tile-over-budget', t.path, `${bytes} bytes, over the tile budget of ${ctx.budget} bytes (zoom ${t.z} is below the finest zoom ${ctx.p.maxZoom})`)];
  }
  return [];
}

/** Decodes and checks a JSON tile: the collection (null when it cannot be compared) and the problems. */
export function checkJsonTile(ctx: ZoomFrame, t: TileRef, bytes: Uint8Array): { fc: FeatureCollection | null; problems: Problem[] } {
  const out: Problem[] = [];
  let doc: unknown;
  try {
    doc = decodeJsonBytes(bytes);
  } catch (err) {
    return { fc: null, problems: [problem('tile-undecodable', t.path, `not JSON: ${(err as Error).message}`)] };
  }
  const errors = validateDocument(doc).filter((i) => i.severity === 'error');
  if (errors.length) {
    const is = errors[0];
    out.push(problem('tile-invalid', t.path, `${issueText(is)}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`));
    // Not a tile of data-model features: nothing in it can be compared with its PBF twin (a feature may lack coordinates).
    return { fc: null, problems: out };
  }
  if (doc === null || typeof doc !== 'object' || (doc as { type?: unknown }).type !== 'FeatureCollection' || !Array.isArray((doc as { features?: unknown }).features)) {
    return { fc: null, problems: [problem('tile-invalid', t.path, 'a JSON tile must be a FeatureCollection')] };
  }
  const fc = doc as FeatureCollection;
  if (fc.features.length === 0) out.push(problem('tile-empty', t.path, 'a tile without features is written (empty tiles are not written)'));
  const lo = { x: t.x * ctx.ts - ctx.bufferPx, y: t.y * ctx.ts - ctx.bufferPx };
  const hi = { x: (t.x + 1) * ctx.ts + ctx.bufferPx, y: (t.y + 1) * ctx.ts + ctx.bufferPx };
  let outside = 0, firstOutside = '';
  // Each unknown layer once per tile, with how many features name it (a renamed layer named every feature).
  const unknown = new Map<string, { first: number; n: number }>();
  fc.features.forEach((f, i) => {
    if (f === null || typeof f !== 'object') return;
    if (typeof f.layer !== 'string' || !ctx.layerIds.has(f.layer)) {
      const key = JSON.stringify(f.layer);
      const u = unknown.get(key);
      if (u) u.n++;
      else unknown.set(key, { first: i, n: 1 });
    }
    const ls: Leaf[] = [];
    try { leaves(f.geometry ?? null, ls); } catch { return; } // malformed geometry: already reported by validation
    // A point drawn as its circle is in every tile the circle reaches: its centre up to the radius from the tile.
    const r = radiusValue(f.properties?.radius);
    for (const l of ls) {
      const d = l.type === 1 ? r : 0;
      for (const part of l.parts) {
        for (const pos of part) {
          if (!Array.isArray(pos) || !((within(pos[0], lo.x, hi.x) && within(pos[1], lo.y, hi.y)) || reaches(pos[0] - t.x * ctx.ts, pos[1] - t.y * ctx.ts, 0, ctx.ts, d))) {
            if (outside++ === 0) firstOutside = `feature ${i} has [${Array.isArray(pos) ? pos.join(', ') : String(pos)}]${farther(d, 1)}`;
          }
        }
      }
    }
  });
  for (const [layer, u] of unknown) {
    out.push(problem('unknown-layer', t.path, `${u.n === 1 ? `feature ${u.first}` : `${u.n} features (the first ${u.first})`}: layer ${layer} is not one of the descriptor's vector_layers`));
  }
  if (outside) out.push(problem('feature-outside-tile', t.path, `${outside} position(s) outside the buffered tile [${lo.x}, ${lo.y}, ${hi.x}, ${hi.y}]: ${firstOutside}`));
  return { fc, problems: out };
}

/** Decodes and checks a PBF tile: its layers (null when it does not decode) and the problems. */
export function checkPbfTile(ctx: ZoomFrame, t: TileRef, bytes: Uint8Array): { layers: PbfLayer[] | null; problems: Problem[] } {
  const out: Problem[] = [];
  let layers: PbfLayer[];
  try {
    layers = decodePbf(bytes, ctx.p.side, t.z, t.x, t.y);
  } catch (err) {
    return { layers: null, problems: [problem('tile-undecodable', t.path, `not a vector tile: ${(err as Error).message}`)] };
  }
  if (layers.every((l) => l.features.length === 0)) out.push(problem('tile-empty', t.path, 'a tile without features is written (empty tiles are not written)'));
  const names = new Set<string>();
  for (const l of layers) {
    if (l.version !== 2) out.push(problem('pbf-layer', t.path, `layer ${JSON.stringify(l.name)}: version ${l.version}, not 2`));
    if (l.extent !== EXTENT) out.push(problem('pbf-layer', t.path, `layer ${JSON.stringify(l.name)}: extent ${l.extent}, not ${EXTENT}`));
    if (names.has(l.name)) out.push(problem('pbf-layer', t.path, `layer ${JSON.stringify(l.name)} appears twice`));
    names.add(l.name);
    if (!ctx.layerIds.has(l.name)) out.push(problem('unknown-layer', t.path, `layer ${JSON.stringify(l.name)} is not one of the descriptor's vector_layers`));
    let outside = 0, firstOutside = '';
    l.features.forEach((f, i) => {
      // A point's circle (its `radius`, in pixels) reaches tiles up to that far from its centre.
      const d = f.type === 1 ? (radiusValue(f.tags.radius) * l.extent) / ctx.ts : 0;
      if (f.type < 1 || f.type > 3) out.push(problem('tile-undecodable', t.path, `layer ${JSON.stringify(l.name)} feature ${i}: unknown geometry type ${f.type}`));
      if (f.type === 3 && f.local.length && ringArea2(f.local[0]) <= 0) {
        out.push(problem('pbf-winding', t.path, `layer ${JSON.stringify(l.name)} feature ${i}: the first ring must be an exterior (positive area in tile coordinates)`));
      }
      for (const part of f.local) {
        for (const [x, y] of part) {
          if ((x < -BUFFER || x > l.extent + BUFFER || y < -BUFFER || y > l.extent + BUFFER) && !reaches(x, y, 0, l.extent, d)) {
            if (outside++ === 0) firstOutside = `feature ${i} has tile-local [${x}, ${y}]${farther(d, ctx.ts / l.extent)}`;
          }
        }
      }
    });
    if (outside) out.push(problem('feature-outside-tile', t.path, `layer ${JSON.stringify(l.name)}: ${outside} position(s) outside the buffered tile [${-BUFFER}, ${l.extent + BUFFER}]: ${firstOutside}`));
  }
  return { layers, problems: out };
}
