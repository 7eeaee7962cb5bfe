// Assign stage: a feature's plane (t, c, z), its layer, and the field statistics the descriptor is inferred from.
import type { Feature, Properties } from '../model/feature.js';
import type { FieldType, VectorLayer } from '../model/descriptor.js';
import { fieldPath, fieldValue, forEachField } from '../model/fields.js';
import type { Issue } from '../validate/issue.js';
import { pointerToken, shown } from '../validate/issue.js';
import { BUILD_RULES } from '../validate/rules.js';
import type { Dim, Plane } from '../tiling/space.js';
import { isPbfId } from '../tiling/flat.js';
import { own, ownOr, setOwn } from '../model/own.js';
import { CLASS_FIELD, classColour, isQuPathFeature } from './qupath.js';
import { EVERY_CHANNEL } from './unit-key.js';

/**
 * Where a feature's plane comes from, first to last: the input's fixed plane, named properties, QuPath's geometry
 * `plane`, a shared third coordinate.
 */
export interface PlaneRule {
  /** Dimensions fixed for the whole input (`--input t=0,c=1:FILE`, manifest). */
  fixed: Partial<Plane>;
  /** Fields holding plane values (`--plane-field`; dotted names reach into nested objects). */
  fields: Partial<Record<Dim, string>>;
}

export interface Assigned {
  plane: Plane;
  /** Dimensions this feature set explicitly (they appear in tile paths). */
  dims: Dim[];
  /** Dimensions whose `--plane-field` the feature lacks (it is put at 0 there). */
  lacking?: Dim[];
  /**
   * A QuPath object on every channel (its plane's c is -1, or it has no plane): its plane's c is EVERY_CHANNEL, and
   * the plan puts it in every channel's plane (in channel 0's where no feature names a channel).
   */
  everyChannel?: boolean;
}

/** A third coordinate shared by every position of the geometry, or undefined. */
function sharedZ(g: Feature['geometry']): number | undefined {
  if (g === null) return undefined;
  if (g.type === 'GeometryCollection') {
    let z: number | undefined;
    for (const m of g.geometries) {
      const mz = sharedZ(m);
      if (mz === undefined || (z !== undefined && mz !== z)) return undefined;
      z = mz;
    }
    return z;
  }
  // A mesh is a 3D object in its own right, not a shape drawn on one z slice.
  if (g.type === 'PolyhedralSurface' || g.type === 'TIN') return undefined;
  // Walked by the type's nesting, not by looking at what each array holds: an element load that met both arrays of
  // positions and positions made V8 turn every position array it met after into an array of boxed numbers, and the
  // flattening that reads them next did the same to all the others (2.6 million per 100,000 cells: flattening took seven
  // times as long, 310 ms against 45 ms a pass).
  const depth = g.type === 'Point' ? 0 : g.type === 'MultiPoint' || g.type === 'LineString' ? 1 : g.type === 'MultiPolygon' ? 3 : 2;
  const z = new ZWalk();
  z.nested(g.coordinates, depth);
  return z.mixed ? undefined : z.z;
}

/** The third coordinate every position shares, if any: positions and arrays of them are read by separate loads. */
class ZWalk {
  z: number | undefined = undefined;
  mixed = false;

  nested(c: unknown, depth: number): void {
    if (depth === 0) { this.position(c); return; }
    if (!Array.isArray(c)) return;
    for (let i = 0; i < c.length && !this.mixed; i++) this.nested(c[i], depth - 1);
  }

  private position(p: unknown): void {
    if (!Array.isArray(p)) return;
    const v = p.length > 2 ? (p[2] as number) : undefined;
    if (v === undefined || (this.z !== undefined && v !== this.z)) this.mixed = true;
    else this.z = v;
  }
}

/**
 * QuPath's plane of a ROI (`"plane": {"c": -1, "z": 2, "t": 0}` in the geometry, written off the default plane):
 * z, t and c, but c -1 ("every channel") and 0, the default, which QuPath writes for every dimension alike: a z
 * stack gets no t in its tile paths.
 */
function quPathPlane(g: Feature['geometry'], d: Dim): unknown {
  const plane = g === null ? undefined : (g as { plane?: unknown }).plane;
  if (plane === null || typeof plane !== 'object' || !Object.prototype.hasOwnProperty.call(plane, d)) return undefined;
  const v = (plane as Record<string, unknown>)[d];
  return v === 0 || (d === 'c' && v === -1) ? undefined : v;
}

