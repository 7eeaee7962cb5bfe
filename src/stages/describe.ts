// Describe stage: the tileset descriptor, the per-plane overview tiles (JSON pyramid descriptors) and the run report.
import { own } from '../model/own.js';
import { featureIdsOf, type Asset, type FeatureIds, type IdCounts, type TilesetDescriptor, type VectorLayer } from '../model/descriptor.js';
import type { Vocabularies } from '../model/vocabulary.js';
import { urlTemplate, type Plane } from '../tiling/space.js';
import { describeFields, type LayerStats } from './assign.js';
import type { BuildPlan } from './plan.js';
import { FieldFilter } from './field-filter.js';

export interface DescribeInput {
  plan: BuildPlan;
  stats: LayerStats;
  /** Per zoom, per layer: features replaced by points and features thinned (zooms where both are 0 are complete). */
  pointified: number[][];
  thinned: number[][];
  /** Per zoom, per layer: the share of the layer's features the zoom draws. */
  keptFraction?: number[][];
  /** Per layer, features by their input id (ReadSummary.ids). */
  ids?: Record<string, IdCounts>;
  vocabularies?: Vocabularies;
  meta: { name?: string; description?: string; attribution?: string; version?: string; baseUrl?: string };
  assets?: Asset[];
}

/** The coarsest zoom with tiles of features: in a JSON-only pyramid zoom 0 is the overview descriptor alone. */
function firstDataZoom(plan: BuildPlan): number {
  return plan.formats.pbf ? plan.minZoom : Math.max(1, plan.minZoom);
}

/**
 * Zooms at which a layer holds every feature at full form: nothing drawn as a point there, and nothing thinned
 * there or at any finer zoom (a feature thinned at a zoom is not offered to the coarser ones).
 */
function completeZooms(input: DescribeInput, layer: number): number[] {
  const out: number[] = [];
  let thinnedBelow = false;
  for (let z = input.plan.maxZoom; z >= firstDataZoom(input.plan); z--) {
    thinnedBelow ||= (input.thinned[z]?.[layer] ?? 0) > 0;
    if (!thinnedBelow && (input.pointified[z]?.[layer] ?? 0) === 0) out.push(z);
  }
  return out.reverse();
}

/** `{ "<zoom>": share }` for the zooms that draw less than the whole layer, shares to 4 significant digits. */
function keptFractions(input: DescribeInput, layer: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let z = firstDataZoom(input.plan); z <= input.plan.maxZoom; z++) {
    const f = input.keptFraction?.[z]?.[layer] ?? 1;
    if (f < 1) out[z] = Number(f.toPrecision(4));
  }
  return out;
}

/** Whose numbers the layer's PBF ids are; none said for a layer of which no feature was counted. */
function featureIds(input: DescribeInput, layer: string): FeatureIds | undefined {
  const n = input.ids ? own(input.ids, layer) : undefined;
  return n === undefined || n[0] + n[1] + n[2] === 0 ? undefined : featureIdsOf(n);
}

/**
 * Foreign member `field_minzoom`: the fields `--coarse-fields` leaves out of the coarser zooms, each with the zoom its
 * tiles start at (absent: every zoom's tiles carry every field), so a viewer can say that a feature has more.
 */
function laterFields(plan: BuildPlan, fields: VectorLayer['fields']): Record<string, number> | undefined {
  const few = plan.fewFields;
  if (!few || !fields) return undefined;
  const filter = new FieldFilter(few.keep);
  const later = Object.keys(fields).filter((f) => !filter.keeps(f)).sort();
  return later.length > 0 ? Object.fromEntries(later.map((f) => [f, few.below])) : undefined;
}

