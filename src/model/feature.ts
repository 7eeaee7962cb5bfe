// Feature, FeatureCollection and their special forms, Image and StitchingVector (spec 2.1).
import type { DataModelObject, Geometry, Polygon } from './geometry.js';
import type { Multiscale } from './multiscale.js';
import type { Vocabularies } from './vocabulary.js';

export type Id = string | number;
export type Properties = Record<string, unknown>;

export interface Feature<G extends Geometry | null = Geometry | null> extends DataModelObject {
  type: 'Feature';
  geometry: G;
  properties?: Properties | null;
  id?: Id;
  /** Reference to an external resource holding the feature's data (a chunked-array store URI, say). */
  ref?: Id;
  /** Id of the parent feature (containment, hierarchy). */
  parentId?: Id;
  /** The kind of object, such as `cell` or `nucleus`. */
  featureClass?: string;
  vocabularies?: Vocabularies;
  /** Set on JSON tile features: the vector layer the feature belongs to. */
  layer?: string;
}

/** Provenance models are named by the spec but their structure is not shown: kept as opaque JSON. */
export interface Provenance {
  subWorkflows?: unknown;
  workflowProvenance?: unknown;
  outputArtifacts?: unknown;
  mudmLinks?: unknown;
  mudmId?: unknown;
  mudmField?: unknown;
  [foreign: string]: unknown;
}

export interface FeatureCollection<F extends Feature = Feature> extends DataModelObject {
  type: 'FeatureCollection';
  features: F[];
  properties?: Properties | null;
  id?: Id;
  provenance?: Provenance;
  vocabularies?: Vocabularies;
  multiscale?: Multiscale;
}

/** An image placed in pixel space: `properties.type` is `Image`, geometry a rectangle. */
export interface ImageFeature extends Feature<Polygon> {
  properties: { type: 'Image'; URI: string; correction?: [number, number]; [name: string]: unknown };
}

/** A mosaic: every feature is an Image feature. */
export interface StitchingVector extends FeatureCollection<ImageFeature> {
  properties: { type: 'StitchingVector'; [name: string]: unknown };
}

export type DataModelDocument = Geometry | Feature | FeatureCollection;

export function isImageFeature(f: Feature): f is ImageFeature {
  return typeof f.properties === 'object' && f.properties !== null && f.properties.type === 'Image';
}
