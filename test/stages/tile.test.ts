// Tiler tests: a hand-checked golden case, area conservation, JSON/PBF agreement, world edges, determinism, cells.
import { describe, expect, it } from 'vitest';
import { clipRingToRect, ringArea } from '../helpers/pyramid.js';
import { tileFeatures, TilerScratch } from '../../src/stages/tile/tiler.js';
import type { TileResult } from '../../src/stages/tile/spec.js';
import { flatFeature, type TileFeature } from '../../src/tiling/flat.js';
import {
  baseSpec, byKey, expectedId, expectedTags, jsonOf, jsonToTileUnits, key, pbfFeatures, perimeter, randomFeatures, shoelace, shuffled, tf,
} from '../tiling/tile-fixtures.js';

// World 1024 px, zooms 0–2; finest tile 256 px, so one tile unit is 1/16 px.
const golden: TileFeature[] = [
  // Exterior given counter-clockwise on screen and hole clockwise: both must come out reversed.
  tf(0, { type: 'Polygon', coordinates: [[[16, 16], [16, 80], [80, 80], [80, 16], [16, 16]], [[32, 32], [48, 32], [48, 48], [32, 48], [32, 32]]] },
    { id: 'cell-a', featureClass: 'cell', properties: { area: 4096, class: 'tumor', score: 0.5, tags: ['x', 'y'], note: null, neg: -3, flag: true } }),
  tf(1, { type: 'MultiPolygon', coordinates: [[[[300, 20], [340, 20], [340, 60], [300, 60], [300, 20]]], [[[600, 600], [640, 600], [640, 640], [600, 640], [600, 600]]]] }, { id: 42 }),
  tf(2, { type: 'LineString', coordinates: [[100, 500], [700, 500]] }, { id: 2, parentId: 42, ref: 'zarr://a' }),
  tf(3, { type: 'Point', coordinates: [200.5, 100.25] }, { id: 3 }, 1),
  tf(4, { type: 'MultiPoint', coordinates: [[10, 10], [1020, 1020]] }, { id: 4 }, 1),
  tf(5, { type: 'Polygon', coordinates: [[[240, 100], [270, 100], [270, 120], [240, 120], [240, 100]]] }, { id: 5 }),
  tf(6, { type: 'Polygon', coordinates: [[[1000, 1000], [1024, 1000], [1024, 1024], [1000, 1024], [1000, 1000]]] }, { id: 6 }),
  tf(7, { type: 'Polygon', coordinates: [[[0, 300], [10, 300], [10, 310], [0, 310], [0, 300]]] }, { id: 7 }),
  tf(8, { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [130, 130] }, { type: 'LineString', coordinates: [[130, 140], [140, 140]] }] }, { id: 8 }),
  tf(9, { type: 'TIN', coordinates: [[[[10, 200, 0], [20, 200, 1], [10, 210, 2], [10, 200, 0]]]] }, { id: 9 }),
  tf(10, null, { id: 10 }),
  tf(11, { type: 'TIN', tiles: ['mesh/0.json'] }, { id: 11 }),
  tf(12, { type: 'Polygon', coordinates: [[[700, 100], [702, 100], [702, 102], [700, 102], [700, 100]]] }, { id: 12 }),
];

const run = (features: TileFeature[], over = {}) => tileFeatures(features, baseSpec(over));

