// --mask-features piece: each 4-connected piece of a label mask's labels a feature of its own, held to a flood fill.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { maskSource } from '../../src/io/mask-source.js';
import { FlatValue } from '../../src/tiling/flat-value.js';
import { validateMask } from '../../src/validate/files.js';
import { MemorySink } from '../../src/io/sink.js';
import { resolveBuildConfig } from '../../src/options.js';
import { UsageError } from '../../src/report/errors.js';
import { refusal } from '../helpers/errors.js';
import { decodePbf, tmpDir, withoutReport } from '../helpers/pyramid.js';
import { littleEndianTiff } from '../helpers/tiff.js';
import { expectOk, runCli } from '../e2e/helpers.js';
import { labelFeature } from '../../src/raster/features.js';
import { FeatureTextWriter, stringsOf } from '../../src/raster/feature-text.js';
import { byFirstPixel, LabelPieces, pieceShapes } from '../../src/raster/label-pieces.js';
import { traceLabelRings } from '../../src/raster/trace.js';

/** A piece as a flood fill finds it: its label, pixels, first pixel in raster order and box (x0, y0, x1, y1 in pixel edges). */
interface Piece { label: number; area: number; first: number; box: [number, number, number, number] }

/**
 * The 4-connected pieces of every label, in the order --mask-features piece gives them: by their first pixel in raster
 * order, as a flood fill from each pixel not yet seen finds them. Written apart from the tracer, pixel by pixel.
 */
function floodPieces(data: ArrayLike<number>, width: number): Piece[] {
  const height = data.length / width, seen = new Uint8Array(data.length), pieces: Piece[] = [];
  for (let i = 0; i < data.length; i++) {
    if (data[i] === 0 || seen[i]) continue;
    const label = data[i], stack = [i], box: Piece['box'] = [Infinity, Infinity, -Infinity, -Infinity];
    let area = 0;
    seen[i] = 1;
    while (stack.length) {
      const p = stack.pop() as number, x = p % width, y = (p - x) / width;
      area++;
      box[0] = Math.min(box[0], x); box[1] = Math.min(box[1], y); box[2] = Math.max(box[2], x + 1); box[3] = Math.max(box[3], y + 1);
      for (const [nx, ny] of [[x - 1, y], [x + 1, y], [x, y - 1], [x, y + 1]]) {
        const q = ny * width + nx;
        if (nx >= 0 && nx < width && ny >= 0 && ny < height && !seen[q] && data[q] === label) { seen[q] = 1; stack.push(q); }
      }
    }
    pieces.push({ label, area, first: i, box });
  }
  return pieces;
}

/** What each feature should say: id 1, 2, … in order, its label, its number within the label and its own area. */
function expected(pieces: Piece[]): Map<number, { label: number; piece: number; area: number; box: number[] }> {
  const within = new Map<number, number>();
  return new Map(pieces.map((p, k) => {
    within.set(p.label, (within.get(p.label) ?? 0) + 1);
    return [k + 1, { label: p.label, piece: within.get(p.label) as number, area: p.area, box: p.box }];
  }));
}

/**
 * Every feature of the finest zoom's tiles, JSON and PBF, by id: its properties (which every tile must agree on), its
 * geometry types and the box of all its clipped parts (clipped with a buffer, their union is the whole outline's box).
 */
function featuresOf(sink: MemorySink, side: number, zoom: number): { json: Map<number, { properties: unknown; types: Set<string>; box: number[] }>; pbf: Map<number, unknown> } {
  const json = new Map<number, { properties: unknown; types: Set<string>; box: number[] }>(), pbf = new Map<number, unknown>();
  const tile = 2 ** -zoom * side;
  for (const [name, bytes] of sink.files) {
    const m = new RegExp(`^${zoom}/(\\d+)/(\\d+)\\.(json|pbf)$`).exec(name);
    if (!m) continue;
    const [x, y] = [Number(m[1]), Number(m[2])];
    if (m[3] === 'pbf') {
      for (const f of decodePbf(bytes, side, zoom, x, y)) {
        const had = pbf.get(Number(f.id));
        expect(had === undefined || JSON.stringify(had) === JSON.stringify(f.properties), `PBF feature ${f.id} alike in every tile`).toBe(true);
        pbf.set(Number(f.id), f.properties);
      }
      continue;
    }
    const fc = JSON.parse(Buffer.from(bytes).toString('utf8')) as { features: { id: number; properties: unknown; geometry: { type: string; coordinates: number[][][] } }[] };
    for (const f of fc.features) {
      const e = json.get(f.id) ?? { properties: f.properties, types: new Set<string>(), box: [Infinity, Infinity, -Infinity, -Infinity] };
      expect(e.properties).toEqual(f.properties);
      e.types.add(f.geometry.type);
      // Only what lies within the tile: the buffer's part is drawn again by the tile beside it.
      for (const [px, py] of f.geometry.coordinates.flat()) {
        const cx = Math.min(Math.max(px, x * tile), (x + 1) * tile), cy = Math.min(Math.max(py, y * tile), (y + 1) * tile);
        e.box = [Math.min(e.box[0], cx), Math.min(e.box[1], cy), Math.max(e.box[2], cx), Math.max(e.box[3], cy)];
      }
      json.set(f.id, e);
    }
  }
  return { json, pbf };
}

