// The fields that --layer-by, --plane-field, --fields and --coarse-fields name, held against what a build read once
// every input is read: a name no feature has and a field of too many layers stop it; features without the field, a
// field of a plane each, a name of --fields or --coarse-fields no feature has, and coarse fields of no zoom are warned
// of; an overview thinned to little for its many fields is told of --coarse-fields.
import { own, setOwn } from '../model/own.js';
import type { IdCounts, VectorLayer } from '../model/descriptor.js';
import { flagName, type BuildConfig } from '../options.js';
import { UsageError } from '../report/errors.js';
import type { LayerStats } from '../stages/assign.js';
import type { BuildPlan } from '../stages/plan.js';
import { isUnder, onOnePath } from '../stages/field-filter.js';
import { closest } from '../suggest.js';
import type { ParseResult } from '../stages/parse.js';
import { CLASS_FIELD, NUCLEUS_LAYER } from '../stages/qupath.js';
import type { CodedFields } from '../report/coded.js';
import type { Dim, Plane } from '../tiling/space.js';
import type { BuildIO } from './context.js';
import type { ReadSummary } from './state.js';

/**
 * Valid features without the field: of --plane-field per dimension, of --layer-by per the layer they are in instead,
 * and the first input that put some in that layer (`files`).
 */
export interface Lacking { planes: Partial<Record<Dim, number>>; layers: Record<string, number>; files?: Record<string, string> }

export function addLacking(to: Lacking, r: Pick<ParseResult, 'planeLacking' | 'layerByLacking'>, file: string): void {
  for (const [d, n] of Object.entries(r.planeLacking) as [Dim, number][]) to.planes[d] = (to.planes[d] ?? 0) + n;
  for (const [layer, n] of Object.entries(r.layerByLacking)) {
    setOwn(to.layers, layer, (own(to.layers, layer) ?? 0) + n);
    if (own((to.files ??= {}), layer) === undefined) setOwn(to.files, layer, file);
  }
}

/**
 * Features without a field others have go where no field puts them, in silence but for this: plane 0, their input's
 * layer. A field no feature has stops the build (checkOptionFields).
 */
