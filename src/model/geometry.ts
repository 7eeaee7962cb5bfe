// Geometry types of the data model (spec 2.1): GeoJSON geometries plus PolyhedralSurface and TIN, in pixel axes order.

/** `[x, y]` or `[x, y, z]` in the order of the document's multiscale axes. */
export type Position = [number, number] | [number, number, number];
/** `[minX, minY, maxX, maxY]` or `[minX, minY, minZ, maxX, maxY, maxZ]`. */
export type BBox = [number, number, number, number] | [number, number, number, number, number, number];

/** Members every data-model object may carry; foreign members are allowed and kept. */
export interface DataModelObject {
  bbox?: BBox;
  [foreign: string]: unknown;
}

export interface Point extends DataModelObject { type: 'Point'; coordinates: Position }
export interface MultiPoint extends DataModelObject { type: 'MultiPoint'; coordinates: Position[] }
export interface LineString extends DataModelObject { type: 'LineString'; coordinates: Position[] }
export interface MultiLineString extends DataModelObject { type: 'MultiLineString'; coordinates: Position[][] }
/** First ring is the outer boundary, the others are holes; a ring is closed and has at least 4 positions. */
export interface Polygon extends DataModelObject { type: 'Polygon'; coordinates: Position[][] }
export interface MultiPolygon extends DataModelObject { type: 'MultiPolygon'; coordinates: Position[][][] }
/** A 3D mesh: faces are polygons of 3D positions; may instead be held by spatial tiles named in `tiles`. */
export interface PolyhedralSurface extends DataModelObject { type: 'PolyhedralSurface'; coordinates?: Position[][][]; tiles?: string[] }
/** A triangulated mesh: each face is exactly one closed ring of 4 positions. */
export interface TIN extends DataModelObject { type: 'TIN'; coordinates?: Position[][][]; tiles?: string[] }
export interface GeometryCollection extends DataModelObject { type: 'GeometryCollection'; geometries: Geometry[] }

export type Mesh = PolyhedralSurface | TIN;
export type SimpleGeometry = Point | MultiPoint | LineString | MultiLineString | Polygon | MultiPolygon;
export type Geometry = SimpleGeometry | Mesh | GeometryCollection;
export type GeometryType = Geometry['type'];

export const GEOMETRY_TYPES: readonly GeometryType[] = [
  'Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon',
  'PolyhedralSurface', 'TIN', 'GeometryCollection',
];

export function isMesh(g: Geometry): g is Mesh {
  return g.type === 'PolyhedralSurface' || g.type === 'TIN';
}
