// MVT v2 encoder on pbf's writer: tiled integer geometry to layers with deduplicated keys and values.
import { PbfWriter } from 'pbf';
import { EXTENT } from '../tiling/space.js';
import type { FeatureTags, PbfValue, TileGeometry } from '../tiling/flat.js';
import { NumberIds } from './number-ids.js';

/**
 * Every distinct tag key and value of a tiling call, numbered once. Features carry numbers, so building a
 * tile's key and value tables needs no hashing: a hash lookup per tag per tile was a sixth of the PBF time.
 */
export class PbfDictionary {
  readonly keys: string[] = [];
  readonly values: PbfValue[] = [];
  private keyMap = new Map<string, number>();
  // Numbered key lists by the list itself: a unit's records of the same keys share one (record-strings.ts `keyList`).
  private keyLists = new Map<readonly string[], number[]>();
  // Numbers by value (SameValueZero merges -0 and 0, which encode alike), strings by text, booleans in two slots:
  // a number and its text stay distinct values, as in vt-pbf.
  private readonly numbers = new NumberIds();
  private strMap = new Map<string, number>();
  private boolIds = [-1, -1];

  /** Starts over for the next tiling call, keeping the tables' memory. */
  reset(): void {
    this.keys.length = 0; this.values.length = 0;
    this.keyMap.clear(); this.keyLists.clear(); this.strMap.clear(); this.numbers.clear();
    this.boolIds[0] = -1; this.boolIds[1] = -1;
  }

  key(k: string): number {
    let id = this.keyMap.get(k);
    if (id === undefined) { id = this.keys.length; this.keys.push(k); this.keyMap.set(k, id); }
    return id;
  }

  /** `keys` numbered, one array (read only) for every feature given the same list. */
  keysOf(keys: readonly string[]): number[] {
    let ids = this.keyLists.get(keys);
    if (ids === undefined) { ids = keys.map((k) => this.key(k)); this.keyLists.set(keys, ids); }
    return ids;
  }