export function warnLacking(config: BuildConfig, lacking: Lacking, valid: number, io: BuildIO, ids: Record<string, IdCounts>): void {
  for (const d of ['t', 'c', 'z'] as const) {
    const n = lacking.planes[d];
    if (n === undefined || n === valid) continue;
    io.onWarning?.(`${n} of ${valid} valid feature(s) have no field "${config.planeFields[d]}" (--plane-field ${d}=${config.planeFields[d]}): they are put on ${d}=0, with the features whose ${d} is 0`, { event: 'plane-field-lacking', dim: d, field: config.planeFields[d], features: n, of: valid });
  }
  const field = config.options.layerBy;
  for (const [layer, n] of Object.entries(lacking.layers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (field === undefined) continue;
    io.onWarning?.(`layer ${layer}: ${n} of ${valid} valid feature(s) have no value of field "${field}" (--layer-by ${field}): they are in layer ${layer}, named after their input, beside the layers of the field's values`, { event: 'layer-by-lacking', layer, field, features: n, of: valid });
    // Every valid feature of a layer is counted by id (ParseResult.ids): those not lacking the field got the layer from
    // it. Class "cells" of cells.json went into the layer of that file's unclassed features, which nothing said.
    const counts = own(ids, layer);
    const byValue = counts === undefined ? 0 : counts[0] + counts[1] + counts[2] - n;
    if (byValue <= 0) continue;
    const file = own(lacking.files ?? {}, layer);
    io.onWarning?.(`layer ${layer}: ${byValue} feature(s) whose field "${field}" is ${JSON.stringify(layer)} (--layer-by ${field}) and the ${n} without a value there from ${file}, whose layer is named after it, are one layer, ${layer}: rename the input file or that value to keep them apart`, { event: 'layer-by-shared', layer, field, byValue, lacking: n, file });
  }
  // The nuclei --nucleus-features makes are counted apart from the input features (ParseResult.ids counts these only):
  // input features in that layer (a --layer-by value, --layer, a file named so) were mixed with them in silence.
  const inputs = config.options.nucleusFeatures ? own(ids, NUCLEUS_LAYER) : undefined;
  const mixed = inputs === undefined ? 0 : inputs[0] + inputs[1] + inputs[2];
  if (mixed > 0) {
    const how = field !== undefined ? `(--layer-by ${field}, --layer or an input's name)` : '(--layer or an input\'s name)';
    io.onWarning?.(`layer ${NUCLEUS_LAYER}: ${mixed} input feature(s) are in layer ${NUCLEUS_LAYER} ${how}, with the nuclei --nucleus-features makes: one layer holds both; name that layer otherwise to keep them apart`, { event: 'layer-nucleus-shared', layer: NUCLEUS_LAYER, features: mixed });
  }
}

/** The most layers `--layer-by` may make: a layer per class, not per value of a measurement or an id. */
const MAX_LAYERS = 256;

/**
 * A field named by `--layer-by` or `--plane-field` that no feature read has (valid or not) is a misspelling, not a
 * choice: a UsageError naming it and the fields there are. Workers report which names they met, so the check runs
 * once everything is read, before the plan is written and any tile with it. `--layer-by` on a field of many values
 * (an area, an id) made thousands of layers and a descriptor of megabytes.
 */
export function checkOptionFields(config: BuildConfig, sum: ReadSummary, seen: ReadonlySet<string>): void {
  if (sum.read > 0) checkNamed(config, seen, sum.stats);
  const layers = Object.keys(sum.stats);
  if (config.options.layerBy === undefined || layers.length <= MAX_LAYERS) return;
  const shown = layers.slice(0, 3).map((l) => JSON.stringify(l)).join(', ');
  throw new UsageError(`--${flagName('layerBy')} ${config.options.layerBy} makes ${layers.length} layers (${shown}, …), more than ${MAX_LAYERS}: a layer is for a class of features (classification.name, objectType, featureClass), not for each value of a measurement or an id`);
}

/** Every field name of every layer, sorted. */
function fieldNames(stats: LayerStats): string[] {
  return [...new Set(Object.values(stats).flatMap((l) => Object.keys(l)))].sort();
}

/**
 * Field names and the objects they lie in (`measurements` of `measurements.Cell: Area`), sorted: what a name given may
 * have meant, as a name keeps the fields under it.
 */
function namesMeant(fields: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const f of fields) {
    out.add(f);
    for (let dot = f.indexOf('.'); dot > 0; dot = f.indexOf('.', dot + 1)) out.add(f.slice(0, dot));
  }
  return [...out].sort();
}

/** A name and, when one is near, the field it may mean: `"clasification.name" (classification.name?)`. */
function nameAndMeant(name: string, meant: readonly string[]): string {
  const near = closest(name, meant);
  return `"${name}"${near ? ` (${near}?)` : ''}`;
}

function checkNamed(config: BuildConfig, seen: ReadonlySet<string>, stats: LayerStats): void {
  const named: [string, string][] = [];
  if (config.options.layerBy !== undefined) named.push([config.options.layerBy, `--${flagName('layerBy')} ${config.options.layerBy}`]);
  for (const [d, name] of Object.entries(config.planeFields)) named.push([name, `--${flagName('planeField')} ${d}=${name}`]);
  const missing = named.find(([name]) => !seen.has(name));
  if (!missing) return;
  const fields = fieldNames(stats);
  const list = (names: string[]) => (names.length > 40 ? `${names.slice(0, 40).join(', ')}, … (${names.length - 40} more)` : names.join(', ') || 'none');
  // An object (QuPath's `classification`) is no field: a layer or plane takes one value, of a field under it.
  const under = fields.filter((f) => f !== missing[0] && isUnder(f, missing[0]));
  if (under.length > 0) throw new UsageError(`${missing[1]}: "${missing[0]}" is an object in the features, not a field of one value: name a field under it, ${list(under)}`);
  throw new UsageError(`${missing[1]}: no feature has a field ${nameAndMeant(missing[0], fields)}; the fields are: ${list(fields)}`);
}

