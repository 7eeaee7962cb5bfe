// Coarse-zoom policy tests: sub-pixel features as points, thinning by per-zoom thresholds and the budget's needs, reduceForZoom.
import { describe, expect, it } from 'vitest';
import { tileFeatures } from '../../src/stages/tile/tiler.js';
import { reduceForZoom } from '../../src/stages/tile/reduce.js';
import { PRIORITY_RANGE, keeps, thinningPriority } from '../../src/stages/thinning.js';
import type { TileResult, TileSpec } from '../../src/stages/tile/spec.js';
import { flatFeature, type FlatFeature, type TileFeature } from '../../src/tiling/flat.js';
import { RecordEncoder, RecordReader } from '../../src/stages/record.js';
import { baseSpec, byKey, jsonOf, key, pbfFeatures, rng, shuffled, starRing, tf } from '../tiling/tile-fixtures.js';

const same = (a: TileResult[], b: TileResult[]) => {
  expect(b.map(key)).toEqual(a.map(key));
  a.forEach((t, i) => {
    expect(Buffer.from(b[i].json ?? []).equals(Buffer.from(t.json ?? []))).toBe(true);
    expect(Buffer.from(b[i].pbf ?? []).equals(Buffer.from(t.pbf ?? []))).toBe(true);
    expect(b[i].stats).toEqual(t.stats);
  });
};

describe('pointification', () => {
  // World 65536 px: a display pixel is 256 px at zoom 0, 1 px at zoom 8 (the finest here).
  const spec = baseSpec({ side: 65536, minZoom: 0, maxZoom: 8, finestZoom: 8, layers: [{ id: 'cells' }] });
  const cell = tf(0, { type: 'Polygon', coordinates: [[[1000, 1000], [1040, 1000], [1040, 1030], [1000, 1030], [1000, 1000]]] },
    { id: 'c0', featureClass: 'cell', parentId: 9, properties: { class: 'tumor' } });
  const tiles = tileFeatures([cell], spec);

  it('draws a feature smaller than a display pixel as its centroid, with the same members', () => {
    for (const t of tiles) {
      const f = jsonOf(t).features[0];
      // 40 × 30 px: sub-pixel while a display pixel is larger than 40 px, i.e. up to zoom 2 (64 px).
      expect(f.geometry?.type).toBe(t.z <= 2 ? 'Point' : 'Polygon');
      expect(t.stats.pointified).toEqual([t.z <= 2 ? 1 : 0]);
      expect({ ...f, geometry: undefined }).toEqual({ type: 'Feature', id: 'c0', featureClass: 'cell', parentId: 9, layer: 'cells', properties: { class: 'tumor' }, geometry: undefined });
      const p = pbfFeatures(t.pbf as Uint8Array)[0];
      expect(p.id).toBe(0);
      expect(p.properties).toEqual({ id: 'c0', featureClass: 'cell', parentId: 9, class: 'tumor' });
    }
    // The vertex-mean centroid (1020, 1015), quantised at zoom 0 (16 px per unit): 64 × 16 = 1024, 63 × 16 = 1008.
    expect(jsonOf(tiles[0]).features[0].geometry).toEqual({ type: 'Point', coordinates: [1024, 1008] });
  });

  it('never pointifies at the finest zoom', () => {
    const tiny = tf(1, { type: 'Polygon', coordinates: [[[5000, 5000], [5000.5, 5000], [5000.5, 5000.5], [5000, 5000]]] });
    const finest = tileFeatures([tiny], { ...spec, minZoom: 8 });
    expect(jsonOf(finest[0]).features[0].geometry?.type).toBe('Polygon');
    expect(finest[0].stats.pointified).toEqual([0]);
  });

  it('keeps a long thin feature that collapses at a coarse zoom visible as its centroid', () => {
    const sliver = tf(2, { type: 'Polygon', coordinates: [[[0, 100], [4000, 100], [4000, 101], [0, 100]]] }, { id: 2 });
    const z0 = tileFeatures([sliver], { ...spec, maxZoom: 0 });
    expect(jsonOf(z0[0]).features[0].geometry).toEqual({ type: 'Point', coordinates: [2672, 96] });
    expect(z0[0].stats.pointified).toEqual([1]);
    expect(tileFeatures([sliver], { ...spec, maxZoom: 0, lod: 'none' })).toEqual([]);
  });
});

