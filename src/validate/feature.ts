// Feature and FeatureCollection validation (spec 2.1, 7.4): members, Image features, StitchingVector, streaming.
import { shown, type Issue } from './issue.js';
import { checkBBox, checkGeometry } from './geometry.js';
import { checkMultiscale } from './multiscale.js';
import { report } from './rules.js';
import { checkVocabularies } from './vocabulary.js';
import { checkNesting, isObject, isStringOrInteger, type JsonObject } from './util.js';

/** How many offending feature indexes a StitchingVector check keeps; the rest are only counted. */
const KEPT_OFFENDERS = 100;

function hasErrorSince(out: readonly Issue[], start: number): boolean {
  for (let i = start; i < out.length; i++) if (out[i].severity === 'error') return true;
  return false;
}

/** An axis-aligned rectangle: 5 positions, closed, edges alternating horizontal and vertical, none of zero length. */
function isRectangle(ring: unknown): boolean {
  if (!Array.isArray(ring) || ring.length !== 5) return false;
  let previous = 0;
  for (let i = 0; i < 4; i++) {
    const p: unknown = ring[i];
    const q: unknown = ring[i + 1];
    if (!Array.isArray(p) || !Array.isArray(q)) return false;
    const sameX = p[0] === q[0];
    const sameY = p[1] === q[1];
    // 1: vertical edge, 2: horizontal edge; anything else (diagonal, zero length) is not a rectangle side.
    const kind = sameX && !sameY ? 1 : sameY && !sameX ? 2 : 0;
    if (kind === 0 || kind === previous) return false;
    previous = kind;
  }
  const first: unknown = ring[0];
  const last: unknown = ring[4];
  return Array.isArray(first) && Array.isArray(last) && first[0] === last[0] && first[1] === last[1];
}

/** Image feature rules (spec-decisions): URI string, rectangular Polygon, optional 2-number correction. */
function checkImage(f: JsonObject, props: JsonObject, path: string, geometryClean: boolean, out: Issue[]): void {
  const uri = props.URI;
  if (typeof uri !== 'string') {
    report(out, 'image-uri-invalid', uri === undefined ? `${path}/properties` : `${path}/properties/URI`,
      `Image feature must have a string properties.URI, found ${uri === undefined ? 'none' : shown(uri)}`);
  }
  const g = f.geometry;
  if (g !== undefined) {
    if (!isObject(g) || g.type !== 'Polygon') {
      report(out, 'image-geometry-not-polygon', `${path}/geometry`,
        `Image feature geometry must be a Polygon (its pixel extent), found ${isObject(g) ? shown(g.type) : shown(g)}`);
    } else if (geometryClean) {
      const rings = g.coordinates;
      const outer: unknown = Array.isArray(rings) ? rings[0] : undefined;
      if (!isRectangle(outer)) {
        report(out, 'image-not-rectangle', outer === undefined ? `${path}/geometry/coordinates` : `${path}/geometry/coordinates/0`,
          `Image feature outer ring must be an axis-aligned rectangle of 5 positions, found ${shown(outer === undefined ? rings : outer)}`);
      }
    }
  }
  const correction = props.correction;
  if (correction !== undefined
    && !(Array.isArray(correction) && correction.length === 2 && Number.isFinite(correction[0]) && Number.isFinite(correction[1]))) {
    report(out, 'image-correction-invalid', `${path}/properties/correction`,
      `Image feature properties.correction must be 2 numbers [x, y], found ${shown(correction)}`);
  }
}

function checkIdLike(value: unknown, name: 'id' | 'ref' | 'parentId', path: string, out: Issue[]): void {
  if (value !== undefined && !isStringOrInteger(value)) {
    report(out, name === 'id' ? 'id-type' : name === 'ref' ? 'ref-type' : 'parent-id-type', `${path}/${name}`,
      `${name} must be a string or an integer, found ${shown(value)}`);
  }
}

function checkProperties(value: unknown, path: string, out: Issue[]): void {
  if (value !== undefined && value !== null && !isObject(value)) {
    report(out, 'properties-type', `${path}/properties`, `properties must be an object or null, found ${shown(value)}`);
  }
}

/** Internal entry: appends the issues of one Feature to `out`. */
export function checkFeature(f: unknown, path: string, out: Issue[]): void {
  if (!isObject(f)) {
    report(out, 'feature-not-object', path, `feature must be an object, found ${shown(f)}`);
    return;
  }
  if (checkNesting(f, 'feature', path, out)) return;
  const type = f.type;
  if (type !== 'Feature') {
    report(out, 'feature-type-invalid', type === undefined ? path : `${path}/type`,
      `Feature type must be "Feature", found ${type === undefined ? 'no type' : shown(type)}`);
  }
  const g = f.geometry;
  const start = out.length;
  if (g === undefined) {
    report(out, 'feature-geometry-missing', path, 'Feature must have a geometry member (a geometry object or null), found none');
  } else if (g !== null) {
    if (isObject(g)) checkGeometry(g, `${path}/geometry`, out);
    else report(out, 'geometry-not-object', `${path}/geometry`, `Feature geometry must be an object or null, found ${shown(g)}`);
  }
  const geometryClean = !hasErrorSince(out, start);
  checkIdLike(f.id, 'id', path, out);
  checkIdLike(f.ref, 'ref', path, out);
  checkIdLike(f.parentId, 'parentId', path, out);
  const featureClass = f.featureClass;
  if (featureClass !== undefined && typeof featureClass !== 'string') {
    report(out, 'feature-class-type', `${path}/featureClass`, `featureClass must be a string, found ${shown(featureClass)}`);
  }
  const props = f.properties;
  checkProperties(props, path, out);
  if (isObject(props) && props.type === 'Image') checkImage(f, props, path, geometryClean, out);
  if (f.vocabularies !== undefined) checkVocabularies(f.vocabularies, `${path}/vocabularies`, out, true);
  if (f.multiscale !== undefined) checkMultiscale(f.multiscale, `${path}/multiscale`, out);
  if (f.bbox !== undefined) checkBBox(f.bbox, `${path}/bbox`, out);
}

