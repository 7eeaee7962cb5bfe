// Every stable validation code with its severity and a one-line summary: the single list reports and docs draw from.
import type { Issue, Severity } from './issue.js';

export interface Rule {
  severity: Severity;
  summary: string;
}

const error = (summary: string): Rule => ({ severity: 'error', summary });
const warning = (summary: string): Rule => ({ severity: 'warning', summary });

/** Code → rule. Codes are part of the public contract (build reports count by them): never rename one. */
export const RULES = {
  // Documents (spec 2.1; dispatch of validateDocument)
  'document-not-object': error('a document must be a JSON object'),
  // A warning: its features are read and checked as NDJSON's are, and QuPath 0.2-0.3 export nothing else.
  'document-array': warning('a top-level JSON array is not a document (build reads it as a sequence of features, like NDJSON)'),
  // A warning: the tool's own output, beside every pyramid, found by validate OUT; nothing in it is to fix.
  'document-build-report': warning("a build's run report (build-report.json) is not a document: no rule applies to it"),
  'document-type-unknown': error('a document must be a Feature, a FeatureCollection, a geometry or a tileset descriptor'),

  // Data-model objects: bbox (spec 2.1, 8)
  'bbox-length': error('bbox must be an array of 4 or 6 numbers'),
  'bbox-not-number': error('bbox entries must be finite numbers'),
  'bbox-inverted': warning('a bbox minimum is above its maximum'),

  // Geometry (spec 2.1, 7.1-7.3, 8)
  'geometry-not-object': error('a geometry must be an object (a Feature geometry may also be null)'),
  'geometry-type-unknown': error('geometry type must be one of the nine geometry types'),
  'coordinates-missing': error('every geometry but GeometryCollection (and tiled meshes) must have coordinates'),
  'coordinates-not-array': error('coordinates and their nested levels must be arrays'),
  'coordinates-depth': error('coordinates must nest as deep as their geometry type says (a Polygon: rings of positions)'),
  'position-not-array': error('a position must be an array'),
  'position-length': error('a position must have 2 or 3 numbers'),
  'position-not-number': error('position entries must be finite numbers'),
  'position-mixed-dimensions': warning('one geometry mixes 2D and 3D positions'),
  'linestring-too-short': error('a LineString must have at least 2 positions'),
  'ring-too-short': error('a linear ring must have at least 4 positions'),
  'ring-not-closed': error('a linear ring must be closed: first position equal to last'),
  'hole-outside-exterior': warning('a hole (a Polygon\'s ring after the first) should lie inside the exterior ring; outside, renderers fill it'),
  'mesh-no-faces': error('a PolyhedralSurface or TIN needs non-empty coordinates or tiles'),
  'mesh-tiles-invalid': error('a mesh\'s tiles must be an array of strings'),
  'mesh-face-empty': error('a PolyhedralSurface face must have at least one ring'),
  'mesh-not-3d': warning('PolyhedralSurface and TIN faces should have 3D positions'),
  'tin-face-rings': error('a TIN face must have exactly one ring'),
  'tin-open-triangle': error('a TIN face ring must repeat its first vertex: 3 positions is an open triangle'),
  'tin-face-positions': error('a TIN face ring must have exactly 4 positions'),
  'geometries-missing': error('a GeometryCollection must have geometries'),
  'geometries-not-array': error('GeometryCollection geometries must be an array'),
  'geometry-collection-nested': warning('a GeometryCollection should not nest another GeometryCollection'),
  'geometry-radius': warning('radius belongs in the feature\'s properties, not in the geometry; it is dropped'),

  // Feature (spec 2.1, 7.4)
  'feature-not-object': error('a feature must be an object'),
  'feature-type-invalid': error('a Feature must have type "Feature"'),
  'feature-geometry-missing': error('a Feature must have a geometry member (object or null)'),
  'id-type': error('id must be a string or an integer'),
  'ref-type': error('ref must be a string or an integer'),
  'parent-id-type': error('parentId must be a string or an integer'),
  'feature-class-type': error('featureClass must be a string'),
  'properties-type': error('properties must be an object or null'),
  'image-uri-invalid': error('an Image feature must have a string properties.URI'),
  'image-geometry-not-polygon': error('an Image feature\'s geometry must be a Polygon'),
  'image-not-rectangle': error('an Image feature\'s outer ring must be an axis-aligned rectangle of 5 positions'),
  'image-correction-invalid': error('an Image feature\'s properties.correction must be 2 numbers'),

  // FeatureCollection (spec 2.1, 7.4)
  'collection-type-invalid': error('a FeatureCollection must have type "FeatureCollection"'),
  'features-missing': error('a FeatureCollection must have features'),
  'features-not-array': error('FeatureCollection features must be an array'),
  'provenance-type': error('provenance must be an object'),
  'stitching-vector-not-image': error('every feature of a StitchingVector must be an Image feature'),

  // Multiscale (spec 2.2, 7.5, 7.6, 8)
  'multiscale-not-object': error('multiscale must be an object'),
  'axes-missing': error('multiscale must have axes'),
  'axes-not-array': error('multiscale axes must be an array'),
  'axes-count': error('multiscale must have 2 to 5 axes'),
  'axis-not-object': error('an axis must be an object'),
  'axis-name-invalid': error('an axis must have a string name'),
  'axis-name-duplicate': error('axis names must be unique'),
  'axis-type-invalid': error('axis type must be space, time or channel'),
  'axis-unit-invalid': error('axis unit must be one of the listed units'),
  'transformations-both': error('coordinateTransformations and transformationMatrix must not both be present'),
  'transformations-not-array': error('coordinateTransformations must be an array'),
  'transformation-not-object': error('a coordinate transformation must be an object'),
  'transformation-type-unknown': error('transformation type must be identity, scale or translation'),
  'identity-extra-member': error('an identity transformation has no member but type'),
  'transformation-vector-invalid': error('scale and translation must be arrays of finite numbers'),
  'scale-length': error('a scale vector must have one number per axis'),
  'translation-length': error('a translation vector must have one number per axis'),
  'matrix-invalid': error('transformationMatrix must be an array of equally long rows of finite numbers'),
  'matrix-shape': error('transformationMatrix must be N×N or (N+1)×(N+1) for N axes'),
  'matrix-homogeneous-row': error('the last row of a homogeneous transformationMatrix must be 0 … 0 1'),
  'matrix-singular': error('transformationMatrix must be invertible'),

  // Vocabularies (spec 2.4, 7.9)
  'vocabularies-type': error('vocabularies must be a map of name to Vocabulary (or, on features and collections, a URI string)'),
  'vocabulary-not-object': error('a Vocabulary must be an object'),
  'vocabulary-terms-missing': error('a Vocabulary must have terms'),
  'vocabulary-terms-not-object': error('Vocabulary terms must be a map of value to OntologyTerm'),
  'term-not-object': error('an OntologyTerm must be an object'),
  'term-uri-missing': error('an OntologyTerm must have a uri'),
  'term-uri-not-string': error('an OntologyTerm uri must be a string'),

  // Shared by several objects
  'member-not-string': error('a member specified as a string has another type'),
  'value-not-finite': error('numbers must be finite: JSON text beyond ±1.8e308 (such as 1e400) reads as ±Infinity, which no tile can carry'),
  'string-lone-surrogate': warning('a string or member name holds a lone UTF-16 surrogate (\\uD800-\\uDFFF without its pair); tiles write U+FFFD for it'),
  'member-name-repeated': warning('an object gives a member name more than once: JSON readers, and tiles, keep the last value'),
  'text-invalid-utf8': warning('the text is not valid UTF-8; each invalid byte sequence reads as U+FFFD'),
  'nesting-too-deep': error('arrays and objects nest at most 128 levels deep (encoders recurse through them)'),

  // Tileset descriptor (spec 2.3, 4.2, 7.7, 7.8, 8)
  'tilejson-missing': error('a descriptor must have tilejson'),
  'tilejson-not-string': error('tilejson must be a string'),
  'tiles-missing': error('a descriptor must have tiles'),
  'tiles-invalid': error('tiles must be a non-empty array'),
  'tile-url-not-string': error('every tile URL pattern must be a string'),
  'vector-layers-missing': error('a descriptor must have vector_layers'),
  'vector-layers-not-array': error('vector_layers must be an array'),
  'layer-not-object': error('a vector layer must be an object'),
  'layer-id-missing': error('a vector layer must have an id'),
  'layer-id-not-string': error('a vector layer id must be a string'),
  'layer-id-duplicate': error('vector layer ids must be unique'),
  'layer-fields-missing': error('a vector layer must have fields'),
  'layer-fields-not-object': error('layer fields must be a map (or null)'),
  'field-type-invalid': error('a field type must be exactly String, Number or Bool'),
  'fieldranges-invalid': error('fieldranges must map names to arrays of numbers or strings'),
  'fieldenums-invalid': error('fieldenums must map names to arrays of strings'),
  'fielddescriptions-invalid': error('fielddescriptions must map names to strings'),
  'bounds-invalid': error('bounds must be an array of 4 to 10 numbers'),
  'bounds-not-number': error('bounds entries must be finite numbers'),
  'bounds-length-unusual': warning('bounds of 5 to 9 numbers have no defined layout'),
  'bounds-inverted': warning('a bounds minimum is above its maximum'),
  'center-invalid': error('center must be an array of 3 to 6 numbers'),
  'center-not-number': error('center entries must be finite numbers'),
  'zoom-invalid': error('a zoom level must be an integer from 0 to 30'),
  'zoom-range': error('minzoom must not be above maxzoom'),
  'assets-not-array': error('assets must be an array'),
  'asset-not-object': error('an asset must be an object'),
  'asset-role-invalid': error('an asset must have a string role'),
  'asset-href-invalid': error('an asset must have a string href'),
  'scale-factor-invalid': error('scale_factor must be a positive number'),
} as const satisfies Record<string, Rule>;

/** Codes only a build finds (what its pyramid cannot hold), counted in its report beside RULES'. Never rename one either. */
export const BUILD_RULES = {
  'plane-value-invalid': error('a plane value (--plane-field, a third coordinate, QuPath\'s plane) must be a non-negative integer'),
  'feature-too-wide': error('a feature may meet at most 262,144 work cells (a world of 1,048,576 px in cells of 2,048 px)'),
  'measurement-name-repeated': warning('an old QuPath measurement list ([{name, value}, …]) gives a name more than once: tiles keep the first value'),
  'nucleus-dropped': warning("a QuPath cell's nucleusGeometry (--nucleus-features) that cannot be a feature of its own (invalid, or not placed): the cell is kept without it"),
} as const satisfies Record<string, Rule>;

export type RuleCode = keyof typeof RULES;

/** Appends one issue; the severity always comes from RULES so a code can never carry two severities. */
export function report(out: Issue[], code: RuleCode, path: string, message: string): void {
  out.push({ code, severity: RULES[code].severity, path, message });
}
