// Tile bytes from placed entries: each feature's JSON (head bytes + geometry) and the PBF layers, with the writers one call reuses.
import { ByteArena } from '../../bytes.js';
import { EXTENT } from '../../tiling/space.js';
import { featureHeadText, headTextOf, JsonWriter, TILE_SUFFIX, tilePrefix } from '../encode-json.js';
import { FieldFilter } from '../field-filter.js';
import { membersOf } from '../../tiling/flat.js';
import { mvtFeatureCount, PbfDictionary, PbfEncoder, type PbfLayerInput } from '../encode-pbf.js';
import type { Bucket, Entry } from './placement.js';
import type { TileSpec } from './spec.js';

/**
 * What encoding needs for a whole tiling call: constants of the spec, the feature heads written so far, the tag
 * dictionary, and the writers, whose buffers are reused from tile to tile (and from call to call: see TilerScratch).
 */
export interface EncodeContext {
  spec: TileSpec;
  prefix: Uint8Array;
  lodAuto: boolean;
  heads: ByteArena;
  dict: PbfDictionary;
  /** JSON features and tiles are written here and copied out. */
  json: JsonWriter;
  pbf: PbfEncoder;
  /** `--coarse-fields` (TileSpec `fewFields`), and whether the zoom being encoded carries only those (`few`, set per zoom). */
  fields?: FieldFilter;
  few: boolean;
}

/**
 * The writers and the head arena a thread's tiling calls reuse, one call after another; their buffers grow to the
 * largest tile and call met. Made per call, they were about 150 KiB of zeroed memory each time (a 64 KiB JSON
 * writer even for PBF-only builds, and a head arena sized for every feature of the call).
 */
export class EncodeScratch {
  readonly heads = new ByteArena(1 << 12);
  readonly json = new JsonWriter();
  readonly pbf = new PbfEncoder();
  readonly dict = new PbfDictionary();
}

/** The context of one tiling call, its buffers from `scratch` (whose head arena starts over). */
export function encodeContext(spec: TileSpec, scratch: EncodeScratch): EncodeContext {
  scratch.heads.pos = 0;
  scratch.dict.reset();
  return {
    spec, prefix: tilePrefix(spec.collection), lodAuto: spec.lod === 'auto', heads: scratch.heads,
    dict: scratch.dict, json: scratch.json, pbf: scratch.pbf, fields: spec.fewFields && new FieldFilter(spec.fewFields.keep), few: false,
  };
}

/**
 * Appends an entry's JSON feature to `ec.json` (head as the record stored it, or from the arena, built on first use;
 * at a zoom of few fields, with only those, in the arena).
 */
export function writeJsonFeature(e: Entry, ec: EncodeContext): void {
  const p = e.p;
  if (ec.few && ec.fields) {
    if (p.fewHeadEnd === 0) {
      const own = p.tf.headJson;
      p.fewHeadStart = ec.heads.add(own !== undefined ? ec.fields.headText(own) : featureHeadText(ec.fields.head(membersOf(p.tf)), layerIdOf(p, ec)));
      p.fewHeadEnd = ec.heads.pos;
    }
    ec.json.featureFrom(ec.heads.buf, p.fewHeadStart, p.fewHeadEnd, e.g);
    return;
  }
  const own = p.tf.headJson;
  if (own !== undefined) { ec.json.featureFrom(own, 0, own.length, e.g); return; }
  if (p.headEnd === 0) {
    p.headStart = ec.heads.add(headTextOf(p.tf, layerIdOf(p, ec)));
    p.headEnd = ec.heads.pos;
  }
  ec.json.featureFrom(ec.heads.buf, p.headStart, p.headEnd, e.g);
}

function layerIdOf(p: Entry['p'], ec: EncodeContext): string {
  return ec.spec.layers[p.tf.layer]?.id ?? String(p.tf.layer);
}

/** The JSON tile of all the entries, in entry order. */
export function jsonTileOf(entries: readonly Entry[], ec: EncodeContext): Uint8Array | undefined {
  if (entries.length === 0) return undefined;
  const jw = ec.json;
  jw.pos = 0;
  jw.bytes(ec.prefix);
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) jw.byte(44);
    writeJsonFeature(entries[i], ec);
  }
  jw.bytes(TILE_SUFFIX);
  return jw.buf.slice(0, jw.pos);
}

/** Entries grouped into PBF layers (entries are in layer order already); entries without MVT features skipped. */
function pbfLayers(entries: readonly Entry[], mask: Uint8Array | null, spec: TileSpec): PbfLayerInput[] {
  const layers: PbfLayerInput[] = [];
  let current: { name: string; features: Entry[] } | null = null;
  let currentLayer = -1;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if ((mask !== null && mask[i] === 0) || mvtFeatureCount(e.g) === 0) continue;
    if (e.p.tf.layer !== currentLayer || current === null) {
      currentLayer = e.p.tf.layer;
      current = { name: spec.layers[currentLayer]?.id ?? String(currentLayer), features: [] };
      layers.push(current);
    }
    current.features.push(e);
  }
  return layers;
}

/** The PBF tile of the entries marked in `mask` (all when null); undefined when none has an MVT feature. */
export function pbfTile(entries: readonly Entry[], mask: Uint8Array | null, ec: EncodeContext, b: Bucket): Uint8Array | undefined {
  const layers = pbfLayers(entries, mask, ec.spec);
  return layers.length > 0 ? ec.pbf.encode(layers, b.x * EXTENT, b.y * EXTENT, ec.dict) : undefined;
}
