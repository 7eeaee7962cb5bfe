// `verify`: checks a built pyramid end to end — descriptor, overviews, every tile decodes and lies in the bounds,
// JSON and PBF tiles agree feature for feature, tiles stay within the budget, the run report matches the files.
import type { Feature, FeatureCollection } from '../model/feature.js';
import type { Geometry, Position } from '../model/geometry.js';
import { OPTIONS } from '../options.js';
import { InputError } from '../report/errors.js';
import { BUFFER, EXTENT, planeKey, tileSize, urlTemplate, type Plane } from '../tiling/space.js';
import { validateDescriptor, validateDocument } from '../validate/index.js';
import { decodePbf, ringArea2, type PbfFeature, type PbfLayer, type PbfValue } from './decode.js';
import { isOverview, listZoomTiles, openPyramid, overviewPath, zoomDirs, type Pyramid, type TileRef } from './layout.js';
import type { PyramidReader } from './reader.js';

export type ProblemCode =
  | 'descriptor-unusable' | 'descriptor-invalid' | 'descriptor-layout'
  | 'overview-missing' | 'overview-invalid'
  | 'report-missing' | 'report-mismatch'
  | 'zoom-outside-range' | 'stray-file'
  | 'tile-undecodable' | 'tile-invalid' | 'tile-empty' | 'tile-outside-grid' | 'tile-outside-bounds' | 'tile-over-budget'
  | 'feature-outside-tile' | 'unknown-layer' | 'pbf-layer' | 'pbf-winding'
  | 'format-mismatch' | 'feature-mismatch';

export interface Problem {
  code: ProblemCode;
  /** File the problem is in, relative to the pyramid root. */
  path: string;
  message: string;
}

export interface VerifyOptions {
  /** Largest allowed tile below the finest zoom, in bytes (default: the build's default, `--tile-budget`). */
  tileBudget?: number;
  /** Problems kept per code; the rest are only counted (default 50). */
  maxPerCode?: number;
}

export interface VerifyResult {
  ok: boolean;
  /** Up to `maxPerCode` problems of each code, in the order found. */
  problems: Problem[];
  /** Every problem counted by code, including those not kept. */
  counts: Partial<Record<ProblemCode, number>>;
  checked: { tiles: number; features: number };
}

const TOLERANCE = 1e-6;

class Problems {
  readonly list: Problem[] = [];
  readonly counts: Partial<Record<ProblemCode, number>> = {};
  constructor(private readonly maxPerCode: number) {}
  add(code: ProblemCode, path: string, message: string): void {
    const n = (this.counts[code] ?? 0) + 1;
    this.counts[code] = n;
    if (n <= this.maxPerCode) this.list.push({ code, path, message });
  }
}

function decodeJsonBytes(bytes: Uint8Array): unknown {
  return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
}

function isAbsoluteUrl(u: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(u);
}

// ───────────────────────────── descriptor and overviews ─────────────────────────────

function checkDescriptor(p: Pyramid, out: Problems): void {
  const d = p.descriptor;
  for (const is of validateDescriptor(d)) {
    if (is.severity === 'error') out.add('descriptor-invalid', 'tileset.json', `${is.path || '/'}: ${is.message} [${is.code}]`);
  }
  const layout = (m: string) => out.add('descriptor-layout', 'tileset.json', m);
  const template = d.tiles[0];
  if (d.format !== 'pbf' && d.format !== 'json') layout(`format must be "pbf" or "json", found ${JSON.stringify(d.format)}`);
  if (!isAbsoluteUrl(template)) {
    const want = urlTemplate(p.dims, p.format);
    if (template !== want) layout(`tiles must be ["${want}"] for this layout, found ${JSON.stringify(d.tiles)}`);
  } else if (!template.endsWith(urlTemplate(p.dims, p.format))) {
    layout(`tiles must end with ${urlTemplate(p.dims, p.format)}, found ${template}`);
  }
  const order = p.dims.map((x) => 'tcz'.indexOf(x));
  if (order.some((v, i) => i > 0 && v <= order[i - 1])) layout(`plane placeholders must come in the order t, c, z, found ${p.dims.join(', ')}`);
  const wantBounds = p.dims.length ? 10 : 4;
  if ((d.bounds ?? []).length !== wantBounds) layout(`bounds must have ${wantBounds} numbers with ${p.dims.length ? `plane dimensions ${p.dims.join(', ')}` : 'no plane dimensions'}, found ${(d.bounds ?? []).length}`);
  if (!Number.isInteger(d.minzoom) || !Number.isInteger(d.maxzoom)) layout('minzoom and maxzoom must be written explicitly');
  else if (p.minZoom > p.maxZoom) layout(`minzoom ${p.minZoom} is above maxzoom ${p.maxZoom}`);
  if (d.scale_factor !== 2) layout(`scale_factor must be 2, found ${JSON.stringify(d.scale_factor)}`);
}

