// Unit tests of validateGeometry: every geometry rule's code, path and message, and the valid shapes it must accept.
import { describe, expect, it } from 'vitest';
import { validateGeometry, validateFeature } from '../../src/validate/index.js';
import { codes, errors, expectOne, expectSome } from './helpers.js';

const square = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]];
const tri3 = (z = 0) => [[0, 0, z], [8, 0, z], [0, 8, z], [0, 0, z]];

describe('valid geometries', () => {
  const valid: Record<string, unknown> = {
    'Point 2D': { type: 'Point', coordinates: [1, 2] },
    'Point 3D': { type: 'Point', coordinates: [1, 2, 3] },
    'empty Point': { type: 'Point', coordinates: [] },
    MultiPoint: { type: 'MultiPoint', coordinates: [[1, 2], [3, 4]] },
    'empty MultiPoint': { type: 'MultiPoint', coordinates: [] },
    LineString: { type: 'LineString', coordinates: [[0, 0], [1, 1]] },
    'empty LineString': { type: 'LineString', coordinates: [] },
    MultiLineString: { type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[2, 2], [3, 3], [4, 5]]] },
    'Polygon with hole': { type: 'Polygon', coordinates: [[[0, 0], [20, 0], [20, 20], [0, 20], [0, 0]], [[5, 5], [5, 8], [8, 8], [5, 5]]] },
    'empty Polygon': { type: 'Polygon', coordinates: [] },
    MultiPolygon: { type: 'MultiPolygon', coordinates: [[square], [square, square]] },
    PolyhedralSurface: { type: 'PolyhedralSurface', coordinates: [[tri3(0)], [tri3(1), tri3(2)]] },
    'tiled PolyhedralSurface': { type: 'PolyhedralSurface', tiles: ['a/0/0/0'] },
    'tiled PolyhedralSurface, empty coordinates': { type: 'PolyhedralSurface', coordinates: [], tiles: ['a'] },
    'tiled mesh with no tiles yet': { type: 'TIN', tiles: [] },
    TIN: { type: 'TIN', coordinates: [[tri3(0)], [tri3(5)]] },
    'tiled TIN': { type: 'TIN', coordinates: [], tiles: ['t/1/0/0'] },
    GeometryCollection: { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }, { type: 'Polygon', coordinates: [square] }] },
    'empty GeometryCollection': { type: 'GeometryCollection', geometries: [] },
    'bbox 4': { type: 'Point', coordinates: [1, 2], bbox: [1, 2, 1, 2] },
    'bbox 6': { type: 'Point', coordinates: [1, 2, 3], bbox: [1, 2, 3, 1, 2, 3] },
    'foreign members': { type: 'Point', coordinates: [1, 2], style: { color: 'red' } },
  };
  for (const [name, g] of Object.entries(valid)) {
    it(name, () => expect(validateGeometry(g, '/g')).toEqual([]));
  }
});

