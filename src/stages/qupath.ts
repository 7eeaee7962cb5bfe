// QuPath GeoJSON (0.2 to 0.6) as muDM features: older shapes normalised to 0.4+'s, class colours, nuclei as features.
import type { Feature, Properties } from '../model/feature.js';
import { isPlainObject } from '../model/fields.js';
import { setOwn } from '../model/own.js';
import { repeatedToo, shown, type Issue } from '../validate/issue.js';
import { BUILD_RULES } from '../validate/rules.js';

/** Object types QuPath 0.2 wrote as the feature's `id` (the same id on every object of a type). */
const LEGACY_TYPE_IDS: Readonly<Record<string, string>> = {
  PathAnnotationObject: 'annotation', PathDetectionObject: 'detection', PathCellObject: 'cell',
  PathTileObject: 'tile', TMACoreObject: 'tmaCore', PathRootObject: 'root',
};

/** The field that names a feature's class, whose values `classColour` gives colours for. */
export const CLASS_FIELD = 'classification.name';

/** The layer of the nucleus features made from cells' `nucleusGeometry`. */
export const NUCLEUS_LAYER = 'nucleus';

/**
 * Added to a cell's sequence number to number its nucleus: above any input's count, so nuclei never share a number
 * with a feature read, and still a safe integer (it is the nucleus's PBF id, and thinning hashes it).
 */
export const NUCLEUS_SEQ = 2 ** 52;

/** A property member `from` renamed `to`, in place in the member order. */
function renamed(props: Properties, from: string, to: string, value: unknown): Properties {
  const out: Properties = {};
  for (const k of Object.keys(props)) {
    if (k === from) out[to] = value;
    else if (k !== to) out[k] = props[k];
  }
  return out;
}

/** QuPath (0.5+) writes non-finite measurements as these strings; a number field cannot hold them, so they become null. */
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);

/**
 * `[{name, value}, ...]` (before 0.4) as `{name: value}`; undefined when the list is not of that shape. Of a name
 * given twice the first value is kept, as of two fields of one name (a later "NaN" erased an earlier number), and
 * `member-name-repeated`'s kin says so, at the first repeat's index.
 */
function measurementObject(list: unknown[], out: Issue[]): Properties | undefined {
  const obj: Properties = {};
  const repeats = new Map<string, { at: number; count: number; last: unknown }>();
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    if (!isPlainObject(m) || typeof m.name !== 'string') return undefined;
    if (!Object.hasOwn(obj, m.name)) { setOwn(obj, m.name, m.value); continue; }
    const r = repeats.get(m.name);
    if (r) { r.count++; r.last = m.value; } else repeats.set(m.name, { at: i, count: 2, last: m.value });
  }
  const [first, ...others] = repeats;
  if (first) {
    const [name, r] = first;
    const also = repeatedToo(others.map(([n]) => shown(n)));
    const message = `measurement name ${shown(name)} is given ${r.count} times in the list: tiles keep the first value, ${shown(obj[name])}, not the last, ${shown(r.last)}${also}`;
    out.push({ code: 'measurement-name-repeated', severity: BUILD_RULES['measurement-name-repeated'].severity, path: `/properties/measurements/${r.at}`, message });
  }
  return obj;
}

/** The full text of a class (`Tumor: Positive`): 0.4+ `names`, or a 0.2 class's chain of `parentClass`. */
function className(c: Record<string, unknown>): string | undefined {
  if (Array.isArray(c.names) && c.names.length > 0 && c.names.every((n) => typeof n === 'string')) return c.names.join(': ');
  if (typeof c.name !== 'string') return undefined;
  const parent = isPlainObject(c.parentClass) ? className(c.parentClass) : undefined;
  return parent ? `${parent}: ${c.name}` : c.name;
}

/** Whether a parsed feature was written by QuPath: it has an object type (any version) or a nucleus geometry. */
export function isQuPathFeature(f: Record<string, unknown>): boolean {
  const props = f.properties;
  if (isPlainObject(props) && (typeof props.objectType === 'string' || typeof props.object_type === 'string')) return true;
  return f.nucleusGeometry !== undefined || (typeof f.id === 'string' && LEGACY_TYPE_IDS[f.id] !== undefined);
}