/**
 * Whether QuPath put the object on every channel: plane c -1, or no plane at all on a QuPath object (`isQuPathFeature`),
 * which QuPath writes only off its default plane (c -1, z 0, t 0).
 */
function onEveryChannel(f: Feature): boolean {
  const plane = f.geometry === null ? undefined : (f.geometry as { plane?: unknown }).plane;
  if (plane !== undefined) return plane !== null && typeof plane === 'object' && (plane as { c?: unknown }).c === -1;
  return isQuPathFeature(f as unknown as Record<string, unknown>);
}

/** The feature's plane, or an issue when a plane value is not a non-negative integer. */
export function assignPlane(f: Feature, rule: PlaneRule, path: string): Assigned | Issue {
  const plane: Plane = { t: 0, c: 0, z: 0 };
  const dims: Dim[] = [];
  let lacking: Dim[] | undefined;
  let everyChannel = false;
  for (const d of ['t', 'c', 'z'] as const) {
    let v: unknown;
    let where = '';
    let hint = '';
    if (rule.fixed[d] !== undefined) {
      v = rule.fixed[d];
    } else if (rule.fields[d] !== undefined) {
      const keys = fieldPath(f.properties, rule.fields[d] as string);
      if (keys === undefined) {
        // Without the channel field, an object QuPath drew on every channel is on every channel, not on channel 0.
        if (d === 'c' && onEveryChannel(f)) everyChannel = true;
        else (lacking ??= []).push(d);
        continue;
      }
      v = fieldValue(f.properties, rule.fields[d] as string);
      where = `${path}/properties/${keys.map(pointerToken).join('/')}`;
    } else if ((v = quPathPlane(f.geometry, d)) !== undefined) {
      where = `${path}/geometry/plane/${d}`;
    } else if (d === 'c' && onEveryChannel(f)) {
      everyChannel = true;
      continue;
    } else if (d === 'z') {
      v = sharedZ(f.geometry);
      where = `${path}/geometry/coordinates`;
      // A shared third coordinate in other units (µm, an elevation) is no slice index: an input's fixed plane leaves it aside.
      hint = ' (the third coordinate every position shares is taken as the z slice; fix the input\'s plane, --input z=0:FILE, to leave it aside)';
      if (v === undefined) continue;
    } else {
      continue;
    }
    // Past 2^53 neighbouring integers are one double: 1e20 and 1e20 + 1 would be one plane, so a manifest's are refused too.
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      const huge = Number.isInteger(v) && (v as number) > 0 ? `, beyond ${Number.MAX_SAFE_INTEGER}, past which two values can be one number` : '';
      return { code: 'plane-value-invalid', severity: BUILD_RULES['plane-value-invalid'].severity, path: where, message: `plane ${d} must be a non-negative integer, found ${shown(v)}${huge}${hint}` };
    }
    plane[d] = v;
    dims.push(d);
  }
  if (everyChannel) plane.c = EVERY_CHANNEL;
  const assigned: Assigned = lacking ? { plane, dims, lacking } : { plane, dims };
  if (everyChannel) assigned.everyChannel = true;
  return assigned;
}

/** The value of `--layer-by` or a plane field in a feature: a member such as featureClass, else a (dotted) property field. */
export function optionFieldValue(f: Feature, name: string): unknown {
  // Only scalar members: `geometry` and `properties` are no field.
  const member = Object.prototype.hasOwnProperty.call(f, name) ? (f as Record<string, unknown>)[name] : undefined;
  return member !== undefined && (member === null || typeof member !== 'object') ? member : fieldValue(f.properties, name);
}

/** The layer of a feature: the input's layer, or the value of `--layer-by` (arrays as their JSON, as in PBF tiles). */
export function layerOf(f: Feature, inputLayer: string, layerBy: string | undefined): string {
  return layerBy === undefined ? inputLayer : layerByField(f, layerBy) ?? inputLayer;
}

