// Label masks to polygons (src/raster/): exact outlines of known shapes, invariants on random masks; and reading 8/16/32-bit files (src/io/mask.ts).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageError } from '../../src/report/errors.js';
import { readLabelMask } from '../../src/io/mask.js';
import { type LabelFeature, labelsToFeatures } from '../../src/raster/features.js';
import { type LabelMask, traceLabelRings } from '../../src/raster/trace.js';
import type { Position } from '../../src/model/geometry.js';
import { littleEndianPages, littleEndianTiff, type TiffEntry } from '../helpers/tiff.js';
import { stripTiff } from '../helpers/strip-tiff.js';

/** Rows of characters: '.' is background, any other character its char code minus 48 ('1' is label 1). */
function mask(rows: string[]): LabelMask {
  const height = rows.length, width = height === 0 ? 0 : rows[0].length;
  const data = new Uint32Array(width * height);
  rows.forEach((r, y) => { for (let x = 0; x < width; x++) data[y * width + x] = r[x] === '.' ? 0 : r.charCodeAt(x) - 48; });
  return { width, height, data };
}

function features(m: LabelMask): LabelFeature[] {
  return [...labelsToFeatures(m)];
}

function polygons(f: LabelFeature): Position[][][] {
  return f.geometry.type === 'Polygon' ? [f.geometry.coordinates] : f.geometry.coordinates;
}

/** Twice the signed shoelace area of a closed ring. */
function area2(ring: Position[]): number {
  let s = 0;
  for (let i = 0; i + 1 < ring.length; i++) s += ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1];
  return s;
}