/**
 * A 0/255 mask of 256² px: 1,024 spots of 2 × 2 px (a thresholded export), a ring with an island of 255 in its hole,
 * two pixels touching only at a corner (two pieces: pieces are 4-connected), a frame with two holes, and a second
 * value (a class mask's other class) in two pieces far apart.
 */
function binaryMask(): Uint8Array {
  const W = 256, data = new Uint8Array(W * W);
  const fill = (x0: number, y0: number, w: number, h: number, v: number) => { for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) data[y * W + x] = v; };
  for (let k = 0; k < 1024; k++) fill(4 * (k % 32), 4 + 4 * Math.floor(k / 32), 2, 2, 255);
  fill(140, 10, 30, 30, 255); fill(145, 15, 20, 20, 0); fill(152, 22, 6, 6, 255);
  data[60 * W + 200] = 255; data[61 * W + 201] = 255;
  fill(180, 150, 40, 20, 255); fill(183, 153, 10, 10, 0); fill(200, 153, 10, 10, 0);
  fill(150, 3, 4, 4, 128); fill(230, 240, 8, 8, 128);
  return data;
}

describe('--mask-features piece', () => {
  it('makes each piece of a 0/255 PNG mask a feature of its own (id, label, piece, area), in JSON and PBF tiles, without mask-pieces', async () => {
    const data = binaryMask();
    const file = path.join(tmpDir('mask-features'), 'binary.png');
    await sharp(data, { raw: { width: 256, height: 256, channels: 1 } }).toColourspace('b-w').png().toFile(file);
    const want = expected(floodPieces(data, 256));
    expect(want.size).toBe(1024 + 2 + 2 + 1 + 2);
    const build = async (maskFeatures: 'label' | 'piece', workers = 1) => {
      const sink = new MemorySink();
      const warnings: unknown[] = [];
      await buildPyramid([{ source: maskSource(file) }], { maxZoom: 1, workers, maskFeatures }, { sink, onWarning: (_, d) => warnings.push(d) });
      return { sink, warnings: warnings.filter((w) => (w as { event: string }).event !== 'pixel-size-default') };
    };
    const { sink, warnings } = await build('piece');
    expect(warnings).toEqual([]);
    const { json, pbf } = featuresOf(sink, 256, 1);
    expect([...json.keys()].sort((a, b) => a - b)).toEqual([...want.keys()]);
    for (const [id, w] of want) {
      const got = json.get(id);
      expect({ id, properties: got?.properties, types: [...(got?.types ?? [])], box: got?.box }).toEqual({ id, properties: { label: w.label, area: w.area, piece: w.piece }, types: ['Polygon'], box: w.box });
      expect(pbf.get(id), `PBF feature ${id}`).toEqual({ label: w.label, area: w.area, piece: w.piece });
    }
    // The ring and its island are two pieces; the frame one, its two holes inside it.
    const ring = [...want.values()].find((w) => w.box[0] === 140 && w.box[1] === 10);
    expect(ring).toMatchObject({ label: 255, area: 900 - 400 });
    expect([...want.values()].find((w) => w.box[0] === 152)).toMatchObject({ label: 255, area: 36 });
    expect([...want.values()].find((w) => w.box[0] === 180)).toMatchObject({ label: 255, area: 800 - 200 });
    // The same pyramid from two workers, byte for byte.
    expect(withoutReport((await build('piece', 2)).sink)).toEqual(withoutReport(sink));
    // By label, as before: one feature a value, and the warning names the option.
    const byLabel = await build('label');
    expect(byLabel.warnings).toEqual([{ event: 'mask-pieces', file, label: 255, polygons: 1024 + 5, vertices: 4 * 1024 + 8 + 4 + 8 + 12, others: 0 }]);
    expect([...featuresOf(byLabel.sink, 256, 1).json.keys()].sort()).toEqual([128, 255]);
  });

  it('gives a mask numbered afresh in each tile a feature per cell, numbered alike however the mask is read, without mask-scattered', async () => {
    // 600² px, 16 bits, in 4 tiles of 300 px of 16 round cells each (radius 2, 75 px apart), numbered from 1000 in each tile.
    const W = 600, data = new Uint16Array(W * W);
    for (let t = 0; t < 4; t++) {
      for (let k = 0; k < 16; k++) {
        const cx = (t % 2) * 300 + (k % 4) * 75 + 37, cy = Math.floor(t / 2) * 300 + Math.floor(k / 4) * 75 + 37;
        for (let y = cy - 2; y <= cy + 2; y++) for (let x = cx - 2; x <= cx + 2; x++) if ((x - cx) ** 2 + (y - cy) ** 2 <= 4) data[y * W + x] = 1000 + k;
      }
    }
    const file = path.join(tmpDir('mask-features'), 'tiled.tif');
    fs.writeFileSync(file, littleEndianTiff([[256, 4, W], [257, 4, W], [258, 3, 16], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, W], [279, 4, 2 * W * W], [339, 3, 1]], new Uint8Array(data.buffer)));
    const build = async (maskFeatures: 'label' | 'piece', bandBytes?: number) => {
      const sink = new MemorySink();
      const warnings: unknown[] = [];
      await buildPyramid([{ source: maskSource(file, bandBytes) }], { maxZoom: 1, workers: 1, maskFeatures }, { sink, onWarning: (_, d) => warnings.push(d) });
      return { sink, warnings };
    };
    const byLabel = await build('label');
    expect(byLabel.warnings).toEqual([expect.objectContaining({ event: 'mask-scattered', labels: 16, of: 16, label: 1000, pieces: 4 })]);
    const { sink, warnings } = await build('piece');
    expect(warnings).toEqual([]);
    const want = expected(floodPieces(data, W));
    expect(want.size).toBe(64);
    const { json, pbf } = featuresOf(sink, 1024, 1);
    expect(new Map([...json].map(([id, f]) => [id, f.properties]))).toEqual(new Map([...want].map(([id, w]) => [id, { label: w.label, area: w.area, piece: w.piece }])));
    expect(pbf).toEqual(new Map([...want].map(([id, w]) => [id, { label: w.label, area: w.area, piece: w.piece }])));
    // Label 1000's cells are pieces 1–4, in raster order of their top-left pixels: one in each tile of the segmentation.
    expect([...want.values()].filter((w) => w.label === 1000).map((w) => [w.piece, w.box[0], w.box[1]])).toEqual([[1, 35, 35], [2, 335, 35], [3, 35, 335], [4, 335, 335]]);
    // Read in bands of 30 rows, the pyramid is the same: a label is split where it is given, whole.
    expect(withoutReport((await build('piece', 30 * W * 2)).sink)).toEqual(withoutReport(sink));
  });

  it('gives the same pieces, numbered alike, read in bands shorter than its pieces: tall, U-shaped, arched, snaking', async () => {
    // Bands of 4 rows read 64 below them at first: every shape here reaches further, joined only far below (a U),
    // only far above (an arch), or winding down and up (a snake); label 3 is numbered afresh in six places.
    const W = 64, H = 400, data = new Uint8Array(W * H);
    const fill = (x0: number, y0: number, w: number, h: number, v: number) => { for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) data[y * W + x] = v; };
    fill(2, 5, 3, 300, 1); fill(10, 5, 3, 300, 1); fill(2, 302, 11, 3, 1);
    fill(16, 70, 12, 2, 1); fill(16, 70, 2, 250, 1); fill(26, 70, 2, 250, 1);
    fill(32, 3, 2, 390, 2);
    for (let k = 0; k < 6; k++) fill(36, 8 + 60 * k, 4, 4, 3);
    fill(44, 100, 2, 200, 4); fill(44, 298, 8, 2, 4); fill(50, 150, 2, 150, 4); fill(50, 150, 8, 2, 4); fill(56, 150, 2, 240, 4);
    const file = path.join(tmpDir('mask-features'), 'tall.tif');
    fs.writeFileSync(file, littleEndianTiff([[256, 4, W], [257, 4, H], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, H], [279, 4, W * H]], data));
    const texts = async (bandBytes?: number) => {
      const out: unknown[] = [];
      for await (const group of maskSource(file, bandBytes).features({ maskFeatures: 'piece' })) for (const f of group) out.push(JSON.parse(new TextDecoder().decode((f as { bytes: Uint8Array }).bytes)));
      return out as Array<{ id: number; properties: { label: number; piece: number; area: number }; geometry: { coordinates: number[][][] } }>;
    };
    const whole = await texts();
    const want = expected(floodPieces(data, W));
    expect(whole.map((f) => [f.id, f.properties])).toEqual([...want].map(([id, w]) => [id, { label: w.label, area: w.area, piece: w.piece }]));
    expect(whole.map((f) => f.properties.label)).toEqual([2, 1, 3, 3, 1, 4, 3, 3, 3, 3]);
    for (const f of whole) {
      const ys = f.geometry.coordinates[0].map((p) => p[1]), w = want.get(f.id);
      expect([Math.min(...ys), Math.max(...ys)]).toEqual([w?.box[1], w?.box[3]]);
    }
    expect(await texts(4 * W)).toEqual(whole);
    expect(await texts(W)).toEqual(whole);
  });

  it('keeps a piece of 65,536 vertices or more, which goes to the build flat, its own id, label, piece and area', async () => {
    // A block with 128 × 128 holes of a pixel (65,540 vertices: a value, flat) is piece 2 of label 255, between two
    // squares of it; label 128's square comes second (the same top row, further right).
    const W = 270, data = new Uint8Array(W * W);
    const fill = (x0: number, y0: number, w: number, h: number, v: number) => { for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) data[y * W + x] = v; };
    fill(0, 0, 2, 2, 255); fill(10, 0, 2, 2, 128); fill(0, 266, 2, 2, 255);
    fill(4, 4, 260, 260, 255);
    for (let y = 5; y < 261; y += 2) for (let x = 5; x < 261; x += 2) data[y * W + x] = 0;
    const file = path.join(tmpDir('mask-features'), 'holes.tif');
    fs.writeFileSync(file, littleEndianTiff([[256, 4, W], [257, 4, W], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, W], [279, 4, W * W]], data));
    const want = expected(floodPieces(data, W));
    const props = (w: { label: number; piece: number; area: number }) => ({ label: w.label, area: w.area, piece: w.piece });
    expect([...want.values()].map(props)).toEqual([{ label: 255, area: 4, piece: 1 }, { label: 128, area: 4, piece: 1 }, { label: 255, area: 260 * 260 - 128 * 128, piece: 2 }, { label: 255, area: 4, piece: 3 }]);
    // The block is the one the source hands on flat.
    const flat: unknown[] = [];
    for await (const group of maskSource(file).features({ maskFeatures: 'piece' })) for (const f of group) if (f instanceof FlatValue) flat.push({ id: f.feature.id, properties: f.feature.properties, vertices: f.positions - f.rings });
    expect(flat).toEqual([{ id: 3, properties: props(want.get(3) as { label: number; piece: number; area: number }), vertices: 4 + 4 * 128 * 128 }]);
    const sink = new MemorySink();
    const report = await buildPyramid([{ source: maskSource(file) }], { maxZoom: 1, workers: 2, maskFeatures: 'piece' }, { sink });
    expect([report.features.read, report.features.valid, report.features.invalid, report.features.notPlaced]).toEqual([4, 4, 0, {}]);
    const { json, pbf } = featuresOf(sink, 512, 1);
    expect(new Map([...json].map(([id, f]) => [id, f.properties]))).toEqual(new Map([...want].map(([id, w]) => [id, props(w)])));
    expect(pbf).toEqual(new Map([...want].map(([id, w]) => [id, props(w)])));
    expect(json.get(3)?.box).toEqual(want.get(3)?.box);
    expect((await validateMask(maskSource(file), { maskFeatures: 'piece' })).features).toBe(4);
  });

  it('is refused with a value it does not take, naming it (exit 2)', () => {
    expect(refusal(() => resolveBuildConfig({ maskFeatures: 'pieces' }), UsageError, 2)).toBe('--mask-features takes auto, label or piece, found "pieces"');
  });
});

