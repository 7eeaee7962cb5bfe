// A unit quantises only the polygons near its cell of a feature of many pieces: the same tiles as from all of them.
import { describe, expect, it } from 'vitest';
import { PolygonBoxes } from '../../src/stages/tile/near.js';
import { tileFeatures } from '../../src/stages/tile/tiler.js';
import type { TileResult } from '../../src/stages/tile/spec.js';
import { flatFeature, withGeometry, type Flat, type FlatFeature, type TileGeometry } from '../../src/tiling/flat.js';
import { baseSpec, byKey, jsonOf, key, pbfFeatures, tf } from '../tiling/tile-fixtures.js';

/** A square ring of side `s` at (x, y), and one with a hole in it. */
const square = (x: number, y: number, s: number): Flat => [x, y, x + s, y, x + s, y + s, x, y + s, x, y];
/** 100 squares of 20 px on a 100 px grid over the 1,024 px world, every third with a hole; one L-shaped across the middle. */
function grid(): Flat[][] {
  const polys: Flat[][] = [];
  for (let j = 0; j < 10; j++) {
    for (let i = 0; i < 10; i++) {
      const x = 10 + 100 * i, y = 10 + 100 * j;
      polys.push((i + j) % 3 === 0 ? [square(x, y, 20), square(x + 5, y + 5, 10).reverse()] : [square(x, y, 20)]);
    }
  }
  polys.push([[300, 480, 700, 480, 700, 540, 520, 540, 520, 700, 480, 700, 480, 540, 300, 540, 300, 480]]);
  return polys;
}

function manyPieces(): FlatFeature {
  const f = flatFeature(tf(1, { type: 'Point', coordinates: [0, 0] }, { id: 1 })) as FlatFeature;
  const geom: TileGeometry = { k: 'polygons', type: 'MultiPolygon', polys: grid() };
  return { ...withGeometry(f, geom, undefined, undefined), many: true };
}

describe('the polygons of a feature of many pieces near a cell', () => {
  it('are those whose exteriors\' boxes meet the rectangle, in their order, of the whole or of a share of it', () => {
    const g = manyPieces().geom as Extract<TileGeometry, { k: 'polygons' }>;
    const boxes = new PolygonBoxes(g);
    const near = boxes.near(g, 100, 100, 250, 130) as typeof g;
    // Squares 1 and 2 of row 1 (x 110–130, 210–230; y 110–130); the one at x 10 ends at 30, short of 100.
    expect(near.polys).toEqual([g.polys[11], g.polys[12]]);
    // A zoom's share of them (67 of 101, as thinning keeps): looked up in the whole's boxes.
    const share: TileGeometry = { k: 'polygons', type: 'MultiPolygon', polys: g.polys.filter((_, k) => k % 3 !== 0) };
    expect((boxes.near(share, 100, 100, 250, 130) as typeof g).polys).toEqual([g.polys[11]]);
    // All of them meet the world: the geometry itself; so does one of few polygons, whatever the rectangle.
    expect(boxes.near(g, 0, 0, 1024, 1024)).toBe(g);
    const few: TileGeometry = { k: 'polygons', type: 'MultiPolygon', polys: g.polys.slice(0, 10) };
    expect(new PolygonBoxes(few).near(few, 100, 100, 250, 130)).toBe(few);
  });

  it('give each cell the tiles the whole world has there, byte for byte', () => {
    const spec = baseSpec({ minZoom: 1 });
    const whole = byKey(tileFeatures([manyPieces()], spec));
    const cells: TileResult[] = [];
    for (let x = 0; x < 2; x++) for (let y = 0; y < 2; y++) cells.push(...tileFeatures([manyPieces()], { ...spec, cell: { z: 1, x, y } }));
    expect(new Set(cells.map(key))).toEqual(new Set(whole.keys()));
    for (const t of cells) {
      const w = whole.get(key(t)) as TileResult;
      expect(jsonOf(t)).toEqual(jsonOf(w));
      expect(pbfFeatures(t.pbf as Uint8Array)).toEqual(pbfFeatures(w.pbf as Uint8Array));
      expect(Buffer.from(t.pbf as Uint8Array).equals(Buffer.from(w.pbf as Uint8Array))).toBe(true);
    }
    // The cells cut it: tile 2/1/1 (256–512 px) of cell 1/0/0 holds the feature, which reaches every cell.
    expect(jsonOf(whole.get('2/1/1') as TileResult).features.map((f) => f.id)).toEqual([1]);
  });
});