function inRing(ring: Position[], px: number, py: number): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 2; i < ring.length - 1; j = i++) {
    const [xi, yi] = ring[i], [xj, yj] = ring[j];
    if ((yi > py) !== (yj > py) && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function inPolygon(poly: Position[][], px: number, py: number): boolean {
  return inRing(poly[0], px, py) && !poly.slice(1).some((h) => inRing(h, px, py));
}

/** 4-connected components per label, by flood fill: the oracle for the number of polygons. */
function components(m: LabelMask): Map<number, number> {
  const seen = new Uint8Array(m.data.length);
  const out = new Map<number, number>();
  for (let i = 0; i < m.data.length; i++) {
    const L = m.data[i];
    if (L === 0 || seen[i]) continue;
    out.set(L, (out.get(L) ?? 0) + 1);
    const stack = [i];
    seen[i] = 1;
    while (stack.length > 0) {
      const p = stack.pop() as number;
      const x = p % m.width, y = (p - x) / m.width;
      for (const [nx, ny] of [[x + 1, y], [x - 1, y], [x, y + 1], [x, y - 1]]) {
        if (nx < 0 || ny < 0 || nx >= m.width || ny >= m.height) continue;
        const q = ny * m.width + nx;
        if (!seen[q] && m.data[q] === L) { seen[q] = 1; stack.push(q); }
      }
    }
  }
  return out;
}

/**
 * Every property the conversion promises, checked against the mask itself: closed integer rings without repeated or
 * collinear vertices, outer rings positive and holes negative, area = pixel count = shoelace, one polygon per
 * 4-connected component, and the polygons cover exactly the label's pixels (probed at every pixel centre).
 */
function checkAll(m: LabelMask): LabelFeature[] {
  const fs = features(m);
  const counts = new Map<number, number>(), topRow = new Map<number, number>();
  m.data.forEach((v, i) => {
    if (v === 0) return;
    counts.set(v, (counts.get(v) ?? 0) + 1);
    if (!topRow.has(v)) topRow.set(v, Math.floor(i / m.width));
  });
  // By top row, then label: the order a mask read in bands of rows gives too.
  expect(fs.map((f) => f.id)).toEqual([...counts.keys()].sort((a, b) => topRow.get(a)! - topRow.get(b)! || a - b));
  const comps = components(m);
  for (const f of fs) {
    expect(f.properties.label).toBe(f.id);
    expect(f.properties.area).toBe(counts.get(f.id));
    const polys = polygons(f);
    expect(f.geometry.type).toBe(polys.length === 1 ? 'Polygon' : 'MultiPolygon');
    expect(polys.length).toBe(comps.get(f.id));
    let total = 0;
    for (const poly of polys) {
      poly.forEach((ring, k) => {
        expect(ring.length).toBeGreaterThanOrEqual(5);
        expect(ring[0]).toEqual(ring[ring.length - 1]);
        const corners = ring.slice(0, -1);
        const keys = new Set(corners.map(([x, y]) => `${x},${y}`));
        expect(keys.size).toBe(corners.length);
        for (let i = 0; i < corners.length; i++) {
          const [ax, ay] = corners[(i + corners.length - 1) % corners.length];
          const [bx, by] = corners[i];
          const [cx, cy] = corners[(i + 1) % corners.length];
          expect(Number.isInteger(bx) && Number.isInteger(by)).toBe(true);
          // Axis-parallel edges, and a turn at every vertex.
          expect(ax === bx || ay === by).toBe(true);
          expect((bx - ax) * (cy - by) - (by - ay) * (cx - bx)).not.toBe(0);
        }
        const a = area2(ring);
        if (k === 0) expect(a).toBeGreaterThan(0); else expect(a).toBeLessThan(0);
        total += a;
      });
    }
    expect(total / 2).toBe(f.properties.area);
    const wrong: string[] = [];
    for (let y = 0; y < m.height; y++) {
      for (let x = 0; x < m.width; x++) {
        const hits = polys.filter((p) => inPolygon(p, x + 0.5, y + 0.5)).length;
        if (hits !== (m.data[y * m.width + x] === f.id ? 1 : 0)) wrong.push(`label ${f.id}: pixel ${x},${y} covered ${hits} times`);
      }
    }
    expect(wrong).toEqual([]);
  }
  return fs;
}

describe('labelsToFeatures: known shapes', () => {
  it('a square: exact outline, counter-clockwise in y-up terms (positive shoelace), area', () => {
    const [f] = checkAll(mask(['.....', '.111.', '.111.', '.111.', '.....']));
    expect(f).toEqual({
      type: 'Feature', id: 1, properties: { label: 1, area: 9 },
      geometry: { type: 'Polygon', coordinates: [[[1, 1], [4, 1], [4, 4], [1, 4], [1, 1]]] },
    });
  });

  it('an L shape: collinear vertices removed', () => {
    const [f] = checkAll(mask(['1..', '1..', '111']));
    expect(f.geometry).toEqual({ type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 2], [3, 2], [3, 3], [0, 3], [0, 0]]] });
    expect(f.properties.area).toBe(5);
  });

  it('a hole: inner ring with negative area, area excludes the hole', () => {
    const [f] = checkAll(mask(['1111', '1..1', '1..1', '1111']));
    expect(f.properties.area).toBe(12);
    expect(f.geometry).toEqual({
      type: 'Polygon',
      coordinates: [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[1, 1], [1, 3], [3, 3], [3, 1], [1, 1]]],
    });
  });

  it('a hole filled by another label: both labels have outlines, the hole ring equals the inner label outline', () => {
    const fs = checkAll(mask(['111', '121', '111']));
    expect(fs[0].geometry.coordinates).toEqual([[[0, 0], [3, 0], [3, 3], [0, 3], [0, 0]], [[1, 1], [1, 2], [2, 2], [2, 1], [1, 1]]]);
    expect(fs[1].geometry.coordinates).toEqual([[[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]]]);
  });

  it('two touching labels each get their own outline along the shared edge', () => {
    const fs = checkAll(mask(['1122', '1122']));
    expect(fs.map((f) => f.geometry.coordinates)).toEqual([
      [[[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]]],
      [[[2, 0], [4, 0], [4, 2], [2, 2], [2, 0]]],
    ]);
  });

  it('two separate components: a MultiPolygon in raster order', () => {
    const [f] = checkAll(mask(['..11', '....', '11..']));
    expect(f.geometry).toEqual({
      type: 'MultiPolygon',
      coordinates: [[[[2, 0], [4, 0], [4, 1], [2, 1], [2, 0]]], [[[0, 2], [2, 2], [2, 3], [0, 3], [0, 2]]]],
    });
    expect(f.properties.area).toBe(4);
  });

  it('diagonal-only contact: two components (4-connectivity), rings touching at one vertex', () => {
    const [f] = checkAll(mask(['1.', '.1']));
    expect(f.geometry).toEqual({
      type: 'MultiPolygon',
      coordinates: [[[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]], [[[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]]]],
    });
    const [g] = checkAll(mask(['.1', '1.']));
    expect(g.geometry.type).toBe('MultiPolygon');
    expect(polygons(g)).toHaveLength(2);
  });

  it('a component pinched at a diagonal: split into an outer ring and a hole that touch at that vertex', () => {
    const [f] = checkAll(mask(['11.', '1.1', '111']));
    expect(f.geometry).toEqual({
      type: 'Polygon',
      coordinates: [
        [[0, 0], [2, 0], [2, 1], [3, 1], [3, 3], [0, 3], [0, 0]],
        [[1, 1], [1, 2], [2, 2], [2, 1], [1, 1]],
      ],
    });
  });

  it('a ring of diagonal steps around a hole that touches it at several vertices', () => {
    checkAll(mask(['.111.', '1...1', '1.1.1', '1...1', '.111.']));
    checkAll(mask(['.1.', '1.1', '.1.']));
    checkAll(mask(['1111', '1.11', '11.1', '1111']));
  });

  it('an island inside a hole of the same label: the hole belongs to the surrounding outer ring', () => {
    const [f] = checkAll(mask(['11111', '1...1', '1.1.1', '1...1', '11111']));
    expect(f.geometry).toEqual({
      type: 'MultiPolygon',
      coordinates: [
        [[[0, 0], [5, 0], [5, 5], [0, 5], [0, 0]], [[1, 1], [1, 4], [4, 4], [4, 1], [1, 1]]],
        [[[2, 2], [3, 2], [3, 3], [2, 3], [2, 2]]],
      ],
    });
    // The island touches the hole diagonally: still a separate component, hole still owned by the big ring.
    const [g] = checkAll(mask(['11111', '11..1', '1.1.1', '1...1', '11111']));
    expect(polygons(g).map((p) => p.length)).toEqual([2, 1]);
  });

  it('labels on the border and a label filling the image', () => {
    checkAll(mask(['12', '34']));
    const [f] = checkAll(mask(['111', '111']));
    expect(f.geometry.coordinates).toEqual([[[0, 0], [3, 0], [3, 2], [0, 2], [0, 0]]]);
    checkAll(mask(['1']));
    checkAll(mask(['1.1.1']));
    checkAll(mask(['1', '.', '1']));
  });

  it('single-pixel labels', () => {
    const fs = checkAll(mask(['1.2', '...', '3.4']));
    expect(fs.map((f) => f.properties.area)).toEqual([1, 1, 1, 1]);
  });

  it('features come by top row, then by label, whatever the raster order within a row, with 16 and 32-bit label values', () => {
    const data = new Uint32Array([4294967295, 0, 7, 7, 0, 65536]);
    const fs = checkAll({ width: 3, height: 2, data });
    expect(fs.map((f) => f.id)).toEqual([7, 4294967295, 65536]);
    const fs16 = checkAll({ width: 2, height: 2, data: new Uint16Array([65535, 3, 3, 65535]) });
    expect(fs16.map((f) => [f.id, polygons(f).length])).toEqual([[3, 2], [65535, 2]]);
  });

  it('a label of one outer ring and 360,000 holes (a tissue outline full of lumina) is one Polygon of every ring', () => {
    const W = 1200, H = 1200, data = new Uint8Array(W * H).fill(1);
    for (let y = 1; y < H - 1; y += 2) for (let x = 1; x < W - 1; x += 2) data[y * W + x] = 0;
    const [f, ...rest] = features({ width: W, height: H, data });
    expect(rest).toEqual([]);
    expect(f.geometry.type).toBe('Polygon');
    expect(f.geometry.coordinates).toHaveLength(1 + 599 * 599);
    expect(f.properties.area).toBe(W * H - 599 * 599);
  });

  it('empty and background-only masks give no features; a wrong data length is refused', () => {
    expect(features({ width: 0, height: 0, data: new Uint8Array(0) })).toEqual([]);
    expect(features({ width: 3, height: 2, data: new Uint8Array(6) })).toEqual([]);
    expect(() => features({ width: 3, height: 2, data: new Uint8Array(5) })).toThrow(RangeError);
  });

  it('rings come from one raster pass: each boundary edge once (ring count per label)', () => {
    const r = traceLabelRings(mask(['1111', '1..1', '1111', '2.2.']));
    expect(r.count).toBe(4);
    expect([...r.label]).toEqual([1, 1, 2, 2]);
  });
});

