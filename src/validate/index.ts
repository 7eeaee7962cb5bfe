// The validator's public face: validateDocument's dispatch, and the per-object validators, rules and issue helpers.
import { GEOMETRY_TYPES } from '../model/geometry.js';
import { checkDescriptor } from './descriptor.js';
import { checkCollection, checkFeature } from './feature.js';
import { checkGeometry } from './geometry.js';
import { shown, type Issue } from './issue.js';
import { report, RULES } from './rules.js';
import { checkNesting, isObject } from './util.js';

export { hasErrors, pointerToken, shown, type Issue, type Severity } from './issue.js';
export { RULES, type Rule, type RuleCode } from './rules.js';
export { validateGeometry } from './geometry.js';
export { CollectionValidator, validateCollectionMembers, validateFeature } from './feature.js';
export { validateMultiscale } from './multiscale.js';
export { validateVocabularies } from './vocabulary.js';
export { validateDescriptor } from './descriptor.js';

/** What a top-level JSON array of features is: not a muDM document, though `build` reads it (QuPath, other tools write it). */
export function arrayDocumentIssue(): Issue {
  return {
    code: 'document-array', severity: RULES['document-array'].severity, path: '',
    message: 'a top-level JSON array is not a muDM document (wrap the features in a FeatureCollection); build accepts it and reads its elements as a sequence of features, like NDJSON',
  };
}

const GEOMETRY_TYPE_SET: ReadonlySet<unknown> = new Set<unknown>(GEOMETRY_TYPES);

/**
 * Whether an object is a build's run report (build-report.json, beside every pyramid): counts by the names `features`
 * and `tiles`, objects both, with the `world` built. Without a `type` its `tiles` made it look like a descriptor, so
 * `validate OUT` called the tool's own report invalid.
 */
export function isBuildReportObject(value: Record<string, unknown>): boolean {
  return value.type === undefined && value.tilejson === undefined && isObject(value.features) && isObject(value.tiles) && isObject(value.world);
}

/** What a build report is to validate: no document, and no rule of the spec applies to it. */
function buildReportIssue(): Issue {
  return {
    code: 'document-build-report', severity: RULES['document-build-report'].severity, path: '',
    message: "a build's run report (build-report.json), not a muDM document: validate checks annotations and descriptors; check a pyramid with mudm-tiles verify",
  };
}

/**
 * Whether an object is a tileset descriptor: it has `tilejson` (or, without a type, `tiles` or `vector_layers`) and a
 * `type` that is no data-model type. A Feature or FeatureCollection with a member `tilejson` is data: the member is
 * foreign (spec 1.1), and consumers ignore it.
 */
export function isDescriptorObject(value: Record<string, unknown>): boolean {
  const type = value.type;
  if (type === 'Feature' || type === 'FeatureCollection' || GEOMETRY_TYPE_SET.has(type) || isBuildReportObject(value)) return false;
  return value.tilejson !== undefined || (type === undefined && (value.vector_layers !== undefined || value.tiles !== undefined));
}

/**
 * Validates any whole document: a tileset descriptor (`isDescriptorObject`), else a data-model object chosen by
 * `type`. When `type` is missing or wrong the members decide (`tiles`/`vector_layers`: descriptor, `features`:
 * collection, `geometry`: feature, `coordinates`/`geometries`: geometry), so the report names the broken member
 * rather than only saying the document is of no known kind.
 */
export function validateDocument(value: unknown): Issue[] {
  const out: Issue[] = [];
  if (Array.isArray(value)) {
    out.push(arrayDocumentIssue());
    value.forEach((f, i) => checkFeature(f, `/${i}`, out));
    return out;
  }
  if (!isObject(value)) {
    report(out, 'document-not-object', '', `document must be a JSON object, found ${shown(value)}`);
    return out;
  }
  const type = value.type;
  if (isBuildReportObject(value)) {
    out.push(buildReportIssue());
  } else if (isDescriptorObject(value)) {
    checkDescriptor(value, '', out);
  } else if (type === 'FeatureCollection') {
    checkCollection(value, out);
  } else if (type === 'Feature') {
    checkFeature(value, '', out);
  } else if (GEOMETRY_TYPE_SET.has(type)) {
    if (!checkNesting(value, 'geometry', '', out)) checkGeometry(value, '', out);
  } else if (value.features !== undefined) {
    checkCollection(value, out);
  } else if (value.geometry !== undefined) {
    checkFeature(value, '', out);
  } else if (value.coordinates !== undefined || value.geometries !== undefined) {
    if (!checkNesting(value, 'geometry', '', out)) checkGeometry(value, '', out);
  } else {
    report(out, 'document-type-unknown', type === undefined ? '' : '/type',
      `document type must be Feature, FeatureCollection or a geometry type (or the document a tileset descriptor with tilejson), found ${type === undefined ? 'no type' : shown(type)}`);
  }
  return out;
}

/**
 * What a whole-file document is when no feature can come of it (a scalar, a collection whose `features` is not an
 * array), else undefined: any other object is a feature, valid or not. (A top-level array is no document: the
 * reader streams its elements as features.)
 */
export function notFeatureSource(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (typeof value === 'string') return `a string (${shown(value)})`;
  if (typeof value !== 'object') return `${typeof value} ${shown(value)}`;
  const { type, features } = value as { type?: unknown; features?: unknown };
  // No GeoJSON member at all: another tool's own format (HoVer-Net's {"mag", "nuc"}, a StarDist details dump).
  const members = Object.keys(value);
  if (type === undefined && features === undefined && !members.some((m) => m === 'geometry' || m === 'coordinates' || m === 'geometries')) {
    if (members.length === 0) return 'an empty object';
    return `an object without type, features, geometry or coordinates (members ${members.slice(0, 5).join(', ')}${members.length > 5 ? ', …' : ''}), no GeoJSON: export GeoJSON from the tool that wrote it`;
  }
  if ((type !== 'FeatureCollection' && features === undefined) || Array.isArray(features)) return undefined;
  if (features === undefined) return 'a FeatureCollection without features';
  const what = type === 'FeatureCollection' ? 'a FeatureCollection' : `an object without "type": "FeatureCollection" (type ${type === undefined ? 'missing' : shown(type)})`;
  return `${what} whose features is not an array but ${features === null ? 'null' : typeof features === 'object' ? 'an object' : `${typeof features} ${shown(features)}`}`;
}