describe('geometry errors', () => {
  it('geometry-not-object', () => {
    expectOne(validateGeometry('POINT (1 2)', '/geometry'), 'geometry-not-object', '/geometry', 'geometry must be an object, found "POINT (1 2)"');
    expectOne(validateGeometry(null, ''), 'geometry-not-object', '', 'found null');
    expectOne(validateGeometry([1, 2], ''), 'geometry-not-object', '', 'found [1,2]');
  });

  it('geometry-type-unknown, with and without a type', () => {
    expectOne(validateGeometry({ type: 'Circle', coordinates: [1, 2] }, '/g'), 'geometry-type-unknown', '/g/type',
      'geometry type must be one of Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon, PolyhedralSurface, TIN, GeometryCollection, found "Circle"');
    expectOne(validateGeometry({ coordinates: [1, 2] }, '/g'), 'geometry-type-unknown', '/g', 'found no type');
    expectOne(validateGeometry({ type: 'point', coordinates: [1, 2] }, ''), 'geometry-type-unknown', '/type', 'found "point"');
  });

  it('coordinates-missing for every simple type', () => {
    for (const type of ['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon']) {
      expectOne(validateGeometry({ type }, '/geometry'), 'coordinates-missing', '/geometry', `${type} must have coordinates, found none`);
    }
  });

  it('coordinates-not-array at each nesting level', () => {
    expectOne(validateGeometry({ type: 'LineString', coordinates: '0,0 1,1' }, ''), 'coordinates-not-array', '/coordinates',
      'LineString coordinates must be an array of positions, found "0,0 1,1"');
    expectOne(validateGeometry({ type: 'Polygon', coordinates: {} }, ''), 'coordinates-not-array', '/coordinates',
      'Polygon coordinates must be an array of linear rings, found {}');
    expectOne(validateGeometry({ type: 'Polygon', coordinates: [square, 3] }, ''), 'coordinates-not-array', '/coordinates/1',
      'linear ring must be an array of positions, found 3');
    expectOne(validateGeometry({ type: 'MultiPolygon', coordinates: [[square], 'x'] }, ''), 'coordinates-not-array', '/coordinates/1',
      'Polygon coordinates must be an array of linear rings, found "x"');
    expectOne(validateGeometry({ type: 'MultiPolygon', coordinates: [[square, null]] }, ''), 'coordinates-not-array', '/coordinates/0/1');
    expectOne(validateGeometry({ type: 'MultiPoint', coordinates: 7 }, ''), 'coordinates-not-array', '/coordinates', 'MultiPoint coordinates must be an array, found 7');
    expectOne(validateGeometry({ type: 'TIN', coordinates: 'faces' }, ''), 'coordinates-not-array', '/coordinates', 'TIN coordinates must be an array of faces');
    expectOne(validateGeometry({ type: 'TIN', coordinates: [5] }, ''), 'coordinates-not-array', '/coordinates/0', 'TIN face must be an array of linear rings, found 5');
  });

  it('position-length with the message of the spec example', () => {
    const issue = expectOne(validateGeometry({ type: 'Point', coordinates: [1] }, '/geometry'), 'position-length', '/geometry/coordinates');
    expect(issue.message).toBe('position must have 2 or 3 numbers, found [1] (1)');
    expectOne(validateGeometry({ type: 'LineString', coordinates: [[0, 0], [1, 2, 3, 4]] }, ''), 'position-length', '/coordinates/1',
      'found [1,2,3,4] (4)');
    expectOne(validateGeometry({ type: 'MultiPolygon', coordinates: [[square], [[[0, 0], [1, 0], [1], [0, 1], [0, 0]]]] }, ''),
      'position-length', '/coordinates/1/0/2');
  });

  it('position-not-array and position-not-number', () => {
    expectOne(validateGeometry({ type: 'MultiPoint', coordinates: [[1, 2], 3] }, ''), 'position-not-array', '/coordinates/1',
      'position must be an array of 2 or 3 numbers, found 3');
    expectOne(validateGeometry({ type: 'Point', coordinates: [1, '2'] }, ''), 'position-not-number', '/coordinates/1',
      'position entries must be finite numbers, found "2" in [1,"2"]');
    expectOne(validateGeometry({ type: 'Point', coordinates: [1, 2, null] }, ''), 'position-not-number', '/coordinates/2');
    expectOne(validateGeometry({ type: 'Point', coordinates: [NaN, 2] }, ''), 'position-not-number', '/coordinates/0', 'found NaN');
    // What 1e400 in the text reads as: the rule of numbers beyond JSON's range, wherever they are.
    expectOne(validateGeometry({ type: 'Point', coordinates: [1, Infinity] }, ''), 'value-not-finite', '/coordinates/1', 'a coordinate beyond what JSON numbers hold (±1.8e308, such as 1e400) reads as Infinity in [1,Infinity]');
  });

  it('coordinates-depth: nested a level too shallow or too deep, one issue rather than one per number', () => {
    expectOne(validateGeometry({ type: 'Polygon', coordinates: square }, ''), 'coordinates-depth', '/coordinates',
      'Polygon coordinates must nest 3 array level(s) down to a number, found 2 (1 level(s) too shallow), starting [0,0]');
    expectOne(validateGeometry({ type: 'LineString', coordinates: [[[0, 0], [1, 1]]] }, ''), 'coordinates-depth', '/coordinates', 'found 3 (1 level(s) too deep)');
    expect(validateGeometry({ type: 'MultiPolygon', coordinates: [[], [square]] }, '')).toEqual([]);
  });

  it('position-mixed-dimensions is a warning', () => {
    const issues = validateGeometry({ type: 'LineString', coordinates: [[0, 0], [1, 1, 1]] }, '/g');
    expectOne(issues, 'position-mixed-dimensions', '/g/coordinates', 'positions of one LineString should all be 2D or all 3D, found [0,0] at /g/coordinates/0 and [1,1,1] at /g/coordinates/1');
    expect(errors(issues)).toEqual([]);
  });

  it('linestring-too-short', () => {
    expectOne(validateGeometry({ type: 'LineString', coordinates: [[0, 0]] }, ''), 'linestring-too-short', '/coordinates',
      'LineString must have 2 or more positions, found [[0,0]] (1)');
    expectOne(validateGeometry({ type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[5, 5]]] }, ''), 'linestring-too-short', '/coordinates/1');
  });

  it('ring-too-short and ring-not-closed', () => {
    expectOne(validateGeometry({ type: 'Polygon', coordinates: [[[0, 0], [1, 0], [0, 0]]] }, ''), 'ring-too-short', '/coordinates/0',
      'linear ring must have 4 or more positions, found [[0,0],[1,0],[0,0]] (3)');
    expectOne(validateGeometry({ type: 'Polygon', coordinates: [[]] }, ''), 'ring-too-short', '/coordinates/0', 'found [] (0)');
    expectOne(validateGeometry({ type: 'Polygon', coordinates: [square, [[1, 1], [2, 1], [2, 2], [1, 2]]] }, ''), 'ring-not-closed',
      '/coordinates/1', 'linear ring must be closed (last position equal to the first), found first [1,1] and last [1,2]');
    expectOne(validateGeometry({ type: 'MultiPolygon', coordinates: [[tri3()], [[[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 0, 2]]]] }, ''),
      'ring-not-closed', '/coordinates/1/0');
  });

  it('mesh-no-faces (spec 7.1)', () => {
    expectOne(validateGeometry({ type: 'PolyhedralSurface' }, '/geometry'), 'mesh-no-faces', '/geometry',
      'PolyhedralSurface must have non-empty coordinates or tiles, found no coordinates and no tiles');
    expectOne(validateGeometry({ type: 'TIN', coordinates: [] }, ''), 'mesh-no-faces', '', 'TIN must have non-empty coordinates or tiles, found coordinates [] and no tiles');
  });

  it('mesh-tiles-invalid', () => {
    expectOne(validateGeometry({ type: 'TIN', tiles: 'a/0/0/0' }, ''), 'mesh-tiles-invalid', '/tiles',
      'TIN tiles must be an array of strings (spatial tile identifiers), found "a/0/0/0"');
    expectOne(validateGeometry({ type: 'PolyhedralSurface', tiles: ['a', 1] }, ''), 'mesh-tiles-invalid', '/tiles', 'found ["a",1]');
  });

  it('mesh-face-empty', () => {
    expectOne(validateGeometry({ type: 'PolyhedralSurface', coordinates: [[tri3()], []] }, ''), 'mesh-face-empty', '/coordinates/1',
      'PolyhedralSurface face must have at least one ring, found []');
  });

  it('tin-face-rings', () => {
    expectOne(validateGeometry({ type: 'TIN', coordinates: [[tri3(), tri3(1)]] }, ''), 'tin-face-rings', '/coordinates/0',
      'TIN face must have exactly one ring, found 2 rings');
    expectOne(validateGeometry({ type: 'TIN', coordinates: [[tri3()], []] }, ''), 'tin-face-rings', '/coordinates/1', 'found 0 rings');
  });

  it('tin-open-triangle (spec 7.2): a 3-position ring, reported once, not as a short or open ring', () => {
    const issues = validateGeometry({ type: 'TIN', coordinates: [[tri3()], [[[0, 0, 0], [1, 0, 0], [0, 1, 0]]]] }, '/geometry');
    expectOne(issues, 'tin-open-triangle', '/geometry/coordinates/1/0',
      'TIN face ring must have 4 positions (3 vertices, then the first repeated), found an open triangle [[0,0,0],[1,0,0],[0,1,0]] (3)');
  });

  it('tin-face-positions', () => {
    expectOne(validateGeometry({ type: 'TIN', coordinates: [[[[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 0]]]] }, ''),
      'tin-face-positions', '/coordinates/0/0', 'TIN face ring must have exactly 4 positions, found');
    expectOne(validateGeometry({ type: 'TIN', coordinates: [[[[0, 0, 0], [0, 0, 0]]]] }, ''), 'tin-face-positions', '/coordinates/0/0', '(2)');
    const open = validateGeometry({ type: 'TIN', coordinates: [[[[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 2, 0]]]] }, '');
    expect(codes(open)).toEqual(['tin-face-positions', 'ring-not-closed']);
    expectSome(validateGeometry({ type: 'TIN', coordinates: [[[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]]] }, ''), 'ring-not-closed', '/coordinates/0/0');
  });

  it('mesh-not-3d is a warning', () => {
    const issues = validateGeometry({ type: 'PolyhedralSurface', coordinates: [[square]] }, '');
    expectOne(issues, 'mesh-not-3d', '/coordinates', 'PolyhedralSurface faces should have 3D positions, found 2D positions');
  });

  it('geometries-missing and geometries-not-array', () => {
    expectOne(validateGeometry({ type: 'GeometryCollection' }, '/g'), 'geometries-missing', '/g',
      'GeometryCollection must have geometries (an array, may be empty), found none');
    expectOne(validateGeometry({ type: 'GeometryCollection', geometries: { type: 'Point' } }, '/g'), 'geometries-not-array', '/g/geometries',
      'GeometryCollection geometries must be an array, found {"type":"Point"}');
  });

  it('GeometryCollection members are validated with their paths', () => {
    const issues = validateGeometry({ type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }, null, { type: 'Point', coordinates: [1] }] }, '/geometry');
    expect(codes(issues)).toEqual(['geometry-not-object', 'position-length']);
    expect(issues[0].path).toBe('/geometry/geometries/1');
    expect(issues[0].message).toBe('GeometryCollection member must be a geometry object, found null');
    expect(issues[1].path).toBe('/geometry/geometries/2/coordinates');
  });

  it('geometry-collection-nested is a warning, at each nested level, in document order', () => {
    const inner = { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1] }] };
    const issues = validateGeometry({ type: 'GeometryCollection', geometries: [inner, { type: 'LineString', coordinates: [[0, 0]] }] }, '');
    expect(codes(issues)).toEqual(['geometry-collection-nested', 'position-length', 'linestring-too-short']);
    expect(issues.map((i) => i.path)).toEqual(['/geometries/0', '/geometries/0/geometries/0/coordinates', '/geometries/1/coordinates']);
    expect(issues[0].severity).toBe('warning');
  });

  it('geometry-radius is a warning', () => {
    expectOne(validateGeometry({ type: 'Point', coordinates: [1, 2], radius: 5 }, '/geometry'), 'geometry-radius', '/geometry/radius',
      "radius belongs in the feature's properties, not in the geometry (it is dropped), found 5");
    expectOne(validateGeometry({ type: 'GeometryCollection', geometries: [], radius: 1 }, ''), 'geometry-radius', '/radius');
  });

  it('bbox rules', () => {
    expectOne(validateGeometry({ type: 'Point', coordinates: [1, 2], bbox: [1, 2, 3] }, ''), 'bbox-length', '/bbox',
      'bbox must be an array of 4 or 6 numbers, found [1,2,3] (3)');
    expectOne(validateGeometry({ type: 'Point', coordinates: [1, 2], bbox: 'x' }, ''), 'bbox-length', '/bbox', 'found "x"');
    expectOne(validateGeometry({ type: 'Point', coordinates: [1, 2], bbox: [1, 2, null, 4] }, ''), 'bbox-not-number', '/bbox/2',
      'bbox entries must be finite numbers, found null');
    expectOne(validateGeometry({ type: 'Point', coordinates: [1, 2], bbox: [5, 2, 1, 4] }, ''), 'bbox-inverted', '/bbox',
      'bbox minimum 5 is above its maximum 1, found [5,2,1,4]');
    expectOne(validateGeometry({ type: 'Point', coordinates: [1, 2, 3], bbox: [0, 0, 9, 1, 1, 3] }, ''), 'bbox-inverted', '/bbox');
  });
});