function checkOverview(p: Pyramid, t: TileRef, bytes: Uint8Array, out: Problems): void {
  let doc: unknown;
  try {
    doc = decodeJsonBytes(bytes);
  } catch (err) {
    out.add('tile-undecodable', t.path, `overview is not JSON: ${(err as Error).message}`);
    return;
  }
  const issues = validateDescriptor(doc).filter((i) => i.severity === 'error');
  for (const is of issues) out.add('overview-invalid', t.path, `${is.path || '/'}: ${is.message} [${is.code}]`);
  if (doc === null || typeof doc !== 'object') return;
  const d = doc as { format?: unknown; tiles?: unknown };
  if (d.format !== 'json') out.add('overview-invalid', t.path, `the zoom-0 JSON file must be a descriptor with format "json", found format ${JSON.stringify(d.format)}`);
  const tiles = Array.isArray(d.tiles) ? d.tiles : [];
  const first = tiles[0];
  if (typeof first === 'string' && !isAbsoluteUrl(first)) {
    const want = '../'.repeat(t.path.split('/').length - 1) + urlTemplate(p.dims, 'json');
    if (first !== want) out.add('overview-invalid', t.path, `tiles must be ["${want}"] (relative to the overview), found ${JSON.stringify(tiles)}`);
  }
}

// ───────────────────────────── tiles ─────────────────────────────

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
 * independent check): an id that cannot be the PBF id (a string, a negative or unsafe integer) as `id`, then `featureClass`, `parentId`, `ref`, then properties; a name is used
 * once, members first; nulls are dropped (MVT has no null); arrays and objects become JSON text.
 */