  value(v: PbfValue): number {
    let id: number | undefined;
    if (typeof v === 'number') {
      id = this.numbers.idOf(v, this.values.length);
      if (id === this.values.length) this.values.push(v);
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

/** The feature's tags numbered in `dict`; id `seq` when it has none of its own. */
export function pbfAttributes(t: FeatureTags, seq: number, dict: PbfDictionary): PbfAttributes {
  const n = t.keys.length;
  const values = new Array<number>(n);
  for (let i = 0; i < n; i++) values[i] = dict.value(t.values[i]);
  return { id: t.id ?? seq, keys: dict.keysOf(t.keys), values };
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

const zz = (n: number) => (n << 1) ^ (n >> 31);

function grow(a: Int32Array<ArrayBuffer>, n: number): Int32Array<ArrayBuffer> {
  if (a.length >= n) return a;
  const b = new Int32Array(Math.max(n, a.length * 2));
  b.set(a);
  return b;
}

function writeValue(v: PbfValue, pbf: PbfWriter): void {
  if (typeof v === 'string') pbf.writeStringField(1, v);
  else if (typeof v === 'boolean') pbf.writeBooleanField(7, v);
  // Integers beyond 2^53 are not exact in JavaScript and may not fit a varint: they go as doubles.
  else if (!Number.isSafeInteger(v)) pbf.writeDoubleField(3, v);
  else if (v < 0) pbf.writeSVarintField(6, v);
  else pbf.writeVarintField(5, v);
}

/**
 * Writes MVT tiles. It owns what it reuses from tile to tile: the writer (tiles are copied out with slice()) and
 * the key and value tables of the layer being written; a thread reuses one from call to call. The write callbacks are made
 * once, here, as pbf's writeMessage takes a function and one argument.
 */
export class PbfEncoder {
  private readonly w = new PbfWriter(new Uint8Array(64 * 1024));
  private dict = new PbfDictionary();
  // Tile origin in zoom-global tile units, and the MVT cursor, which carries over from one part or ring to the
  // next within a feature.
  private ox = 0;
  private oy = 0;
  private cx = 0;
  private cy = 0;
  // Tables of the layer being written, in first-seen order: dictionary number → table index, valid where the
  // stamp equals the layer's generation (no clearing between layers).
  private generation = 0;
  private keyStamp = new Int32Array(256);
  private keyLocal = new Int32Array(256);
  private keyList = new Int32Array(256);
  private valueStamp = new Int32Array(1024);
  private valueLocal = new Int32Array(1024);
  private valueList = new Int32Array(1024);
  private keyCount = 0;
  private valueCount = 0;
  private current: PbfAttributes = { id: 0, keys: [], values: [] };

  /**
   * Encodes a tile whose origin is (x0, y0) in zoom-global tile units (tile index × EXTENT): geometry is written
   * tile-local; tags are numbers in `dictionary`. Layers are written in the given order, skipping those without an
   * MVT feature. Returns an empty array when nothing could be written (only meshes, say).
   */
  encode(layers: readonly PbfLayerInput[], x0: number, y0: number, dictionary: PbfDictionary): Uint8Array {
    this.ox = x0; this.oy = y0;
    const dict = (this.dict = dictionary);
    this.keyStamp = grow(this.keyStamp, dict.keys.length); this.keyLocal = grow(this.keyLocal, dict.keys.length); this.keyList = grow(this.keyList, dict.keys.length);
    this.valueStamp = grow(this.valueStamp, dict.values.length); this.valueLocal = grow(this.valueLocal, dict.values.length); this.valueList = grow(this.valueList, dict.values.length);
    const w = this.w;
    w.pos = 0;
    w.length = w.buf.length;
    for (const l of layers) {
      let n = 0;
      for (const f of l.features) n += mvtFeatureCount(f.g);
      if (n > 0) w.writeMessage(3, this.writeLayer, l);
    }
    return w.buf.slice(0, w.pos);
  }

  private readonly writeLayer = (l: PbfLayerInput, pbf: PbfWriter): void => {
    this.generation++;
    this.keyCount = 0; this.valueCount = 0;
    pbf.writeVarintField(15, 2);
    pbf.writeStringField(1, l.name);
    pbf.writeVarintField(5, EXTENT);
    for (const f of l.features) { this.current = f.attrs; this.writeLeaves(f.g, pbf); }
    for (let i = 0; i < this.keyCount; i++) pbf.writeStringField(3, this.dict.keys[this.keyList[i]]);
    for (let i = 0; i < this.valueCount; i++) pbf.writeMessage(4, writeValue, this.dict.values[this.valueList[i]]);
  };

  private writeLeaves(g: TileGeometry, pbf: PbfWriter): void {
    if (g.k === 'collection') { for (const m of g.members) this.writeLeaves(m, pbf); return; }
    if (mvtType(g) !== 0) pbf.writeMessage(2, this.writeFeature, g);
  }

  private readonly writeFeature = (g: TileGeometry, pbf: PbfWriter): void => {
    const a = this.current;
    pbf.writeVarintField(1, a.id);
    if (a.keys.length > 0) pbf.writeMessage(2, this.writeTags, a);
    pbf.writeVarintField(3, mvtType(g));
    pbf.writeMessage(4, this.writeGeometry, g);
  };

  private readonly writeTags = (a: PbfAttributes, pbf: PbfWriter): void => {
    const { keyStamp, keyLocal, keyList, valueStamp, valueLocal, valueList, generation } = this;
    for (let i = 0; i < a.keys.length; i++) {
      const k = a.keys[i], v = a.values[i];
      if (keyStamp[k] !== generation) { keyStamp[k] = generation; keyLocal[k] = this.keyCount; keyList[this.keyCount++] = k; }
      if (valueStamp[v] !== generation) { valueStamp[v] = generation; valueLocal[v] = this.valueCount; valueList[this.valueCount++] = v; }
      pbf.writeVarint(keyLocal[k]); pbf.writeVarint(valueLocal[v]);
    }
  };

  private readonly writeGeometry = (g: TileGeometry, pbf: PbfWriter): void => {
    this.cx = 0; this.cy = 0;
    if (g.k === 'points') {
      const c = g.xy, n = c.length >> 1;
      pbf.writeVarint((n << 3) | 1);
      for (let i = 0; i < n; i++) {
        const x = c[i * 2] - this.ox, y = c[i * 2 + 1] - this.oy;
        pbf.writeVarint(zz(x - this.cx)); pbf.writeVarint(zz(y - this.cy)); this.cx = x; this.cy = y;
      }
    } else if (g.k === 'lines') for (const p of g.parts) this.writePart(p, false, pbf);
    else if (g.k === 'polygons') for (const poly of g.polys) for (const r of poly) this.writePart(r, true, pbf);
  };

  private writePart(c: ArrayLike<number>, polygon: boolean, pbf: PbfWriter): void {
    // Rings are stored closed; MVT closes them with ClosePath instead of repeating the first position.
    const n = (c.length >> 1) - (polygon ? 1 : 0);
    for (let i = 0; i < n; i++) {
      if (i === 0) pbf.writeVarint((1 << 3) | 1);
      else if (i === 1) pbf.writeVarint(((n - 1) << 3) | 2);
      const x = c[i * 2] - this.ox, y = c[i * 2 + 1] - this.oy;
      pbf.writeVarint(zz(x - this.cx)); pbf.writeVarint(zz(y - this.cy)); this.cx = x; this.cy = y;
    }
    if (polygon) pbf.writeVarint((1 << 3) | 7);
  }
}
