// A MultiPolygon of many pieces across the slide (a class mask's label): cells away from its home store only the pieces near them, with the same tiles.
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { partialRecord, recordPieces, RecordEncoder, RecordReader } from '../../src/stages/record.js';
import { mulberry32 } from '../../src/random.js';
import { NEAR_PIECES } from '../../src/stages/record-stream.js';
import { flatFeatureOf, lodOf, type TileGeometry } from '../../src/tiling/flat.js';
import { decodePbf, withoutReport as strip } from '../helpers/pyramid.js';

/** A square ring, corner (x, y), side s; `hole`: clockwise, as a hole is given. */
const ring = (x: number, y: number, s: number, hole = false): number[][] => {
  const r = [[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]];
  return hole ? r.reverse() : r;
};

/**
 * Two clusters of pieces in opposite corners of a 16,384 px slide, so the feature's centroid lies between them where
 * no piece is: pieces of 2 to 40 px (the small ones collapse at coarse zooms, where the whole becomes its centroid),
 * one in five with a hole, one large piece along the top edge crossing many cells.
 */
function classMask(pieces: number): unknown {
  const polys: number[][][][] = [];
  let seed = 7;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  for (let i = 0; i < pieces; i++) {
    const corner = i % 2 === 0 ? 300 : 12000;
    const x = corner + rnd() * 3500, y = corner + rnd() * 3500, s = 2 + Math.floor(rnd() * 38);
    polys.push(i % 5 === 0 && s > 10 ? [ring(x, y, s), ring(x + 3, y + 3, s - 6, true)] : [ring(x, y, s)]);
  }
  polys.push([ring(200, 100, 9000).map(([x, y]) => [x, 100 + (y - 100) / 60])]);
  const features = [
    { type: 'Feature', id: 1, properties: { label: 255 }, geometry: { type: 'MultiPolygon', coordinates: polys } },
    { type: 'Feature', id: 2, properties: { label: 1 }, geometry: { type: 'Polygon', coordinates: [ring(8000, 8000, 50)] } },
  ];
  return { type: 'FeatureCollection', features };
}

async function build(text: string, opts: Record<string, unknown>): Promise<MemorySink> {
  const sink = new MemorySink();
  await buildPyramid([{ source: memorySource('mask.json', text) }], { workers: 1, memoryBudget: 64 * 1024 * 1024, imageSize: '16384,16384', ...opts }, { sink });
  return sink;
}

