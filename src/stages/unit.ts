// Tile one work unit: read its records, tile and encode its zooms, and reduce its own features for the level above.
import { circlePad, tilePad, tilePath, tileSize, type Dim } from '../tiling/space.js';
import { lodOf, onlyMeshes, withGeometry, type FlatFeature, type TileGeometry } from '../tiling/flat.js';
import { Simplifier } from '../tiling/simplify.js';
import { tileFeatures, TilerScratch } from './tile/tiler.js';
import { reduceForZoom } from './tile/reduce.js';
import { drawnMany, piecesDrawn, wholePieces, type PieceKeys } from './tile/pieces.js';
import { zoomContext, type TileSpec, type ZoomContext } from './tile/spec.js';
import type { UnitSource } from './partition.js';
import { homeCell, RecordRouter } from './router.js';
import { unitKeyPrefix } from './unit-key.js';
import { RecordEncoder, RecordReader, setHome } from './record.js';
import { StringCache } from './record-strings.js';
import { grown } from '../bytes.js';
import type { Rect } from '../tiling/clip.js';
import { withinReach } from '../tiling/reach.js';
import type { UnitPlan } from './plan.js';
import { drawn } from './thinning.js';
import { PreviewPainter, paintFeature, type PatchArea } from '../raster/paint.js';
import { readUnitFile, recordSlices } from './unit-files.js';
import { FieldFilter } from './field-filter.js';

export interface TileTask {
  kind: 'tile';
  unit: UnitPlan;
  /** The unit's records: files to read, or bytes handed over in memory; in source order. */
  sources: UnitSource[];
  spec: TileSpec;
  dims: Dim[];
  /** Cell zoom of the next level, when there is one: the unit's own features are reduced for the zoom below its cells. */
  next?: { zoom: number };
  /**
   * The unit's cell is smaller than the stored cells it reads (dense data split into finer units), or it reads the
   * stored cells around it too (its tiles' buffer is wider than the records reach: `beyondStored`): it keeps only the
   * records whose box meets its cell and buffer, reading files a slice at a time, and counts as its own the features
   * whose box centre lies in its cell (the rule records were routed by).
   */
  part?: boolean;
  /** With --preview, at level 0: the unit's patch of its plane's preview, painted from every feature it reads. */
  preview?: { area: PatchArea; pointRadius: number };
}

/**
 * A tile of a unit: its bytes, until whoever writes it (a worker writing files itself) drops them, gzipped when the
 * batch asked (`gzipped`: TileBatch.gzip); `size` is of the tile as encoded, and stays.
 */
export interface WrittenTile { path: string; z: number; size: number; features: number; bytes?: Uint8Array; gzipped?: boolean }

export interface UnitResult {
  key: string;
  tiles: WrittenTile[];
  /** Next-level key → records. */
  next: [string, Uint8Array][];
  features: number;
  pointified: number[][];
  /** Per zoom, per layer: the unit's own features (home) that the zoom draws; of a feature of many pieces, its pieces drawn. */
  kept: number[][];
  /** Per layer: the unit's own features, drawn or not (with --lod none the finest zoom may draw fewer); of many pieces, their pieces. */
  offered: number[];
  /** Per zoom: the lowest threshold at which every tile of the unit fits the budget, where one does not (else 0). */
  needs: number[];
  /** The finest zoom where a tile's spared features alone take too much of the budget (the zoom must stop sparing), else -1. */
  unspare: number;
  /** The unit's own features of meshes alone, in JSON tiles but in no PBF tile (a build of both formats). */
  notInPbf: number;
  /** The preview patch: where it lies on the plane's preview grid, and its premultiplied RGBA. */
  preview?: { area: PatchArea; rgba: Uint8Array };
}


/** The unit's cell and the buffer of its tiles, one tile unit wider for rounding, in pixels: all its tiles can hold. */
function reach(task: TileTask): Rect {
  const { cell } = task.unit;
  const ts = tileSize(task.spec.side, cell.z), pad = tilePad(ts);
  return { minX: cell.x * ts - pad, minY: cell.y * ts - pad, maxX: (cell.x + 1) * ts + pad, maxY: (cell.y + 1) * ts + pad };
}

/**
 * The records of a part unit: those meeting its cell and buffer, each copied into a buffer of its own (one growing
 * buffer would leave every size it outgrew behind until collected), flagged home when its centre is in the cell.
 */
