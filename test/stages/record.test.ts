// Unit records: binary round trip of every geometry kind, heads as JSON tiles write them, routing with home flags, and
// the one shape of every flat feature and cell spec the tiler meets.
import { describe, expect, it } from 'vitest';
import type { Feature } from '../../src/model/feature.js';
import type { Geometry, Position } from '../../src/model/geometry.js';
import { featureHeadText } from '../../src/stages/encode-json.js';
import { RecordRouter } from '../../src/stages/router.js';
import { RecordEncoder, RecordReader, setHome } from '../../src/stages/record.js';
import type { Rect } from '../../src/tiling/clip.js';
import { featureTags, flatFeature, flatten, headOf, type FeatureHead, type FlatFeature, type TileGeometry } from '../../src/tiling/flat.js';
import { reduceForZoom } from '../../src/stages/tile/reduce.js';
import { cellSpecs, thins, type TileSpec } from '../../src/stages/tile/spec.js';

/** A GeoJSON geometry into a record, as the parse stage does it. */
function encodeGeoJSON(enc: RecordEncoder, seq: number, layer: string, head: FeatureHead, g: Geometry): boolean {
  const geom = flatten(g);
  return geom !== null && enc.encode(layer, { seq, geom, head });
}

const geometries: Geometry[] = [
  { type: 'Point', coordinates: [1.5, -2.25] },
  { type: 'MultiPoint', coordinates: [[1, 2], [3, 4, 5]] },
  { type: 'LineString', coordinates: [[0, 0], [10, 0.125]] },
  { type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[2, 2], [3, 3], [4, 5]]] },
  { type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 4], [0, 0]], [[1, 1], [2, 1], [2, 2], [1, 1]]] },
  { type: 'MultiPolygon', coordinates: [[[[0, 0], [4, 0], [4, 4], [0, 0]]], [], [[[10, 10], [14, 10], [14, 14], [10, 10]]]] },
  { type: 'TIN', coordinates: [[[[0, 0, 0], [1, 0, 1], [0, 1, 2], [0, 0, 0]]]] },
  {
    type: 'GeometryCollection', geometries: [
      { type: 'Point', coordinates: [7, 8] },
      { type: 'PolyhedralSurface', tiles: ['mesh/0.json'] },
      { type: 'TIN', coordinates: [[[[5, 5, 0], [6, 5, 0], [5, 6, 0], [5, 5, 0]]]] },
    ],
  },
];

const head = { id: 'cell-ü', featureClass: 'cell', parentId: 3, ref: 'zarr://x', properties: { area: 12.5, tags: ['a', 'µ'], note: null } };