describe('golden case', () => {
  const tiles = byKey(run(golden));
  const pbf = (k: string) => pbfFeatures(tiles.get(k)?.pbf as Uint8Array);
  const json = (k: string) => jsonOf(tiles.get(k) as TileResult);

  it('produces exactly the tiles that hold features, sorted by z, x, y', () => {
    const keys = run(golden).map(key);
    expect(keys).toEqual(['0/0/0', '1/0/0', '1/1/0', '1/1/1', '2/0/0', '2/0/1', '2/1/0', '2/1/1', '2/2/0', '2/2/1', '2/2/2', '2/3/3']);
  });

  it('orients and quantises a polygon with a hole (tile 2/0/0)', () => {
    const a = pbf('2/0/0').find((f) => f.id === 0);
    expect(a?.type).toBe(3);
    expect(a?.geometry).toEqual([
      [[256, 256], [1280, 256], [1280, 1280], [256, 1280], [256, 256]],
      [[512, 512], [512, 768], [768, 768], [768, 512], [512, 512]],
    ]);
    expect(a?.properties).toEqual({ id: 'cell-a', featureClass: 'cell', area: 4096, class: 'tumor', score: 0.5, tags: '["x","y"]', neg: -3, flag: true });
    const j = json('2/0/0').features.find((f) => f.id === 'cell-a');
    expect(j).toEqual({
      type: 'Feature', id: 'cell-a', featureClass: 'cell', layer: 'cells',
      properties: { area: 4096, class: 'tumor', score: 0.5, tags: ['x', 'y'], note: null, neg: -3, flag: true },
      geometry: { type: 'Polygon', coordinates: [[[16, 16], [80, 16], [80, 80], [16, 80], [16, 16]], [[32, 32], [32, 48], [48, 48], [48, 32], [32, 32]]] },
    });
  });

  it('puts each polygon of a MultiPolygon in its own tile', () => {
    expect(pbf('2/1/0').find((f) => f.id === 42)?.geometry).toEqual([[[704, 320], [1344, 320], [1344, 960], [704, 960], [704, 320]]]);
    expect(pbf('2/2/2').find((f) => f.id === 42)?.geometry).toEqual([[[1408, 1408], [2048, 1408], [2048, 2048], [1408, 2048], [1408, 1408]]]);
    expect(json('2/2/2').features[0].geometry).toEqual({ type: 'MultiPolygon', coordinates: [[[[600, 600], [640, 600], [640, 640], [600, 640], [600, 600]]]] });
  });

  it('cuts a line at the buffered tile edges', () => {
    expect(pbf('2/0/1').find((f) => f.id === 2)?.geometry).toEqual([[[1600, 3904], [4160, 3904]]]);
    expect(pbf('2/1/1').find((f) => f.id === 2)?.geometry).toEqual([[[-64, 3904], [4160, 3904]]]);
    expect(pbf('2/2/1').find((f) => f.id === 2)?.geometry).toEqual([[[-64, 3904], [3008, 3904]]]);
    expect(json('2/1/1').features.find((f) => f.id === 2)?.geometry).toEqual({ type: 'LineString', coordinates: [[252, 500], [516, 500]] });
    expect(pbf('2/1/1').find((f) => f.id === 2)?.properties).toEqual({ parentId: 42, ref: 'zarr://a' });
    expect(tiles.has('2/0/2')).toBe(false); // y = 500 px is 12 px above the next row: outside its 4 px buffer
  });

  it('keeps points inside the buffered tile, in their layer', () => {
    const n = pbf('2/0/0').filter((f) => f.layer === 'nuclei');
    expect(n.map((f) => [f.id, f.geometry])).toEqual([[3, [[[3208, 1604]]]], [4, [[[160, 160]]]]]);
    expect(pbf('2/3/3').find((f) => f.id === 4)?.geometry).toEqual([[[4032, 4032]]]);
    expect(json('2/0/0').features.find((f) => f.id === 3)?.geometry).toEqual({ type: 'Point', coordinates: [200.5, 100.25] });
    expect(json('2/3/3').features.find((f) => f.id === 4)?.geometry).toEqual({ type: 'MultiPoint', coordinates: [[1020, 1020]] });
  });

  it('clips a polygon crossing a tile border into both tiles', () => {
    expect(pbf('2/0/0').find((f) => f.id === 5)?.geometry).toEqual([[[3840, 1600], [4160, 1600], [4160, 1920], [3840, 1920], [3840, 1600]]]);
    expect(pbf('2/1/0').find((f) => f.id === 5)?.geometry).toEqual([[[-64, 1600], [224, 1600], [224, 1920], [-64, 1920], [-64, 1600]]]);
    expect(json('2/1/0').features.find((f) => f.id === 5)?.geometry).toEqual({ type: 'Polygon', coordinates: [[[252, 100], [270, 100], [270, 120], [252, 120], [252, 100]]] });
  });

  it('places features at the world edges in the edge tiles only', () => {
    expect(pbf('2/3/3').find((f) => f.id === 6)?.geometry).toEqual([[[3712, 3712], [4096, 3712], [4096, 4096], [3712, 4096], [3712, 3712]]]);
    expect(pbf('2/0/1').find((f) => f.id === 7)?.geometry).toEqual([[[0, 704], [160, 704], [160, 864], [0, 864], [0, 704]]]);
    const holders = (id: number) => [...tiles.values()].filter((t) => t.z === 2 && pbfFeatures(t.pbf as Uint8Array).some((f) => f.id === id)).map(key);
    expect(holders(6)).toEqual(['2/3/3']);
    expect(holders(7)).toEqual(['2/0/1']);
  });

  it('keeps a GeometryCollection as one JSON feature and one PBF feature per member', () => {
    expect(json('2/0/0').features.find((f) => f.id === 8)?.geometry).toEqual({
      type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [130, 130] }, { type: 'LineString', coordinates: [[130, 140], [140, 140]] }],
    });
    expect(pbf('2/0/0').filter((f) => f.id === 8).map((f) => [f.type, f.geometry])).toEqual([
      [1, [[[2080, 2080]]]], [2, [[[2080, 2240], [2240, 2240]]]],
    ]);
  });

  it('keeps meshes whole in JSON only, and counts them', () => {
    const t = tiles.get('2/0/0') as TileResult;
    expect(json('2/0/0').features.find((f) => f.id === 9)?.geometry).toEqual(golden[9].feature.geometry);
    expect(pbf('2/0/0').some((f) => f.id === 9)).toBe(false);
    expect(t.stats.meshesJsonOnly).toBe(1);
    expect(t.stats.notInPbf).toBe(1);
  });

  it('skips null geometry and meshes without inline coordinates: they have no flat form', () => {
    for (const t of tiles.values()) expect(jsonOf(t).features.some((f) => f.id === 10 || f.id === 11)).toBe(false);
    expect(flatFeature(golden[10])).toBeNull();
    expect(flatFeature(golden[11])).toBeNull();
    expect(flatFeature(golden[0])).not.toBeNull();
  });

  it('orders features by layer then seq, and copies collection members into JSON tiles', () => {
    const t = tileFeatures(shuffled(golden, 3), baseSpec({ collection: { multiscale: { axes: [{ name: 'x' }, { name: 'y' }] }, properties: { slide: 's1' } } }));
    const j = jsonOf(byKey(t).get('2/0/0') as TileResult);
    expect(j.multiscale).toEqual({ axes: [{ name: 'x' }, { name: 'y' }] });
    expect(j.properties).toEqual({ slide: 's1' });
    expect(j.features.map((f) => f.id)).toEqual(['cell-a', 5, 8, 9, 3, 4]);
    expect(new TextDecoder().decode(byKey(t).get('2/0/0')?.json).startsWith('{"type":"FeatureCollection","multiscale":{')).toBe(true);
  });

  it('at zoom 0 simplifies, and replaces a sub-pixel polygon by its centroid', () => {
    const t = tiles.get('0/0/0') as TileResult;
    const tiny = jsonOf(t).features.find((f) => f.id === 12);
    expect(tiny?.geometry).toEqual({ type: 'Point', coordinates: [701, 101] });
    expect(t.stats.pointified).toEqual([1, 0]);
    expect(pbf('0/0/0').find((f) => f.id === 12)?.type).toBe(1);
    expect(pbf('0/0/0').find((f) => f.id === 0)?.geometry[0]).toEqual([[64, 64], [320, 64], [320, 320], [64, 320], [64, 64]]);
    expect(jsonOf(tiles.get('1/1/0') as TileResult).features.find((f) => f.id === 12)?.geometry?.type).toBe('Polygon');
    expect(jsonOf(tiles.get('2/2/0') as TileResult).features.find((f) => f.id === 12)?.geometry?.type).toBe('Polygon');
  });

  it('with lod none keeps sub-pixel polygons as polygons while they survive quantisation', () => {
    const t = byKey(run(golden, { lod: 'none' })).get('0/0/0') as TileResult;
    expect(jsonOf(t).features.find((f) => f.id === 12)?.geometry?.type).toBe('Polygon');
    expect(t.stats.pointified).toEqual([0, 0]);
  });
});

