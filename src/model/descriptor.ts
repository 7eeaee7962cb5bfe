// The tileset descriptor: TileJSON 3.0.0 with the microscopy extensions (spec 2.3).
import type { Multiscale } from './multiscale.js';
import type { Vocabulary } from './vocabulary.js';

export type FieldType = 'String' | 'Number' | 'Bool';
export const FIELD_TYPES: readonly FieldType[] = ['String', 'Number', 'Bool'];

/**
 * Whose numbers a layer's PBF feature ids are (its foreign member `feature_ids`): the input's ids, the build's sequence
 * numbers (a feature's place in the input, from 0 over all inputs: no id the input gave), or the one or the other.
 */
export type FeatureIds = 'input' | 'sequence' | 'mixed';

/**
 * A layer's features by their input id: an integer id (their PBF id), another (a string, kept as property `id`, which
 * is then the id a reader shows; their PBF id is their sequence number), none (their PBF id is their sequence number,
 * and their only id).
 */
export type IdCounts = [integer: number, other: number, none: number];
export const newIdCounts = (): IdCounts => [0, 0, 0];

/**
 * Whose numbers the PBF ids of a layer's features without property `id` are: its features of another id show that id,
 * not their PBF id, so a layer of integer and string ids is "input" (a card showed every integer id with a note that
 * it might be a place in the input). A layer of none but string ids is "sequence", its PBF ids all the build's.
 */
export function featureIdsOf([integer, , none]: IdCounts): FeatureIds {
  return integer === 0 ? 'sequence' : none === 0 ? 'input' : 'mixed';
}

export interface VectorLayer {
  id: string;
  fields: Record<string, FieldType> | null;
  fieldranges?: Record<string, Array<number | string>>;
  fieldenums?: Record<string, string[]>;
  fielddescriptions?: Record<string, string>;
  description?: string;
  minzoom?: number;
  maxzoom?: number;
  vocabularies?: Record<string, Vocabulary>;
  [foreign: string]: unknown;
}

export interface Asset {
  role: string;
  href: string;
  media_type?: string;
  title?: string;
  [foreign: string]: unknown;
}

export interface TilesetDescriptor {
  tilejson: string;
  tiles: string[];
  vector_layers: VectorLayer[];
  name?: string;
  description?: string;
  version?: string;
  attribution?: string;
  minzoom?: number;
  maxzoom?: number;
  /** `[minX, minY, maxX, maxY]`, or `[minT, minC, minZ, minX, minY, maxT, maxC, maxZ, maxX, maxY]`. */
  bounds?: number[];
  /** `[x, y, zoom]` or `[t, c, z, x, y, zoom]`: zoom is last. */
  center?: number[];
  fillzoom?: number;
  legend?: string;
  multiscale?: Multiscale;
  scale_factor?: number;
  scheme?: string;
  grids?: string;
  data?: string;
  template?: string;
  assets?: Asset[];
  format?: string;
  [foreign: string]: unknown;
}