function expectedTags(f: Feature): Record<string, PbfValue> {
  const out: Record<string, PbfValue> = {};
  const add = (k: string, v: unknown) => {
    if (Object.prototype.hasOwnProperty.call(out, k)) return;
    const t = tagValue(v);
    if (t !== undefined) out[k] = t;
  };
  if (f.id !== undefined && !(typeof f.id === 'number' && Number.isSafeInteger(f.id) && f.id >= 0)) add('id', f.id);
  add('featureClass', f.featureClass);
  add('parentId', f.parentId);
  add('ref', f.ref);
  if (f.properties && typeof f.properties === 'object') for (const [k, v] of Object.entries(f.properties)) add(k, v);
  return out;
}

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
function compareTile(json: FeatureCollection, pbf: PbfLayer[]): string | null {
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

interface TileContext {
  p: Pyramid;
  out: Problems;
  budget: number;
  layerIds: Set<string>;
  /** Tile side and buffer in pixels at the zoom being checked. */
  ts: number;
  bufferPx: number;
  checkedFeatures: number;
}

function within(v: number, lo: number, hi: number): boolean {
  return v >= lo - TOLERANCE && v <= hi + TOLERANCE;
}

function checkPlacement(ctx: TileContext, t: TileRef): boolean {
  const { p, out } = ctx;
  const n = 2 ** t.z;
  if (t.x >= n || t.y >= n) {
    out.add('tile-outside-grid', t.path, `zoom ${t.z} has ${n} × ${n} tiles; x ${t.x}, y ${t.y} is outside`);
    return false;
  }
  for (const d of p.dims) {
    if (t.plane[d] < p.planeLo[d] || t.plane[d] > p.planeHi[d]) {
      out.add('tile-outside-bounds', t.path, `plane ${d} = ${t.plane[d]} is outside the bounds ${p.planeLo[d]}–${p.planeHi[d]}`);
      return false;
    }
  }
  const b = ctx.bufferPx;
  const x0 = t.x * ctx.ts - b, y0 = t.y * ctx.ts - b, x1 = (t.x + 1) * ctx.ts + b, y1 = (t.y + 1) * ctx.ts + b;
  const [bx0, by0, bx1, by1] = p.box;
  if (x0 >= bx1 || x1 <= bx0 || y0 >= by1 || y1 <= by0) {
    out.add('tile-outside-bounds', t.path, `tile covers pixels [${t.x * ctx.ts}, ${t.y * ctx.ts}, ${(t.x + 1) * ctx.ts}, ${(t.y + 1) * ctx.ts}], outside the bounds [${bx0}, ${by0}, ${bx1}, ${by1}]`);
    return false;
  }
  return true;
}

function checkBudget(ctx: TileContext, t: TileRef, bytes: number): void {
  if (t.z < ctx.p.maxZoom && bytes > ctx.budget) {
    ctx.out.add('tile-over-budget', t.path, `${bytes} bytes, over the tile budget of ${ctx.budget} bytes (zoom ${t.z} is below the finest zoom ${ctx.p.maxZoom})`);
  }
}

/** Decodes and checks a JSON tile; returns the collection, or null when it cannot be compared. */
function checkJsonTile(ctx: TileContext, t: TileRef, bytes: Uint8Array): FeatureCollection | null {
  const { out } = ctx;
  let doc: unknown;
  try {
    doc = decodeJsonBytes(bytes);
  } catch (err) {
    out.add('tile-undecodable', t.path, `not JSON: ${(err as Error).message}`);
    return null;
  }
  const errors = validateDocument(doc).filter((i) => i.severity === 'error');
  if (errors.length) {
    const is = errors[0];
    out.add('tile-invalid', t.path, `${is.path || '/'}: ${is.message} [${is.code}]${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`);
  }
  if (doc === null || typeof doc !== 'object' || (doc as { type?: unknown }).type !== 'FeatureCollection' || !Array.isArray((doc as { features?: unknown }).features)) {
    if (!errors.length) out.add('tile-invalid', t.path, 'a JSON tile must be a FeatureCollection');
    return null;
  }
  const fc = doc as FeatureCollection;
  if (fc.features.length === 0) out.add('tile-empty', t.path, 'a tile without features is written (empty tiles are not written)');
  const lo = { x: t.x * ctx.ts - ctx.bufferPx, y: t.y * ctx.ts - ctx.bufferPx };
  const hi = { x: (t.x + 1) * ctx.ts + ctx.bufferPx, y: (t.y + 1) * ctx.ts + ctx.bufferPx };
  let outside = 0, firstOutside = '';
  fc.features.forEach((f, i) => {
    if (f === null || typeof f !== 'object') return;
    if (typeof f.layer !== 'string' || !ctx.layerIds.has(f.layer)) {
      out.add('unknown-layer', t.path, `feature ${i}: layer ${JSON.stringify(f.layer)} is not one of the descriptor's vector_layers`);
    }
    const ls: Leaf[] = [];
    try { leaves(f.geometry ?? null, ls); } catch { return; } // malformed geometry: already reported by validation
    for (const l of ls) {
      for (const part of l.parts) {
        for (const pos of part) {
          if (!Array.isArray(pos) || !within(pos[0], lo.x, hi.x) || !within(pos[1], lo.y, hi.y)) {
            if (outside++ === 0) firstOutside = `feature ${i} has [${Array.isArray(pos) ? pos.join(', ') : String(pos)}]`;
          }
        }
      }
    }
  });
  if (outside) out.add('feature-outside-tile', t.path, `${outside} position(s) outside the buffered tile [${lo.x}, ${lo.y}, ${hi.x}, ${hi.y}]: ${firstOutside}`);
  ctx.checkedFeatures += fc.features.length;
  return fc;
}

/** Decodes and checks a PBF tile; returns its layers, or null when it does not decode. */
function checkPbfTile(ctx: TileContext, t: TileRef, bytes: Uint8Array): PbfLayer[] | null {
  const { out } = ctx;
  let layers: PbfLayer[];
  try {
    layers = decodePbf(bytes, ctx.p.side, t.z, t.x, t.y);
  } catch (err) {
    out.add('tile-undecodable', t.path, `not a vector tile: ${(err as Error).message}`);
    return null;
  }
  if (layers.every((l) => l.features.length === 0)) out.add('tile-empty', t.path, 'a tile without features is written (empty tiles are not written)');
  const names = new Set<string>();
  for (const l of layers) {
    if (l.version !== 2) out.add('pbf-layer', t.path, `layer ${JSON.stringify(l.name)}: version ${l.version}, not 2`);
    if (l.extent !== EXTENT) out.add('pbf-layer', t.path, `layer ${JSON.stringify(l.name)}: extent ${l.extent}, not ${EXTENT}`);
    if (names.has(l.name)) out.add('pbf-layer', t.path, `layer ${JSON.stringify(l.name)} appears twice`);
    names.add(l.name);
    if (!ctx.layerIds.has(l.name)) out.add('unknown-layer', t.path, `layer ${JSON.stringify(l.name)} is not one of the descriptor's vector_layers`);
    let outside = 0, firstOutside = '';
    l.features.forEach((f, i) => {
      if (f.type < 1 || f.type > 3) out.add('tile-undecodable', t.path, `layer ${JSON.stringify(l.name)} feature ${i}: unknown geometry type ${f.type}`);
      if (f.type === 3 && f.local.length && ringArea2(f.local[0]) <= 0) {
        out.add('pbf-winding', t.path, `layer ${JSON.stringify(l.name)} feature ${i}: the first ring must be an exterior (positive area in tile coordinates)`);
      }
      for (const part of f.local) {
        for (const [x, y] of part) {
          if (x < -BUFFER || x > l.extent + BUFFER || y < -BUFFER || y > l.extent + BUFFER) {
            if (outside++ === 0) firstOutside = `feature ${i} has tile-local [${x}, ${y}]`;
          }
        }
      }
    });
    if (outside) out.add('feature-outside-tile', t.path, `layer ${JSON.stringify(l.name)}: ${outside} position(s) outside the buffered tile [${-BUFFER}, ${l.extent + BUFFER}]: ${firstOutside}`);
  }
  return layers;
}

// ───────────────────────────── report ─────────────────────────────

interface ZoomCount { json: { tiles: number; bytes: number }; pbf: { tiles: number; bytes: number } }

function checkReport(p: Pyramid, counted: Map<number, ZoomCount>, out: Problems): void {
  const bytes = p.reader.read('build-report.json');
  if (bytes === undefined) {
    out.add('report-missing', 'build-report.json', 'no build-report.json: the pyramid was not finished by a build');
    return;
  }
  let report: unknown;
  try {
    report = decodeJsonBytes(bytes);
  } catch (err) {
    out.add('report-mismatch', 'build-report.json', `not JSON: ${(err as Error).message}`);
    return;
  }
  const byZoom = (report as { tiles?: { byZoom?: Record<string, Partial<ZoomCount>> } } | null)?.tiles?.byZoom;
  if (!byZoom || typeof byZoom !== 'object') {
    out.add('report-mismatch', 'build-report.json', 'tiles.byZoom is missing');
    return;
  }
  const zooms = new Set([...Object.keys(byZoom).map(Number), ...counted.keys()]);
  for (const z of [...zooms].sort((a, b) => a - b)) {
    const r = byZoom[z] ?? {};
    const c = counted.get(z) ?? { json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 } };
    // The zoom-0 JSON tiles are replaced by the overview descriptors after they are counted: left out.
    for (const f of z === 0 ? (['pbf'] as const) : (['pbf', 'json'] as const)) {
      const want = r[f] ?? { tiles: 0, bytes: 0 };
      if (want.tiles !== c[f].tiles || want.bytes !== c[f].bytes) {
        out.add('report-mismatch', 'build-report.json', `zoom ${z} ${f}: the report says ${want.tiles} tiles, ${want.bytes} bytes; found ${c[f].tiles} tiles, ${c[f].bytes} bytes`);
      }
    }
  }
}