describe('a MultiPolygon of many pieces', () => {
  const text = JSON.stringify(classMask(400));

  it('gives the same tiles however the build is cut into units, JSON and PBF, at 1 and 2 workers', async () => {
    const whole = await build(text, { unitSize: 16384, maxZoom: 6 });
    for (const unitSize of [512, 2048]) {
      expect(strip(await build(text, { unitSize, maxZoom: 6 })), `unit size ${unitSize}`).toEqual(strip(whole));
    }
    expect(strip(await build(text, { unitSize: 512, maxZoom: 6, workers: 2 }))).toEqual(strip(whole));
    // What is compared holds the mask: pieces of both clusters at the finest zoom, and its centroid at zoom 0.
    const ids = (p: string, z: number, x: number, y: number) => decodePbf(whole.files.get(p)!, 16384, z, x, y).map((f) => f.id);
    expect(ids('6/2/2.pbf', 6, 2, 2)).toContain(1);
    expect(ids('6/47/47.pbf', 6, 47, 47)).toContain(1);
    const z0 = decodePbf(whole.files.get('0/0/0.pbf')!, 16384, 0, 0, 0).filter((f) => f.id === 1);
    expect(z0.length).toBe(1);
  });

  it('gives the same tiles with --lod none and with the finest zoom coarser than the stored cells', async () => {
    for (const opts of [{ lod: 'none', maxZoom: 5 }, { maxZoom: 3 }]) {
      const whole = await build(text, { ...opts, unitSize: 16384 });
      expect(strip(await build(text, { ...opts, unitSize: 512 })), JSON.stringify(opts)).toEqual(strip(whole));
    }
  });

  it('is counted in each tile by its pieces there, so the zooms whose tiles it fits draw it, and the others a share of its pieces (it was thinned from all but the finest)', async () => {
    // 1,600 squares of 24 px on a 400 px grid over the whole slide, one feature: about 16 KB of PBF whole.
    const polys = Array.from({ length: 1600 }, (_, k) => [ring(200 + 400 * (k % 40), 200 + 400 * Math.floor(k / 40), 24)]);
    const grid = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', id: 1, properties: { label: 255 }, geometry: { type: 'MultiPolygon', coordinates: polys } }] });
    const sink = await build(grid, { unitSize: 2048, maxZoom: 5, format: 'pbf', tileBudget: '6000' });
    const report = JSON.parse(Buffer.from(sink.files.get('build-report.json')!).toString('utf8')) as { tiles: { byZoom: Record<string, { thinned: number; tiles: number }> } };
    // Whole, it passes the budget in any one tile; a tile of zoom 2 (a sixteenth of the slide) holds a sixteenth of it.
    // Zooms 0 and 1 keep a share of its pieces (tile/pieces.ts), within the budget; zoom 2 holds all of them.
    const rings = (p: string, z: number, x: number, y: number) => decodePbf(sink.files.get(p)!, 16384, z, x, y).flatMap((f) => f.rings).length;
    const z0 = rings('0/0/0.pbf', 0, 0, 0);
    expect(z0).toBeGreaterThan(100);
    expect(z0).toBeLessThan(1600);
    expect(sink.files.get('0/0/0.pbf')!.length).toBeLessThanOrEqual(6000);
    // Every square within tile 2/1/2 and its 64 px buffer: 11 columns of 11.
    expect(rings('2/1/2.pbf', 2, 1, 2)).toBe(121);
    // The report counts it by its pieces: those zoom 0 leaves out are thinned there; zoom 2 and finer thin none.
    expect(report.tiles.byZoom[0].thinned).toBe(1600 - z0);
    expect(report.tiles.byZoom[1].thinned).toBeGreaterThan(0);
    for (let z = 0; z <= 5; z++) {
      if (z >= 2) expect(report.tiles.byZoom[z].thinned, `zoom ${z}`).toBe(0);
      expect(report.tiles.byZoom[z].tiles, `zoom ${z}`).toBe(Math.min(4 ** z, 31 ** 2));
      for (const [p, bytes] of sink.files) {
        const m = new RegExp(`^${z}/(\\d+)/(\\d+)\\.pbf$`).exec(p);
        if (m) expect(bytes.length, p).toBeLessThanOrEqual(6000);
      }
    }
    const tile = decodePbf(sink.files.get('2/1/2.pbf')!, 16384, 2, 1, 2);
    expect(tile.map((f) => f.id)).toEqual([1]);
  });

  it('draws no centroid point where the pieces near the centroid collapse but another piece does not', async () => {
    // 100 pieces of half a pixel around (1,500, 1,500) and one of 300 px at (7,000, 7,000): the centroid (the mean of the
    // vertices) lies among the small ones, in cell (1, 1) of 1,024 px, and the box centre in cell (4, 4). At zooms 3 and 4
    // the small pieces collapse and the large one does not, so the feature is drawn as that piece alone: a unit that
    // read only the pieces near the centroid would see all of them collapse and draw the centroid point instead.
    const sq = (x: number, y: number, s: number) => [ring(x, y, s)];
    const polys = Array.from({ length: 100 }, (_, i) => sq(1400 + (i % 10) * 20, 1400 + Math.floor(i / 10) * 20, 0.5));
    polys.push(sq(7000, 7000, 300));
    const text = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', id: 1, properties: {}, geometry: { type: 'MultiPolygon', coordinates: polys } }] });
    const built = (unitSize: number) => build(text, { imageSize: '8192,8192', maxZoom: 5, unitSize });
    const cells = await built(1024);
    for (const [z, x, y] of [[3, 1, 1], [4, 3, 3]]) expect(cells.files.has(`${z}/${x}/${y}.pbf`), `tile ${z}/${x}/${y}`).toBe(false);
    // At the finest zoom the small pieces are there; at zoom 3 only the large one, in its tile.
    expect(decodePbf(cells.files.get('5/5/5.pbf')!, 8192, 5, 5, 5).map((f) => f.id)).toEqual([1]);
    expect(decodePbf(cells.files.get('3/6/6.pbf')!, 8192, 3, 6, 6).map((f) => f.id)).toEqual([1]);
    expect(strip(cells)).toEqual(strip(await built(8192)));
  });

  it('writes a partial record that reads back as those pieces, with the whole\'s box and centroid and its tags', () => {
    const polys = Array.from({ length: NEAR_PIECES + 6 }, (_, i) => [[i * 10, 0, i * 10 + 5, 0, i * 10 + 5, 5, i * 10, 0]]);
    const geom: TileGeometry = { k: 'polygons', type: 'MultiPolygon', polys };
    const enc = new RecordEncoder();
    expect(enc.encode('cells', flatFeatureOf(42, 0, geom, undefined, { id: 7, properties: { label: 3 } }, undefined, undefined, undefined, false, undefined))).toBe(true);
    const whole = enc.bytes().slice();
    const f64 = new Float64Array(whole.buffer);
    const pieces = recordPieces(f64, 0);
    expect(pieces?.lod).toEqual(lodOf(geom));
    const part = partialRecord(f64, 0, pieces!, [1, 4, 69]);
    const r = new RecordReader(part);
    expect(r.next()).toBe(true);
    expect(r.home).toBe(false);
    expect(r.partial).toBe(true);
    const f = r.feature(() => 0);
    expect(r.pieces).toEqual([1, 4, 69]);
    expect(f.seq).toBe(42);
    expect(f.lod).toEqual(lodOf(geom));
    expect(f.geom).toEqual({ k: 'polygons', type: 'MultiPolygon', polys: [polys[1], polys[4], polys[69]] });
    expect(f.tags).toEqual({ id: 7, keys: ['label'], values: [3] });
    expect(r.next()).toBe(false);
    // Fewer pieces than NEAR_PIECES, or another geometry: no pieces.
    enc.encode('cells', flatFeatureOf(1, 0, { k: 'polygons', type: 'MultiPolygon', polys: polys.slice(0, NEAR_PIECES - 1) }, undefined, { id: 1, properties: {} }, undefined, undefined, undefined, false, undefined));
    expect(recordPieces(new Float64Array(enc.bytes().slice().buffer), 0)).toBeNull();
  });
});

