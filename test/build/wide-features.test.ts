// Features whose parts lie far from their box centre (an L-shaped line, a MultiPoint, a frame polygon) at every zoom and however the build is cut into units.
import { describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { decodePbf, sinkJson as json, squareCoords as square, withoutReport as strip } from '../helpers/pyramid.js';

async function build(opts: Record<string, unknown>, text: string) {
  const sink = new MemorySink();
  await buildPyramid([{ source: memorySource('cells.json', text) }], { workers: 1, memoryBudget: 64 * 1024 * 1024, ...opts }, { sink });
  return { sink };
}

describe('wide features', () => {
  it('draws at every zoom a feature that lies wholly outside the cell of its box centre (L-shaped line, MultiPoint, frame)', async () => {
    // Each of the first four lies in cells other than its centre's: the centre's unit placed nothing, so did not forward it.
    const sq = (x: number, y: number, d: number) => square(x, y, d)[0];
    const features = [
      { type: 'Feature', id: 1, properties: {}, geometry: { type: 'LineString', coordinates: [[100, 100], [8000, 100], [8000, 8000]] } },
      { type: 'Feature', id: 2, properties: {}, geometry: { type: 'MultiPoint', coordinates: [[100, 100], [8000, 8000]] } },
      { type: 'Feature', id: 3, properties: {}, geometry: { type: 'MultiPolygon', coordinates: [[sq(100, 100, 200)], [sq(7800, 7800, 200)]] } },
      { type: 'Feature', id: 4, properties: {}, geometry: { type: 'Polygon', coordinates: [sq(100, 100, 7900), sq(400, 400, 7300).reverse()] } },
      { type: 'Feature', id: 5, properties: {}, geometry: { type: 'Polygon', coordinates: square(3000, 3000, 100) } },
    ];
    const text = JSON.stringify({ type: 'FeatureCollection', features });
    const built = async (unitSize: number) => (await build({ imageSize: '16384,16384', unitSize, format: 'pbf' }, text)).sink;
    const sink = await built(2048);
    const report = json(sink, 'build-report.json') as { tiles: { byZoom: Record<string, { thinned: number }> } };
    for (let z = 0; z <= 5; z++) {
      const ids = new Set<unknown>();
      for (const [p, bytes] of sink.files) {
        const m = new RegExp(`^${z}/(\\d+)/(\\d+)\\.pbf$`).exec(p);
        if (m) for (const f of decodePbf(bytes, 16384, z, Number(m[1]), Number(m[2]))) ids.add(f.id);
      }
      expect([...ids].sort(), `zoom ${z}`).toEqual([1, 2, 3, 4, 5]);
      expect(report.tiles.byZoom[z].thinned, `zoom ${z}`).toBe(0);
    }
    // The pyramid does not depend on how it is cut into units.
    expect(strip(await built(16384))).toEqual(strip(sink));
  });

  it('writes no tile where a hole covers the whole tile (a frame polygon: nothing of it is there)', async () => {
    const sq = (x: number, y: number, d: number) => square(x, y, d)[0];
    const frame = { type: 'Feature', id: 4, properties: {}, geometry: { type: 'Polygon', coordinates: [sq(100, 100, 7900), sq(400, 400, 7300).reverse()] } };
    const { sink } = await build({ imageSize: '16384,16384', unitSize: 2048, maxZoom: 5 }, JSON.stringify({ type: 'FeatureCollection', features: [frame] }));
    // Zoom 5: 512-px tiles; (8, 8) spans 4096..4608, deep inside the hole. It held the frame with a hole equal to its exterior.
    expect(sink.files.has('5/8/8.pbf')).toBe(false);
    expect(sink.files.has('5/8/8.json')).toBe(false);
    // The band of the frame: tiles meeting it at zoom 5 are those of columns or rows 0 and 15 (16 tiles cover 0..8192).
    const z5 = [...sink.files.keys()].filter((p) => /^5\/\d+\/\d+\.pbf$/.test(p)).map((p) => p.split('/').slice(1).map((v) => parseInt(v, 10)));
    expect(z5.length).toBeGreaterThan(0);
    for (const [x, y] of z5) expect(x <= 0 || y <= 0 || x >= 15 || y >= 15, `tile 5/${x}/${y}`).toBe(true);
  });
});
