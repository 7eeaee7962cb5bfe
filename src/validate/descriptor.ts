// Tileset descriptor validation (spec 2.3, 4.2, 7.7, 7.8, 8): TileJSON 3.0.0 members and the microscopy extensions.
import { pointerToken, shown, type Issue } from './issue.js';
import { checkMultiscale } from './multiscale.js';
import { report } from './rules.js';
import { checkVocabularies } from './vocabulary.js';
import { allStrings, checkOptionalString, hasOwn, isObject, type JsonObject } from './util.js';

const MAX_ZOOM = 30;

const STRING_MEMBERS = ['name', 'description', 'version', 'attribution', 'legend', 'scheme', 'template', 'format'];
/** URL patterns: TileJSON 3.0.0 gives them as arrays of strings, the spec's table as one; either is accepted. */
const URL_MEMBERS = ['grids', 'data'];

function isZoom(z: unknown): z is number {
  return Number.isInteger(z) && (z as number) >= 0 && (z as number) <= MAX_ZOOM;
}

/** minzoom, maxzoom (and fillzoom on the descriptor): integers 0..30, minzoom not above maxzoom. */
function checkZooms(obj: JsonObject, path: string, names: readonly string[], out: Issue[]): void {
  for (const name of names) {
    const z = obj[name];
    if (z !== undefined && !isZoom(z)) {
      report(out, 'zoom-invalid', `${path}/${name}`, `${name} must be an integer from 0 to ${MAX_ZOOM}, found ${shown(z)}`);
    }
  }
  const min = obj.minzoom;
  const max = obj.maxzoom;
  if (isZoom(min) && isZoom(max) && min > max) {
    report(out, 'zoom-range', `${path}/minzoom`, `minzoom must not be above maxzoom, found minzoom ${min} and maxzoom ${max}`);
  }
}

/** Number entries of bounds/center; reports each bad entry, returns whether all were numbers. */
function numbers(v: readonly unknown[], path: string, code: 'bounds-not-number' | 'center-not-number', name: string, out: Issue[]): boolean {
  let ok = true;
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i])) {
      report(out, code, `${path}/${i}`, `${name} entries must be finite numbers, found ${shown(v[i])}`);
      ok = false;
    }
  }
  return ok;
}

/** bounds: 4 `[minX, minY, maxX, maxY]` or 10 `[minT, minC, minZ, minX, minY, maxT, …]`; 5–9 accepted with a warning. */
function checkBounds(b: unknown, path: string, out: Issue[]): void {
  if (!Array.isArray(b) || b.length < 4 || b.length > 10) {
    report(out, 'bounds-invalid', path, `bounds must be an array of 4 to 10 numbers, found ${shown(b)}${Array.isArray(b) ? ` (${b.length})` : ''}`);
    return;
  }
  if (!numbers(b, path, 'bounds-not-number', 'bounds', out)) return;
  const n = b.length;
  if (n !== 4 && n !== 10) {
    report(out, 'bounds-length-unusual', path,
      `bounds of ${n} numbers have no defined layout (4: minX, minY, maxX, maxY; 10: minT, minC, minZ, minX, minY, maxT, maxC, maxZ, maxX, maxY), found ${shown(b)}`);
    return;
  }
  const half = n / 2;
  for (let i = 0; i < half; i++) {
    if ((b[i] as number) > (b[i + half] as number)) {
      report(out, 'bounds-inverted', path, `bounds minimum ${shown(b[i])} is above its maximum ${shown(b[i + half])}, found ${shown(b)}`);
      return;
    }
  }
}

/** center: 3 `[x, y, zoom]` to 6 `[t, c, z, x, y, zoom]` numbers, the zoom last. */
function checkCenter(c: unknown, path: string, out: Issue[]): void {
  if (!Array.isArray(c) || c.length < 3 || c.length > 6) {
    report(out, 'center-invalid', path, `center must be an array of 3 to 6 numbers, zoom last, found ${shown(c)}${Array.isArray(c) ? ` (${c.length})` : ''}`);
    return;
  }
  if (!numbers(c, path, 'center-not-number', 'center', out)) return;
  const z: unknown = c[c.length - 1];
  if (!isZoom(z)) {
    report(out, 'zoom-invalid', `${path}/${c.length - 1}`, `center zoom (its last entry) must be an integer from 0 to ${MAX_ZOOM}, found ${shown(z)}`);
  }
}