function partRecords(task: TileTask): Uint8Array[] {
  const { cell } = task.unit;
  const ts = tileSize(task.spec.side, cell.z);
  const pad = tilePad(ts), core = { minX: cell.x * ts, minY: cell.y * ts, maxX: (cell.x + 1) * ts, maxY: (cell.y + 1) * ts };
  const last = 2 ** cell.z - 1;
  const kept: Uint8Array[] = [];
  const box = new Float64Array(4);
  for (const src of task.sources) {
    for (const bytes of 'chunks' in src ? src.chunks : recordSlices(src.path)) {
      const r = new RecordReader(bytes);
      while (r.next()) {
        // A point's circle may reach the cell where its buffer does not: as far as the router stores it, no farther.
        if (!withinReach(r.box(box), core, pad, circlePad(ts, r.reach))) continue;
        const record = r.record.slice();
        // The router's home rule at this unit's size; a partial record's feature is at home where the whole is stored.
        setHome(record, 0, !r.partial && homeCell(box[0], box[2], ts, last) === cell.x && homeCell(box[1], box[3], ts, last) === cell.y);
        kept.push(record);
      }
    }
  }
  return kept;
}

/**
 * Reads the unit's records, each feature once (a feature near a cell border is stored in every cell it touches), in
 * sequence order, with `home[i]` 1 where features[i] is the unit's own. Flags in bytes, not sets of seqs: a unit's
 * sets were large objects, allocated and freed per unit (12,000 page faults in one 100k-cell build).
 */
function loadFeatures(task: TileTask): { features: FlatFeature[]; home: Uint8Array } {
  const layerIndex = new Map(task.spec.layers.map((l, i) => [l.id, i]));
  const indexOf = (id: string) => layerIndex.get(id) ?? 0;
  let features: FlatFeature[] = [];
  let home = new Uint8Array(1024);
  let sorted = true;
  /** Per feature read from a partial record, its pieces' indexes in the whole (a whole one: undefined). */
  let pieces: (number[] | undefined)[] = [];
  const strings = new StringCache();
  const sources = task.part ? [{ chunks: partRecords(task) }] : task.sources;
  // A unit of several stored cells (light cells gathered: see COARSER_BYTES) meets the copies of the features along
  // the borders between them: each is decoded once, its copies only lend their home flag (and, to a feature read in
  // part, their pieces: joinCopy).
  const first = sources.length > 1 ? new Map<number, number>() : undefined;
  const near = reach(task);
  for (const src of sources) {
    for (const bytes of 'chunks' in src ? src.chunks : readUnitFile(src.path)) {
      const r = new RecordReader(bytes, strings);
      while (r.next()) {
        if (first !== undefined) {
          const seen = first.get(r.seq);
          if (seen !== undefined) {
            if (r.home) home[seen] = 1;
            if (pieces[seen] !== undefined) joinCopy(features, pieces, seen, r.feature(indexOf, near), r.partial ? r.pieces : undefined);
            continue;
          }
          first.set(r.seq, features.length);
        }
        const n = features.length;
        home = grown(home, n, 1);
        home[n] = r.home ? 1 : 0;
        if (n > 0 && features[n - 1].seq >= r.seq) sorted = false;
        features.push(r.feature(indexOf, near));
        if (r.partial) pieces[n] = r.pieces;
      }
    }
  }
  if (sorted) return { features, home };
  // Records may arrive in any order (a coarser level's come from units finishing in any order), and twice (from
  // stored cells a feature touches): sequence order is the one order, the first copy of a feature the one kept (a
  // partial one joined with the others).
  const order = Uint32Array.from(features.keys()).sort((a, b) => features[a].seq - features[b].seq || a - b);
  const all = features, allHome = home, allPieces = pieces;
  features = [];
  home = new Uint8Array(all.length);
  pieces = [];
  for (const i of order) {
    const n = features.length;
    if (n > 0 && features[n - 1].seq === all[i].seq) {
      home[n - 1] |= allHome[i];
      if (pieces[n - 1] !== undefined) joinCopy(features, pieces, n - 1, all[i], allPieces[i]);
      continue;
    }
    home[n] = allHome[i];
    pieces[n] = allPieces[i];
    features.push(all[i]);
  }
  return { features, home };
}

/**
 * Joins another copy of feature `at`, which was read from a partial record (`pieces[at]`, see RecordRouter.placeNear):
 * a whole copy takes its place; a partial one adds its pieces (points, lines or polygons), all in the whole's order.
 */
