// A traced label handed to the build flat (FlatValue) is recorded byte for byte as its GeoJSON feature was.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { maskSource } from '../../src/io/mask-source.js';
import { MemorySink } from '../../src/io/sink.js';
import type { FeatureSource } from '../../src/io/source.js';
import { FlatValue } from '../../src/tiling/flat-value.js';
import { labelFeature, labelFlat, labelsOf } from '../../src/raster/features.js';
import { traceLabelRings } from '../../src/raster/trace.js';
import { byFirstPixel, LabelPieces, pieceShapes } from '../../src/raster/label-pieces.js';
import { parseBatch, type ParseTask } from '../../src/stages/parse.js';
import { validateFeature } from '../../src/validate/index.js';
import { mulberry32 } from '../../src/random.js';
import { ManyPieces } from '../../src/build/report.js';
import { asGeoJSON } from '../helpers/mask-features.js';
import { withoutReport } from '../helpers/pyramid.js';
import { littleEndianTiff } from '../helpers/tiff.js';

/**
 * Labels as discs (some with holes), checkerboard patches (pieces touching at corners: saddles, pinched rings) and
 * scattered specks, drawn over one another at random: many-piece labels, holes inside pieces inside holes.
 */
function mask(seed: number, width: number, height: number): Uint16Array {
  const rnd = mulberry32(seed);
  const data = new Uint16Array(width * height);
  for (let k = 0; k < 60; k++) {
    const L = 1 + Math.floor(rnd() * 6), cx = rnd() * width, cy = rnd() * height, r = 2 + rnd() * 12, kind = Math.floor(rnd() * 3);
    for (let y = Math.max(0, Math.floor(cy - r)); y < Math.min(height, cy + r); y++) {
      for (let x = Math.max(0, Math.floor(cx - r)); x < Math.min(width, cx + r); x++) {
        const d = Math.hypot(x + 0.5 - cx, y + 0.5 - cy);
        if (d > r) continue;
        if (kind === 0 && d < r / 3) continue;
        if (kind === 1 && (x + y) % 2 === 1) continue;
        if (kind === 2 && rnd() < 0.7) continue;
        data[y * width + x] = L;
      }
    }
  }
  return data;
}

const task = (value: unknown, over: Partial<ParseTask> = {}): ParseTask => ({
  kind: 'parse', file: 'mask.tif', layer: 'mask', rule: { fixed: {}, fields: {} }, cellSize: 256, seq0: 41, side: 1024,
  raw: { values: [value], meta: new Float64Array(6) }, sampleCap: 5, json: true, ...over,
});

/** A parse result with its records as bytes, comparable whole. */
function decoded(r: ReturnType<typeof parseBatch>): unknown {
  return { ...r, units: r.units.map(([key, bytes]) => [key, Buffer.from(bytes).toString('base64')]) };
}