/** A map member of a layer whose every value must pass `valid`. */
function checkFieldMap(
  layer: JsonObject, name: 'fieldranges' | 'fieldenums' | 'fielddescriptions', path: string,
  valid: (v: unknown) => boolean, expected: string, out: Issue[],
): void {
  const map = layer[name];
  if (map === undefined) return;
  const code = name === 'fieldranges' ? 'fieldranges-invalid' : name === 'fieldenums' ? 'fieldenums-invalid' : 'fielddescriptions-invalid';
  if (!isObject(map)) {
    report(out, code, `${path}/${name}`, `${name} must be a map of field name to ${expected}, found ${shown(map)}`);
    return;
  }
  for (const key in map) {
    if (hasOwn(map, key) && !valid(map[key])) {
      report(out, code, `${path}/${name}/${pointerToken(key)}`, `${name} values must be ${expected}, found ${shown(map[key])}`);
    }
  }
}

function isRangeList(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string' && !Number.isFinite(v[i])) return false;
  return true;
}

function isStringList(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string') return false;
  return true;
}

const isString = (v: unknown): boolean => typeof v === 'string';

function checkFields(fields: unknown, path: string, out: Issue[]): void {
  if (fields === null) return;
  if (!isObject(fields)) {
    report(out, 'layer-fields-not-object', path, `fields must be a map of field name to "String", "Number" or "Bool", found ${shown(fields)}`);
    return;
  }
  for (const key in fields) {
    if (!hasOwn(fields, key)) continue;
    const t = fields[key];
    if (t !== 'String' && t !== 'Number' && t !== 'Bool') {
      report(out, 'field-type-invalid', `${path}/${pointerToken(key)}`,
        `field type must be exactly "String", "Number" or "Bool", found ${shown(t)}; a description of the field belongs in fielddescriptions`);
    }
  }
}

function checkLayer(layer: unknown, path: string, ids: Set<string>, out: Issue[]): void {
  if (!isObject(layer)) {
    report(out, 'layer-not-object', path, `vector layer must be an object with id and fields, found ${shown(layer)}`);
    return;
  }
  const id = layer.id;
  if (id === undefined) report(out, 'layer-id-missing', path, 'vector layer must have an id, found none');
  else if (typeof id !== 'string') report(out, 'layer-id-not-string', `${path}/id`, `vector layer id must be a string, found ${shown(id)}`);
  else if (ids.has(id)) report(out, 'layer-id-duplicate', `${path}/id`, `vector layer ids must be unique, found ${shown(id)} again`);
  else ids.add(id);
  if (layer.fields === undefined) {
    report(out, 'layer-fields-missing', path, 'vector layer must have fields (a map of field name to "String", "Number" or "Bool"; may be empty), found none');
  } else {
    checkFields(layer.fields, `${path}/fields`, out);
  }
  checkFieldMap(layer, 'fieldranges', path, isRangeList, 'an array of numbers or strings', out);
  checkFieldMap(layer, 'fieldenums', path, isStringList, 'an array of strings', out);
  checkFieldMap(layer, 'fielddescriptions', path, isString, 'a string', out);
  checkOptionalString(layer, 'description', path, out);
  checkZooms(layer, path, ['minzoom', 'maxzoom'], out);
  if (layer.vocabularies !== undefined) checkVocabularies(layer.vocabularies, `${path}/vocabularies`, out, false);
}