describe('labelsToFeatures: random masks', () => {
  it('keeps every invariant and reproduces the mask exactly', () => {
    const arb = fc.record({ width: fc.integer({ min: 1, max: 9 }), height: fc.integer({ min: 1, max: 9 }), labels: fc.integer({ min: 1, max: 4 }) })
      .chain(({ width, height, labels }) => fc.array(fc.integer({ min: 0, max: labels }), { minLength: width * height, maxLength: width * height })
        .map((values) => ({ width, height, data: Uint16Array.from(values) })));
    fc.assert(fc.property(arb, (m) => { checkAll(m); }), { numRuns: 400, seed: 20240601 });
  });

  it('holds on a larger mask with many labels, holes and touching shapes', () => {
    const width = 64, height = 48, data = new Uint32Array(width * height);
    let s = 12345;
    const rnd = () => { s = (s * 1103515245 + 12345) & 0x7fffffff; return s / 0x80000000; };
    for (let k = 1; k <= 40; k++) {
      const cx = rnd() * width, cy = rnd() * height, r = 2 + rnd() * 7, hole = rnd() < 0.3;
      for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
        const d = Math.hypot(x + 0.5 - cx, y + 0.5 - cy);
        if (d < r && !(hole && d < r / 2)) data[y * width + x] = k * 1000;
      }
    }
    checkAll({ width, height, data });
  });
});