describe('unit records', () => {
  it('round-trips every geometry kind as flattened, with seq, head, layer and home flag', () => {
    const enc = new RecordEncoder();
    const chunks: number[] = [];
    geometries.forEach((g, i) => {
      expect(encodeGeoJSON(enc, 1e10 + i, 'cells', head, g)).toBe(true);
      for (const b of enc.bytes()) chunks.push(b);
    });
    const all = new Uint8Array(chunks);
    expect(all.length % 8).toBe(0);
    const r = new RecordReader(all);
    const seen: FlatFeature[] = [];
    while (r.next()) {
      expect(r.home).toBe(false);
      seen.push(r.feature((id) => (id === 'cells' ? 4 : -1)));
    }
    expect(seen).toHaveLength(geometries.length);
    seen.forEach((f, i) => {
      const want = flatFeature({ seq: 1e10 + i, layer: 4, feature: { type: 'Feature', geometry: geometries[i], ...head } }) as FlatFeature;
      expect(f.seq).toBe(want.seq);
      expect(f.layer).toBe(4);
      expect(f.geom).toEqual(want.geom);
      // The members come back as PBF tags and JSON head bytes: nothing to parse per feature.
      expect(f.head).toBeUndefined();
      expect(f.tags).toEqual(featureTags(head));
      expect(new TextDecoder().decode(f.headJson)).toBe(featureHeadText(head, 'cells'));
      expect(f.lod).toBeUndefined();
    });
  });

  it('without heads (no JSON tiles) a record keeps geometry and tags, and its JSON head is empty', () => {
    const withHeads = new RecordEncoder(), without = new RecordEncoder(false);
    geometries.forEach((g, i) => {
      expect(encodeGeoJSON(withHeads, i, 'cells', head, g)).toBe(true);
      expect(encodeGeoJSON(without, i, 'cells', head, g)).toBe(true);
      // A record stays 8-byte aligned, and is shorter by the head.
      expect(without.bytes().length % 8).toBe(0);
      expect(without.bytes().length).toBeLessThan(withHeads.bytes().length);
      const full = new RecordReader(withHeads.bytes().slice()), bare = new RecordReader(without.bytes().slice());
      expect(full.next() && bare.next()).toBe(true);
      const a = full.feature(() => 0), b = bare.feature(() => 0);
      expect(b.geom).toEqual(a.geom);
      expect(b.tags).toEqual(a.tags);
      expect(b.seq).toBe(i);
      expect(b.headJson?.length).toBe(0);
    });
  });

  it('keeps the lod of a reduced feature and the head bytes it came with; reads unaligned bytes', () => {
    const enc = new RecordEncoder();
    const f = flatFeature({ seq: 9, layer: 0, feature: { type: 'Feature', geometry: { type: 'Point', coordinates: [3, 4] }, properties: { a: 1 } } }) as FlatFeature;
    enc.encode('nuclei', { ...f, lod: [1, 2, 5, 6, 3, 4] });
    const bytes = enc.bytes();
    const shifted = new Uint8Array(bytes.length + 3).subarray(3);
    shifted.set(bytes);
    const r = new RecordReader(shifted);
    expect(r.next()).toBe(true);
    const back = r.feature(() => 0);
    expect(back.lod).toEqual([1, 2, 5, 6, 3, 4]);
    expect(back.geom).toEqual(f.geom);
    // Re-encoding a decoded feature reuses its head bytes.
    enc.encode('ignored', back);
    const again = new RecordReader(enc.bytes().slice());
    again.next();
    const back2 = again.feature((id) => (id === 'nuclei' ? 7 : -1));
    expect(new TextDecoder().decode(back2.headJson)).toBe(featureHeadText({ properties: { a: 1 } }, 'nuclei'));
    expect(back2.layer).toBe(7);
    expect(back2.tags).toEqual({ id: null, keys: ['a'], values: [1] });
    expect(r.next()).toBe(false);
  });

  it('carries ids and tags of every kind, long and non-ASCII strings, and similar strings apart', () => {
    const heads = [
      { id: 42, featureClass: 'nucleus', properties: { yes: true, no: false, n: -0.5, big: 1e300, s: 'Zellkern µ 🔬', gone: null, o: { a: [1, 2] } } },
      { id: 'x-1', parentId: 42, properties: { s: 'a'.repeat(300), featureClass: 'shadowed' }, featureClass: 'cell' },
      { properties: { k1: 'ab', k2: 'ba', k3: 'ab' } },
      { properties: { k1: 'ba', k2: 'ab', k3: 'bb' } },
      { properties: null },
    ];
    const enc = new RecordEncoder();
    const parts: number[] = [];
    heads.forEach((h, i) => { encodeGeoJSON(enc, i, `layer-${i}`, h, { type: 'Point', coordinates: [i, i] }); parts.push(...enc.bytes()); });
    const r = new RecordReader(new Uint8Array(parts));
    const layers: string[] = [];
    heads.forEach((h) => {
      expect(r.next()).toBe(true);
      const f = r.feature((id) => layers.push(id));
      expect(f.tags).toEqual(featureTags(h));
    });
    expect(layers).toEqual(heads.map((_, i) => `layer-${i}`));
    expect(featureTags(heads[1]).keys).toEqual(['id', 'featureClass', 'parentId', 's']);
  });

  it('reads the tag keys of records with the same keys into one list, and keys one byte or one key apart into their own', () => {
    const m = (names: string[]) => ({ properties: { measurements: Object.fromEntries(names.map((n, i) => [n, i + 0.5])) } });
    const heads = [m(['Nucleus: Area', 'Cell: Area']), m(['Nucleus: Area', 'Cell: Area']), m(['Nucleus: Area', 'Cell: Arez']), m(['Nucleus: Area', 'Cell: Area', 'µ']), m(['Nucleus: Area', 'Cell: Area']), m(['Nucleus: Area', 'Cell: Area', 'µ'])];
    const enc = new RecordEncoder();
    const parts: number[] = [];
    heads.forEach((h, i) => { encodeGeoJSON(enc, i, 'cells', h, { type: 'Point', coordinates: [i, i] }); parts.push(...enc.bytes()); });
    const r = new RecordReader(new Uint8Array(parts));
    const keys = heads.map((h) => {
      expect(r.next()).toBe(true);
      const { tags } = r.feature(() => 0);
      expect(tags).toEqual(featureTags(h));
      return tags?.keys;
    });
    expect(keys[1]).toBe(keys[0]);
    expect(keys[4]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(keys[3]).toEqual(['measurements.Nucleus: Area', 'measurements.Cell: Area', 'measurements.µ']);
    // Over 64 bytes of keys, compared natively.
    expect(keys[5]).toBe(keys[3]);
  });

  it('refuses a geometry without inline positions', () => {
    expect(encodeGeoJSON(new RecordEncoder(), 1, 'l', { properties: null }, { type: 'TIN', tiles: ['t.json'] })).toBe(false);
    expect(encodeGeoJSON(new RecordEncoder(), 1, 'l', { properties: null }, { type: 'LineString', coordinates: [] })).toBe(false);
  });

  it('routes a record to every cell it meets, home only in the cell of its centre, batch after batch', () => {
    const router = new RecordRouter();
    const enc = new RecordEncoder();
    // Two batches through one router, each with enough records that its scratch and placement lists grow: the second
    // must hold its own records only, each home in the cell of its centre alone.
    for (const first of [0, 3000]) {
      const homes = new Map<number, string>();
      const seenKeys: string[] = [];
      for (let seq = first; seq < first + 3000; seq++) {
        const x = (seq * 37) % 200, y = (seq * 91) % 200;
        const f: Feature = { type: 'Feature', geometry: { type: 'Polygon', coordinates: [[[x, y], [x + 30, y], [x + 30, y + 30], [x, y]]] }, properties: { seq } };
        encodeGeoJSON(enc, seq, 'cells', headOf(f), f.geometry as Geometry);
        router.route('0/0/0/', enc.bytes(), enc.box, 100, 2, 1);
        homes.set(seq, `0/0/0/${Math.min(1, Math.floor((x + 15) / 100))}/${Math.min(1, Math.floor((y + 15) / 100))}`);
        for (let cy = Math.max(0, Math.floor((y - 2) / 100)); cy <= Math.min(1, Math.floor((y + 32) / 100)); cy++) {
          for (let cx = Math.max(0, Math.floor((x - 2) / 100)); cx <= Math.min(1, Math.floor((x + 32) / 100)); cx++) {
            if (!seenKeys.includes(`0/0/0/${cx}/${cy}`)) seenKeys.push(`0/0/0/${cx}/${cy}`);
          }
        }
      }
      const seenHome = new Map<number, string[]>();
      const seenIn = new Map<number, number>();
      const chunks = router.take();
      // Keys in the order cells were first met, row by row within a record.
      expect(chunks.map(([k]) => k)).toEqual(seenKeys);
      for (const [key, bytes] of chunks) {
        expect(bytes.byteOffset).toBe(0);
        expect(bytes.byteLength).toBe(bytes.buffer.byteLength); // a buffer of its own, to transfer
        const r = new RecordReader(bytes);
        let last = -1;
        while (r.next()) {
          expect(r.seq).toBeGreaterThan(last); // input order kept
          last = r.seq;
          seenIn.set(r.seq, (seenIn.get(r.seq) ?? 0) + 1);
          if (r.home) seenHome.set(r.seq, [...(seenHome.get(r.seq) ?? []), key]);
          expect(r.feature(() => 0).tags).toEqual({ id: null, keys: ['seq'], values: [r.seq] });
        }
      }
      expect(seenIn.size).toBe(3000);
      for (const [seq, key] of homes) {
        expect(seenHome.get(seq)).toEqual([key]);
        const x = (seq * 37) % 200, y = (seq * 91) % 200;
        const span = (v: number) => Math.min(1, Math.floor((v + 32) / 100)) - Math.max(0, Math.floor((v - 2) / 100)) + 1;
        expect(seenIn.get(seq)).toBe(span(x) * span(y));
      }
    }
    expect(router.take()).toEqual([]);
  });

  it('shares a large record between the cells it meets (one buffer, home apart), each cell still reading its records in order', () => {
    const router = new RecordRouter();
    const enc = new RecordEncoder();
    const square = (seq: number, x: number, y: number, s: number, props: object = {}) => {
      const f: Feature = { type: 'Feature', geometry: { type: 'Polygon', coordinates: [[[x, y], [x + s, y], [x + s, y + s], [x, y]]] }, properties: { seq, ...props } };
      encodeGeoJSON(enc, seq, 'cells', headOf(f), f.geometry as Geometry);
      router.route('0/0/0/', enc.bytes(), enc.box, 100, 2, 2);
    };
    // Cells of 100 px, 3 × 3: a small square in cell (0, 0), a large record (a 100 KiB note) over all nine cells (home
    // (1, 1)), then a small square in cell (2, 2) and one in (0, 0).
    square(1, 10, 10, 5);
    square(2, 5, 5, 290, { note: 'x'.repeat(100 << 10) });
    square(3, 250, 250, 5);
    square(4, 20, 20, 5);
    const chunks = router.take();
    const big = chunks.filter(([, b]) => b.byteLength > 100 << 10);
    expect(big.length).toBe(9);
    expect(new Set(big.map(([, b]) => b)).size).toBe(2); // one buffer for the eight others, one for its home
    const perKey = new Map<string, [number, boolean][]>();
    for (const [key, bytes] of chunks) {
      expect(bytes.byteLength).toBe(bytes.buffer.byteLength);
      const r = new RecordReader(bytes);
      while (r.next()) perKey.set(key, [...(perKey.get(key) ?? []), [r.seq, r.home]]);
    }
    expect(perKey.get('0/0/0/0/0')).toEqual([[1, true], [2, false], [4, true]]);
    expect(perKey.get('0/0/0/1/1')).toEqual([[2, true]]);
    expect(perKey.get('0/0/0/2/2')).toEqual([[2, false], [3, true]]);
    expect([...perKey.keys()].length).toBe(9);
  });

  it('hands on a large record in a buffer of its own, not copied into its cell\'s, the cell reading its records in order', () => {
    const router = new RecordRouter();
    const enc = new RecordEncoder();
    const square = (seq: number, x: number, note: string) => {
      const f: Feature = { type: 'Feature', geometry: { type: 'Polygon', coordinates: [[[x, 10], [x + 5, 10], [x + 5, 15], [x, 10]]] }, properties: { note } };
      encodeGeoJSON(enc, seq, 'cells', headOf(f), f.geometry as Geometry);
      router.route('0/0/0/', enc.bytes(), enc.box, 100, 2, 0);
      return enc.bytes().byteLength;
    };
    square(1, 10, 'a');
    const large = square(2, 20, 'x'.repeat(100 << 10));
    square(3, 30, 'b');
    const chunks = router.take();
    // One cell: its small records before and after the large one, which is a buffer of exactly its record (a class of
    // a class mask was copied into a scratch that doubled past it, then out again).
    expect(chunks.map(([k, b]) => [k, b.byteLength === large])).toEqual([['0/0/0/0/0', false], ['0/0/0/0/0', true], ['0/0/0/0/0', false]]);
    const read: [number, boolean][] = [];
    for (const [, bytes] of chunks) {
      expect(bytes.byteLength).toBe(bytes.buffer.byteLength);
      const r = new RecordReader(bytes);
      while (r.next()) read.push([r.seq, r.home]);
    }
    expect(read).toEqual([[1, true], [2, true], [3, true]]);
  });

  it('stores a long piece that reaches far across cells once, in one buffer those cells share, apart from the pieces near each', () => {
    // Cells of 100 px, 10 × 10. Small squares, one in each cell, and (a class mask's web of tissue) a zig-zag polygon
    // of 10,000 vertices across the top row of cells; then one with the same pieces but that polygon cut short.
    const router = new RecordRouter();
    const enc = new RecordEncoder();
    const sq = (x: number, y: number): Position[][] => [[[x, y], [x + 4, y], [x + 4, y + 4], [x, y + 4], [x, y]]];
    const small = Array.from({ length: 100 }, (_, i) => sq(10 + 100 * (i % 10), 50 + 100 * Math.floor(i / 10)));
    const zigzag = (length: number): Position[][] => {
      const top = Array.from({ length: 5000 }, (_, i): Position => [1 + (length * i) / 5000, 2 + (i % 2) * 6]);
      return [[...top, ...top.map(([x, y]): Position => [x, y + 20]).reverse(), top[0]]];
    };
    const route = (seq: number, long: Position[][]) => {
      encodeGeoJSON(enc, seq, 'class', { properties: null }, { type: 'MultiPolygon', coordinates: [long, ...small] });
      router.route('0/0/0/', enc.bytes(), enc.box, 100, 2, 9);
      return enc.bytes().byteLength;
    };
    const whole = route(1, zigzag(990));
    let chunks = router.take();
    const piecesIn = (b: Uint8Array) => {
      const r = new RecordReader(b);
      expect(r.next()).toBe(true);
      if (!r.partial) return 'whole';
      r.feature(() => 0);
      return [...r.pieces];
    };
    // The home, (4, 4), and the cell of the centroid, (4, 0), hold the whole, each in a buffer of its own.
    const holders = chunks.filter(([, b]) => piecesIn(b) === 'whole');
    expect(holders.map(([k]) => k).sort()).toEqual(['0/0/0/4/0', '0/0/0/4/4']);
    expect(new Set(holders.map(([, b]) => b)).size).toBe(2);
    // The other nine cells of the top row hold the long piece alone, one buffer they share, and the square near them:
    // the whole there made every unit of the row tile every square of the slide.
    const alone = chunks.filter(([, b]) => JSON.stringify(piecesIn(b)) === '[0]');
    expect(alone.map(([k]) => k).sort()).toEqual([0, 1, 2, 3, 5, 6, 7, 8, 9].map((x) => `0/0/0/${x}/0`));
    expect(new Set(alone.map(([, b]) => b)).size).toBe(1);
    expect(alone[0][1].byteLength).toBeGreaterThan(0.9 * whole);
    // Every other record is the square of its cell alone, copied into it.
    const rest = chunks.filter((c) => !holders.includes(c) && !alone.includes(c));
    expect(rest).toHaveLength(98);
    for (const [k, b] of rest) {
      const [x, y] = k.split('/').slice(3).map(Number);
      expect(piecesIn(b), k).toEqual([1 + x + 10 * y]);
      expect(b.byteLength).toBeLessThan(1000);
    }
    const partialIn = (b: Uint8Array) => piecesIn(b) !== 'whole';
    // The long piece within 300 px (three cells): stored in part, copied into the cells it meets.
    route(2, zigzag(290));
    chunks = router.take();
    // (The whole in the home and in the cell of its centroid, (1, 0).)
    const large = chunks.filter(([, b]) => b.byteLength > whole / 3);
    expect(large.map(([k]) => k).sort()).toEqual(['0/0/0/0/0', '0/0/0/1/0', '0/0/0/2/0', '0/0/0/4/4']);
    expect(large.filter(([, b]) => partialIn(b)).map(([k]) => k).sort()).toEqual(['0/0/0/0/0', '0/0/0/2/0']);
  });

  it('reads of a long polygon not its own, whose lod it has, only the holes near the unit; its own, or one without a lod, whole', () => {
    // Cells of 100 px: a band of 10,000 vertices across the top row of cells with a 4 px hole every 20 px, and 100
    // squares (the whole's centroid is in cell (4, 4)).
    const router = new RecordRouter();
    const enc = new RecordEncoder();
    const top = Array.from({ length: 5000 }, (_, i): Position => [1 + (990 * i) / 5000, 2 + (i % 2) * 6]);
    const holes = Array.from({ length: 49 }, (_, i): Position[] => [[15 + 20 * i, 12], [15 + 20 * i, 16], [19 + 20 * i, 16], [19 + 20 * i, 12], [15 + 20 * i, 12]]);
    const band: Position[][] = [[...top, ...top.map(([x, y]): Position => [x, y + 20]).reverse(), top[0]], ...holes];
    const small = Array.from({ length: 100 }, (_, i): Position[][] => {
      const x = 10 + 100 * (i % 10), y = 50 + 100 * Math.floor(i / 10);
      return [[[x, y], [x + 4, y], [x + 4, y + 4], [x, y + 4], [x, y]]];
    });
    encodeGeoJSON(enc, 1, 'class', { properties: null }, { type: 'MultiPolygon', coordinates: [band, ...small] });
    const whole = enc.bytes().slice();
    router.route('0/0/0/', whole, enc.box, 100, 2, 9);
    const alone = router.take().find(([k, b]) => k === '0/0/0/2/0' && b.byteLength > 100_000)?.[1] as Uint8Array;
    const rings = (bytes: Uint8Array, near?: Rect, home = false) => {
      if (home) setHome(bytes, 0, true);
      const r = new RecordReader(bytes);
      expect(r.next()).toBe(true);
      const g = r.feature(() => 0, near).geom;
      return g.k === 'polygons' ? g.polys.map((p) => p.length) : [];
    };
    // Cell (2, 0) and its 2 px: the band and its six holes from x 195 to 299.
    const near: Rect = { minX: 198, minY: -2, maxX: 302, maxY: 102 };
    expect(rings(alone, near)).toEqual([7]);
    expect(rings(alone)).toEqual([50]);
    // The whole, read away from its home: its pieces near (the band with the holes near, and the square of (2, 0)).
    expect(rings(whole, near)).toEqual([7, 1]);
    // At home, whole.
    expect(rings(whole.slice(), near, true)).toEqual([50, ...small.map(() => 1)]);
    // The band alone as a Polygon, no lod stored: whole (its centroid, were it worked out from what is read, would move).
    encodeGeoJSON(enc, 2, 'class', { properties: null }, { type: 'Polygon', coordinates: band });
    expect(rings(enc.bytes().slice(), near)).toEqual([50]);
    // With its lod stored (a record reduced for a coarser level), read as the holes near, and partial: a copy of it at
    // home later in a unit of several cells replaces it (a whole read first would keep the holes missing).
    expect(enc.encode('class', { seq: 3, geom: flatten({ type: 'Polygon', coordinates: band }) as TileGeometry, head: { properties: null }, lod: [1, 2, 991, 30, 500, 15] })).toBe(true);
    const reduced = enc.bytes().slice();
    const read = (home: boolean) => {
      setHome(reduced, 0, home);
      const r = new RecordReader(reduced);
      expect(r.next()).toBe(true);
      const g = r.feature(() => 0, near).geom;
      return [g.k === 'polygons' ? g.polys.map((p) => p.length) : [], r.partial, r.partial ? r.pieces : undefined];
    };
    expect(read(false)).toEqual([[7], true, [0]]);
    expect(read(true)).toEqual([[50], false, undefined]);
  });

  it("routes a point's circle into the cells it reaches beyond the pad, not into a diagonal cell whose corner it misses", () => {
    const router = new RecordRouter();
    const enc = new RecordEncoder();
    const cellsOf = (x: number, round: number): string[] => {
      encodeGeoJSON(enc, 1, 'spots', { properties: null }, { type: 'Point', coordinates: [x, x] });
      router.route('0/0/0/', enc.bytes(), enc.box, 100, 2, 9, Infinity, round);
      return router.take().map(([k]) => k).sort();
    };
    // 5 px right of and below the corner of cell (0, 0): 7.07 px from it, within a circle of radius 8.
    expect(cellsOf(105, 8)).toEqual(['0/0/0/0/0', '0/0/0/0/1', '0/0/0/1/0', '0/0/0/1/1']);
    // 6 px: 8.49 px from the corner, which the circle misses (routed by pad + radius, 10 px, it was stored there).
    expect(cellsOf(106, 8)).toEqual(['0/0/0/0/1', '0/0/0/1/0', '0/0/0/1/1']);
    // Within the pad on both axes, a cell holds it whatever the circle; a circle within the pad adds none.
    expect(cellsOf(101.5, 1.8)).toEqual(['0/0/0/0/0', '0/0/0/0/1', '0/0/0/1/0', '0/0/0/1/1']);
    expect(cellsOf(106, 1.8)).toEqual(['0/0/0/1/1']);
  });

  it('lets go of a huge record after its task, and routes the next ones whole', () => {
    const router = new RecordRouter();
    const enc = new RecordEncoder();
    // 600,000 vertices: a record of about 9.6 MB, past what the router keeps between tasks.
    const ring = Array.from({ length: 600_000 }, (_, i): Position => [50 + 40 * Math.cos(i / 1e5), 50 + 40 * Math.sin(i / 1e5)]);
    ring.push(ring[0]);
    const huge: Geometry = { type: 'Polygon', coordinates: [ring] };
    encodeGeoJSON(enc, 1, 'cells', { properties: null }, huge);
    const hugeBytes = enc.bytes().slice();
    router.route('0/0/0/', enc.bytes(), enc.box, 1000, 2, 0);
    const [[key, bytes]] = router.take();
    expect(key).toBe('0/0/0/0/0');
    expect(bytes.length).toBe(hugeBytes.length);
    expect(Buffer.compare(bytes.subarray(8), hugeBytes.subarray(8))).toBe(0); // all but the length and flags (home set here)
    const small: Geometry = { type: 'Point', coordinates: [10, 10] };
    encodeGeoJSON(enc, 2, 'cells', { properties: null }, small);
    router.route('0/0/0/', enc.bytes(), enc.box, 1000, 2, 0);
    const chunks = router.take();
    expect(chunks.map(([k, b]) => [k, b.length])).toEqual([['0/0/0/0/0', enc.bytes().length]]);
    const r = new RecordReader(chunks[0][1]);
    expect(r.next()).toBe(true);
    expect(r.seq).toBe(2);
    expect(r.home).toBe(true);
    expect(r.next()).toBe(false);
  });
});

describe('one shape for every flat feature', () => {
  // The tiler's optimised code is specialised to the object shapes it has met; each new one (members in another
  // order, one added later) throws it away. Every way a FlatFeature is made must give the same members in one order.
  it('from GeoJSON, from a record (with and without lod) and reduced for the level above', () => {
    const polygon: Geometry = { type: 'Polygon', coordinates: [[[0, 0], [40, 0], [40, 20], [40, 40], [20, 41], [0, 40], [0, 0]]] };
    const made = flatFeature({ seq: 1, layer: 0, feature: { type: 'Feature', geometry: polygon, ...head } }) as FlatFeature;
    const reduced = reduceForZoom(made, { side: 2 ** 20, lod: 'auto' }, 4) as FlatFeature;
    const simplified = reduceForZoom(made, { side: 2 ** 8, lod: 'auto' }, 0) as FlatFeature;
    expect(reduced.geom.k).toBe('points');
    expect(simplified.geom.k).toBe('polygons');
    expect(simplified).not.toBe(made);
    const enc = new RecordEncoder();
    const bytes: number[] = [];
    for (const f of [made, reduced]) { expect(enc.encode('cells', f)).toBe(true); bytes.push(...enc.bytes()); }
    const r = new RecordReader(new Uint8Array(bytes));
    const read: FlatFeature[] = [];
    while (r.next()) read.push(r.feature(() => 0));
    expect(read.map((f) => f.lod === undefined)).toEqual([true, false]);
    const keys = Object.keys(made);
    expect(keys).toEqual(['seq', 'layer', 'geom', 'lod', 'head', 'headJson', 'tags', 'tagsBytes', 'many', 'pieces']);
    for (const f of [reduced, simplified, ...read]) expect(Object.keys(f)).toEqual(keys);
  });

  it('cell specs: every member in one order, thresholds as float rows', () => {
    const base: TileSpec = { side: 1024, minZoom: 0, maxZoom: 2, finestZoom: 2, layers: [{ id: 'a' }], formats: { json: false, pbf: true }, lod: 'auto', tileBudget: 500_000, thresholds: [[2 ** 31 + 5], [0], [0]] };
    const s = cellSpecs(base)({ z: 1, x: 1, y: 0 });
    expect(Object.keys(s)).toEqual(['side', 'minZoom', 'maxZoom', 'finestZoom', 'cell', 'layers', 'formats', 'lod', 'tileBudget', 'thresholds', 'spareFrom', 'spareSizes', 'collection', 'fewFields']);
    expect(s.spareFrom).toBe(0);
    expect(s.thresholds?.map((row) => row instanceof Float64Array && Array.from(row))).toEqual([[2 ** 31 + 5], [0], [0]]);
    expect(s.cell).toEqual({ z: 1, x: 1, y: 0 });
    expect([thins(s.thresholds?.[0]), thins(s.thresholds?.[1]), thins(undefined)]).toEqual([true, false, false]);
  });
});