describe('robustness', () => {
  it('survives GeometryCollections nested 100,000 deep without recursion', () => {
    let g: unknown = { type: 'Point', coordinates: [1, 2] };
    for (let i = 0; i < 100_000; i++) g = { type: 'GeometryCollection', geometries: [g] };
    const issues = validateGeometry(g, '');
    expect(errors(issues)).toEqual([]);
    expect(issues).toHaveLength(99_999);
  });

  it('survives coordinates nested 100,000 deep and shows them briefly', () => {
    let c: unknown = [1, 2];
    for (let i = 0; i < 100_000; i++) c = [c];
    const issues = validateGeometry({ type: 'Point', coordinates: c }, '');
    expectOne(issues, 'coordinates-depth', '/coordinates', 'Point coordinates must nest 1 array level(s) down to a number, found 100001 (100000 level(s) too deep)');
    expect(issues[0].message.length).toBeLessThan(200);
    expect(codes(validateGeometry({ type: 'MultiPolygon', coordinates: c }, ''))).toEqual(['coordinates-depth']);
  });

  it('does not read members from the prototype or a __proto__ key', () => {
    const g = JSON.parse('{"__proto__": {"type": "Point", "coordinates": [1, 2]}, "type": "LineString", "coordinates": [[0, 0], [1, 1]]}');
    expect(validateGeometry(g, '')).toEqual([]);
    const h = JSON.parse('{"__proto__": {"type": "Point"}}');
    expect(codes(validateGeometry(h, ''))).toEqual(['geometry-type-unknown']);
    expect(codes(validateGeometry(Object.create(null), ''))).toEqual(['geometry-type-unknown']);
  });

  it('the same rules apply to a geometry inside a feature, with the feature path', () => {
    expectOne(validateFeature({ type: 'Feature', geometry: { type: 'Point', coordinates: [1] } }, '/features/3'),
      'position-length', '/features/3/geometry/coordinates');
  });
});