describe('uniform thinning', () => {
  const r = rng(3);
  const points: TileFeature[] = [];
  for (let i = 0; i < 3000; i++) {
    points.push(tf(i * 7 + 3, { type: 'Point', coordinates: [Math.round(r() * 10240) / 10, Math.round(r() * 10240) / 10] },
      { id: i, properties: { label: `cell-${i}`, score: Math.round(r() * 1000) / 1000, class: ['a', 'b', 'c'][i % 3] } }, i % 2));
  }
  const spec: TileSpec = baseSpec({ minZoom: 0, maxZoom: 2, finestZoom: 2, tileBudget: 20_000 });
  const at = (share0: number, share1: number) => [share0, share1, 1].map((s) => [(1 - s) * PRIORITY_RANGE, (1 - s) * PRIORITY_RANGE]);
  const ids = (t: TileResult) => jsonOf(t).features.map((f) => f.id as number);

  it('draws at a zoom exactly the features its threshold keeps, in every tile and both formats', () => {
    const thresholds = at(0.1, 0.4);
    const tiles = tileFeatures(points, { ...spec, thresholds, tileBudget: Infinity });
    for (const z of [0, 1]) {
      const expected = points.filter((p) => keeps(thresholds[z][p.layer], p.seq)).map((p) => p.feature.id as number).sort((a, b) => a - b);
      const drawn = new Set<number>();
      for (const t of tiles.filter((x) => x.z === z)) {
        const json = ids(t);
        expect(pbfFeatures(t.pbf as Uint8Array).map((f) => f.id).sort()).toEqual(json.slice().sort());
        for (const id of json) {
          drawn.add(id);
          expect(keeps(thresholds[z][id % 2], points[id].seq)).toBe(true);
        }
      }
      expect([...drawn].sort((a, b) => a - b)).toEqual(expected);
    }
    // Nested: what zoom 0 draws, zoom 1 draws too.
    const z1 = new Set(tiles.filter((t) => t.z === 1).flatMap(ids));
    expect(tiles.filter((t) => t.z === 0).flatMap(ids).every((id) => z1.has(id))).toBe(true);
  });

  it('reports, for a tile over the budget, the lowest threshold at which it fits, exactly', () => {
    const z0 = tileFeatures(points, { ...spec, maxZoom: 0 })[0];
    expect((z0.pbf as Uint8Array).length).toBeGreaterThan(20_000);
    const need = z0.need as number;
    expect(need).toBeGreaterThan(0);
    const with_ = (t: number) => tileFeatures(points, { ...spec, maxZoom: 0, thresholds: [[t, t]] })[0];
    expect((with_(need).pbf as Uint8Array).length).toBeLessThanOrEqual(20_000);
    expect(with_(need).need).toBeUndefined();
    // One step lower draws the feature whose priority is need - 1, and the tile no longer fits.
    expect(points.some((p) => thinningPriority(p.seq) === need - 1)).toBe(true);
    expect((with_(need - 1).pbf as Uint8Array).length).toBeGreaterThan(20_000);
  });

  it('holds the JSON tile to the budget only in a build without PBF', () => {
    const both = tileFeatures(points, { ...spec, maxZoom: 0, tileBudget: 200_000 })[0];
    expect((both.json as Uint8Array).length).toBeGreaterThan(200_000);
    expect(both.need).toBeUndefined();
    const json = tileFeatures(points, { ...spec, maxZoom: 0, tileBudget: 200_000, formats: { json: true, pbf: false } })[0];
    const t = json.need as number;
    const fitted = tileFeatures(points, { ...spec, maxZoom: 0, tileBudget: 200_000, formats: { json: true, pbf: false }, thresholds: [[t, t]] })[0];
    expect((fitted.json as Uint8Array).length).toBeLessThanOrEqual(200_000);
  });

  it('is identical for any input order', () => {
    const thin = { ...spec, thresholds: at(0.05, 0.3) };
    const tiles = tileFeatures(points, thin);
    same(tiles, tileFeatures(shuffled(points, 1), thin));
    same(tiles, tileFeatures(shuffled(points, 2), thin));
  });

  it('never thins the finest zoom nor asks it to fit, and does nothing with lod none', () => {
    const tiles = tileFeatures(points, { ...spec, thresholds: [[1, 1], [1, 1], [2 ** 32, 2 ** 32]] });
    const finest = tiles.filter((t) => t.z === 2);
    expect(finest.reduce((s, t) => s + t.stats.features, 0)).toBeGreaterThanOrEqual(3000);
    expect(tileFeatures(points, { ...spec, minZoom: 2, tileBudget: 100 }).every((t) => t.need === undefined)).toBe(true);
    const none = tileFeatures(points, { ...spec, lod: 'none', maxZoom: 0, thresholds: at(0.1, 0.4) })[0];
    expect(none.stats.features).toBe(3000);
    expect(none.need).toBeUndefined();
  });

  it('keeps or drops features of equal priority together', () => {
    // The hash takes seq's low half xor a multiple of its high half: these two seqs share a priority.
    const a = (5 ^ Math.imul(1, 0x9e3779b1)) >>> 0, b = 2 ** 32 + 5;
    expect(thinningPriority(a)).toBe(thinningPriority(b));
    const pt = (seq: number, id: number, layer: number) => tf(seq, { type: 'Point', coordinates: [100, 100] }, { id, properties: {} }, layer);
    const feats = [pt(b, 2, 0), pt(a, 1, 1)];
    const one = (tileFeatures([feats[1]], { ...spec, maxZoom: 0 })[0].pbf as Uint8Array).length;
    const t = tileFeatures(feats, { ...spec, maxZoom: 0, tileBudget: one + 2 })[0];
    expect(t.need).toBe(thinningPriority(a) + 1);
  });

  it('writes no tile where the threshold keeps nothing', () => {
    const tiles = tileFeatures(points.slice(0, 5), { ...spec, thresholds: [[2 ** 32, 2 ** 32], [0, 0], [0, 0]] });
    expect(tiles.filter((t) => t.z === 0)).toEqual([]);
    expect(tiles.filter((t) => t.z === 1).length).toBeGreaterThan(0);
  });
});