describe('labels handed on flat', () => {
  it('are valid as made, and give the records, counts and statistics their GeoJSON features gave', () => {
    let labels = 0, multi = 0, holes = 0;
    for (const seed of [1, 2, 3]) {
      const width = 200 + 31 * seed, height = 150 + 17 * seed;
      const rings = traceLabelRings({ width, height, data: mask(seed, width, height) });
      for (const parts of labelsOf(rings)) {
        // A band's labels are given with the band's first row added to every y.
        const top = 37 * seed;
        const feature = labelFeature(rings, parts, top), flat = labelFlat(rings, parts, top);
        expect(validateFeature(feature, '')).toEqual([]);
        expect(asGeoJSON(flat)).toEqual(feature);
        expect(flat.positions - flat.rings).toBe(parts.vertices);
        for (const over of [{}, { json: false, sketch: { format: 'pbf' as const } }, { sketch: { format: 'json' as const }, layerBy: 'label', rule: { fixed: {}, fields: { z: 'area' } } }]) {
          const want = parseBatch(task(feature, over)), got = parseBatch(task(flat, over));
          expect(want.valid).toBe(1);
          expect(decoded(got)).toEqual(decoded(want));
        }
        labels++;
        if (parts.polygons.length > 1) multi++;
        if (parts.polygons.some((p) => p.length > 1)) holes++;
      }
    }
    // The masks hold what the test is for: labels in many pieces, and pieces with holes.
    expect(labels).toBeGreaterThan(12);
    expect(multi).toBeGreaterThan(6);
    expect(holes).toBeGreaterThan(3);
  });

  it('keep the own id and number of a piece (--mask-features piece), as its GeoJSON feature does', () => {
    const rings = traceLabelRings({ width: 240, height: 190, data: mask(4, 240, 190) });
    const pieces = new LabelPieces();
    let n = 0;
    for (const shape of pieceShapes(rings).sort(byFirstPixel)) {
      const piece = pieces.of(rings, shape);
      const feature = labelFeature(rings, piece, 5);
      expect(feature).toMatchObject({ id: ++n, properties: { label: shape.label, piece: piece.piece } });
      expect(asGeoJSON(labelFlat(rings, piece, 5))).toEqual(feature);
    }
    expect(n).toBeGreaterThan(20);
  });

  it('are named in many pieces as their GeoJSON features were (mask-pieces)', () => {
    // 33 × 33 specks of label 7 and a square of label 8.
    const width = 99, data = new Uint8Array(width * width);
    for (let y = 0; y < width; y += 3) for (let x = 0; x < width; x += 3) data[y * width + x] = 7;
    const rings = traceLabelRings({ width, height: width, data });
    const seen = [new ManyPieces(), new ManyPieces()];
    for (const parts of labelsOf(rings)) {
      seen[0].see(labelFeature(rings, parts, 0));
      seen[1].see(labelFlat(rings, parts, 0));
    }
    expect(seen[1].warning('m.tif')).toEqual(seen[0].warning('m.tif'));
    expect(seen[1].warning('m.tif')?.[1]).toMatchObject({ label: 7, polygons: 1089, vertices: 4 * 1089 });
  });
});

describe('a mask with labels handed on flat', () => {
  let dir = '';
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'mudm-flat-')); });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  it('builds the tiles its labels built as GeoJSON values', async () => {
    // Read in bands of 40 rows: a class of 1,089 specks with holes below the first band (a value, flat), a checkerboard
    // class (saddles), and small labels (text).
    const width = 300, height = 260, data = new Uint8Array(width * height);
    for (let y = 50; y < 248; y += 6) for (let x = 0; x < 198; x += 6) for (let k = 0; k < 16; k++) if (k !== 5) data[(y + (k >> 2)) * width + x + (k & 3)] = 3;
    for (let y = 10; y < 90; y++) for (let x = 210; x < 290; x++) if ((x + y) % 2 === 0) data[y * width + x] = 4;
    data.set(mask(5, width, 40).map((v) => (v === 0 ? 0 : v + 10)).subarray(0, 40 * 200), 0);
    const path = join(dir, 'classes.tif');
    await writeFile(path, littleEndianTiff([
      [256, 4, width], [257, 4, height], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, height], [279, 4, data.byteLength],
    ], data));
    let flat = 0;
    const source = maskSource(path, 40 * width);
    // The same source with each flat value given as the GeoJSON feature it stands for.
    const asBefore: FeatureSource = {
      ...source,
      features: async function* () {
        for await (const group of source.features()) yield group.map((f) => (f instanceof FlatValue ? (flat++, asGeoJSON(f)) : f));
      },
    };
    const build = async (s: FeatureSource) => {
      const sink = new MemorySink();
      await buildPyramid([{ source: s }], { maxZoom: 3, workers: 1, unitSize: 256 }, { sink });
      return withoutReport(sink);
    };
    const before = await build(asBefore);
    expect(flat).toBe(2);
    expect(before.size).toBeGreaterThan(20);
    expect(await build(maskSource(path, 40 * width))).toEqual(before);
  });
});