describe('features of many pieces in a thinned pyramid', () => {
  /**
   * Genes of 70 to 170 spots in 8 px (one display pixel at zoom 2 of an 8,192 px slide), labels of 300 sub-pixel squares
   * and 3 of 20 to 40 px in 200 px (the small ones collapse at zoom 3, the large ones at zoom 0 or 1) or of 300 sub-pixel
   * squares over the slide, and 400 cells.
   */
  function clustered(): string {
    const rnd = mulberry32(1);
    const sq = (x: number, y: number, s: number) => [ring(x, y, s)];
    const features: unknown[] = [];
    let id = 1;
    for (let m = 0; m < 12; m++) {
      const mx = rnd() * 8000, my = rnd() * 8000;
      const polys = Array.from({ length: 303 }, (_, i) => sq(mx + rnd() * 200, my + rnd() * 200, i < 300 ? 0.3 + rnd() : 20 + rnd() * 20));
      // Every other label, its sub-pixel squares alone over the slide: wide enough to be spared, nothing left of it reduced.
      if (m % 2 === 1) polys.splice(0, 303, ...Array.from({ length: 300 }, () => sq(rnd() * 8000, rnd() * 8000, 0.3 + rnd())));
      features.push({ type: 'Feature', id: id++, properties: { label: m }, geometry: { type: 'MultiPolygon', coordinates: polys } });
    }
    for (let g = 0; g < 20; g++) {
      const cx = rnd() * 8000, cy = rnd() * 8000;
      const spots = Array.from({ length: 70 + Math.floor(rnd() * 100) }, () => [cx + rnd() * 8, cy + rnd() * 8]);
      features.push({ type: 'Feature', id: id++, properties: { gene: `G${g}` }, geometry: { type: 'MultiPoint', coordinates: spots } });
    }
    for (let i = 0; i < 400; i++) features.push({ type: 'Feature', id: id++, properties: { n: i }, geometry: { type: 'Polygon', coordinates: [ring(rnd() * 8000, rnd() * 8000, 5 + rnd() * 20)] } });
    return JSON.stringify({ type: 'FeatureCollection', features });
  }

  it('draws them at the same zooms however the build is cut into units, where their pieces collapse or the whole is below a pixel', async () => {
    // Reduced for the zooms above its cells, a label has lost the pieces that collapse there and a gene is its centroid:
    // a unit that decided from the pieces it still held drew neither where a build of one cell drew them.
    const text = clustered();
    const opts = { imageSize: '8192,8192', maxZoom: 5, tileBudget: '6000' };
    const whole = await build(text, { ...opts, unitSize: 8192 });
    const one = strip(whole);
    for (const unitSize of [512, 2048]) {
      const cut = strip(await build(text, { ...opts, unitSize }));
      expect([...new Set([...one.keys(), ...cut.keys()])].filter((k) => one.get(k) !== cut.get(k)), `unit size ${unitSize}`).toEqual([]);
    }
    // What a zoom draws of them, every finer zoom draws.
    const drawn = (z: number) => {
      const ids = new Set<number>();
      for (const [p, bytes] of whole.files) {
        const m = new RegExp(`^${z}/(\\d+)/(\\d+)\\.pbf$`).exec(p);
        if (m) for (const f of decodePbf(bytes, 8192, z, Number(m[1]), Number(m[2]))) if (Number(f.id) <= 32) ids.add(Number(f.id));
      }
      return ids;
    };
    for (let z = 0; z < 5; z++) {
      const finer = drawn(z + 1);
      expect([...drawn(z)].filter((i) => !finer.has(i)), `zoom ${z} within zoom ${z + 1}`).toEqual([]);
    }
    expect(drawn(0).size).toBeGreaterThan(0);
  });
});

