// MVT v2 encoder on pbf's writer: tiled integer geometry to layers with deduplicated keys and values.
import { PbfWriter } from 'pbf';
import type { FeatureHead } from './record.js';
import { EXTENT } from '../tiling/space.js';
import type { TileGeometry } from './record.js';

export type PbfValue = string | number | boolean;

/**
 * Every distinct tag key and value of a tiling call, numbered once. Features carry numbers, so building a
 * tile's key and value tables needs no hashing: a hash lookup per tag per tile was a sixth of the PBF time.
 */
export class PbfDictionary {
  readonly keys: string[] = [];
  readonly values: PbfValue[] = [];
  private keyMap = new Map<string, number>();
  // Numbers by value (SameValueZero merges -0 and 0, which encode alike), strings by text, booleans in two slots:
  // a number and its text stay distinct values, as in vt-pbf.
  private numMap = new Map<number, number>();
  private strMap = new Map<string, number>();
  private boolIds = [-1, -1];

  key(k: string): number {
    let id = this.keyMap.get(k);
    if (id === undefined) { id = this.keys.length; this.keys.push(k); this.keyMap.set(k, id); }
    return id;
  }

  value(v: PbfValue): number {
    let id: number | undefined;
    if (typeof v === 'number') {
      id = this.numMap.get(v);
      if (id === undefined) { id = this.values.length; this.values.push(v); this.numMap.set(v, id); }
    } else if (typeof v === 'string') {
      id = this.strMap.get(v);
      if (id === undefined) { id = this.values.length; this.values.push(v); this.strMap.set(v, id); }
    } else {
      const slot = v ? 1 : 0;
      id = this.boolIds[slot];
      if (id < 0) { id = this.values.length; this.values.push(v); this.boolIds[slot] = id; }
    }
    return id;
  }
}

/** A feature's MVT id and tags (dictionary numbers), prepared once per feature and reused by every tile. */
export interface PbfAttributes {
  id: number;
  keys: number[];
  values: number[];
}

function pbfValue(v: unknown): PbfValue | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  // Arrays and objects as JSON text, the way vt-pbf does it; descriptors declare such fields as String.
  return JSON.stringify(v);
}

/** A feature's MVT id (null: it has none of its own, the tiler gives it seq) and tags, before numbering. */
export interface FeatureTags { id: number | null; keys: string[]; values: PbfValue[] }

/** Whether an id can be a PBF feature id (a non-negative safe integer); any other id travels as property `id`. */
export function isPbfId(id: unknown): id is number {
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0;
}

/**
 * Id and tags of a feature. Id: the input id when it is a non-negative safe integer. Any other id (a string, a
 * negative or unsafe integer) travels as the tag `id`; `featureClass`, `parentId` and `ref` as tags of those names. These members come first and win over a
 * property of the same name, so a tag name never appears twice in one MVT feature.
 */
export function featureTags(f: FeatureHead): FeatureTags {
  const id = isPbfId(f.id) ? f.id : null;
  const keys: string[] = [];
  const values: PbfValue[] = [];
  const member = (name: string, m: unknown) => {
    const v = pbfValue(m);
    if (v !== undefined) { keys.push(name); values.push(v); }
  };
  if (f.id !== undefined && id === null) member('id', f.id);
  if (f.featureClass !== undefined) member('featureClass', f.featureClass);
  if (f.parentId !== undefined) member('parentId', f.parentId);
  if (f.ref !== undefined) member('ref', f.ref);
  const props = f.properties ?? null;
  if (props) {
    for (const name of Object.keys(props)) {
      const v = pbfValue(props[name]);
      // Property names are unique, so a name already among the keys is one of the members above.
      if (v === undefined || keys.includes(name)) continue;
      keys.push(name); values.push(v);
    }
  }
  return { id, keys, values };
}

/** The feature's tags numbered in `dict`; id `seq` when it has none of its own. */
export function pbfAttributes(t: FeatureTags, seq: number, dict: PbfDictionary): PbfAttributes {
  const n = t.keys.length;
  const keys = new Array<number>(n);
  const values = new Array<number>(n);
  for (let i = 0; i < n; i++) { keys[i] = dict.key(t.keys[i]); values[i] = dict.value(t.values[i]); }
  return { id: t.id ?? seq, keys, values };
}

/** One input feature placed in a tile: its attributes and its geometry in zoom-global tile units. */
export interface PbfFeatureInput { readonly attrs: PbfAttributes; readonly g: TileGeometry }
export interface PbfLayerInput { name: string; features: readonly PbfFeatureInput[] }

