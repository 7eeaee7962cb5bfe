// inspect and decodeTile: summaries agree with the build, tiles decode to the right global pixel coordinates.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, beforeAll } from 'vitest';
import { MemorySink } from '../../src/io/sink.js';
import { buildPyramid } from '../../src/build/pipeline.js';
import { memorySource } from '../../src/io/read.js';
import { decodeTile, directoryReader, inspectPyramid, memoryReader, openPyramid, openPyramidReader, outsidePyramid, parseTileAddress, formatSummary } from '../../src/inspect/index.js';
import { classifyRings } from '../../src/inspect/decode.js';
import type { Polygon, Position } from '../../src/model/geometry.js';
import type { Dim } from '../../src/tiling/space.js';
import { tmpDir } from '../helpers/pyramid.js';
import { buildSquares, collection, SQUARES } from './fixture.js';

let sink: MemorySink;
beforeAll(async () => {
  sink = (await buildSquares()) as MemorySink;
});

function ringBox(ring: Position[]): [number, number, number, number] {
  const xs = ring.map((p) => p[0]), ys = ring.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

describe('decodeTile', () => {
  it('maps PBF tile-local coordinates to the global pixels of the input', () => {
    const r = memoryReader(sink.files);
    // At zoom 2 a tile is 256 px: square 1 (100..180) lies inside tile 0/0, square 2 (600..690, 300..390) inside 2/1.
    for (const [q, x, y] of [[SQUARES[0], 0, 0], [SQUARES[1], 2, 1]] as const) {
      const t = decodeTile(r, 2, x, y);
      expect(t).toMatchObject({ format: 'pbf', exists: true, path: `2/${x}/${y}.pbf` });
      const f = t.collection.features.find((g) => g.id === q.id);
      expect(f).toBeDefined();
      expect(f).toMatchObject({ type: 'Feature', id: q.id, featureClass: q.featureClass, layer: 'cells', properties: { label: q.label, note: `square ${q.id}` } });
      const ring = (f?.geometry as Polygon).coordinates[0];
      expect(ringBox(ring)).toEqual([q.x, q.y, q.x + q.s, q.y + q.s]);
      expect(ring[0]).toEqual(ring[ring.length - 1]);
      // Exactly the input corners, no float noise.
      expect(new Set(ring.map((p) => p.join(',')))).toEqual(new Set([[q.x, q.y], [q.x + q.s, q.y], [q.x + q.s, q.y + q.s], [q.x, q.y + q.s]].map((p) => p.join(','))));
    }
  });

  it('decodes the same features from the JSON tile, and the clipped parts of a border-crossing square', () => {
    const r = memoryReader(sink.files);
    const q = SQUARES[2]; // 470..554 × 210..294 crosses x = 512 and y = 256
    const boxes: number[][] = [];
    for (const [x, y] of [[1, 0], [2, 0], [1, 1], [2, 1]]) {
      const pbf = decodeTile(r, 2, x, y, {}, { format: 'pbf' });
      const json = decodeTile(r, 2, x, y, {}, { format: 'json' });
      const fp = pbf.collection.features.find((f) => f.id === q.id);
      const fj = json.collection.features.find((f) => f.id === q.id);
      expect(fp?.geometry).toEqual(fj?.geometry);
      boxes.push(ringBox((fp?.geometry as Polygon).coordinates[0]));
    }
    // Clipped to the buffered tile (buffer 64/4096 of 256 px = 4 px): each part reaches 4 px past the border.
    expect(boxes).toEqual([[470, 210, 516, 260], [508, 210, 554, 260], [470, 252, 516, 294], [508, 252, 554, 294]]);
  });

  it('turns PBF tags back into members: string id, featureClass, parentId; nested values stay JSON text', () => {
    const t = decodeTile(memoryReader(sink.files), 2, 0, 0);
    const f = t.collection.features.find((g) => g.id === 'cell-x');
    expect(f).toMatchObject({ id: 'cell-x', featureClass: 'beta', parentId: 1, layer: 'cells', properties: { label: 5, tags: '["a","b"]' }, geometry: { type: 'Point', coordinates: [130.5, 140.25] } });
    expect(f?.properties).not.toHaveProperty('empty');
  });

  it('keeps holes with their polygon (MVT winding: exterior positive area)', () => {
    const t = decodeTile(memoryReader(sink.files), 2, 1, 1);
    const f = t.collection.features.find((g) => g.id === 7);
    expect(f?.geometry).toMatchObject({ type: 'Polygon' });
    const rings = (f?.geometry as Polygon).coordinates;
    expect(rings).toHaveLength(2);
    expect(ringBox(rings[1])).toEqual([320, 420, 360, 460]);
    expect(classifyRings([[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], [[0, 0], [0, 1], [1, 1], [0, 0]]])).toHaveLength(1);
  });

  it('reports a missing tile as empty, refuses the overview as JSON features and addresses outside the grid', () => {
    const r = memoryReader(sink.files);
    expect(decodeTile(r, 2, 3, 3)).toMatchObject({ exists: false, collection: { type: 'FeatureCollection', features: [] } });
    expect(() => decodeTile(r, 0, 0, 0, {}, { format: 'json' })).toThrow(/overview/);
    expect(decodeTile(r, 0, 0, 0).format).toBe('pbf');
    expect(() => decodeTile(r, 2, 4, 0)).toThrow(/outside the grid/);
  });

  it('parses tile addresses with the plane dimensions the pyramid uses', () => {
    expect(parseTileAddress({ dims: [] }, '2/1/0')).toEqual({ z: 2, x: 1, y: 0, plane: { t: 0, c: 0, z: 0 } });
    expect(parseTileAddress({ dims: ['t', 'z'] }, '3/4/5/6/7.pbf')).toEqual({ z: 3, x: 6, y: 7, plane: { t: 4, c: 0, z: 5 }, format: 'pbf' });
    expect(() => parseTileAddress({ dims: ['c'] }, '2/1/0')).toThrow(/Z\/C\/X\/Y/);
  });

  it('says why an address lies outside the pyramid: its zoom, its column or row, its plane', () => {
    const p = { dims: ['c', 'z'] as Dim[], minZoom: 1, maxZoom: 3, planeLo: { t: 0, c: 0, z: 0 }, planeHi: { t: 0, c: 1, z: 2 } };
    const at = (z: number, x: number, y: number, c: number, zz: number) => outsidePyramid(p, { z, x, y, plane: { t: 0, c, z: zz } });
    expect(at(2, 3, 3, 1, 2)).toBeUndefined();
    expect(at(4, 0, 0, 0, 0)).toBe("zoom 4 is outside this pyramid's zooms 1–3");
    expect(at(0, 0, 0, 0, 0)).toBe("zoom 0 is outside this pyramid's zooms 1–3");
    expect(at(2, 4, 0, 0, 0)).toBe('zoom 2 has 4 × 4 tiles, x and y 0–3');
    expect(at(2, 0, 0, 2, 3)).toBe('no plane c=2, z=3 in this pyramid (c 0–1, z 0–2)');
  });
});

describe('inspectPyramid', () => {
  it('carries what its reader found wrong (a damaged archive) into the summary, for --json', () => {
    const damaged = { ...memoryReader(sink.files), problems: [{ code: 'archive-invalid' as const, path: 'slide.pmtiles', message: 'a leaf directory does not decompress' }] };
    expect(inspectPyramid(damaged).problems).toEqual([{ code: 'archive-invalid', path: 'slide.pmtiles', message: 'a leaf directory does not decompress' }]);
    expect(inspectPyramid(memoryReader(sink.files)).problems).toBeUndefined();
  });

  it('summarises zooms, layers, fields, tiles and bytes as the build report counts them', () => {
    const s = inspectPyramid(memoryReader(sink.files));
    const report = JSON.parse(Buffer.from(sink.files.get('build-report.json') as Uint8Array).toString()) as { tiles: { byZoom: Record<string, { pbf: { tiles: number; bytes: number }; json: { tiles: number; bytes: number } }> } };
    expect(s).toMatchObject({ format: 'pbf', formats: ['pbf', 'json'], world: { side: 1024, width: 1000, height: 600 }, zooms: { min: 0, max: 2, present: [0, 1, 2] }, dims: [], overviews: 1 });
    for (const z of s.byZoom) {
      expect(z.pbf).toEqual(report.tiles.byZoom[z.zoom].pbf);
      if (z.zoom > 0) expect(z.json).toEqual(report.tiles.byZoom[z.zoom].json);
    }
    expect(s.layers).toHaveLength(1);
    expect(s.layers[0].fields).toEqual(expect.arrayContaining([{ name: 'featureClass', type: 'String', values: ['alpha', 'beta', 'gamma'] }, { name: 'label', type: 'Number', range: [1, 7] }]));
    expect(s.largest.length).toBeLessThanOrEqual(10);
    expect(s.largest.map((t) => t.bytes)).toEqual([...s.largest.map((t) => t.bytes)].sort((a, b) => b - a));
    // Zoom 2: the four squares, the point, the line and the holed square, some in several tiles.
    expect(s.byZoom[2].features).toBeGreaterThanOrEqual(7);
    const text = formatSummary(s);
    expect(text).toMatch(/world\s+1000 × 600 px in a 1024 px square/);
    expect(text).toMatch(/featureClass: String \{alpha, beta, gamma\}/);
  });

  it('quotes a name or value that is empty, holds a control character, or what the list uses, and no other', () => {
    const s = inspectPyramid(memoryReader(sink.files));
    const field = s.layers[0].fields.find((f) => f.name === 'featureClass');
    if (field === undefined) throw new Error('no featureClass field');
    field.values = ['alpha', '', 'a\u0000b', 'line\nend', 'x, y', '{set}', 'caf\u00e9 \u{1F600}', 'bell\u0085'];
    s.layers[0].fields.push({ ...field, name: 'tab\tname', values: ['plain'] });
    const text = formatSummary(s);
    expect(text).toContain('featureClass: String {alpha, "", "a\\u0000b", "line\\nend", "x, y", "{set}", caf\u00e9 \u{1F600}, "bell\\u0085"}');
    expect(text).toContain('    "tab\\tname": String {plain}');
    // No control character but line ends reaches the terminal raw.
    expect([...text].filter((c) => c !== '\n' && (c < ' ' || (c >= '\u007f' && c <= '\u009f')))).toEqual([]);
  });

  it('says per layer whose numbers its PBF ids are (feature_ids), in --json and in the text', () => {
    // The squares: six integer ids and one string id ('cell-x', whose PBF id is its sequence number, its id property `id`).
    const s = inspectPyramid(memoryReader(sink.files));
    expect(s.layers.map((l) => l.featureIds)).toEqual(['input']);
    expect(formatSummary(s)).toMatch(/^ {2}cells {2}zooms 0–2, .*; PBF ids the input's \(a string id: property id\)$/m);
    const withIds = (value: unknown) => {
      const files = new Map(sink.files);
      const d = JSON.parse(Buffer.from(files.get('tileset.json') as Uint8Array).toString()) as { vector_layers: Array<Record<string, unknown>> };
      if (value === undefined) delete d.vector_layers[0].feature_ids;
      else d.vector_layers[0].feature_ids = value;
      files.set('tileset.json', Buffer.from(JSON.stringify(d)));
      return inspectPyramid(memoryReader(files));
    };
    expect(formatSummary(withIds('mixed'))).toMatch(/; PBF ids the input's, else the build's sequence numbers$/m);
    expect(formatSummary(withIds('sequence'))).toMatch(/; PBF ids the build's sequence numbers$/m);
    // A descriptor of an earlier build says nothing of it, and neither does inspect.
    expect(withIds(undefined).layers[0].featureIds).toBeUndefined();
    expect(formatSummary(withIds(undefined))).not.toContain('PBF ids');
  });

  it('says what a pixel is when the descriptor has a multiscale (units and scale), for a directory and an archive', async () => {
    const multiscale = {
      axes: [{ name: 'x', type: 'space', unit: 'micrometer' }, { name: 'y', type: 'space', unit: 'micrometer' }],
      coordinateTransformations: [{ type: 'scale', scale: [0.25, 0.5] }, { type: 'translation', translation: [100, 100] }],
    };
    const text = JSON.stringify({ type: 'FeatureCollection', multiscale, features: [{ type: 'Feature', id: 1, properties: {}, geometry: { type: 'Point', coordinates: [10, 10] } }] });
    const dir = tmpDir('mudm-inspect');
    for (const out of [path.join(dir, 'tiles'), path.join(dir, 'slide.pmtiles')]) {
      await buildPyramid([{ source: memorySource('scaled.json', text) }], { out, workers: 1, maxZoom: 1 });
      const reader = await openPyramidReader(out);
      const s = inspectPyramid(reader);
      reader.close();
      expect(s.pixel, out).toEqual({ x: 0.25, y: 0.5, unitX: 'micrometer', unitY: 'micrometer' });
      expect(formatSummary(s), out).toContain('\n  pixel       0.25 × 0.5 micrometer (multiscale)\n');
    }
    // Without a multiscale, no line.
    const plain = inspectPyramid(memoryReader(sink.files));
    expect(plain.pixel).toBeUndefined();
    expect(formatSummary(plain)).not.toContain('pixel ');
  });

  it('reads a directory the same way as memory', async () => {
    const dir = tmpDir('mudm-inspect');
    try {
      await buildSquares({ out: dir });
      const onDisk = inspectPyramid(directoryReader(dir));
      const inMemory = inspectPyramid(memoryReader(sink.files));
      expect({ ...onDisk, root: '', build: undefined }).toEqual({ ...inMemory, root: '', build: undefined });
      expect(inspectPyramid(dir).byZoom).toEqual(inMemory.byZoom);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('handles plane dimensions: tile paths, planes, decode by plane', async () => {
    const planes = new MemorySink();
    const text = collection();
    await buildSquares({ sink: planes }, [
      { source: memorySource('a.json', text), layer: 'cells', plane: { c: 0 } },
      { source: memorySource('b.json', text), layer: 'cells', plane: { c: 2 } },
    ]);
    const r = memoryReader(planes.files);
    const p = openPyramid(r);
    expect(p.dims).toEqual(['c']);
    const s = inspectPyramid(r);
    expect(s.planes).toEqual([{ t: 0, c: 0, z: 0 }, { t: 0, c: 2, z: 0 }]);
    const t = decodeTile(r, 2, 0, 0, { c: 2 });
    expect(t.path).toBe('2/2/0/0.pbf');
    expect(t.collection.features.some((f) => f.id === 1)).toBe(true);
    expect(decodeTile(r, 2, 0, 0, { c: 1 }).exists).toBe(false);
  });

  it('throws a clear error without a tileset.json', () => {
    expect(() => inspectPyramid(memoryReader(new Map()))).toThrow(/no tileset\.json/);
    expect(() => inspectPyramid(path.join(tmpDir('mudm-none'), 'nothing'))).toThrow(/no tileset\.json/);
  });
});
