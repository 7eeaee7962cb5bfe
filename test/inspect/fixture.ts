// A small known pyramid for inspect, verify and viewer tests: squares at known pixel positions, three featureClass values.
import { buildPyramid, type InputSpec } from '../../src/build/pipeline.js';
import { MemorySink, type TileSink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import type { Options } from '../../src/options.js';

export const square = (x: number, y: number, s: number): number[][][] => [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]];

/** The squares: id, featureClass, top-left corner and side in image pixels (image 1000 × 600, world 1024). */
export const SQUARES = [
  { id: 1, featureClass: 'alpha', x: 100, y: 100, s: 80, label: 1 },
  { id: 2, featureClass: 'beta', x: 600, y: 300, s: 90, label: 2 },
  // Crosses the zoom-2 tile borders at x = 512 and y = 256: clipped into four tiles.
  { id: 3, featureClass: 'gamma', x: 470, y: 210, s: 84, label: 3 },
  { id: 4, featureClass: 'alpha', x: 820, y: 440, s: 70, label: 4 },
] as const;

export function features(): object[] {
  const out: object[] = SQUARES.map((q) => ({
    type: 'Feature', id: q.id, featureClass: q.featureClass,
    properties: { label: q.label, score: q.label / 10, note: `square ${q.id}` },
    geometry: { type: 'Polygon', coordinates: square(q.x, q.y, q.s) },
  }));
  out.push(
    { type: 'Feature', id: 'cell-x', featureClass: 'beta', parentId: 1, properties: { label: 5, tags: ['a', 'b'], empty: null }, geometry: { type: 'Point', coordinates: [130.5, 140.25] } },
    { type: 'Feature', id: 6, properties: { label: 6 }, geometry: { type: 'LineString', coordinates: [[20, 580], [980, 20]] } },
    { type: 'Feature', id: 7, featureClass: 'gamma', properties: { label: 7 }, geometry: { type: 'Polygon', coordinates: [square(300, 400, 100)[0], [[320, 420], [320, 460], [360, 460], [360, 420], [320, 420]]] } },
  );
  return out;
}

export function collection(): string {
  return JSON.stringify({ type: 'FeatureCollection', properties: { slide: 'squares' }, features: features() });
}

export const BUILD_OPTIONS: Partial<Options> = { imageSize: '1000,600', maxZoom: 2, unitSize: 256, workers: 1, memoryBudget: 64 * 1024 * 1024 };

/** Builds the squares into a sink (memory by default) or, with `out`, a directory. */
export async function buildSquares(opts: Partial<Options> & { sink?: TileSink } = {}, inputs?: InputSpec[]): Promise<MemorySink | undefined> {
  const { sink, ...rest } = opts;
  const memory = rest.out === undefined ? (sink as MemorySink | undefined) ?? new MemorySink() : undefined;
  await buildPyramid(inputs ?? [{ source: memorySource('cells.json', collection()) }], { ...BUILD_OPTIONS, ...rest }, memory ? { sink: memory } : {});
  return memory;
}