/** MVT geometry type of a leaf geometry; 0 for what MVT cannot hold (meshes, collections). */
function mvtType(g: TileGeometry): 0 | 1 | 2 | 3 {
  return g.k === 'points' ? 1 : g.k === 'lines' ? 2 : g.k === 'polygons' ? 3 : 0;
}

/** Number of MVT features a geometry becomes: one per leaf member of a collection, none for a mesh. */
export function mvtFeatureCount(g: TileGeometry): number {
  if (g.k === 'collection') { let n = 0; for (const m of g.members) n += mvtFeatureCount(m); return n; }
  return mvtType(g) === 0 ? 0 : 1;
}

// The writer is reused across tiles (a worker is one thread); tiles are copied out with slice().
const w = new PbfWriter(new Uint8Array(64 * 1024));
let ox = 0, oy = 0; // tile origin in zoom-global tile units, read by the geometry writer

const zz = (n: number) => (n << 1) ^ (n >> 31);

let cx = 0, cy = 0; // MVT cursor: it carries over from one part or ring to the next within a feature

function writePart(c: ArrayLike<number>, polygon: boolean, pbf: PbfWriter): void {
  // Rings are stored closed; MVT closes them with ClosePath instead of repeating the first position.
  const n = (c.length >> 1) - (polygon ? 1 : 0);
  for (let i = 0; i < n; i++) {
    if (i === 0) pbf.writeVarint((1 << 3) | 1);
    else if (i === 1) pbf.writeVarint(((n - 1) << 3) | 2);
    const x = c[i * 2] - ox, y = c[i * 2 + 1] - oy;
    pbf.writeVarint(zz(x - cx)); pbf.writeVarint(zz(y - cy)); cx = x; cy = y;
  }
  if (polygon) pbf.writeVarint((1 << 3) | 7);
}

function writeGeometry(g: TileGeometry, pbf: PbfWriter): void {
  cx = 0; cy = 0;
  if (g.k === 'points') {
    const c = g.xy, n = c.length >> 1;
    pbf.writeVarint((n << 3) | 1);
    for (let i = 0; i < n; i++) {
      const x = c[i * 2] - ox, y = c[i * 2 + 1] - oy;
      pbf.writeVarint(zz(x - cx)); pbf.writeVarint(zz(y - cy)); cx = x; cy = y;
    }
  } else if (g.k === 'lines') for (const p of g.parts) writePart(p, false, pbf);
  else if (g.k === 'polygons') for (const poly of g.polys) for (const r of poly) writePart(r, true, pbf);
}

// Tables of the layer being written, in first-seen order: dictionary number → table index, valid where the
// stamp equals the layer's generation (no clearing between layers).
let dict: PbfDictionary;
let generation = 0;
let keyStamp = new Int32Array(256), keyLocal = new Int32Array(256);
let valueStamp = new Int32Array(1024), valueLocal = new Int32Array(1024);
let keyList = new Int32Array(256), valueList = new Int32Array(1024);
let keyCount = 0, valueCount = 0;

function grow(a: Int32Array<ArrayBuffer>, n: number): Int32Array<ArrayBuffer> {
  if (a.length >= n) return a;
  const b = new Int32Array(Math.max(n, a.length * 2));
  b.set(a);
  return b;
}

function writeTags(a: PbfAttributes, pbf: PbfWriter): void {
  for (let i = 0; i < a.keys.length; i++) {
    const k = a.keys[i], v = a.values[i];
    if (keyStamp[k] !== generation) { keyStamp[k] = generation; keyLocal[k] = keyCount; keyList[keyCount++] = k; }
    if (valueStamp[v] !== generation) { valueStamp[v] = generation; valueLocal[v] = valueCount; valueList[valueCount++] = v; }
    pbf.writeVarint(keyLocal[k]); pbf.writeVarint(valueLocal[v]);
  }
}

let current: PbfAttributes;
function writeFeature(g: TileGeometry, pbf: PbfWriter): void {
  pbf.writeVarintField(1, current.id);
  if (current.keys.length > 0) pbf.writeMessage(2, writeTags, current);
  pbf.writeVarintField(3, mvtType(g));
  pbf.writeMessage(4, writeGeometry, g);
}

function writeLeaves(g: TileGeometry, pbf: PbfWriter): void {
  if (g.k === 'collection') { for (const m of g.members) writeLeaves(m, pbf); return; }
  if (mvtType(g) !== 0) pbf.writeMessage(2, writeFeature, g);
}