describe('sparing large outlines', () => {
  // World 1024 px (baseSpec): a display pixel of zoom 0 is 4 px, so outlines 32 px across or more are spared there.
  const r = rng(23);
  const outlines: TileFeature[] = [];
  for (let i = 0; i < 60; i++) outlines.push(tf(2 * i, { type: 'Polygon', coordinates: [starRing(r, 100 + r() * 800, 100 + r() * 800, 40 + r() * 30, 120)] }, { id: i }));
  const spec = baseSpec({ minZoom: 0, maxZoom: 0, finestZoom: 2, tileBudget: 4000, thresholds: [[0]] });

  it('thins spared outlines too, and says the zoom must stop sparing, when they alone take more than half the budget', () => {
    const t = tileFeatures(outlines, spec)[0];
    expect((t.pbf as Uint8Array).length).toBeGreaterThan(4000);
    expect(t.unspare).toBe(true);
    const need = t.need as number;
    // Without sparing at zoom 0, the tile at the threshold it asked for fits and asks nothing more.
    const fitted = tileFeatures(outlines, { ...spec, spareFrom: 1, thresholds: [[need]] })[0];
    expect((fitted.pbf as Uint8Array).length).toBeLessThanOrEqual(4000);
    expect(fitted.need).toBeUndefined();
    expect(jsonOf(fitted).features.length).toBeGreaterThan(0);
    // Still sparing, the same threshold leaves every outline drawn: the tile stays over the budget.
    expect(jsonOf(tileFeatures(outlines, { ...spec, thresholds: [[need]] })[0]).features.length).toBe(outlines.length);
  });

  it('keeps them whole and thins the rest while they fit', () => {
    const few = outlines.slice(0, 3);
    const dots = Array.from({ length: 400 }, (_, i) => tf(1000 + i, { type: 'Point', coordinates: [r() * 1024, r() * 1024] }, { id: 1000 + i, properties: { n: i } }));
    const t = tileFeatures([...few, ...dots], spec)[0];
    expect(t.unspare).toBeUndefined();
    const fitted = jsonOf(tileFeatures([...few, ...dots], { ...spec, thresholds: [[t.need as number]] })[0]);
    expect(fitted.features.filter((f) => (f.id as number) < 1000).length).toBe(3);
    expect(fitted.features.length).toBeLessThan(403);
  });
});