/** A minimal uncompressed single-strip greyscale TIFF: sharp only writes 8-bit TIFF, masks come in 16 and 32 bits too. */
function tiff(width: number, height: number, data: Uint8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | BigInt64Array, sampleFormat: 1 | 2 | 3, photometric = 1, bits = data.BYTES_PER_ELEMENT * 8): Buffer {
  const entries: TiffEntry[] = [
    [256, 4, width], [257, 4, height], [258, 3, bits], [259, 3, 1], [262, 3, photometric], [273, 4, 0],
    [277, 3, 1], [278, 4, height], [279, 4, data.byteLength], [339, 3, sampleFormat],
  ];
  return littleEndianTiff(entries, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

describe('readLabelMask', () => {
  let dir = '';
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'mudm-mask-')); });
  afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

  // A label with a hole next to a touching label and a two-component label on the border.
  const rows = ['111..3', '1.12.3', '11122.', '.....3'];
  const known = mask(rows);

  async function expectRoundTrip(path: string, values: ArrayLike<number>, type: typeof Uint8Array | typeof Uint16Array | typeof Uint32Array) {
    const m = await readLabelMask(path);
    expect(m.width).toBe(known.width);
    expect(m.height).toBe(known.height);
    expect(m.data).toBeInstanceOf(type);
    expect([...m.data]).toEqual([...(values as number[])]);
    return m;
  }

  it('8-bit greyscale PNG', async () => {
    const data = Uint8Array.from(known.data);
    const path = join(dir, 'm8.png');
    await sharp(data, { raw: { width: known.width, height: known.height, channels: 1 } }).toColourspace('b-w').png().toFile(path);
    const m = await expectRoundTrip(path, data, Uint8Array);
    const fs = checkAll(m);
    expect(fs.map((f) => [f.id, f.properties.area, f.geometry.type])).toEqual([[1, 8, 'Polygon'], [3, 3, 'MultiPolygon'], [2, 3, 'Polygon']]);
    expect(fs[0].geometry.coordinates).toHaveLength(2);
  });

  it('16-bit greyscale PNG keeps labels above 255', async () => {
    const data = Uint16Array.from(known.data, (v) => (v === 0 ? 0 : v * 20000 + 7));
    const path = join(dir, 'm16.png');
    await sharp(data, { raw: { width: known.width, height: known.height, channels: 1 } }).toColourspace('grey16').png().toFile(path);
    expect((await sharp(path).metadata()).bitsPerSample).toBe(16);
    const m = await expectRoundTrip(path, data, Uint16Array);
    expect(checkAll(m).map((f) => f.id)).toEqual([20007, 60007, 40007]);
  });

  it('8-bit TIFF written by sharp', async () => {
    const data = Uint8Array.from(known.data, (v) => v * 80);
    const path = join(dir, 'm8.tif');
    await sharp(data, { raw: { width: known.width, height: known.height, channels: 1 } }).toColourspace('b-w').tiff({ compression: 'lzw' }).toFile(path);
    await expectRoundTrip(path, data, Uint8Array);
  });

  it('16 and 32-bit TIFF, signed 32-bit and integral float TIFF', async () => {
    const d16 = Uint16Array.from(known.data, (v) => v * 21000);
    await writeFile(join(dir, 'm16.tif'), tiff(known.width, known.height, d16, 1));
    await expectRoundTrip(join(dir, 'm16.tif'), d16, Uint16Array);

    const d32 = Uint32Array.from(known.data, (v) => (v === 0 ? 0 : 4294967296 - v * 1000003));
    await writeFile(join(dir, 'm32.tif'), tiff(known.width, known.height, d32, 1));
    const m = await expectRoundTrip(join(dir, 'm32.tif'), d32, Uint32Array);
    expect(checkAll(m).map((f) => f.properties.area)).toEqual([3, 8, 3]);

    const i32 = Int32Array.from(known.data, (v) => v * 100000);
    await writeFile(join(dir, 'i32.tif'), tiff(known.width, known.height, i32, 2));
    await expectRoundTrip(join(dir, 'i32.tif'), i32, Uint32Array);

    const f32 = Float32Array.from(known.data, (v) => v * 3);
    await writeFile(join(dir, 'f32.tif'), tiff(known.width, known.height, f32, 3));
    await expectRoundTrip(join(dir, 'f32.tif'), f32, Uint32Array);
  });

  it('refuses negative or fractional labels, colour images, JPEG, and missing files with ImageError', async () => {
    await writeFile(join(dir, 'neg.tif'), tiff(2, 1, Int32Array.from([1, -4]), 2));
    await expect(readLabelMask(join(dir, 'neg.tif'))).rejects.toThrow('label value -4 at pixel (1, 0) is not a non-negative integer below 2^32');
    // Signed 16-bit: read when no label is negative; a negative one (which the decoder would clamp to 0) refused.
    await writeFile(join(dir, 'i16.tif'), tiff(3, 1, Int16Array.from([0, 7, 32767]), 2));
    expect([...(await readLabelMask(join(dir, 'i16.tif'))).data]).toEqual([0, 7, 32767]);
    await writeFile(join(dir, 'neg16.tif'), tiff(3, 2, Int16Array.from([0, 5, 5, 0, -300, 5]), 2));
    const neg16 = await readLabelMask(join(dir, 'neg16.tif')).catch((e: unknown) => e);
    expect(neg16).toBeInstanceOf(ImageError);
    expect((neg16 as ImageError).reason).toBe('label value -300 at pixel (1, 1) is negative: labels are non-negative integers; save the labels as unsigned 16 or 32-bit integers');
    await writeFile(join(dir, 'frac.tif'), tiff(2, 1, Float32Array.from([1, 2.5]), 3));
    await expect(readLabelMask(join(dir, 'frac.tif'))).rejects.toThrow(ImageError);

    await sharp({ create: { width: 4, height: 4, channels: 3, background: '#123456' } }).png().toFile(join(dir, 'rgb.png'));
    await expect(readLabelMask(join(dir, 'rgb.png'))).rejects.toThrow(/single-channel greyscale.*3 channels/);
    await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } }).jpeg().toFile(join(dir, 'm.jpg'));
    await expect(readLabelMask(join(dir, 'm.jpg'))).rejects.toThrow(/JPEG is lossy/);
    // A JPEG-compressed TIFF (sharp's TIFF default of some tools): its artefacts would be labels of their own.
    const raw = Uint8Array.from({ length: 64 * 64 }, (_, i) => ((i % 64) >> 4) + ((i >> 10) << 2));
    const grey = () => sharp(raw, { raw: { width: 64, height: 64, channels: 1 } }).toColourspace('b-w');
    await grey().tiff({ compression: 'jpeg' }).toFile(join(dir, 'jpeg.tif'));
    await expect(readLabelMask(join(dir, 'jpeg.tif'))).rejects.toThrow('a label mask must be stored losslessly, this TIFF is compressed with JPEG: write it with no, LZW or Deflate compression');
    await grey().tiff({ compression: 'lzw' }).toFile(join(dir, 'lzw.tif'));
    expect(new Set((await readLabelMask(join(dir, 'lzw.tif'))).data).size).toBe(16);
    const missing = join(dir, 'nope.png');
    const err = await readLabelMask(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageError);
    expect((err as ImageError).path).toBe(missing);
    expect((err as ImageError).reason).toBe('no such file');
  });

  it('refuses what would turn labels into others without a word: JPEG past the first 64 KiB, below 8 bits, WhiteIsZero, pages of a stack', async () => {
    // libvips writes a TIFF's directory after its data: a JPEG mask of 75 KB has it past the first 64 KiB.
    const W = 600, cells = new Uint8Array(W * W);
    for (let y = 0; y < W; y++) for (let x = 0; x < W; x++) if ((x % 30 - 15) ** 2 + (y % 30 - 15) ** 2 < 100) cells[y * W + x] = 1 + ((((y / 30) | 0) * 20 + ((x / 30) | 0)) % 255);
    await sharp(cells, { raw: { width: W, height: W, channels: 1 } }).toColourspace('b-w').tiff({ compression: 'jpeg' }).toFile(join(dir, 'big-jpeg.tif'));
    expect((await readFile(join(dir, 'big-jpeg.tif'))).length).toBeGreaterThan(65536);
    await expect(readLabelMask(join(dir, 'big-jpeg.tif'))).rejects.toThrow('this TIFF is compressed with JPEG');
    // A 4-bit grey PNG: the decoder scales 1…12 to 17…204.
    await writeFile(join(dir, 'g4.png'), png(240, 20, 4, Buffer.concat(Array.from({ length: 20 }, () => Buffer.from([0, ...Array.from({ length: 120 }, (_, i) => (((2 * i / 20) | 0) + 1) << 4 | ((((2 * i + 1) / 20) | 0) + 1))])))));
    await expect(readLabelMask(join(dir, 'g4.png'))).rejects.toThrow('a label mask needs 8, 16 or 32-bit samples, this one has 4-bit samples');
    // 64-bit samples (scikit-image's int64 labels) are read from strips or tiles, which libvips does not read; compressed
    // otherwise (ZSTD), they are named for what they are, not as a corrupt header.
    const wide: TiffEntry[] = [
      [256, 4, 16], [257, 4, 16], [258, 3, 64], [259, 3, 50000], [262, 3, 1], [277, 3, 1], [322, 3, 16], [323, 3, 16], [324, 4, 0], [325, 4, 2048], [339, 3, 2],
    ];
    const wideCells = BigInt64Array.from({ length: 24 * 20 }, (_, i) => BigInt(i % 7));
    await writeFile(join(dir, 'i64-tiled.tif'), stripTiff(wideCells, { width: 24, height: 20, rowsPerStrip: 20, compression: 8, tile: [16, 16] }));
    expect(Array.from((await readLabelMask(join(dir, 'i64-tiled.tif'))).data)).toEqual(Array.from(wideCells, Number));
    await writeFile(join(dir, 'i64-zstd.tif'), littleEndianTiff(wide, new Uint8Array(2048)));
    const zstd = await readLabelMask(join(dir, 'i64-zstd.tif')).catch((e: unknown) => e);
    expect(zstd).toBeInstanceOf(ImageError);
    expect([(zstd as ImageError).exitCode, (zstd as ImageError).reason]).toEqual([3, 'this TIFF has 64-bit samples, which are read from TIFFs of one channel only (uncompressed, LZW, Deflate or PackBits): save the labels as 32 or 16-bit unsigned integers (numpy: labels.astype(np.uint32))']);
    await writeFile(join(dir, 'i64.tif'), tiff(2, 1, BigInt64Array.from([0n, 7n]), 2));
    expect(Array.from((await readLabelMask(join(dir, 'i64.tif'))).data)).toEqual([0, 7]);
    // WhiteIsZero: every label would read as its complement, the background as a label.
    await writeFile(join(dir, 'white.tif'), tiff(2, 1, Uint16Array.from([0, 3]), 1, 0));
    await expect(readLabelMask(join(dir, 'white.tif'))).rejects.toThrow(/stores grey as WhiteIsZero/);
    // A z-stack of 3 slices: one plane would be read.
    const stack = Uint8Array.from({ length: 20 * 60 }, (_, i) => 1 + Math.floor(i / 400));
    await sharp(stack, { raw: { width: 20, height: 60, channels: 1, pageHeight: 20 } }).toColourspace('b-w').tiff({ compression: 'lzw' }).toFile(join(dir, 'stack.tif'));
    await expect(readLabelMask(join(dir, 'stack.tif'))).rejects.toThrow('this TIFF holds 3 pages of 20 × 20 px (a z-stack, a time series or channels), and a label mask is one plane');
    // A TIFF cut short: named as a TIFF that cannot be decoded, not as no image at all.
    const whole = await readFile(join(dir, 'stack.tif'));
    await writeFile(join(dir, 'cut.tif'), whole.subarray(0, 16));
    await expect(readLabelMask(join(dir, 'cut.tif'))).rejects.toThrow('the file starts as a TIFF but cannot be decoded (cut short or damaged?)');
    // A pyramid's pages are each half the size before: its first page is the mask.
    await sharp(cells, { raw: { width: W, height: W, channels: 1 } }).toColourspace('b-w').tiff({ compression: 'lzw', pyramid: true, tile: true }).toFile(join(dir, 'pyramid.tif'));
    expect((await readLabelMask(join(dir, 'pyramid.tif'))).width).toBe(W);
  });

  it('reads a TIFF whose first page is a smaller picture (an overview, a pyramid stored smallest first) at its largest page, with that page\'s pixel size', async () => {
    const page = (width: number, height: number, data: Uint16Array, cmPerPixel: number): { entries: TiffEntry[]; strip: Uint8Array } => ({
      entries: [
        [256, 4, width], [257, 4, height], [258, 3, 16], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, height],
        [279, 4, data.byteLength], [282, 5, [Math.round(1 / cmPerPixel), 1]], [283, 5, [Math.round(1 / cmPerPixel), 1]], [296, 3, 3], [339, 3, 1],
      ],
      strip: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    });
    const full = Uint16Array.from(known.data, (v) => v * 300);
    // The overview: 3 × 2 px of one label at 2 µm a pixel (2e-4 cm); the mask at 0.25 µm.
    const file = join(dir, 'overview-first.tif');
    await writeFile(file, littleEndianPages([page(3, 2, new Uint16Array(6).fill(9), 2e-4), page(known.width, known.height, full, 2.5e-5)]));
    const m = await expectRoundTrip(file, full, Uint16Array);
    expect(m.pixelSize).toEqual({ x: 0.25, y: 0.25, unitX: 'micrometer', unitY: 'micrometer' });
    expect(checkAll(m).map((f) => f.id)).toEqual([300, 900, 600]);
  });

  it('names a compression the decoder lacks (tifffile writes ZSTD, LZMA): not libvips\' "support is not configured"', async () => {
    for (const [code, name] of [[50000, 'ZSTD'], [34925, 'LZMA']] as const) {
      const entries: TiffEntry[] = [[256, 4, 4], [257, 4, 2], [258, 3, 16], [259, 3, code], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, 2], [279, 4, 16]];
      await writeFile(join(dir, `${name}.tif`), littleEndianTiff(entries, new Uint8Array(16).fill(7)));
      const err = await readLabelMask(join(dir, `${name}.tif`)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ImageError);
      expect((err as ImageError).reason).toBe(`this TIFF is compressed with ${name}, which is not decoded here: write the mask with no, LZW, Deflate or PackBits compression (tiffcp -c zip IN.tif OUT.tif; tifffile: compression='zlib')`);
    }
  });

  it('reads grey values as labels whatever ICC profile the file carries (gamma 2.2: labels 1…12 read as 5 of them)', async () => {
    const row = Buffer.from([0, ...Array.from({ length: 240 }, (_, x) => ((x / 20) | 0) + 1)]);
    await writeFile(join(dir, 'icc.png'), png(240, 20, 8, Buffer.concat(Array.from({ length: 20 }, () => row)), greyProfile(2.2)));
    const m = await readLabelMask(join(dir, 'icc.png'));
    const counts = new Map<number, number>();
    for (const v of m.data) counts.set(v, (counts.get(v) ?? 0) + 1);
    expect([...counts]).toEqual(Array.from({ length: 12 }, (_, i) => [i + 1, 400]));
  });

  it('greyscale with alpha: the alpha band is dropped', async () => {
    const data = new Uint8Array(known.width * known.height * 2);
    known.data.forEach((v, i) => { data[2 * i] = v; data[2 * i + 1] = 255; });
    const path = join(dir, 'ga.png');
    await sharp(data, { raw: { width: known.width, height: known.height, channels: 2 } }).toColourspace('b-w').png().toFile(path);
    const meta = await sharp(path).metadata();
    expect(meta.channels).toBe(2);
    await expectRoundTrip(path, known.data, Uint8Array);
  });
});

