// QuPath input through buildPyramid in memory: the same bytes whatever the workers, spilling and sharding, nuclei included.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { fileSource, memorySource } from '../../src/io/read.js';
import { tmpDir, treeDifferences } from '../helpers/pyramid.js';

const SAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sample-data/qupath/qupath-0.4.geojson');
const TEXT = fs.readFileSync(SAMPLE, 'utf8');
const OPTS = { layerBy: 'objectType', nucleusFeatures: true, unitSize: 256, tileBudget: 8 * 1024 } as const;

/** Every file of a build but the report (its timings and run figures differ by design). */
async function build(opts: Record<string, unknown>): Promise<{ files: Map<string, string>; thinned: number }> {
  const sink = new MemorySink();
  const report = await buildPyramid([{ source: memorySource('cells.geojson', TEXT, 4096) }], { ...OPTS, ...opts }, { sink });
  const files = new Map([...sink.files].filter(([p]) => p !== 'build-report.json').map(([p, b]) => [p, Buffer.from(b).toString('base64')]));
  return { files, thinned: Object.values(report.tiles.byZoom).reduce((n, z) => n + z.thinned, 0) };
}

describe('QuPath input', () => {
  it('gives the same bytes with 1 or 3 workers, in memory or spilled, thinned at coarse zooms', async () => {
    const one = await build({ workers: 1 });
    expect([...one.files.keys()].filter((p) => p.endsWith('.pbf')).length).toBeGreaterThan(4);
    expect(one.thinned).toBeGreaterThan(0);
    expect((await build({ workers: 3 })).files).toEqual(one.files);
    expect((await build({ workers: 2, memoryBudget: 1 })).files).toEqual(one.files);
  });

  it('gives a sharded build the same tiles as a local one', async () => {
    const dir = tmpDir('mudm-qupath-shards');
    const file = path.join(dir, 'cells.geojson');
    fs.copyFileSync(SAMPLE, file);
    const local = path.join(dir, 'local'), sharded = path.join(dir, 'sharded');
    await buildPyramid([{ source: fileSource(file) }], { ...OPTS, out: local, workers: 2 });
    await planShardedBuild([{ source: fileSource(file) }], { ...OPTS, out: sharded, shards: 2, workers: 1 });
    for (const shard of [0, 1]) await buildShard({ out: sharded, workers: 1 }, shard);
    await finalizeShardedBuild({ out: sharded, workers: 1 });
    expect(treeDifferences(local, sharded)).toEqual([]);
  });

  it('keeps a cell whose nucleus is invalid or not placed, and says so as a warning, not as a feature lost', async () => {
    const square = (x: number, y: number, d: number) => [[[x, y], [x + d, y], [x + d, y + d], [x, y + d], [x, y]]];
    const cell = (id: string, x: number, nucleusGeometry: unknown) => ({
      type: 'Feature', id, geometry: { type: 'Polygon', coordinates: square(x, 10, 20) }, nucleusGeometry, properties: { objectType: 'cell' },
    });
    const cells = [
      cell('kept', 10, { type: 'Polygon', coordinates: square(15, 15, 5) }),
      cell('far', 40, { type: 'Point', coordinates: [5000, 5000] }),
      cell('open', 70, { type: 'Polygon', coordinates: [[[72, 12], [75, 12], [75, 15], [72, 15]]] }),
    ];
    const sink = new MemorySink();
    const text = JSON.stringify({ type: 'FeatureCollection', features: cells });
    const report = await buildPyramid([{ source: memorySource('cells.geojson', text) }], { nucleusFeatures: true, imageSize: '100,100', maxZoom: 1, workers: 1 }, { sink });
    expect(report.features).toMatchObject({ read: 3, valid: 3, invalid: 0, notPlaced: {}, warningsByCode: { 'nucleus-dropped': 2 } });
    expect(report.features.samples.map((x) => [x.feature, x.path, x.message])).toEqual([
      [1, '/nucleusGeometry', 'the nucleus is not placed (outside-image); the cell is kept without its nucleus'],
      [2, '/nucleusGeometry/coordinates/0', expect.stringMatching(/^.* \[ring-not-closed\]; the cell is kept without its nucleus$/)],
    ]);
    type Tile = { features: { id?: string; parentId?: string; properties: { objectType: string } }[] };
    const drawn = [...sink.files].filter(([p]) => /^1\/\d+\/\d+\.json$/.test(p)).flatMap(([, b]) => (JSON.parse(Buffer.from(b).toString('utf8')) as Tile).features);
    const of = (type: string, key: 'id' | 'parentId') => [...new Set(drawn.filter((f) => f.properties.objectType === type).map((f) => f[key]))].sort();
    expect(of('cell', 'id')).toEqual(['far', 'kept', 'open']);
    expect(of('nucleus', 'parentId')).toEqual(['kept']);
  });
});