describe('reduceForZoom', () => {
  const r = rng(17);
  const side = 65536;
  const features: TileFeature[] = [];
  for (let i = 0; i < 300; i++) {
    const cx = r() * side, cy = r() * side, radius = 2 + r() * (r() < 0.3 ? 3000 : 200);
    const kind = r();
    const props = { properties: { i }, id: i };
    if (kind < 0.5) features.push(tf(i, { type: 'Polygon', coordinates: [starRing(r, cx, cy, radius, 6 + Math.floor(r() * 40))] }, props));
    else if (kind < 0.65) features.push(tf(i, { type: 'MultiPolygon', coordinates: [[starRing(r, cx, cy, radius, 12)], [starRing(r, cx + radius * 3, cy, radius / 3, 8)]] }, props));
    else if (kind < 0.8) features.push(tf(i, { type: 'LineString', coordinates: starRing(r, cx, cy, radius, 10).slice(0, 7) }, props));
    else if (kind < 0.9) features.push(tf(i, { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [cx, cy] }, { type: 'Polygon', coordinates: [starRing(r, cx, cy, radius, 9)] }] }, props));
    else features.push(tf(i, { type: 'Point', coordinates: [cx, cy] }, props));
  }
  // A long sliver that collapses under simplification at coarse zooms, though not sub-pixel.
  features.push(tf(300, { type: 'Polygon', coordinates: [[[100, 100], [30000, 100], [30000, 101], [100, 100]]] }, { id: 300 }));
  const flat = (f: TileFeature) => flatFeature(f) as FlatFeature;
  // The pipeline passes reduced features between units as binary records: go through them as it does.
  const enc = new RecordEncoder();
  const viaRecord = (f: FlatFeature): FlatFeature => {
    enc.encode('cells', f);
    const r = new RecordReader(enc.bytes().slice());
    expect(r.next()).toBe(true);
    return r.feature(() => f.layer);
  };
  const reduceAll = (fs: FlatFeature[], zoom: number, spec: Pick<TileSpec, 'side' | 'lod'>) => fs.flatMap((f) => {
    const x = reduceForZoom(f, spec, zoom);
    return x === null ? [] : [viaRecord(x)];
  });

  for (const lod of ['auto', 'none'] as const) {
    it(`gives the same tiles at every zoom up to the reduction zoom (lod ${lod})`, () => {
      const spec = baseSpec({ side, minZoom: 0, maxZoom: 5, finestZoom: 9, layers: [{ id: 'cells' }], lod, tileBudget: 8000 });
      const direct = tileFeatures(features, spec);
      // The pipeline serialises reduced features between units: go through JSON as it does.
      const reduced = reduceAll(features.map(flat), 5, spec);
      same(direct, tileFeatures(reduced, spec));
      const twice = reduceAll(reduced, 3, spec);
      same(tileFeatures(features, { ...spec, maxZoom: 3 }), tileFeatures(twice, { ...spec, maxZoom: 3 }));
      expect(direct.some((t) => t.stats.pointified[0] > 0)).toBe(lod === 'auto');
    });
  }

  it('makes features smaller and marks them with their original bbox and centroid', () => {
    const spec = { side, lod: 'auto' as const };
    const big = flat(tf(7, { type: 'Polygon', coordinates: [starRing(rng(1), 30000, 30000, 3000, 200)] }));
    const red = reduceForZoom(big, spec, 2) as FlatFeature;
    expect(red.geom.k).toBe('polygons');
    const ring = (f: FlatFeature) => (f.geom as { polys: number[][][] }).polys[0][0];
    expect(ring(red).length).toBeLessThan(ring(big).length);
    expect(red.seq).toBe(big.seq);
    expect(red.lod).toHaveLength(6);
    // The original bbox and centroid, not the simplified ring's.
    const xs = ring(big).filter((_, i) => i % 2 === 0), ys = ring(big).filter((_, i) => i % 2 === 1);
    expect(red.lod?.slice(0, 4)).toEqual([Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]);
    const point = reduceForZoom(flat(tf(5, { type: 'Polygon', coordinates: [[[10, 10], [12, 10], [12, 12], [10, 10]]] }, { id: 'x' })), spec, 3) as FlatFeature;
    expect(point.geom).toEqual({ k: 'points', type: 'Point', xy: [34 / 3, 32 / 3] });
    expect(point.lod).toEqual([10, 10, 12, 12, 34 / 3, 32 / 3]);
    expect(point.head?.id).toBe('x');
    const p = flat(tf(6, { type: 'Point', coordinates: [1, 2] }));
    expect(reduceForZoom(p, spec, 0)).toBe(p);
    const square = flat(tf(8, { type: 'Polygon', coordinates: [[[0, 0], [5000, 0], [5000, 5000], [0, 5000], [0, 0]]] }));
    expect(reduceForZoom(square, spec, 2)).toBe(square); // nothing to simplify: passed on as it is
    // With lod none a sliver that collapses is dropped, not pointified.
    const sliver = flat(features[300]);
    expect(reduceForZoom(sliver, { side, lod: 'none' }, 0)).toBeNull();
  });

  it('places reduced features in the same tiles as the originals (bbox of reduced geometry stays inside)', () => {
    const spec = baseSpec({ side, minZoom: 3, maxZoom: 3, finestZoom: 9, layers: [{ id: 'cells' }] });
    const a = byKey(tileFeatures(features, spec));
    const b = byKey(tileFeatures(reduceAll(features.map(flat), 3, spec), spec));
    expect([...b.keys()]).toEqual([...a.keys()]);
  });
});