function joinCopy(features: FlatFeature[], pieces: (number[] | undefined)[], at: number, copy: FlatFeature, more: number[] | undefined): void {
  const have = pieces[at], a = features[at].geom, b = copy.geom;
  if (more === undefined) { features[at] = copy; pieces[at] = undefined; return; }
  if (have === undefined || a.k !== b.k) return;
  // Which copy each piece of the join comes from, and its place there.
  const from: TileGeometry[] = [], place: number[] = [], joined: number[] = [];
  let i = 0, j = 0;
  while (i < have.length || j < more.length) {
    const next = j >= more.length || (i < have.length && have[i] <= more[j]) ? have[i] : more[j];
    if (i < have.length && have[i] === next) { from.push(a); place.push(i); } else { from.push(b); place.push(j); }
    joined.push(next);
    if (i < have.length && have[i] === next) i++;
    if (j < more.length && more[j] === next) j++;
  }
  let geom: TileGeometry;
  if (a.k === 'points') {
    const xy: number[] = [];
    from.forEach((g, k) => { const c = (g as typeof a).xy; xy.push(c[2 * place[k]], c[2 * place[k] + 1]); });
    geom = { k: 'points', type: a.type, xy };
  } else if (a.k === 'lines') geom = { k: 'lines', type: a.type, parts: from.map((g, k) => (g as typeof a).parts[place[k]]) };
  else if (a.k === 'polygons') geom = { k: 'polygons', type: a.type, polys: from.map((g, k) => (g as typeof a).polys[place[k]]) };
  else return;
  features[at] = withGeometry(features[at], geom, features[at].lod, features[at].pieces);
  pieces[at] = joined;
}

/** The features' original boxes (`lod`, else from the geometry), each worked out once, and only when asked for. */
type Boxes = (i: number) => ArrayLike<number> | null;

function boxesOf(features: readonly FlatFeature[]): Boxes {
  const known: (ArrayLike<number> | null | undefined)[] = new Array(features.length);
  return (i) => (known[i] !== undefined ? known[i] : (known[i] = features[i].lod ?? lodOf(features[i].geom)));
}

/**
 * How much of feature `i` the tiler draws at zoom `z`, as far as thinning goes (thinning.ts `drawn`, as the tiler
 * applies it): 1 or 0; of a feature of many pieces, its pieces drawn (tile/pieces.ts), 0 only where none is.
 */
function drawnAt(f: FlatFeature, i: number, boxes: Boxes, spec: TileSpec, zc: ZoomContext, keys: PieceKeys): number {
  const t = spec.thresholds?.[zc.z]?.[f.layer] ?? 0;
  if (!f.many) return drawn(t, f.seq, zc.spares, f.geom, () => boxes(i), zc.spareWidth) ? 1 : 0;
  const g = drawnMany(t, f.seq, zc.spares, f.geom, () => boxes(i), zc.subPixel, zc.spareWidth, zc.sqTol, keys);
  return piecesDrawn(g, t, f.seq, zc.spares, f.geom, () => boxes(i), zc.subPixel, zc.spareWidth, zc.sqTol, keys, wholePieces(f));
}