/**
 * Normalises a QuPath feature in place to the 0.4+ shape; anything else is left untouched. `object_type` becomes
 * `objectType`; a 0.2 type id (`"id": "PathCellObject"`) becomes `objectType` and is dropped as an id; `measurements`
 * as a list of `{name, value}` becomes an object, and non-finite values ("NaN") null; a derived class gets `name`,
 * its full text (`names` ["Tumor", "Positive"] → "Tumor: Positive"), beside what it had. What it finds to say goes to `out`.
 */
export function normaliseQuPath(f: Record<string, unknown>, out: Issue[] = []): void {
  if (!isQuPathFeature(f)) return;
  let props = isPlainObject(f.properties) ? f.properties : undefined;
  const legacyType = typeof f.id === 'string' ? LEGACY_TYPE_IDS[f.id] : undefined;
  if (legacyType !== undefined) delete f.id;
  if (!props) {
    if (legacyType !== undefined) f.properties = { objectType: legacyType };
    return;
  }
  if (typeof props.object_type === 'string' && props.objectType === undefined) props = renamed(props, 'object_type', 'objectType', props.object_type);
  else if (legacyType !== undefined && props.objectType === undefined) props = { objectType: legacyType, ...props };
  const m = props.measurements;
  const measurements = Array.isArray(m) ? measurementObject(m, out) : isPlainObject(m) ? m : undefined;
  if (measurements) {
    for (const k of Object.keys(measurements)) if (NON_FINITE.has(measurements[k] as string)) measurements[k] = null;
    props.measurements = measurements;
  }
  const c = props.classification;
  if (isPlainObject(c)) {
    const name = className(c);
    if (name !== undefined && name !== c.name) props.classification = c.name === undefined ? { name, ...c } : { ...c, name };
  }
  f.properties = props;
}

function hex(r: unknown, g: unknown, b: unknown): string | undefined {
  const ok = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 255;
  if (!ok(r) || !ok(g) || !ok(b)) return undefined;
  return `#${[r, g, b].map((v) => (v as number).toString(16).padStart(2, '0')).join('')}`;
}

/** A colour as QuPath writes it, as `#rrggbb`: [r, g, b] or [r, g, b, a] (0.4+), or a packed (A)RGB integer (0.2). */
export function colourHex(v: unknown): string | undefined {
  if (Array.isArray(v)) return v.length === 3 || v.length === 4 ? hex(v[0], v[1], v[2]) : undefined;
  if (typeof v === 'number' && Number.isInteger(v)) {
    const rgb = v & 0xffffff;
    return hex(rgb >> 16, (rgb >> 8) & 0xff, rgb & 0xff);
  }
  if (typeof v === 'string' && /^#[0-9a-fA-F]{6}$/.test(v)) return v.toLowerCase();
  return undefined;
}

/** The class name (`CLASS_FIELD`'s value) and its colour of a feature classified the QuPath way, or undefined. */
export function classColour(props: Properties | null | undefined): { value: string; colour: string } | undefined {
  const c = props?.classification;
  if (!isPlainObject(c) || typeof c.name !== 'string') return undefined;
  const colour = colourHex(c.color ?? c.colorRGB);
  return colour === undefined ? undefined : { value: c.name, colour };
}

/** How QuPath names the measurements of a cell's nucleus ("Nucleus: Area µm^2"; "Nucleus/Cell area ratio" is the cell's). */
const NUCLEUS_MEASUREMENT = 'Nucleus:';

/**
 * A cell's nucleus as a feature of its own: the cell's `nucleusGeometry`, `parentId` the cell's id, the cell's class
 * (so both colour alike), `objectType` "nucleus", and the cell's measurements of its nucleus (so colouring by one
 * colours the nucleus too, where it drew "no value"). Undefined when the feature has no nucleus geometry.
 */
export function nucleusOf(cell: Feature): Feature | undefined {
  const geometry = (cell as unknown as Record<string, unknown>).nucleusGeometry;
  if (geometry === undefined || geometry === null) return undefined;
  const properties: Properties = { objectType: 'nucleus' };
  const c = cell.properties?.classification;
  if (c !== undefined) properties.classification = c;
  const m = cell.properties?.measurements;
  if (isPlainObject(m)) {
    const own = Object.entries(m).filter(([k]) => k.startsWith(NUCLEUS_MEASUREMENT));
    if (own.length > 0) properties.measurements = Object.fromEntries(own);
  }
  const nucleus: Feature = { type: 'Feature', geometry: geometry as Feature['geometry'], properties };
  if (cell.id !== undefined) nucleus.parentId = cell.id;
  return nucleus;
}