/** The layer the `--layer-by` field gives a feature, or undefined when it has no value there (missing, null, ""). */
export function layerByField(f: Feature, layerBy: string): string | undefined {
  const v = optionFieldValue(f, layerBy);
  if (v === undefined || v === null || v === '') return undefined;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** Running statistics of one field: the JSON types seen, the numeric range, distinct strings (capped). */
export interface FieldStat {
  number: number; bool: number; string: number; other: number;
  min: number; max: number;
  /** Distinct strings, sorted; capped at ENUM_CAP + 1 (more means "too many to enumerate"). */
  strings: string[];
  /** Colours the data gives some values (QuPath's class colours), value → `#rrggbb`; the first seen wins. */
  colors?: Record<string, string>;
  /** Features whose property of this name a member of the same name hides in PBF tiles (`id`, `parentId`, ...). */
  shadowed?: number;
}

export const ENUM_CAP = 64;
/** The JSON types a field's statistics count, as a description names them. */
const KINDS = ['number', 'bool', 'string'] as const;
/**
 * Enumerations are of labels: a string longer than this makes its field not enumerable, as too many distinct ones
 * do. The statistics then hold no copy of it (a thousand 1 MB ids would otherwise be held, merged and planned).
 */
export const ENUM_STRING_MAX = 256;
export type LayerStats = Record<string, Record<string, FieldStat>>;

/** Feature members that travel as properties in PBF and are declared like them. */
const MEMBER_FIELDS = ['featureClass', 'parentId', 'ref'] as const;
/** Feature members PBF tiles carry as tags (flat.ts): `id` too, when it cannot be the PBF id. */
export const TAGGED_MEMBERS = ['id', ...MEMBER_FIELDS] as const;

/** The value of the member `name` that PBF tiles carry as a tag, or undefined: a property of that name is hidden there. */
export function taggedMember(f: Feature, name: string): unknown {
  if (name === 'id') return isPbfId(f.id) ? undefined : f.id;
  return (MEMBER_FIELDS as readonly string[]).includes(name) ? f[name as (typeof MEMBER_FIELDS)[number]] : undefined;
}

// Made once, not per call: stat() runs for every field of every feature.
const newStat = (): FieldStat => ({ number: 0, bool: 0, string: 0, other: 0, min: Infinity, max: -Infinity, strings: [] });
const newFields = (): Record<string, FieldStat> => ({});

function stat(stats: Record<string, FieldStat>, name: string): FieldStat {
  return ownOr(stats, name, newStat);
}

/** Marks the field's strings as not enumerable: more than ENUM_CAP of them, whatever they are. */
function notEnumerable(s: FieldStat): void {
  s.strings = Array.from({ length: ENUM_CAP + 1 }, (_, i) => String(i));
}

function addString(s: FieldStat, v: string): void {
  if (s.strings.length > ENUM_CAP) return;
  if (v.length > ENUM_STRING_MAX) notEnumerable(s);
  else if (!s.strings.includes(v)) s.strings.push(v);
}

function observe(s: FieldStat, v: unknown): void {
  if (typeof v === 'number') {
    s.number++;
    if (v < s.min) s.min = v;
    if (v > s.max) s.max = v;
  } else if (typeof v === 'boolean') s.bool++;
  else if (typeof v === 'string') { s.string++; addString(s, v); }
  else if (v !== null && v !== undefined) s.other++;
}

function addColour(s: FieldStat, value: string, colour: string): void {
  const colors = (s.colors ??= {});
  if (own(colors, value) === undefined && Object.keys(colors).length < ENUM_CAP) setOwn(colors, value, colour);
}

/**
 * Adds one feature's fields (nested objects flattened, as PBF tiles carry them) and PBF-carried members to its layer's
 * statistics. `colours`: where its class colour is read, when not from its own properties (the feature as read, of one
 * that --fields left without `classification.color`: the legend keeps QuPath's colours).
 */
export function observeFeature(stats: LayerStats, layer: string, f: Feature, colours: Properties | null | undefined = f.properties): void {
  const fields = ownOr(stats, layer, newFields);
  const props = f.properties;
  if (props) {
    // Two fields of one dotted name (`"a.b"` beside `{"a": {"b"}}`): the tiles carry the first, and so is it counted.
    let dotted: Set<string> | undefined;
    // A member carried as a tag wins over a property of its name (flat.ts): the property is not in PBF tiles.
    forEachField(props, (name, v) => {
      if (name.includes('.')) {
        // As in the tiles: a null is no tag and takes no name, so a later field of the name is the one carried.
        if (v === null) return;
        dotted ??= new Set();
        if (dotted.has(name)) return;
        dotted.add(name);
      }
      const s = stat(fields, name);
      if (v !== null && taggedMember(f, name) !== undefined) s.shadowed = (s.shadowed ?? 0) + 1;
      else observe(s, v);
    });
    const c = classColour(colours);
    if (c && (colours === props || fieldValue(props, CLASS_FIELD) !== undefined)) addColour(stat(fields, CLASS_FIELD), c.value, c.colour);
  }
  for (const m of TAGGED_MEMBERS) {
    const v = taggedMember(f, m);
    if (v !== undefined) observe(stat(fields, m), v);
  }
}

/** Merges statistics gathered in parallel; the result does not depend on merge order. */
export function mergeStats(into: LayerStats, from: LayerStats): void {
  for (const [layer, named] of Object.entries(from)) {
    const dst = ownOr(into, layer, newFields);
    for (const [name, b] of Object.entries(named)) {
      const a = stat(dst, name);
      a.number += b.number; a.bool += b.bool; a.string += b.string; a.other += b.other;
      if (b.min < a.min) a.min = b.min;
      if (b.max > a.max) a.max = b.max;
      // Merged as a mark, not value by value: a mark is no set of values (copies of one value would merge to one).
      if (b.strings.length > ENUM_CAP) notEnumerable(a);
      else for (const s of b.strings) addString(a, s);
      if (b.shadowed) a.shadowed = (a.shadowed ?? 0) + b.shadowed;
      if (b.colors) for (const [v, c] of Object.entries(b.colors)) addColour(a, v, c);
    }
  }
}

export type DescribedFields = Pick<VectorLayer, 'fields' | 'fieldranges' | 'fieldenums' | 'fielddescriptions'> & {
  /** Foreign member: colours the data gives values of a String field (QuPath's class colours), field → value → `#rrggbb`. */
  fieldcolors?: Record<string, Record<string, string>>;
};

/** Members that name features rather than class them (QuPath's UUIDs): never listed as a field's values, which legends offer. */
const IDENTIFIERS = new Set(['id', 'parentId']);

/** The layer's `fields`, `fieldranges`, `fieldenums`, `fielddescriptions`, as spec-decisions.md infers them, and `fieldcolors`. */
export function describeFields(fields: Record<string, FieldStat>): DescribedFields {
  const out: Record<string, FieldType> = {};
  const ranges: Record<string, number[]> = {};
  const enums: Record<string, string[]> = {};
  const notes: Record<string, string> = {};
  const colors: Record<string, Record<string, string>> = {};
  for (const name of Object.keys(fields).sort()) {
    const s = fields[name];
    const kinds = (s.number > 0 ? 1 : 0) + (s.bool > 0 ? 1 : 0) + (s.string > 0 ? 1 : 0) + (s.other > 0 ? 1 : 0);
    if (kinds === 0) continue; // only nulls seen: nothing to declare
    if (kinds === 1 && s.number > 0) { setOwn(out, name, 'Number'); setOwn(ranges, name, [s.min, s.max]); continue; }
    if (kinds === 1 && s.bool > 0) { setOwn(out, name, 'Bool'); continue; }
    setOwn(out, name, 'String');
    if (kinds === 1 && s.string > 0 && s.strings.length <= ENUM_CAP && !IDENTIFIERS.has(name)) setOwn(enums, name, [...s.strings].sort());
    if (s.colors) setOwn(colors, name, Object.fromEntries(Object.entries(s.colors).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
    // An array is a string in PBF tiles: beside numbers or booleans the field is mixed there, and said so.
    const mixed = (s.number > 0 ? 1 : 0) + (s.bool > 0 ? 1 : 0) + (s.string + s.other > 0 ? 1 : 0) > 1;
    const types = [...KINDS.filter((k) => s[k] > 0), ...(s.other > 0 ? ['array'] : [])].join(', ');
    if (mixed) setOwn(notes, name, `mixed value types (${types}); PBF tiles keep each value's own type${s.other > 0 ? ', arrays as JSON-encoded strings' : ''}`);
    else if (s.other > 0) setOwn(notes, name, 'arrays are JSON-encoded strings in PBF tiles');
  }
  const res: DescribedFields = { fields: out };
  if (Object.keys(ranges).length) res.fieldranges = ranges;
  if (Object.keys(enums).length) res.fieldenums = enums;
  if (Object.keys(notes).length) res.fielddescriptions = notes;
  if (Object.keys(colors).length) res.fieldcolors = colors;
  return res;
}