// ───────────────────────────── the walk ─────────────────────────────

function anyJson(p: Pyramid, z: number): boolean {
  for (const t of listZoomTiles(p, z)) if (t.ext === 'json') return true;
  return false;
}

/** Checks a whole pyramid; never throws for what it finds (a missing or unusable descriptor is a problem too). */
export function verifyPyramid(root: string | PyramidReader, opts: VerifyOptions = {}): VerifyResult {
  const out = new Problems(opts.maxPerCode ?? 50);
  const budget = opts.tileBudget ?? OPTIONS.tileBudget.default;
  let p: Pyramid;
  try {
    p = openPyramid(root);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    out.add('descriptor-unusable', 'tileset.json', err.message);
    return { ok: false, problems: out.list, counts: out.counts, checked: { tiles: 0, features: 0 } };
  }
  checkDescriptor(p, out);
  const layerIds = new Set((Array.isArray(p.descriptor.vector_layers) ? p.descriptor.vector_layers : []).map((l) => l.id));
  const pbfBuilt = p.format === 'pbf';
  const zooms = zoomDirs(p);
  const stray = (path: string) => out.add('stray-file', path, /\.tmp-/.test(path) ? 'a temporary file left by an interrupted write' : 'not a tile of this layout');
  const zoom0 = zooms.includes(0) ? [...listZoomTiles(p, 0, stray)] : [];
  // JSON tiles were built when an overview is there, or (the overview lost) when any zoom holds a JSON tile.
  const jsonBuilt = p.format === 'json' || zoom0.some(isOverview) || zooms.some((z) => z > 0 && anyJson(p, z));
  const both = pbfBuilt && jsonBuilt;
  const counted = new Map<number, ZoomCount>();
  const overviews = new Set<string>();
  const jsonPlanes = new Map<string, Plane>();
  let tilesChecked = 0;
  const ctx: TileContext = { p, out, budget, layerIds, ts: 0, bufferPx: 0, checkedFeatures: 0 };

  for (const z of zooms) {
    const tiles = z === 0 ? zoom0 : [...listZoomTiles(p, z, stray)];
    if (z < p.minZoom || z > p.maxZoom) {
      if (!(z === 0 && tiles.every(isOverview))) out.add('zoom-outside-range', String(z), `zoom directory ${z} is outside minzoom–maxzoom ${p.minZoom}–${p.maxZoom}`);
    }
    ctx.ts = tileSize(p.side, z);
    ctx.bufferPx = (BUFFER * ctx.ts) / EXTENT;
    const count: ZoomCount = { json: { tiles: 0, bytes: 0 }, pbf: { tiles: 0, bytes: 0 } };
    counted.set(z, count);
    // Twins (JSON and PBF of one tile) are next to each other in a directory listing only by accident: pair them by key.
    const pairs = new Map<string, { json?: TileRef; pbf?: TileRef }>();
    for (const t of tiles) {
      const key = t.path.replace(/\.(json|pbf)$/, '');
      const pair = pairs.get(key) ?? {};
      pair[t.ext] = t;
      pairs.set(key, pair);
    }
    for (const pair of pairs.values()) {
      const ref = (pair.pbf ?? pair.json) as TileRef;
      const placed = checkPlacement(ctx, ref);
      let json: FeatureCollection | null = null, pbf: PbfLayer[] | null = null;
      if (pair.json) {
        const bytes = p.reader.read(pair.json.path);
        if (bytes !== undefined) {
          tilesChecked++;
          if (isOverview(pair.json)) {
            overviews.add(pair.json.path);
            checkOverview(p, pair.json, bytes, out);
          } else {
            count.json.tiles++; count.json.bytes += bytes.length;
            jsonPlanes.set(planeKey(pair.json.plane), pair.json.plane);
            checkBudget(ctx, pair.json, bytes.length);
            json = checkJsonTile(ctx, pair.json, bytes);
          }
        }
      }
      if (pair.pbf) {
        const bytes = p.reader.read(pair.pbf.path);
        if (bytes !== undefined) {
          tilesChecked++;
          count.pbf.tiles++; count.pbf.bytes += bytes.length;
          checkBudget(ctx, pair.pbf, bytes.length);
          pbf = checkPbfTile(ctx, pair.pbf, bytes);
          if (pbf && !json) for (const l of pbf) ctx.checkedFeatures += l.features.length;
        }
      }
      if (!both || z === 0 || !placed) continue;
      if (pair.pbf && !pair.json) {
        out.add('format-mismatch', pair.pbf.path, 'PBF tile without its JSON tile (JSON tiles hold every feature PBF tiles hold)');
      } else if (pair.json && !pair.pbf) {
        const l: Leaf[] = [];
        for (const f of json?.features ?? []) leaves(f.geometry ?? null, l);
        if (l.length > 0) out.add('format-mismatch', pair.json.path, `JSON tile with ${l.length} PBF-encodable feature(s) but no PBF tile`);
      } else if (json && pbf) {
        const diff = compareTile(json, pbf);
        if (diff) out.add('feature-mismatch', (pair.json as TileRef).path, `JSON and PBF tiles differ: ${diff}`);
      }
    }
  }
  if (jsonPlanes.size) {
    for (const plane of jsonPlanes.values()) {
      const path = overviewPath(p, plane);
      if (!overviews.has(path)) out.add('overview-missing', path, 'the plane has JSON tiles but no overview descriptor at zoom 0');
    }
  }
  checkReport(p, counted, out);
  return { ok: out.list.length === 0, problems: out.list, counts: out.counts, checked: { tiles: tilesChecked, features: ctx.checkedFeatures } };
}

/** Problems as text, one per line, with the count of those not listed. */
export function formatProblems(r: VerifyResult): string {
  const lines = r.problems.map((x) => `${x.path}: ${x.message} [${x.code}]`);
  const total = Object.values(r.counts).reduce((a, b) => a + (b ?? 0), 0);
  if (total > r.problems.length) lines.push(`… and ${total - r.problems.length} more (${Object.entries(r.counts).map(([k, v]) => `${k}: ${v}`).join(', ')})`);
  return `${lines.join('\n')}\n`;
}