describe('properties over random data', () => {
  const side = 2048;
  const spec = baseSpec({ side, minZoom: 0, maxZoom: 3, finestZoom: 3, layers: [{ id: 'cells' }, { id: 'other' }] });
  const features = randomFeatures(11, 400, side);
  const tiles = tileFeatures(features, spec);

  it('conserves every polygon area over the finest tiles (clipped to unbuffered tiles)', () => {
    const ts = side / 8;
    const area = new Map<number, number>();
    for (const t of tiles.filter((x) => x.z === 3)) {
      for (const f of pbfFeatures(t.pbf as Uint8Array)) {
        if (f.type !== 3) continue;
        for (const ring of f.geometry) {
          const px = ring.map(([x, y]) => [t.x * ts + (x * ts) / 4096, t.y * ts + (y * ts) / 4096]);
          const clipped = clipRingToRect(px, t.x * ts, t.y * ts, (t.x + 1) * ts, (t.y + 1) * ts);
          area.set(f.id as number, (area.get(f.id as number) ?? 0) + (clipped.length ? ringArea(clipped) : 0));
        }
      }
    }
    let checked = 0;
    for (const f of features) {
      const g = f.feature.geometry;
      if (g?.type !== 'Polygon') continue;
      const rings = g.coordinates.map((r) => r.map((p) => [p[0], p[1]]));
      // Parts of the world outside [0, side] do not exist: compare with the input clipped to the world.
      const inWorld = rings.map((r) => clipRingToRect(r, 0, 0, side, side));
      const expected = Math.abs(shoelace(inWorld[0].length ? inWorld[0] : [[0, 0]])) - (inWorld[1]?.length ? Math.abs(shoelace(inWorld[1])) : 0);
      const tolerance = rings.reduce((s, r) => s + perimeter(r), 0) * (1 / 16) + 0.05;
      expect(Math.abs((area.get(expectedId(f.feature, f.seq)) ?? 0) - expected)).toBeLessThanOrEqual(tolerance);
      checked++;
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('JSON and PBF tiles agree feature for feature (ids, properties, geometry)', () => {
    const bySeqJson = new Map(features.map((f) => [JSON.stringify(f.feature.id), f]));
    for (const t of tiles) {
      const decoded = pbfFeatures(t.pbf as Uint8Array);
      const expected: { layer: string; id: number; type: number; properties: Record<string, unknown>; geometry: number[][][] }[] = [];
      for (const jf of jsonOf(t).features) {
        const src = bySeqJson.get(JSON.stringify(jf.id)) as TileFeature;
        expect(jf.properties).toEqual(src.feature.properties);
        for (const part of jsonToTileUnits(jf.geometry as NonNullable<typeof jf.geometry>, side, t.z, t.x, t.y)) {
          expected.push({ layer: jf.layer, id: expectedId(src.feature, src.seq), type: part.type, properties: expectedTags(src.feature), geometry: part.geometry });
        }
      }
      for (const e of expected) for (const ring of e.geometry) for (const p of ring) { expect(Number.isInteger(p[0])).toBe(true); expect(Number.isInteger(p[1])).toBe(true); }
      expect(decoded).toEqual(expected);
    }
  });

  it('puts exterior rings positive and holes negative in PBF, as in JSON', () => {
    for (const t of tiles) {
      for (const jf of jsonOf(t).features) {
        if (jf.geometry?.type !== 'Polygon') continue;
        expect(shoelace(jf.geometry.coordinates[0])).toBeGreaterThan(0);
        for (const h of jf.geometry.coordinates.slice(1)) expect(shoelace(h)).toBeLessThan(0);
      }
    }
  });

  it('places points at the world edges and tile borders in exactly one unbuffered finest tile', () => {
    const pts = [[0, 0], [2048, 2048], [0, 2048], [256, 256], [512, 100], [2047.9375, 5], [1024, 2048]].map((p, i) => tf(1000 + i, { type: 'Point', coordinates: p as [number, number] }, { id: 1000 + i }));
    const ts = side / 8;
    const out = tileFeatures(pts, { ...spec, minZoom: 3 });
    for (const p of pts) {
      const [px, py] = (p.feature.geometry as { coordinates: number[] }).coordinates;
      const holders = out.filter((t) => {
        const inX = px >= t.x * ts && (px < (t.x + 1) * ts || (t.x === 7 && px === side));
        const inY = py >= t.y * ts && (py < (t.y + 1) * ts || (t.y === 7 && py === side));
        return inX && inY && pbfFeatures(t.pbf as Uint8Array).some((f) => f.id === p.seq);
      });
      expect(holders.length).toBe(1);
    }
  });

  it('is byte-identical across runs and input orders', () => {
    const again = tileFeatures(shuffled(features, 5), spec);
    expect(again.map(key)).toEqual(tiles.map(key));
    again.forEach((t, i) => {
      expect(Buffer.from(t.json as Uint8Array).equals(Buffer.from(tiles[i].json as Uint8Array))).toBe(true);
      expect(Buffer.from(t.pbf as Uint8Array).equals(Buffer.from(tiles[i].pbf as Uint8Array))).toBe(true);
      expect(t.stats).toEqual(tiles[i].stats);
    });
  });

  it('gives the same bytes with scratch a thread reused for other calls (larger tiles, other zooms) as with fresh scratch', () => {
    const scratch = new TilerScratch();
    tileFeatures(randomFeatures(3, 900, side), baseSpec({ side, minZoom: 0, maxZoom: 2, finestZoom: 2 }), scratch);
    tileFeatures(golden, baseSpec(), scratch);
    const again = tileFeatures(features, spec, scratch);
    expect(again.map(key)).toEqual(tiles.map(key));
    again.forEach((t, i) => {
      expect(Buffer.from(t.json as Uint8Array).equals(Buffer.from(tiles[i].json as Uint8Array))).toBe(true);
      expect(Buffer.from(t.pbf as Uint8Array).equals(Buffer.from(tiles[i].pbf as Uint8Array))).toBe(true);
    });
  });

  it('builds the same tiles cell by cell as for the whole world', () => {
    const whole = byKey(tileFeatures(features, { ...spec, minZoom: 1 }));
    const cells: TileResult[] = [];
    for (let x = 0; x < 2; x++) for (let y = 0; y < 2; y++) cells.push(...tileFeatures(features, { ...spec, minZoom: 0, cell: { z: 1, x, y } }));
    expect(cells.every((t) => t.z >= 1)).toBe(true);
    expect(new Set(cells.map(key))).toEqual(new Set(whole.keys()));
    for (const t of cells) {
      const w = whole.get(key(t)) as TileResult;
      expect(Buffer.from(t.json as Uint8Array).equals(Buffer.from(w.json as Uint8Array))).toBe(true);
      expect(Buffer.from(t.pbf as Uint8Array).equals(Buffer.from(w.pbf as Uint8Array))).toBe(true);
    }
    const one = tileFeatures(features, { ...spec, cell: { z: 2, x: 1, y: 3 } });
    expect(one.every((t) => t.z >= 2 && t.x >> (t.z - 2) === 1 && t.y >> (t.z - 2) === 3)).toBe(true);
  });

  it('builds the same tiles cell by cell as for the whole world when coarse zooms are thinned', () => {
    const dense = randomFeatures(29, 1500, side);
    // Zoom 2 draws 60% of the features, zoom 1 30%: the same features wherever a cell's tiles reach.
    const thresholds = [0, 0.7, 0.4, 0].map((t) => [t * 2 ** 32, t * 2 ** 32]);
    const thin = { ...spec, minZoom: 1, thresholds };
    const whole = byKey(tileFeatures(dense, thin));
    const drawn = (z: number) => new Set([...whole.values()].filter((t) => t.z === z).flatMap((t) => jsonOf(t).features.map((f) => f.id))).size;
    expect(drawn(1)).toBeLessThan(drawn(2));
    expect(drawn(2)).toBeLessThan(drawn(3));
    const cells: TileResult[] = [];
    for (let x = 0; x < 2; x++) for (let y = 0; y < 2; y++) cells.push(...tileFeatures(dense, { ...thin, cell: { z: 1, x, y } }));
    expect(new Set(cells.map(key))).toEqual(new Set(whole.keys()));
    for (const t of cells) {
      const w = whole.get(key(t)) as TileResult;
      expect(Buffer.from(t.json ?? []).equals(Buffer.from(w.json ?? []))).toBe(true);
      expect(Buffer.from(t.pbf ?? []).equals(Buffer.from(w.pbf ?? []))).toBe(true);
    }
  });

  it('writes only the formats asked for', () => {
    const j = tileFeatures(features, { ...spec, formats: { json: true, pbf: false } });
    expect(j.every((t) => t.json !== undefined && t.pbf === undefined)).toBe(true);
    const p = tileFeatures(features, { ...spec, formats: { json: false, pbf: true } });
    expect(p.every((t) => t.json === undefined)).toBe(true);
    expect(p.map((t) => t.pbf)).toEqual(tiles.map((t) => t.pbf));
  });
});