/** More planes than this along a `--plane-field` dimension is warned of, whatever the features (a long time series is one). */
export const MANY_PLANES = 1000;
/** Past this many planes, fewer than two features a plane on average is warned of too: a plane per feature is an id. */
export const SOME_PLANES = 100;

/**
 * A field of a class, a label or an id given as a plane (`--plane-field z=label`) made a plane per feature: 5,000 cells
 * made 5,000 planes, each a pyramid of its own (57,000 tiles, 482 MB). A warning, not a refusal: a time series of
 * thousands of frames, or a track of one point a frame, is a real use; said once the plan is made, before any tile.
 */
export function manyPlanesWarning(config: Pick<BuildConfig, 'planeFields'>, planes: readonly Plane[], valid: number): [string, CodedFields] | undefined {
  for (const [d, field] of Object.entries(config.planeFields) as [Dim, string][]) {
    const values = [...new Set(planes.map((p) => p[d]))].sort((a, b) => a - b);
    const n = values.length;
    if (n <= SOME_PLANES || (n <= MANY_PLANES && n * 2 <= valid)) continue;
    const shown = `${values.slice(0, 3).join(', ')}, …, ${values[n - 1]}`;
    return [
      `--${flagName('planeField')} ${d}=${field} makes ${n} ${d} planes (${shown}) for ${valid} valid feature(s): each plane is a pyramid of its own, with tiles at every zoom; is "${field}" a ${d === 'z' ? 'z slice' : d === 't' ? 'time point' : 'channel'} index? (a class is for --${flagName('layerBy')}; a label or an id needs no option: it stays a property)`,
      { event: 'plane-field-many', dim: d, field, planes: n, features: valid },
    ];
  }
  return undefined;
}

/**
 * The names of `--coarse-fields` that no feature's field is or lies under: a misspelt name keeps nothing, and the
 * coarse zooms would carry less than asked without a word. A warning naming each and the field it may mean.
 */
export function coarseFieldsWarning(config: Pick<BuildConfig, 'coarseFields' | 'fields'>, stats: LayerStats): [string, CodedFields] | undefined {
  const fields = fieldNames(stats);
  const unknown = (config.coarseFields?.keep ?? []).filter((n) => !fields.some((f) => isUnder(f, n)));
  if (unknown.length === 0) return undefined;
  // The statistics hold only what --fields kept: a name it leaves out that is near no field kept is no misspelling,
  // and features may well have it.
  const kept = config.fields;
  const meant = namesMeant(fields);
  const left = unknown.filter((n) => kept && !kept.some((k) => onOnePath(n, k)) && !closest(n, meant));
  const said = unknown.filter((n) => !left.includes(n)).map((n) => nameAndMeant(n, meant));
  const named = [...said.length ? [`${said.join(', ')}, which no feature has`] : [], ...left.length ? [`${left.map((n) => `"${n}"`).join(', ')}, which --${flagName('fields')} leaves out of every tile`] : []];
  return [
    `--${flagName('coarseFields')} names ${named.join(', and ')}: the coarse zooms carry ${unknown.length === config.coarseFields?.keep.length ? 'no field' : 'only the other fields named'}; the fields are those inspect lists, dotted for nested objects (classification.name)`,
    { event: 'coarse-fields-unknown', fields: unknown },
  ];
}

/**
 * The names of `--fields` no valid feature has: a misspelt name keeps nothing, and tiles would lack it without a word.
 * A warning naming each and the field it may mean, of `read`: those the features had (the statistics hold only the
 * fields kept).
 */