function writeValue(v: PbfValue, pbf: PbfWriter): void {
  if (typeof v === 'string') pbf.writeStringField(1, v);
  else if (typeof v === 'boolean') pbf.writeBooleanField(7, v);
  // Integers beyond 2^53 are not exact in JavaScript and may not fit a varint: they go as doubles.
  else if (!Number.isSafeInteger(v)) pbf.writeDoubleField(3, v);
  else if (v < 0) pbf.writeSVarintField(6, v);
  else pbf.writeVarintField(5, v);
}

function writeLayer(l: PbfLayerInput, pbf: PbfWriter): void {
  generation++;
  keyCount = 0; valueCount = 0;
  pbf.writeVarintField(15, 2);
  pbf.writeStringField(1, l.name);
  pbf.writeVarintField(5, EXTENT);
  for (const f of l.features) { current = f.attrs; writeLeaves(f.g, pbf); }
  for (let i = 0; i < keyCount; i++) pbf.writeStringField(3, dict.keys[keyList[i]]);
  for (let i = 0; i < valueCount; i++) pbf.writeMessage(4, writeValue, dict.values[valueList[i]]);
}

/**
 * Encodes a tile whose origin is (x0, y0) in zoom-global tile units (tile index × EXTENT): geometry is written
 * tile-local; tags are numbers in `dictionary`. Layers are written in the given order, skipping those without an MVT feature. Returns an empty
 * array when nothing could be written (only meshes, say).
 */
export function encodePbf(layers: readonly PbfLayerInput[], x0: number, y0: number, dictionary: PbfDictionary): Uint8Array {
  ox = x0; oy = y0;
  dict = dictionary;
  keyStamp = grow(keyStamp, dict.keys.length); keyLocal = grow(keyLocal, dict.keys.length); keyList = grow(keyList, dict.keys.length);
  valueStamp = grow(valueStamp, dict.values.length); valueLocal = grow(valueLocal, dict.values.length); valueList = grow(valueList, dict.values.length);
  w.pos = 0;
  w.length = w.buf.length;
  for (const l of layers) {
    let n = 0;
    for (const f of l.features) n += mvtFeatureCount(f.g);
    if (n > 0) w.writeMessage(3, writeLayer, l);
  }
  return w.buf.slice(0, w.pos);
}

function varintBytes(n: number): number {
  let b = 1;
  while (n >= 0x80) { n = Math.floor(n / 128); b++; }
  return b;
}

/** Bytes the geometry commands of a tiled geometry take (exact for the command stream, without field headers). */
function geometryBytes(g: TileGeometry, x0: number, y0: number): number {
  let b = 0, cx = 0, cy = 0;
  const coord = (x: number, y: number) => { x -= x0; y -= y0; b += varintBytes(zz(x - cx)) + varintBytes(zz(y - cy)); cx = x; cy = y; };
  switch (g.k) {
    case 'points': b += 1; for (let i = 0; i + 1 < g.xy.length; i += 2) coord(g.xy[i], g.xy[i + 1]); return b;
    case 'lines': for (const p of g.parts) { b += 2; for (let i = 0; i + 1 < p.length; i += 2) coord(p[i], p[i + 1]); } return b;
    case 'polygons': for (const poly of g.polys) for (const r of poly) { b += 3; for (let i = 0; i + 3 < r.length; i += 2) coord(r[i], r[i + 1]); } return b;
    default: return 0;
  }
}

/** Encoded size of a value message (the value itself, its header and its length prefix). */
export function valueBytes(v: PbfValue): number {
  if (typeof v === 'string') { const n = v.length * 2; return 3 + n + varintBytes(n); } // UTF-16 × 2 bounds UTF-8 for most text
  if (typeof v === 'boolean') return 4;
  return 11;
}

/**
 * Estimated bytes a placed feature adds to a PBF tile, leaving out keys and values (shared between features:
 * the caller counts each new one once with `valueBytes`). Geometry is counted exactly.
 */
export function estimatePbfFeature(f: PbfFeatureInput, x0: number, y0: number): number {
  const leaves = (g: TileGeometry): number => {
    if (g.k === 'collection') { let s = 0; for (const m of g.members) s += leaves(m); return s; }
    if (mvtType(g) === 0) return 0;
    const gb = geometryBytes(g, x0, y0);
    const tags = f.attrs.keys.length * 4;
    const body = 1 + varintBytes(f.attrs.id) + 2 + tags + 2 + 1 + varintBytes(gb) + gb;
    return 1 + varintBytes(body) + body;
  };
  return leaves(f.g);
}