describe('a MultiPoint or MultiLineString of many pieces (a gene\'s transcripts, tracks)', () => {
  /** Spots in two clusters in opposite corners (the centroid between them, where none is) and tracks across the slide. */
  function spotsAndTracks(): string {
    let seed = 11;
    const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const spots = Array.from({ length: 900 }, (_, i) => (i % 2 === 0 ? [300 + rnd() * 3500, 300 + rnd() * 3500] : [12000 + rnd() * 3500, 12000 + rnd() * 3500]));
    const tracks = Array.from({ length: 200 }, (_, i) => {
      const x = rnd() * 16000, y = rnd() * 16000, step = i % 40 === 0 ? 2000 : 3 + rnd() * 20;
      return Array.from({ length: 4 }, (_, k) => [x + k * step, y + rnd() * step]);
    });
    return JSON.stringify({ type: 'FeatureCollection', features: [
      { type: 'Feature', id: 1, properties: { gene: 'ACTB' }, geometry: { type: 'MultiPoint', coordinates: spots } },
      { type: 'Feature', id: 2, properties: { track: 'a' }, geometry: { type: 'MultiLineString', coordinates: tracks } },
    ] });
  }

  it('gives the same tiles however the build is cut into units, JSON and PBF, at 1 and 2 workers', async () => {
    const text = spotsAndTracks();
    const whole = await build(text, { unitSize: 16384, maxZoom: 6 });
    for (const unitSize of [512, 2048]) expect(strip(await build(text, { unitSize, maxZoom: 6 })), `unit size ${unitSize}`).toEqual(strip(whole));
    expect(strip(await build(text, { unitSize: 512, maxZoom: 6, workers: 2 }))).toEqual(strip(whole));
    const at = (z: number, x: number, y: number) => decodePbf(whole.files.get(`${z}/${x}/${y}.pbf`)!, 16384, z, x, y);
    const spots = at(6, 2, 2).find((f) => f.id === 1);
    expect(spots?.type).toBe(1);
    expect(spots!.rings.flat().length).toBeGreaterThan(1);
    expect(at(6, 47, 47).some((f) => f.id === 1)).toBe(true);
  });

  it('is counted in each tile by its pieces there, so the zooms whose tiles it fits draw it', async () => {
    // 4,096 spots on a 250 px grid over the slide, one feature: about 16 KB of PBF whole.
    const spots = Array.from({ length: 4096 }, (_, k) => [125 + 250 * (k % 64), 125 + 250 * Math.floor(k / 64)]);
    const grid = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', id: 1, properties: { gene: 'X' }, geometry: { type: 'MultiPoint', coordinates: spots } }] });
    const sink = await build(grid, { unitSize: 2048, maxZoom: 5, format: 'pbf', tileBudget: '6000' });
    const report = JSON.parse(Buffer.from(sink.files.get('build-report.json')!).toString('utf8')) as { tiles: { byZoom: Record<string, { thinned: number; tiles: number }> } };
    // Zoom 0 keeps a share of the spots, within the budget; zoom 2 and finer all of them.
    const z0 = decodePbf(sink.files.get('0/0/0.pbf')!, 16384, 0, 0, 0);
    expect(z0.map((f) => f.id)).toEqual([1]);
    expect(z0[0].rings.flat().length).toBeGreaterThan(400);
    expect(z0[0].rings.flat().length).toBeLessThan(4096);
    expect(sink.files.get('0/0/0.pbf')!.length).toBeLessThanOrEqual(6000);
    for (let z = 0; z <= 5; z++) expect(report.tiles.byZoom[z].tiles, `zoom ${z}`).toBe(4 ** z);
    // What a zoom keeps, every finer zoom keeps (spots by their grid cell, whatever their rounding at each zoom).
    const spotsAt = (z: number) => {
      const out = new Set<number>();
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) {
          const b = sink.files.get(`${z}/${x}/${y}.pbf`);
          if (b) for (const f of decodePbf(b, 16384, z, x, y)) for (const [px, py] of f.rings.flat()) out.add(Math.round((px - 125) / 250) * 64 + Math.round((py - 125) / 250));
        }
      }
      return out;
    };
    // The report counts it by its spots: those a zoom leaves out are thinned there.
    for (let z = 0; z <= 5; z++) expect(report.tiles.byZoom[z].thinned, `zoom ${z}`).toBe(z <= 3 ? 4096 - spotsAt(z).size : 0);
    let coarser = spotsAt(0);
    for (let z = 1; z <= 3; z++) {
      const finer = spotsAt(z);
      expect([...coarser].filter((k) => !finer.has(k)), `zoom ${z - 1} within zoom ${z}`).toEqual([]);
      coarser = finer;
    }
    expect(coarser.size).toBe(4096);
    const z2 = decodePbf(sink.files.get('2/1/1.pbf')!, 16384, 2, 1, 1);
    expect(z2.map((f) => f.id)).toEqual([1]);
    expect(z2[0].rings.flat().length).toBeGreaterThanOrEqual(256);
  });

  it('writes partial records that read back as those points or lines, with the whole\'s box and centroid', () => {
    const n = NEAR_PIECES + 6;
    const xy = Array.from({ length: 2 * n }, (_, i) => (i % 2 === 0 ? i * 5 : 7 + i));
    const parts = Array.from({ length: n }, (_, i) => [i * 10, 0, i * 10 + 5, 5, i * 10 + 9, 1]);
    const cases: [TileGeometry, TileGeometry][] = [
      [{ k: 'points', type: 'MultiPoint', xy }, { k: 'points', type: 'MultiPoint', xy: [xy[2], xy[3], xy[8], xy[9], xy[138], xy[139]] }],
      [{ k: 'lines', type: 'MultiLineString', parts }, { k: 'lines', type: 'MultiLineString', parts: [parts[1], parts[4], parts[69]] }],
    ];
    for (const [geom, expected] of cases) {
      const enc = new RecordEncoder();
      expect(enc.encode('spots', flatFeatureOf(42, 0, geom, undefined, { id: 7, properties: { gene: 'X' } }, undefined, undefined, undefined, false, undefined))).toBe(true);
      const f64 = new Float64Array(enc.bytes().slice().buffer);
      const pieces = recordPieces(f64, 0);
      expect(pieces?.lod, geom.k).toEqual(lodOf(geom));
      const r = new RecordReader(partialRecord(f64, 0, pieces!, [1, 4, 69]));
      expect(r.next()).toBe(true);
      const f = r.feature(() => 0);
      expect([r.partial, r.pieces], geom.k).toEqual([true, [1, 4, 69]]);
      expect(f.geom, geom.k).toEqual(expected);
      expect(f.lod, geom.k).toEqual(lodOf(geom));
    }
  });
});