/** A greyscale PNG of `bits`-bit samples from filtered rows (a 0 filter byte before each), with an ICC profile when given. */
function png(width: number, height: number, bits: number, rows: Buffer, icc?: Buffer): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0); ihdr.writeUInt32BE(height, 4); ihdr[8] = bits;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr),
    ...(icc ? [chunk('iCCP', Buffer.concat([Buffer.from('Gray\0\0', 'latin1'), deflateSync(icc)]))] : []),
    chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A grey ICC profile (v2.1) whose tone curve is `gamma`, as Photoshop's "Gray Gamma 2.2" carries. */
function greyProfile(gamma: number): Buffer {
  const s15 = (v: number) => { const b = Buffer.alloc(4); b.writeInt32BE(Math.round(v * 65536)); return b; };
  const white = Buffer.concat([s15(0.9642), s15(1), s15(0.8249)]);
  const u32 = (v: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(v); return b; };
  const tags: [string, Buffer][] = [
    ['desc', Buffer.concat([Buffer.from('desc\0\0\0\0', 'latin1'), u32(9), Buffer.from('Gray 2.2\0', 'latin1'), Buffer.alloc(79)])],
    ['wtpt', Buffer.concat([Buffer.from('XYZ \0\0\0\0', 'latin1'), white])],
    ['kTRC', Buffer.concat([Buffer.from('curv\0\0\0\0', 'latin1'), u32(1), Buffer.from([Math.floor(gamma), Math.round((gamma % 1) * 256), 0, 0])])],
    ['cprt', Buffer.from('text\0\0\0\0none\0\0\0\0', 'latin1')],
  ];
  const tableEnd = 128 + 4 + 12 * tags.length;
  const table: Buffer[] = [u32(tags.length)];
  const data: Buffer[] = [];
  let at = tableEnd;
  for (const [sig, body] of tags) {
    const pad = (4 - (at % 4)) % 4;
    if (pad) { data.push(Buffer.alloc(pad)); at += pad; }
    table.push(Buffer.from(sig, 'latin1'), u32(at), u32(body.length));
    data.push(body);
    at += body.length;
  }
  const header = Buffer.concat([
    u32(at), Buffer.from('lcms', 'latin1'), u32(0x02100000), Buffer.from('mntrGRAYXYZ ', 'latin1'), Buffer.alloc(12),
    Buffer.from('acspAPPL', 'latin1'), Buffer.alloc(24), white, Buffer.from('lcms', 'latin1'), Buffer.alloc(44),
  ]);
  return Buffer.concat([header, ...table, ...data]);
}
