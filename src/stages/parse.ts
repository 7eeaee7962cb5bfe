// Parse + validate + assign, for one batch of raw features (pure): in a worker for JSON text, on the reading thread for
// values; returns unit records, issues and statistics.
import { own, ownOr, setOwn } from '../model/own.js';
import { newIdCounts, type IdCounts } from '../model/descriptor.js';
import type { Feature } from '../model/feature.js';
import { GEOMETRY_TYPES, type Geometry, type GeometryType } from '../model/geometry.js';
import { fieldValue } from '../model/fields.js';
import { validateFeature, validateGeometry } from '../validate/index.js';
import { BUILD_RULES } from '../validate/rules.js';
import { checkRepeated, checkUtf8, replaceLoneSurrogates } from '../validate/values.js';
import { repeatedName } from '../io/json-names.js';
import { jsonSyntaxError } from '../io/json-errors.js';
import { IssueTally, type IssueCounts, type IssuePlace, type SkippedPlace } from '../validate/tally.js';
import type { Issue } from '../validate/issue.js';
import { boxInside, Clipper, cutToRect, type Rect } from '../tiling/clip.js';
import { MAX_WORLD_SIDE, sideExponent, type Dim, type Plane } from '../tiling/space.js';
import { assignPlane, layerByField, observeFeature, optionFieldValue, type LayerStats, type PlaneRule } from './assign.js';
import { NUCLEUS_LAYER, NUCLEUS_SEQ, normaliseQuPath, nucleusOf } from './qupath.js';
import { RecordRouter } from './router.js';
import { storedCirclePad, storedPad } from './plan.js';
import { unitKeyPrefix } from './unit-key.js';
import { RecordEncoder } from './record.js';
import { emptyBox, enclosesNoArea, flatFeatureOf, flatten, growBox, isPbfId, membersOf, onlyMeshes, tagsOf, withGeometry, type TileGeometry } from '../tiling/flat.js';
import { FlatValue } from '../tiling/flat-value.js';
import { featureHeadText, headTextOf } from './encode-json.js';
import { FieldFilter } from './field-filter.js';
import { FieldNames } from './field-names.js';
import { TileSketch, type SketchData } from './thinning.js';
import { withCode } from '../report/coded.js';


/**
 * Numbers per feature in a batch's `meta`: index, line, column (0 when unknown), start and end of its bytes, and the
 * strings of its text as the splitter counted them (-1 when it did not: `repeatedName`).
 */
export const META = 6;

/**
 * Features of a batch as the reading thread hands them over: JSON text (their UTF-8 back to back, `meta` saying where
 * each lies), or values that were never text (a label mask's traced polygons, `FlatValue`s or GeoJSON, a whole-file
 * document), parsed where they are (copying them to a worker cost more than the work); their `meta` start and end are unused, and `found`
 * holds per value what reading its text found (invalid UTF-8 in a whole-file document).
 */
export type RawBatch = { bytes: Uint8Array; meta: Float64Array } | { values: unknown[]; meta: Float64Array; found?: Issue[][] };

export interface ParseTask {
  kind: 'parse';
  file: string;
  layer: string;
  layerBy?: string;
  rule: PlaneRule;
  /** Side in pixels of a level-0 cell. */
  cellSize: number;
  /**
   * World side when it is known before reading (from --image-size or --image); else the world is at most
   * MAX_WORLD_SIDE. Features beyond it are counted, features across its edge cut to it.
   */
  side?: number;
  /**
   * The image's size when it is known (--image-size, --image): the descriptor's bounds, where tiles may be. Features
   * are cut to it, and one wholly beyond it is not placed (`outside-image`), so that every tile meets the bounds.
   */
  image?: { width: number; height: number };
  /** Sequence number of the first feature of the batch. */
  seq0: number;
  /** The features (text moves to the worker, not copied). */
  raw: RawBatch;
  /** Samples kept per issue code; the rest are only counted. */
  sampleCap: number;
  /** A QuPath cell's `nucleusGeometry` becomes a feature of its own in layer `nucleus` (`--nucleus-features`). */
  nucleusFeatures?: boolean;
  /**
   * With thinning (lod auto): gather tile size estimates of the format the budget applies to; with `few`
   * (`--coarse-fields`), those of tiles carrying only those fields too.
   */
  sketch?: { format: 'pbf' | 'json'; few?: readonly string[] };
  /** JSON tiles are built: records carry each feature's JSON head. */
  json: boolean;
  /** `--fields`: the only fields a feature keeps, once read and validated (unset: every field). */
  fields?: readonly string[];
}

