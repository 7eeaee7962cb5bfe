// A Polygon whose hole lies beyond its exterior ring (invalid, as shapely or GEOS would say): warned of, and its tiles
// still hold only positions inside each buffered tile, so the build's own verify passes them.
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { memoryReader, verifyPyramid } from '../../src/inspect/index.js';
import { validateFeature } from '../../src/validate/index.js';
import type { BuildReport } from '../../src/report/types.js';
import { NEAR_PIECES } from '../../src/stages/record-stream.js';

const square = (x: number, y: number, s: number) => [[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]];
const polygon = (rings: number[][][]) => ({ type: 'Feature', id: 1, properties: {}, geometry: { type: 'Polygon', coordinates: rings } });

describe('a hole beyond its polygon\'s exterior', () => {
  it('is warned of at the hole, with both boxes; a hole inside is not', () => {
    const issues = validateFeature(polygon([square(0, 0, 100), square(20, 20, 10), square(200, 200, 100)]), '');
    expect(issues).toEqual([{
      code: 'hole-outside-exterior', severity: 'warning', path: '/geometry/coordinates/2',
      message: 'hole 2 reaches beyond its polygon\'s exterior ring: its box [200,200,300,300] is not within the exterior\'s [0,0,100,100]; renderers fill what lies outside, as if it were more polygon',
    }]);
    expect(validateFeature(polygon([square(0, 0, 100), square(20, 20, 10)]), '')).toEqual([]);
  });

  it('is cut to each tile like any ring, so verify finds every position inside its buffered tile', async () => {
    const text = [JSON.stringify(polygon([square(0, 0, 100), square(200, 200, 100)])), JSON.stringify({ type: 'Feature', id: 2, properties: {}, geometry: { type: 'Point', coordinates: [500, 500] } })].join('\n');
    const sink = new MemorySink();
    const report: BuildReport = await buildPyramid([{ source: memorySource('h.ndjson', text) }], { workers: 1 }, { sink });
    expect(report.features.warningsByCode).toEqual({ 'hole-outside-exterior': 1 });
    const files = new Map([...sink.files].map(([k, v]) => [k, Buffer.from(v)]));
    const v = verifyPyramid(memoryReader(files));
    expect(v.problems).toEqual([]);
    expect(v.ok).toBe(true);
    // The tile of the exterior (0 to 256 px, and 4 px of buffer) holds it, and the hole cut at its buffered edge.
    const tile = JSON.parse(files.get('1/0/0.json')!.toString('utf8')) as { features: { geometry: { coordinates: number[][][] } }[] };
    const [exterior, hole] = tile.features[0].geometry.coordinates;
    expect(exterior).toEqual(square(0, 0, 100));
    expect(Math.max(...hole.flat())).toBe(260);
    expect(Math.min(...hole.flat())).toBe(200);
  });

  it('of one piece of a feature of many is painted in the preview alike whatever the cells', async () => {
    // 4,096 px, cells of 256: NEAR_PIECES specks along the top, and a square at (300, 300) whose hole lies at
    // (2000, 2000), in cells the exterior does not reach. The preview fills the hole (even-odd), so the unit of its
    // cells must read the square: a piece is near a cell by the box of all its rings, not of its exterior alone.
    const specks = Array.from({ length: NEAR_PIECES }, (_, i) => [square(10 + 60 * i, 10, 4)]);
    const text = JSON.stringify({ type: 'Feature', id: 1, properties: {}, geometry: { type: 'MultiPolygon', coordinates: [...specks, [square(300, 300, 100), square(2000, 2000, 300).reverse()]] } });
    const preview = async (unitSize: number) => {
      const sink = new MemorySink();
      await buildPyramid([{ source: memorySource('h.json', text) }], { workers: 1, imageSize: '4096,4096', maxZoom: 4, preview: true, unitSize }, { sink });
      return Buffer.from(sink.files.get('preview/preview.png') as Uint8Array);
    };
    const whole = await preview(4096);
    expect((await preview(256)).equals(whole)).toBe(true);
  });
});