function checkAssets(assets: unknown, path: string, out: Issue[]): void {
  if (!Array.isArray(assets)) {
    report(out, 'assets-not-array', path, `assets must be an array of asset objects, found ${shown(assets)}`);
    return;
  }
  for (let i = 0; i < assets.length; i++) {
    const a: unknown = assets[i];
    const ap = `${path}/${i}`;
    if (!isObject(a)) {
      report(out, 'asset-not-object', ap, `asset must be an object with role and href, found ${shown(a)}`);
      continue;
    }
    if (typeof a.role !== 'string') {
      report(out, 'asset-role-invalid', a.role === undefined ? ap : `${ap}/role`,
        `asset must have a string role (raster, vector, features, tiles3d, download, ...), found ${a.role === undefined ? 'none' : shown(a.role)}`);
    }
    if (typeof a.href !== 'string') {
      report(out, 'asset-href-invalid', a.href === undefined ? ap : `${ap}/href`,
        `asset must have a string href (an absolute URL or a relative path), found ${a.href === undefined ? 'none' : shown(a.href)}`);
    }
    checkOptionalString(a, 'media_type', ap, out);
    checkOptionalString(a, 'title', ap, out);
  }
}

/** Internal entry: appends the issues of one descriptor to `out`. */
export function checkDescriptor(d: unknown, path: string, out: Issue[]): void {
  if (!isObject(d)) {
    report(out, 'document-not-object', path, `tileset descriptor must be an object, found ${shown(d)}`);
    return;
  }
  const tilejson = d.tilejson;
  if (tilejson === undefined) report(out, 'tilejson-missing', path, 'descriptor must have tilejson (the TileJSON version, "3.0.0"), found none');
  else if (typeof tilejson !== 'string') report(out, 'tilejson-not-string', `${path}/tilejson`, `tilejson must be a string such as "3.0.0", found ${shown(tilejson)}`);

  const tiles = d.tiles;
  if (tiles === undefined) {
    report(out, 'tiles-missing', path, 'descriptor must have tiles (an array of tile URL patterns), found none');
  } else if (!Array.isArray(tiles) || tiles.length === 0) {
    report(out, 'tiles-invalid', `${path}/tiles`, `tiles must be a non-empty array of tile URL patterns, found ${shown(tiles)}`);
  } else {
    for (let i = 0; i < tiles.length; i++) {
      if (typeof tiles[i] !== 'string') report(out, 'tile-url-not-string', `${path}/tiles/${i}`, `tile URL pattern must be a string, found ${shown(tiles[i])}`);
    }
  }

  const layers = d.vector_layers;
  if (layers === undefined) {
    report(out, 'vector-layers-missing', path, 'descriptor must have vector_layers (an array of vector layer objects), found none');
  } else if (!Array.isArray(layers)) {
    report(out, 'vector-layers-not-array', `${path}/vector_layers`, `vector_layers must be an array of vector layer objects, found ${shown(layers)}`);
  } else {
    const ids = new Set<string>();
    for (let i = 0; i < layers.length; i++) checkLayer(layers[i], `${path}/vector_layers/${i}`, ids, out);
  }

  for (const name of STRING_MEMBERS) checkOptionalString(d, name, path, out);
  for (const name of URL_MEMBERS) {
    const v = d[name];
    if (v !== undefined && typeof v !== 'string' && !(Array.isArray(v) && allStrings(v))) {
      report(out, 'member-not-string', `${path}/${name}`, `${name} must be a URL pattern or an array of them (strings), found ${shown(v)}`);
    }
  }
  checkZooms(d, path, ['minzoom', 'maxzoom', 'fillzoom'], out);
  if (d.bounds !== undefined) checkBounds(d.bounds, `${path}/bounds`, out);
  if (d.center !== undefined) checkCenter(d.center, `${path}/center`, out);
  if (d.multiscale !== undefined) checkMultiscale(d.multiscale, `${path}/multiscale`, out);
  const sf = d.scale_factor;
  if (sf !== undefined && !(Number.isFinite(sf) && (sf as number) > 0)) {
    report(out, 'scale-factor-invalid', `${path}/scale_factor`, `scale_factor must be a positive number (2 is assumed when absent), found ${shown(sf)}`);
  }
  if (d.assets !== undefined) checkAssets(d.assets, `${path}/assets`, out);
}

/** Validates a tileset descriptor (a `tileset.json`, or the zoom-0 overview tile with `format: "json"`). */
export function validateDescriptor(value: unknown, path = ''): Issue[] {
  const out: Issue[] = [];
  checkDescriptor(value, path, out);
  return out;
}