/**
 * Work cells one feature may be stored in: a world of 1,048,576 px a side (five times the widest slides) in cells of
 * 2,048 px, whole. A feature beyond (coordinates in nanometres, a stray vertex millions of pixels out) cost time and
 * memory without bound: a sliver 2e9 px long, a million cells, wrote a million units' tiles for ten minutes and more.
 */
export const MAX_FEATURE_CELLS = 2 ** 18;

/** Field names a batch reports for a `--fields` name none has (`fieldNamesRead`): a QuPath export has 34. */
export const MAX_FIELD_NAMES = 1000;

/** Valid features that the pyramid cannot hold, counted by reason. */
export type Skipped = Record<string, number>;

export interface ParseResult {
  read: number;
  valid: number;
  invalid: number;
  issues: IssueCounts;
  skipped: Skipped;
  /** Per reason in `skipped`, where its first feature of the batch is: a count alone does not say which to look at. */
  skippedFirst: Record<string, SkippedPlace>;
  /** [minX, minY, maxX, maxY] of placed features, or null. */
  bounds: [number, number, number, number] | null;
  /** Placed features by the world they need: `extent[k]` of them need a world of side 2^k (see `findOutliers`). */
  extent: number[];
  /** The largest half width or half height of a placed feature's box, and its circle's radius: how far a feature reaches from its centre. */
  halfExtent: number;
  dims: Dim[];
  stats: LayerStats;
  /** Unit key → records, keys in first-seen order; each in a buffer of its own (transferred, not copied). */
  units: [string, Uint8Array][];
  /** The fields named by `layerBy` and `rule.fields` that some feature of the batch has (valid or not). */
  optionFieldsSeen: string[];
  /** The names of `--fields` some valid feature of the batch has (as a field, or fields under it). */
  keptFieldsSeen: string[];
  /**
   * The fields of the batch's valid features read while a name of `--fields` was yet unmet in it, at most
   * MAX_FIELD_NAMES: what a name none has may have meant (the statistics hold only the fields kept).
   */
  fieldNamesRead: string[];
  /** Valid features without their `--plane-field`, per dimension (put at 0 there). */
  planeLacking: Partial<Record<Dim, number>>;
  /** Valid features without a value of `layerBy`, per the layer they are in instead (their input's). */
  layerByLacking: Record<string, number>;
  /** Valid QuPath objects on every channel (plane c -1, or none): stored in the EVERY_CHANNEL plane, for every channel's units. */
  everyChannel: number;
  /** Tile size estimates of the batch (thinning.ts), when asked for; `fewSketch`, of tiles with only `--coarse-fields`. */
  sketch?: SketchData;
  fewSketch?: SketchData;
  /**
   * Per layer, valid features whose PBF id is their input id (a non-negative safe integer), and those whose PBF id is
   * their sequence number, with an id of another kind and with none (`IdCounts`): a layer of the first and others
   * may give two features one id.
   */
  ids: Record<string, IdCounts>;
  /** Nuclei --nucleus-features placed in layer NUCLEUS_LAYER (not counted in `ids`): their PBF ids are the build's. */
  nuclei: number;
  /** The whole buffer the batch's text came in, handed back to carry a later batch (text batches only). */
  text?: Uint8Array;
  /** Syntax error inside a feature: fatal for the file. */
  syntax?: { index: number; line: number; column: number; message: string };
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Members `replaceLoneSurrogates` leaves alone: the geometry holds no text that tiles carry. */
const NOT_TEXT = new Set(['geometry']);

/** Removes `radius` from geometries (spec 2.1 rule 3: it belongs in properties), so meshes kept whole do not carry it. */
function dropRadius(g: Geometry): void {
  if ('radius' in g) delete (g as Record<string, unknown>).radius;
  if (g.type === 'GeometryCollection') for (const m of g.geometries) dropRadius(m);
}

/** Whether a geometry is meshes given only by their tiles (no inline coordinates), a collection of them included. */
function tiledOnly(g: Geometry): boolean {
  if (g.type === 'GeometryCollection') return g.geometries.length > 0 && g.geometries.every(tiledOnly);
  return (g.type === 'PolyhedralSurface' || g.type === 'TIN') && 'tiles' in g && (g.coordinates === undefined || g.coordinates.length === 0);
}

/** A cell's nucleus left out, and why: the cell is kept. */
const nucleusDropped = (path: string, why: string): Issue => ({
  code: 'nucleus-dropped', severity: BUILD_RULES['nucleus-dropped'].severity, path, message: `${why}; the cell is kept without its nucleus`,
});

/** `router` holds the batch's records on their way to their cells (a worker's own, reused from batch to batch). */
export function parseBatch(task: ParseTask, router = new RecordRouter()): ParseResult {
  const tally = new IssueTally(task.sampleCap);
  const res: ParseResult = {
    read: 0, valid: 0, invalid: 0, issues: tally.counts(), skipped: {}, skippedFirst: {},
    bounds: null, extent: [], halfExtent: 0, dims: [], stats: {}, units: [], optionFieldsSeen: [], keptFieldsSeen: [], fieldNamesRead: [], planeLacking: {}, layerByLacking: {}, everyChannel: 0, ids: {}, nuclei: 0,
  };
  const enc = new RecordEncoder(task.json);
  const dims = new Set<Dim>();
  const C = task.cellSize;
  const pad = storedPad(C);
  const skip = (why: string, place: IssuePlace) => {
    res.skipped[why] = (res.skipped[why] ?? 0) + 1;
    // Beyond the world or image, the box `put` found it has (its whole, before any cut): where it lies says why.
    res.skippedFirst[why] ??= why === beyond ? { ...place, box: Array.from(enc.box) } : place;
  };
  const bounds = emptyBox(new Float64Array(4));
  // Features are cut to the world (with room for the widest tile buffer, a zoom-0 tile's), or to the image when its
  // size is given, before they are routed, so no feature costs more cells, memory or time than the world has.
  const side = task.side ?? MAX_WORLD_SIDE;
  const margin = side / 32;
  const image = task.image;
  const world: Rect = image ? { minX: 0, minY: 0, maxX: image.width, maxY: image.height } : { minX: -margin, minY: -margin, maxX: side + margin, maxY: side + margin };
  const beyond = image ? 'outside-image' : 'outside-world';
  const lastCell = Math.ceil(side / C) - 1;
  const clipper = new Clipper();
  const sketch = task.sketch ? new TileSketch(task.sketch.format) : undefined;
  const fewFilter = task.sketch?.few ? new FieldFilter(task.sketch.few) : undefined;
  const fewSketch = task.sketch && fewFilter ? new TileSketch(task.sketch.format) : undefined;
  // --fields: each name until a feature has it (a name none has is warned of), the filter features go through.
  const keep = task.fields ? new FieldFilter(task.fields) : undefined;
  const keptUnseen = new Map((task.fields ?? []).map((n) => [n, new FieldFilter([n])]));
  const namesRead = new FieldNames(MAX_FIELD_NAMES);
  // Fields named by options, each with how a feature holds it (--layer-by: a member too), until a feature has it.
  const unseen = new Map<string, (f: Feature) => unknown>();
  if (task.layerBy !== undefined) unseen.set(task.layerBy, (f) => optionFieldValue(f, task.layerBy as string));
  for (const name of Object.values(task.rule.fields)) if (!unseen.has(name)) unseen.set(name, (f) => fieldValue(f.properties, name));
  const looked = [...unseen.keys()];
  /** Nothing to place: a mesh given only by its tiles has a position elsewhere; an empty collection has none. */
  const nowhere = (g: Geometry): string => (tiledOnly(g) ? 'no-inline-position' : 'empty-geometry');
  /** A feature's flat geometry, or why it has nothing to place (a `skipped` reason). */
  const flatOf = (g: Geometry | null): TileGeometry | string => {
    if (g === null) return 'null-geometry';
    dropRadius(g);
    const geom = flatten(g);
    if (geom === null) return nowhere(g);
    // PBF carries no mesh: without JSON tiles a feature of meshes alone would be in no tile, and said to be in JSON ones.
    if (!task.json && onlyMeshes(geom)) return 'mesh-without-json-tiles';
    // Polygons without area draw nothing at any zoom: counted here rather than vanishing in the tiler.
    return enclosesNoArea(geom, g) ? 'zero-area' : geom;
  };
  /**
   * Encodes a valid feature into its unit's records (true), or says why it cannot be placed (a `skipped` reason);
   * returns the issue that makes it invalid for the build (it spans too many work cells). `made`: its geometry as a
   * source made it, flat (`FlatValue`: the feature's own is null).
   */
  const put = (seq: number, layer: string, f: Feature, plane: Plane, made?: TileGeometry): Issue | string | true => {
    const geom = made ?? flatOf(f.geometry);
    if (typeof geom === 'string') return geom;
    // The feature itself is its head: only id, featureClass, parentId, ref, properties and vocabularies are read.
    // Its layer travels beside it (the id, to `encode`); -1 stands in the one-shape feature.
    let flat = flatFeatureOf(seq, -1, geom, undefined, f, undefined, undefined, undefined, false, undefined);
    // A JSON-only sketch sizes the head text the record holds: made once, for both.
    if (sketch?.format === 'json') flat.headJson = encoder.encode(headTextOf(flat, layer));
    if (!enc.encode(layer, flat)) return f.geometry === null ? 'empty-geometry' : nowhere(f.geometry);
    const b = enc.box;
    if (b[2] < 0 || b[3] < 0 || (image ? b[0] > image.width || b[1] > image.height : b[0] >= side || b[1] >= side)) return beyond;
    if (!boxInside(b, world)) {
      const inside = cutToRect(flat.geom, world, clipper);
      // The cut feature keeps the tags and head the first encoding made; its pieces are those within the world.
      if (inside === null) return beyond;
      flat = withGeometry(flat, inside, flat.lod, undefined);
      if (!enc.encode(layer, flat)) return beyond;
    }
    const prefix = unitKeyPrefix(plane);
    // A point's circle (its `radius`) is stored in every cell whose tiles it reaches, though its centre is not: cells
    // its circle's distance reaches beyond those the pad does.
    let cells = router.route(prefix, enc.bytes(), b, C, pad, lastCell, MAX_FEATURE_CELLS, storedCirclePad(C, enc.reach));
    // A radius past all sense (wider than the cells allowed) does not make a point invalid: it is stored by its centre.
    if (cells > MAX_FEATURE_CELLS && enc.reach > 0) cells = router.route(prefix, enc.bytes(), b, C, pad, lastCell, MAX_FEATURE_CELLS);
    if (cells > MAX_FEATURE_CELLS) {
      const px = (v: number) => Math.round(v).toLocaleString('en-US');
      return {
        code: 'feature-too-wide', severity: BUILD_RULES['feature-too-wide'].severity, path: '/geometry',
        message: `the geometry spans ${px(b[2] - b[0])} × ${px(b[3] - b[1])} px (x ${px(b[0])} to ${px(b[2])}, y ${px(b[1])} to ${px(b[3])}), `
          + `${cells.toLocaleString('en-US')} work cells of ${C} px where at most ${MAX_FEATURE_CELLS.toLocaleString('en-US')} are allowed: `
          + `are its coordinates in pixels, or is a vertex astray? ${task.side === undefined ? '--image-size W,H cuts features to the image; ' : ''}a larger --unit-size makes fewer cells`,
      };
    }
    const k = sideExponent(b[2], b[3]);
    res.extent[k] = (res.extent[k] ?? 0) + 1;
    growBox(bounds, b);
    // A point's circle reaches beyond its box as far as its radius: the cells of levels above it is handed to (schedule.ts).
    res.halfExtent = Math.max(res.halfExtent, (b[2] - b[0]) / 2 + enc.reach, (b[3] - b[1]) / 2 + enc.reach);
    if (sketch) {
      const tags = tagsOf(flat);
      sketch.add(prefix, flat.geom, b, tags, tags.id ?? seq, flat.headJson?.byteLength ?? 0, seq);
      if (fewSketch && fewFilter) {
        const head = sketch.format === 'json' ? encoder.encode(featureHeadText(fewFilter.head(membersOf(flat)), layer)).byteLength : 0;
        fewSketch.add(prefix, flat.geom, b, fewFilter.tags(tags), tags.id ?? seq, head, seq);
      }
    }
    return true;
  };

  const { raw } = task;
  const meta = raw.meta;
  if ('bytes' in raw) res.text = new Uint8Array(raw.bytes.buffer);
  for (let i = 0; i < meta.length / META; i++) {
    const m = i * META;
    const index = meta[m], line = meta[m + 1], column = meta[m + 2];
    const seq = task.seq0 + i;
    res.read++;
    let value: unknown;
    // What reading its text found: invalid UTF-8, names given twice.
    const found: Issue[] = [];
    // A feature a source made flat: its members are validated, its geometry is valid as made.
    let made: TileGeometry | undefined;
    if ('values' in raw) {
      value = raw.values[i];
      if (value instanceof FlatValue) { made = value.geom; value = value.feature; }
      if (raw.found?.[i]) found.push(...raw.found[i]);
    } else {
      const text = decoder.decode(raw.bytes.subarray(meta[m + 3], meta[m + 4]));
      try {
        value = JSON.parse(text);
      } catch (err) {
        const e = jsonSyntaxError(task.file, text, line, column, err);
        res.syntax = { index, line: e.line, column: e.column, message: e.reason };
        return res;
      }
      checkUtf8(text, raw.bytes, meta[m + 3], meta[m + 4], '', found, value);
      checkRepeated(repeatedName(text, value, meta[m + 5] < 0 ? undefined : meta[m + 5]), '', found);
    }
    const place = { file: task.file, feature: index, line: line > 0 ? line : null, column: line > 0 ? column : null };
    // A bare geometry in a sequence is a feature without members; an object of another type (`"feature"`) is a
    // feature whose type is wrong, and is reported so.
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && GEOMETRY_TYPES.includes((value as { type?: unknown }).type as GeometryType)) {
      value = { type: 'Feature', geometry: value, properties: null };
    }
    const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
    if (isObject) normaliseQuPath(value as Record<string, unknown>, found);
    const issues = validateFeature(value, '');
    issues.push(...found);
    // A nucleus that becomes a feature must be valid too; an invalid one is dropped, its cell kept (`nucleus-dropped`).
    const nucleusGeometry = task.nucleusFeatures && isObject ? (value as Record<string, unknown>).nucleusGeometry : undefined;
    let nucleusIssue: Issue | undefined;
    if (nucleusGeometry !== undefined && nucleusGeometry !== null) {
      for (const is of validateGeometry(nucleusGeometry, '/nucleusGeometry')) {
        if (is.severity !== 'error') issues.push(is);
        else nucleusIssue ??= nucleusDropped(is.path, withCode(is.message, is.code));
      }
    }
    if (unseen.size > 0 && isObject) {
      for (const [name, get] of unseen) if (get(value as Feature) !== undefined) unseen.delete(name);
    }
    let bad = false;
    for (const is of issues) {
      if (is.severity === 'error') bad = true;
      tally.add(is, place);
    }
    if (bad) { res.invalid++; continue; }
    const f = value as Feature;
    // JSON tiles would keep a lone surrogate as an escape, PBF tiles (UTF-8) as U+FFFD: both get U+FFFD.
    if (issues.some((is) => is.code === 'string-lone-surrogate')) replaceLoneSurrogates(f as unknown as Record<string, unknown>, NOT_TEXT);
    const assigned = assignPlane(f, task.rule, '');
    if ('code' in assigned) {
      res.invalid++;
      tally.add(assigned, place);
      continue;
    }
    const byField = task.layerBy === undefined ? undefined : layerByField(f, task.layerBy);
    const layer = byField ?? task.layer;
    for (const [n, one] of keptUnseen) if (one.meets(f)) keptUnseen.delete(n);
    // Only while a name is unmet: once every one is, no feature's fields are walked for this.
    if (keptUnseen.size > 0) namesRead.add(f);
    // What tiles carry of it: every field, or those --fields keeps (its layer and plane were read from all of them).
    const kept = keep ? keep.feature(f) : f;
    // A feature too wide to store is invalid for the build, as a plane value that is no index is.
    const stored = put(seq, layer, kept, assigned.plane, made);
    if (typeof stored === 'object') {
      res.invalid++;
      tally.add(stored, place);
      continue;
    }
    res.valid++;
    if (typeof stored === 'string') skip(stored, place);
    for (const d of assigned.dims) dims.add(d);
    if (assigned.lacking) for (const d of assigned.lacking) res.planeLacking[d] = (res.planeLacking[d] ?? 0) + 1;
    if (task.layerBy !== undefined && byField === undefined) setOwn(res.layerByLacking, layer, (own(res.layerByLacking, layer) ?? 0) + 1);
    if (assigned.everyChannel) res.everyChannel++;
    // The descriptor describes what the tiles hold: not a feature outside the world, or without a position.
    if (stored === true) observeFeature(res.stats, layer, kept, f.properties);
    ownOr(res.ids, layer, newIdCounts)[isPbfId(f.id) ? 0 : f.id === undefined || f.id === null ? 2 : 1]++;
    const ownNucleus = task.nucleusFeatures && nucleusIssue === undefined ? nucleusOf(f) : undefined;
    const nucleus = ownNucleus && keep ? keep.feature(ownNucleus) : ownNucleus;
    if (nucleus) {
      // Not an input feature: one not placed is no feature lost (`skipped`), but a part of its cell left out.
      const astray = put(NUCLEUS_SEQ + seq, NUCLEUS_LAYER, nucleus, assigned.plane);
      if (astray === true) { observeFeature(res.stats, NUCLEUS_LAYER, nucleus, ownNucleus?.properties); res.nuclei++; }
      else nucleusIssue = nucleusDropped('/nucleusGeometry', typeof astray === 'string' ? `the nucleus is not placed (${astray})` : astray.message);
    }
    if (nucleusIssue) tally.add(nucleusIssue, place);
  }
  if (bounds[0] <= bounds[2]) res.bounds = [bounds[0], bounds[1], bounds[2], bounds[3]];
  res.optionFieldsSeen = looked.filter((n) => !unseen.has(n));
  res.keptFieldsSeen = (task.fields ?? []).filter((n) => !keptUnseen.has(n));
  res.fieldNamesRead = namesRead.names();
  res.dims = [...dims];
  res.units = router.take();
  if (sketch) res.sketch = sketch.data();
  if (fewSketch) res.fewSketch = fewSketch.data();
  return res;
}