export function tileUnit(task: TileTask, router = new RecordRouter(), scratch = new TilerScratch()): UnitResult {
  const { unit, spec } = task;
  const { features, home } = loadFeatures(task);
  // With --lod none a feature of which nothing is left on a zoom's grid is not drawn there: the tiler says where.
  const placed = spec.lod === 'none' ? new Uint32Array(features.length) : undefined;
  const collapsed = spec.lod === 'none' ? new Uint32Array(features.length) : undefined;
  const tiles = tileFeatures(features, spec, scratch, placed, collapsed);
  const layers = spec.layers.length;
  const res: UnitResult = {
    key: unit.key, tiles: [], next: [], features: features.length,
    pointified: [], kept: [], offered: new Array<number>(layers).fill(0), needs: [], unspare: -1, notInPbf: 0,
  };
  for (let z = spec.minZoom; z <= spec.maxZoom; z++) {
    res.pointified[z] = new Array<number>(layers).fill(0);
    res.kept[z] = new Array<number>(layers).fill(0);
    res.needs[z] = 0;
  }
  const boxes = boxesOf(features);
  const zooms: ZoomContext[] = [];
  for (let z = spec.minZoom; z <= spec.maxZoom; z++) zooms.push(zoomContext(spec, z));
  features.forEach((f, i) => {
    if (home[i] === 0) return;
    // The finest zoom draws it, or nothing of it was left on its grid (not drawn: counted as left out there); one
    // whose geometry lies past the world's edge, though its box reaches a tile, is in no count.
    // A feature of many pieces counts its pieces, drawn and in all: a zoom may draw a share of them (tile/pieces.ts).
    if (placed === undefined || collapsed === undefined || ((placed[i] | collapsed[i]) & (1 << spec.maxZoom)) !== 0) res.offered[f.layer] += f.many ? wholePieces(f) : 1;
    // Counted once, by the feature's home unit: its tiles' own counts would count it once per tile. A home feature's
    // box meets the unit's cell, so the tiler looked at it at every zoom.
    if (spec.formats.json && spec.formats.pbf && onlyMeshes(f.geom)) res.notInPbf++;
    for (const zc of zooms) {
      if (placed !== undefined && (placed[i] & (1 << zc.z)) === 0) continue;
      res.kept[zc.z][f.layer] += drawnAt(f, i, boxes, spec, zc, scratch.pieces);
    }
  });
  for (const t of tiles) {
    for (let l = 0; l < layers; l++) res.pointified[t.z][l] += t.stats.pointified[l] ?? 0;
    if (t.need !== undefined) res.needs[t.z] = Math.max(res.needs[t.z], t.need);
    if (t.unspare) res.unspare = Math.max(res.unspare, t.z);
    if (t.json) res.tiles.push({ path: tilePath(t.z, t.x, t.y, unit.plane, task.dims, 'json'), z: t.z, size: t.json.byteLength, bytes: t.json, features: t.stats.features });
    if (t.pbf) res.tiles.push({ path: tilePath(t.z, t.x, t.y, unit.plane, task.dims, 'pbf'), z: t.z, size: t.pbf.byteLength, bytes: t.pbf, features: t.stats.features });
  }
  if (task.next) res.next = reduceForNext(features, home, boxes, task, task.next.zoom, router, scratch.pieces);
  if (task.preview) {
    // Every feature the unit reads, in input order: the patch is what one canvas of the whole plane shows there.
    const painter = new PreviewPainter(task.preview.area, task.preview.pointRadius);
    for (const f of features) paintFeature(painter, f);
    res.preview = { area: task.preview.area, rgba: painter.rgba };
  }
  return res;
}

/**
 * The unit's own features (those whose box centre lies in its cell), reduced for the zoom just above its cells and
 * routed into the next level's cells. Those that zoom's threshold thins go no further (thresholds only ever rise): a
 * dense unit's coarser units do not hold what they would drop (a hundred 1 MB ids, of which a tile below the finest
 * zoom keeps none). Whether this unit placed a feature does not count: a MultiPoint, an L-shaped line or a frame
 * may lie wholly in other cells than its centre's, which place it but do not forward it.
 */
function reduceForNext(features: FlatFeature[], home: Uint8Array, boxes: Boxes, task: TileTask, zoom: number, router: RecordRouter, keys: PieceKeys): [string, Uint8Array][] {
  const { side } = task.spec;
  const reduceZoom = task.unit.cell.z - 1;
  const ts = tileSize(side, zoom);
  const pad = tilePad(ts);
  const n = 2 ** zoom;
  const prefix = unitKeyPrefix(task.unit.plane);
  const enc = new RecordEncoder(task.spec.formats.json);
  const simplifier = new Simplifier();
  const zc = zoomContext(task.spec, reduceZoom);
  // Every zoom of the levels above carries only the --coarse-fields (and a point's radius): the records they read hold only those.
  const few = zc.few && task.spec.fewFields ? new FieldFilter(task.spec.fewFields.keep) : undefined;
  for (let i = 0; i < features.length; i++) {
    const f = features[i];
    if (home[i] === 0 || drawnAt(f, i, boxes, task.spec, zc, keys) === 0) continue;
    const reduced = reduceForZoom(f, task.spec, reduceZoom, simplifier);
    const r = reduced && few ? few.flat(reduced, task.spec.formats.json) : reduced;
    if (r === null || !enc.encode(task.spec.layers[r.layer].id, r)) continue;
    // A point's circle: into the cells whose coarsest tiles it reaches (`circlePad`), beyond those of its buffer.
    router.route(prefix, enc.bytes(), enc.box, ts, pad, n - 1, Infinity, circlePad(ts, enc.reach));
  }
  return router.take();
}