/** Validates one Feature; `path` is its JSON Pointer inside the enclosing document ('' for a bare feature). */
export function validateFeature(value: unknown, path = ''): Issue[] {
  const out: Issue[] = [];
  checkFeature(value, path, out);
  return out;
}

function isImageFeature(value: unknown): boolean {
  if (!isObject(value)) return false;
  const props = value.properties;
  return isObject(props) && props.type === 'Image';
}

/** What makes a StitchingVector member not an Image feature, for the message (the feature itself is not kept). */
function describeNonImage(value: unknown): string {
  if (!isObject(value)) return shown(value);
  const props = value.properties;
  if (!isObject(props)) return props === undefined ? 'no properties' : `properties ${shown(props)}`;
  return props.type === undefined ? 'no properties.type' : `properties.type ${shown(props.type)}`;
}

/** Internal entry: every collection member but `features` (type, properties, id, bbox, provenance, ...). */
export function checkCollectionMembers(members: unknown, path: string, out: Issue[]): void {
  if (!isObject(members)) {
    report(out, 'document-not-object', path, `FeatureCollection must be an object, found ${shown(members)}`);
    return;
  }
  if (checkNesting(members, 'collection', path, out)) return;
  const type = members.type;
  if (type !== 'FeatureCollection') {
    report(out, 'collection-type-invalid', type === undefined ? path : `${path}/type`,
      `FeatureCollection type must be "FeatureCollection", found ${type === undefined ? 'no type' : shown(type)}`);
  }
  checkProperties(members.properties, path, out);
  checkIdLike(members.id, 'id', path, out);
  const provenance = members.provenance;
  if (provenance !== undefined && !isObject(provenance)) {
    report(out, 'provenance-type', `${path}/provenance`, `provenance must be an object, found ${shown(provenance)}`);
  }
  if (members.vocabularies !== undefined) checkVocabularies(members.vocabularies, `${path}/vocabularies`, out, true);
  if (members.multiscale !== undefined) checkMultiscale(members.multiscale, `${path}/multiscale`, out);
  if (members.bbox !== undefined) checkBBox(members.bbox, `${path}/bbox`, out);
}

/** Validates the members of a FeatureCollection other than `features` (as the streaming reader delivers them). */
export function validateCollectionMembers(members: Record<string, unknown>): Issue[] {
  const out: Issue[] = [];
  checkCollectionMembers(members, '', out);
  return out;
}

interface Offender {
  index: number;
  /** The offending `properties.type`, already rendered: the feature itself is never kept. */
  found: string;
}

/**
 * Validates a FeatureCollection one feature at a time, for input too large to hold. Collection-level rules that
 * depend on members which may follow `features` in the file (StitchingVector) are settled in `end`, from a small
 * bounded record of the features that would break them.
 */
export class CollectionValidator {
  private readonly offenders: Offender[] = [];
  private offenderCount = 0;

  /**
   * Issues of the feature at `features[index]`, with paths `/features/<index>/...`. They are appended to `out` when
   * given (the caller's own list, saving an array per feature) and `out` is returned.
   */
  feature(value: unknown, index: number, out: Issue[] = []): Issue[] {
    checkFeature(value, `/features/${index}`, out);
    if (!isImageFeature(value)) {
      this.offenderCount++;
      if (this.offenders.length < KEPT_OFFENDERS) {
        this.offenders.push({ index, found: describeNonImage(value) });
      }
    }
    return out;
  }

  /**
   * Issues of the other members, then those of rules that span all features. Call once, after the last feature.
   * Appends to `out` when given, as `feature` does.
   */
  end(members: Record<string, unknown>, out: Issue[] = []): Issue[] {
    checkCollectionMembers(members, '', out);
    const props = isObject(members) ? members.properties : undefined;
    if (!isObject(props) || props.type !== 'StitchingVector') return out;
    for (const o of this.offenders) {
      report(out, 'stitching-vector-not-image', `/features/${o.index}`,
        `every feature of a StitchingVector must be an Image feature (properties.type "Image"), found ${o.found}`);
    }
    const rest = this.offenderCount - this.offenders.length;
    if (rest > 0) {
      report(out, 'stitching-vector-not-image', '/features',
        `every feature of a StitchingVector must be an Image feature, found ${rest} more that are not`);
    }
    return out;
  }
}

/** Internal entry: a whole FeatureCollection held in memory, validated exactly as the streaming path would. */
export function checkCollection(c: JsonObject, out: Issue[]): void {
  const v = new CollectionValidator();
  const features = c.features;
  if (features === undefined) {
    report(out, 'features-missing', '', 'FeatureCollection must have features (an array, may be empty), found none');
  } else if (!Array.isArray(features)) {
    report(out, 'features-not-array', '/features', `FeatureCollection features must be an array, found ${shown(features)}`);
  } else {
    for (let i = 0; i < features.length; i++) v.feature(features[i], i, out);
  }
  v.end(c, out);
}