function vectorLayers(input: DescribeInput): VectorLayer[] {
  const { plan } = input;
  const vocab = typeof input.vocabularies === 'object' ? input.vocabularies : undefined;
  return plan.layers.map((id, i) => {
    const fields = describeFields(own(input.stats, id) ?? {});
    const layer: VectorLayer = { id, ...fields, minzoom: plan.minZoom, maxzoom: plan.maxZoom };
    if (vocab) {
      const used = Object.fromEntries(Object.entries(vocab).filter(([name]) => fields.fields && own(fields.fields, name) !== undefined));
      if (Object.keys(used).length) layer.vocabularies = used;
    }
    // Foreign members: where the layer is complete; below, sub-pixel features are points and zooms may be thinned,
    // each uniformly: the share of the layer's features a thinned zoom draws, everywhere alike (absent zooms: all).
    layer.complete_zooms = completeZooms(input, i);
    const kept = keptFractions(input, i);
    if (Object.keys(kept).length > 0) layer.kept_fraction = kept;
    // A viewer shows a PBF id as the feature's id only where the input gave it: a number of the build's is none.
    const ids = featureIds(input, id);
    if (ids) layer.feature_ids = ids;
    const later = laterFields(plan, fields.fields);
    if (later) layer.field_minzoom = later;
    return layer;
  });
}

/** Bounds and center: 4 and 3 numbers in 2D, 10 and 6 with plane dimensions (unused ones 0). */
function extent(plan: BuildPlan, only?: Plane): { bounds: number[]; center: number[] } {
  const { width, height } = plan.world;
  const xy = [0, 0, width, height];
  const cxy = [width / 2, height / 2, plan.minZoom];
  if (plan.dims.length === 0) return { bounds: xy, center: cxy };
  const lo = { t: Infinity, c: Infinity, z: Infinity }, hi = { t: -Infinity, c: -Infinity, z: -Infinity };
  for (const p of only ? [only] : plan.planes) {
    for (const d of ['t', 'c', 'z'] as const) { lo[d] = Math.min(lo[d], p[d]); hi[d] = Math.max(hi[d], p[d]); }
  }
  return {
    bounds: [lo.t, lo.c, lo.z, 0, 0, hi.t, hi.c, hi.z, width, height],
    center: [lo.t, lo.c, lo.z, ...cxy],
  };
}

function base(input: DescribeInput, format: 'pbf' | 'json', prefix: string, plane?: Plane): TilesetDescriptor {
  const { plan, meta } = input;
  const tiles = [urlTemplate(plan.dims, format, meta.baseUrl ? meta.baseUrl.replace(/\/?$/, '/') : prefix)];
  const d: TilesetDescriptor = { tilejson: '3.0.0', tiles, vector_layers: vectorLayers(input) };
  if (meta.name !== undefined) d.name = meta.name;
  if (meta.description !== undefined) d.description = meta.description;
  if (meta.version !== undefined) d.version = meta.version;
  if (meta.attribution !== undefined) d.attribution = meta.attribution;
  d.minzoom = plan.minZoom;
  d.maxzoom = plan.maxZoom;
  Object.assign(d, extent(plan, plane));
  d.scale_factor = 2;
  if (plan.collection.multiscale) d.multiscale = plan.collection.multiscale;
  d.format = format;
  if (input.assets?.length) {
    d.assets = prefix ? input.assets.map((a) => (/^[a-z]+:/i.test(a.href) ? a : { ...a, href: prefix + a.href })) : input.assets;
  }
  return d;
}

/** `tileset.json` at the pyramid root: the PBF pyramid, or the JSON one when only JSON is built. */
export function tilesetDescriptor(input: DescribeInput): TilesetDescriptor {
  return base(input, input.plan.formats.pbf ? 'pbf' : 'json', '');
}

/** The zoom-0 JSON tile of a plane: a descriptor of the JSON pyramid, with relative URLs climbing back to the root. */
export function overviewDescriptor(input: DescribeInput, plane: Plane, path: string): TilesetDescriptor {
  const depth = path.split('/').length - 1;
  return base(input, 'json', '../'.repeat(depth), input.plan.dims.length ? plane : undefined);
}
