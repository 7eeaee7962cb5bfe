// The fields tiles carry (--fields at every zoom, --coarse-fields at coarse ones): which PBF tags and JSON members a feature keeps.
import { flatFeatureOf, isPbfId, tagsOf, type FeatureHead, type FeatureTags, type FlatFeature } from '../tiling/flat.js';
import { isPlainObject } from '../model/fields.js';
import type { Feature, Properties } from '../model/feature.js';
import { featureHeadText } from './encode-json.js';
import { setOwn } from '../model/own.js';
import { RADIUS } from '../tiling/reach.js';

/** The fields asked for below `below` (a zoom): their names as `forEachField` and the descriptor name them. */
export interface FewFields { keep: readonly string[]; below: number }

/** Whether `field` is the field `name`, or a field under it (`classification.name` under `classification`). */
export function isUnder(field: string, name: string): boolean {
  return field === name || (field.length > name.length && field.startsWith(name) && field.charCodeAt(name.length) === 46);
}

/** Whether one of two names is the other or lies under it: what one keeps, the other may hold (`classification`, `classification.name`). */
export function onOnePath(a: string, b: string): boolean {
  return isUnder(a, b) || isUnder(b, a);
}

/** A list of tag keys and the indexes of those kept: one per distinct list (record reads share their key lists). */
interface KeptKeys { keys: string[]; at: number[] }

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Keeps the fields named, and those under a name (`classification` keeps `classification.name`): the members that
 * travel as tags (`id` when not a PBF id, `featureClass`, `parentId`, `ref`) by those names, properties by their
 * dotted ones. A PBF id is always kept: it costs a few bytes and is how a viewer tells features apart. One per tiling
 * call: it remembers each key list it has met.
 */
export class FieldFilter {
  private readonly lists = new WeakMap<readonly string[], KeptKeys>();

  constructor(readonly names: readonly string[]) {}

  /**
   * Whether tiles keep the field: one named or under a name, or a point's `radius`, which says how large the point is
   * drawn and which tiles hold it (reach.ts): a tile without it placed the point by a circle it then drew as a dot.
   */
  keeps(field: string): boolean {
    return field === RADIUS || this.named(field);
  }

  /** Whether the field is one named, or under a name. */
  private named(field: string): boolean {
    // A loop, not a closure: --fields asks it of every property of every feature.
    for (const n of this.names) if (isUnder(field, n)) return true;
    return false;
  }

  /** Whether a nested object at `path` (`classification`) may hold a kept field: it is kept, or a kept name lies under it. */
  private leadsTo(path: string): boolean {
    return this.names.some((n) => onOnePath(n, path));
  }

  /** The tags kept; the key list shared by every feature of one list, as `PbfDictionary.keysOf` numbers it once. */
  tags(t: FeatureTags): FeatureTags {
    let kept = this.lists.get(t.keys);
    if (kept === undefined) {
      kept = { keys: [], at: [] };
      t.keys.forEach((k, i) => { if (this.keeps(k)) { kept?.keys.push(k); kept?.at.push(i); } });
      this.lists.set(t.keys, kept);
    }
    return { id: t.id, keys: kept.keys, values: kept.at.map((i) => t.values[i]) };
  }

  /** The members of a feature kept. */
  head(f: FeatureHead): FeatureHead {
    const out: FeatureHead = {};
    if (f.id !== undefined && (isPbfId(f.id) || this.keeps('id'))) out.id = f.id;
    if (f.featureClass !== undefined && this.keeps('featureClass')) out.featureClass = f.featureClass;
    if (f.parentId !== undefined && this.keeps('parentId')) out.parentId = f.parentId;
    if (f.ref !== undefined && this.keeps('ref')) out.ref = f.ref;
    const props = f.properties ? this.properties(f.properties, '') : null;
    out.properties = props;
    // A vocabulary describes a property: kept with it (one given by URI, for whichever properties it names). Only own
    // members count: a vocabulary named `toString` describes no property of `{}`.
    const v = f.vocabularies;
    if (typeof v === 'string') out.vocabularies = v;
    else if (v !== undefined && props) {
      const kept = Object.fromEntries(Object.entries(v).filter(([k]) => Object.hasOwn(props, k)));
      if (Object.keys(kept).length > 0) out.vocabularies = kept;
    }
    return out;
  }

  /** The feature with only the kept members: its geometry and type, and of the rest what `head` keeps. */
  feature(f: Feature): Feature {
    return { type: 'Feature', geometry: f.geometry, ...this.head(f) };
  }

  /**
   * A unit's feature with only the kept fields, on its way to a level whose zooms all carry only those: its record
   * then holds two fields of a QuPath cell's 34. `json`: whether records keep a JSON head (a build of JSON tiles).
   */
  flat(f: FlatFeature, json: boolean): FlatFeature {
    const headJson = json && f.headJson ? encoder.encode(this.headText(f.headJson)) : undefined;
    const head = f.head && this.head(f.head);
    return flatFeatureOf(f.seq, f.layer, f.geom, f.lod, head, headJson, this.tags(tagsOf(f)), undefined, f.many === true, f.pieces);
  }

  /** Whether a feature has a field named (besides a PBF id, which is no field, and a radius kept unnamed). */
  meets(f: FeatureHead): boolean {
    const kept = this.head(f);
    return (kept.id !== undefined && !isPbfId(kept.id)) || kept.featureClass !== undefined || kept.parentId !== undefined || kept.ref !== undefined
      || (kept.properties !== null && kept.properties !== undefined && Object.keys(kept.properties).some((k) => this.named(k) || this.leadsTo(k)));
  }

  /** The JSON tile head of a feature (`featureHeadText`, as a record stores it) with only the kept members. */
  headText(head: Uint8Array): string {
    const f = JSON.parse(`${decoder.decode(head)}null}`) as FeatureHead & { layer: string };
    return featureHeadText(this.head(f), f.layer);
  }

  private properties(props: Properties, prefix: string): Properties {
    const out: Properties = {};
    for (const key of Object.keys(props)) {
      const v = props[key], name = prefix + key;
      if (isPlainObject(v)) {
        if (!this.leadsTo(name)) continue;
        const inner = this.properties(v, `${name}.`);
        if (Object.keys(inner).length > 0) setOwn<unknown>(out, key, inner);
      } else if (this.keeps(name)) setOwn<unknown>(out, key, v);
    }
    return out;
  }
}
