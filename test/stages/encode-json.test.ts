// JSON encoder tests: exact coordinate printing, fixed key order, tile framing.
import { describe, expect, it } from 'vitest';
import { featureHead, JsonWriter, TILE_SUFFIX, tilePrefix } from '../../src/stages/encode-json.js';
import { headOf, type TileGeometry } from '../../src/tiling/flat.js';
import type { Feature } from '../../src/model/feature.js';

const text = (w: JsonWriter) => new TextDecoder().decode(w.buf.subarray(0, w.pos));
const point = (x: number, y: number): TileGeometry => ({ k: 'points', type: 'Point', xy: [x, y] });

function written(unit: number, g: TileGeometry): string {
  const w = new JsonWriter();
  w.setUnit(unit);
  w.geometry(g);
  return text(w);
}

describe('coordinates', () => {
  it('prints tile units times a fractional unit exactly, without float noise', () => {
    expect(written(1 / 16, point(1, -1))).toBe('{"type":"Point","coordinates":[0.0625,-0.0625]}');
    expect(written(1 / 16, point(16383, 160))).toBe('{"type":"Point","coordinates":[1023.9375,10]}');
    expect(written(1 / 8, point(-0, 3))).toBe('{"type":"Point","coordinates":[0,0.375]}');
  });

  it('prints integers for units of a pixel or more, and large values in full', () => {
    expect(written(4, point(3, 2 ** 30))).toBe('{"type":"Point","coordinates":[12,4294967296]}');
    expect(written(1, point(-123456789, 7))).toBe('{"type":"Point","coordinates":[-123456789,7]}');
  });

  it('matches JSON.parse of the exact product for every unit and many values', () => {
    for (let shift = -6; shift <= 20; shift++) {
      const unit = 2 ** -shift;
      for (const q of [0, 1, -1, 7, 4095, 4096, 4160, -64, 123457, 2 ** 31 + 5, -(2 ** 33) - 3]) {
        const s = written(unit, point(q, q));
        const parsed = JSON.parse(s) as { coordinates: number[] };
        expect(parsed.coordinates).toEqual([q * unit, q * unit]);
      }
    }
  });
});

describe('geometries and features', () => {
  it('writes each geometry type, a cut LineString as MultiLineString', () => {
    const ring = [0, 0, 16, 0, 16, 16, 0, 0];
    expect(written(1 / 16, { k: 'points', type: 'MultiPoint', xy: [16, 32, 48, 64] })).toBe('{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}');
    expect(written(1 / 16, { k: 'lines', type: 'LineString', parts: [[0, 0, 16, 16]] })).toBe('{"type":"LineString","coordinates":[[0,0],[1,1]]}');
    expect(written(1 / 16, { k: 'lines', type: 'LineString', parts: [[0, 0, 16, 16], [32, 32, 48, 48]] })).toBe('{"type":"MultiLineString","coordinates":[[[0,0],[1,1]],[[2,2],[3,3]]]}');
    expect(written(1 / 16, { k: 'polygons', type: 'Polygon', polys: [[ring]] })).toBe('{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}');
    expect(written(1 / 16, { k: 'polygons', type: 'MultiPolygon', polys: [[ring], [ring]] })).toBe('{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[0,0],[1,0],[1,1],[0,0]]]]}');
    expect(written(1, { k: 'collection', members: [point(1, 2), { k: 'lines', type: 'LineString', parts: [[0, 0, 1, 1]] }] }))
      .toBe('{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]},{"type":"LineString","coordinates":[[0,0],[1,1]]}]}');
    const tin = { type: 'TIN' as const, coordinates: [[[[0, 0, 1], [1, 0, 1], [0, 1, 1], [0, 0, 1]]]] as [number, number, number][][][] };
    expect(written(1, { k: 'mesh', geometry: tin, box: [0, 0, 1, 1] })).toBe(JSON.stringify(tin));
  });

  it('keeps a feature\'s own vocabularies (they override the collection\'s for it)', () => {
    const vocabularies = { cls: { terms: { T: { uri: 'http://x/T2' } } } };
    const f: Feature = { type: 'Feature', id: 1, vocabularies, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { cls: 'T' } };
    const head = new TextDecoder().decode(featureHead(headOf(f), 'l'));
    expect(head).toBe('{"type":"Feature","id":1,"layer":"l","properties":{"cls":"T"},"vocabularies":{"cls":{"terms":{"T":{"uri":"http://x/T2"}}}},"geometry":');
    expect(JSON.parse(`${head}null}`)).toMatchObject({ vocabularies });
  });

  it('writes members in the fixed order type, id, featureClass, parentId, ref, layer, properties, geometry', () => {
    const head = new TextDecoder().decode(featureHead({ ref: 'r', properties: { a: 1 }, parentId: 3, featureClass: 'cell', id: 'x' }, 'cells'));
    expect(head).toBe('{"type":"Feature","id":"x","featureClass":"cell","parentId":3,"ref":"r","layer":"cells","properties":{"a":1},"geometry":');
    expect(new TextDecoder().decode(featureHead({}, 'l'))).toBe('{"type":"Feature","layer":"l","properties":null,"geometry":');
  });

  it('frames a tile as a FeatureCollection with the collection members', () => {
    const w = new JsonWriter();
    w.setUnit(1);
    w.bytes(tilePrefix({ multiscale: { axes: [] }, properties: { p: 1 } }));
    w.feature(featureHead({ id: 1 }, 'l'), point(2, 3));
    w.bytes(TILE_SUFFIX);
    const s = text(w);
    expect(s).toBe('{"type":"FeatureCollection","multiscale":{"axes":[]},"properties":{"p":1},"features":[{"type":"Feature","id":1,"layer":"l","properties":null,"geometry":{"type":"Point","coordinates":[2,3]}}]}');
    expect(JSON.parse(s)).toBeTruthy();
    expect(new TextDecoder().decode(tilePrefix())).toBe('{"type":"FeatureCollection","features":[');
  });

  it('keeps non-ASCII text intact', () => {
    const head = featureHead({ properties: { name: 'Zellkern µ 🔬' } }, 'l');
    expect(new TextDecoder().decode(head)).toContain('"name":"Zellkern µ 🔬"');
  });
});