export function keptFieldsWarning(config: Pick<BuildConfig, 'fields'>, seen: ReadonlySet<string>, read: Iterable<string>): [string, CodedFields] | undefined {
  const unknown = (config.fields ?? []).filter((n) => !seen.has(n));
  if (unknown.length === 0) return undefined;
  const meant = namesMeant(read);
  return [
    `--${flagName('fields')} names ${unknown.map((n) => nameAndMeant(n, meant)).join(', ')}, which no valid feature has: tiles carry no such field; the fields are those inspect lists of a build without --${flagName('fields')}, dotted for nested objects (classification.name)`,
    { event: 'fields-unknown', fields: unknown },
  ];
}

/** A layer whose coarsest zoom draws less than this share of it, its features carrying this many fields or more, is told of `--coarse-fields`. */
const THIN_SHARE = 0.05;
const MANY_FIELDS = 8;

/**
 * A notice for each layer whose overview is thin because its features carry many fields (a QuPath export's 29
 * measurements: 0.9% of the cells drawn at zoom 0), when no option says which fields the coarse zooms need.
 */
export function thinOverviewNotices(config: Pick<BuildConfig, 'coarseFields' | 'fields'>, plan: Pick<BuildPlan, 'minZoom' | 'maxZoom' | 'lod' | 'formats' | 'fewFields' | 'keptFields'>, layers: readonly VectorLayer[]): Array<[string, CodedFields]> {
  // The options as the plan holds them too: `finalize` of a sharded build is given none of them.
  if (config.coarseFields || config.fields || plan.fewFields || plan.keptFields || plan.lod !== 'auto') return [];
  const z = plan.formats.pbf ? plan.minZoom : Math.max(1, plan.minZoom);
  // The zoom told of must be one --coarse-fields thins by default (below the finest less one): a JSON-only pyramid's
  // coarsest tiles are at zoom 1, which zooms 0-2 leave with every field.
  if (plan.maxZoom - 1 <= z) return [];
  const out: Array<[string, CodedFields]> = [];
  for (const l of layers) {
    const share = (l.kept_fraction as Record<string, number> | undefined)?.[z] ?? 1;
    const names = Object.keys(l.fields ?? {});
    if (share >= THIN_SHARE || names.length < MANY_FIELDS) continue;
    const example = names.includes(CLASS_FIELD) ? CLASS_FIELD : Object.keys(l.fieldenums ?? {})[0];
    out.push([
      `layer ${l.id}: zoom ${z} draws ${Number((share * 100).toPrecision(2))}% of its features, which carry up to ${names.length} fields each; --${flagName('coarseFields')} LIST${example ? ` (what the overview needs: ${example})` : ''} keeps only those below zoom ${plan.maxZoom - 1}, so the coarse zooms draw more of the layer within the tile budget`,
      { event: 'overview-thin', layer: l.id, zoom: z, share, fields: names.length },
    ]);
  }
  return out;
}

/**
 * `--coarse-fields` with no zoom coarser than the finest zoom less one, where every field starts by default: a pyramid
 * of one or two zooms (a small image's automatic --max-zoom) has every field in every tile, as without the option.
 * Said, as the option would otherwise do nothing without a word; `--fields-from-zoom` at --min-zoom asks for that.
 */
export function noCoarseZoomWarning(config: Pick<BuildConfig, 'coarseFields'>, plan: Pick<BuildPlan, 'minZoom' | 'maxZoom' | 'fewFields'>): [string, CodedFields] | undefined {
  if (!config.coarseFields || config.coarseFields.from !== undefined || plan.fewFields) return undefined;
  const { minZoom: lo, maxZoom: hi } = plan;
  const how = hi > lo ? `give --${flagName('fieldsFromZoom')} ${hi} for zoom ${lo} to carry only the fields named` : 'a pyramid of one zoom has no coarser one: give a --max-zoom above --min-zoom';
  return [
    `--${flagName('coarseFields')} leaves every field in every tile: the pyramid's zooms are ${lo}–${hi}, and by default the finest two carry every field; ${how}`,
    { event: 'coarse-fields-no-zoom', minZoom: plan.minZoom, maxZoom: plan.maxZoom },
  ];
}