describe('--mask-features on the command line', () => {
  /** 64² px of 0/255: 9 squares of 4 px, 20 px apart. */
  const maskFile = async (): Promise<string> => {
    const data = new Uint8Array(64 * 64);
    for (let k = 0; k < 9; k++) for (let y = 0; y < 4; y++) for (let x = 0; x < 4; x++) data[(5 + 20 * Math.floor(k / 3) + y) * 64 + 5 + 20 * (k % 3) + x] = 255;
    const file = path.join(tmpDir('mask-features-cli'), 'spots.tif');
    fs.writeFileSync(file, littleEndianTiff([[256, 4, 64], [257, 4, 64], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, 64], [279, 4, 64 * 64]], data));
    return file;
  };

  it('validate counts the pieces the build would make, build makes them, and a resume of other --mask-features is refused', async () => {
    const file = await maskFile();
    const v = await runCli(['validate', file, '--mask-features', 'piece']);
    expect([v.code, v.stderr]).toEqual([0, '']);
    expect(v.stdout).toContain(`${file}: valid, label mask of 9 pieces, 0 errors, 0 warnings`);
    expect((await runCli(['validate', file])).stdout).toContain(`${file}: valid, label mask of 1 label, 0 errors, 0 warnings`);
    const bad = await runCli(['build', file, '-o', path.join(path.dirname(file), 'bad'), '--mask-features', 'pieces']);
    expect([bad.code, bad.stderr]).toEqual([2, "error: option --mask-features must be one of auto, label, piece, got 'pieces'\nRun 'mudm-tiles build --help' for usage.\n"]);
    // A plan is the work state a build killed after reading leaves: resumed with other pieces, it is refused.
    const out = path.join(path.dirname(file), 'out');
    expectOk(await runCli(['plan', file, '-o', out, '--shards', '1', '--max-zoom', '1', '--mask-features', 'piece', '-q']), 'plan');
    const other = await runCli(['build', file, '-o', out, '--resume', '--max-zoom', '1']);
    expect(other.code, other.stderr).toBe(2);
    expect(other.stderr).toContain('(--mask-features was piece, is not given now); run again with the same ones');
    expectOk(await runCli(['build', file, '-o', out, '--resume', '--max-zoom', '1', '--mask-features', 'piece', '-q']), 'the same options');
    // Given for annotation documents alone, it changes nothing, and says so.
    const json = path.join(path.dirname(file), 'cells.json');
    fs.writeFileSync(json, JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [3, 4] } }] }));
    const unused = await runCli(['build', json, '-o', path.join(path.dirname(file), 'cells'), '--mask-features', 'piece']);
    expect([unused.code, unused.stderr]).toEqual([0, "warning: --mask-features piece says what a label mask's features are, and no input is a label mask (.tif, .tiff, .png): it changes nothing [mask-features-unused]\n"]);
    const ids = decodePbf(fs.readFileSync(path.join(out, '0/0/0.pbf')), 64, 0, 0, 0).map((f) => [f.id, f.properties.piece, f.properties.area]);
    expect(ids.sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual(Array.from({ length: 9 }, (_, k) => [k + 1, k + 1, 16]));
  });
});

describe('LabelPieces', () => {
  it('writes a piece as text just as its value is built (pieces of 2^16 vertices or more go as values)', () => {
    const rings = traceLabelRings({ width: 256, height: 256, data: binaryMask() });
    const pieces = new LabelPieces(), writer = new FeatureTextWriter(), utf8 = new TextDecoder();
    let n = 0;
    for (const shape of pieceShapes(rings).sort(byFirstPixel)) {
      const piece = pieces.of(rings, shape);
      writer.reset();
      const text = writer.write(rings, piece, 7);
      expect(utf8.decode(text)).toBe(JSON.stringify(labelFeature(rings, piece, 7)));
      expect(JSON.stringify(JSON.parse(utf8.decode(text))).match(/"[^"]*"/g)?.length).toBe(stringsOf(piece));
      n++;
    }
    expect(n).toBe(1031);
  });
});
