// QuPath input through buildPyramid in memory: the same bytes whatever the workers, spilling and sharding, nuclei
// included; objects on every channel in every channel's tiles.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { fileSource, memorySource } from '../../src/io/read.js';
import { circleRing, decodePbf, squareCoords, tmpDir, treeDifferences, withoutReport, type DecodedFeature } from '../helpers/pyramid.js';

const SAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sample-data/qupath/qupath-0.4.geojson');
const TEXT = fs.readFileSync(SAMPLE, 'utf8');
const OPTS = { layerBy: 'objectType', nucleusFeatures: true, unitSize: 256, tileBudget: 8 * 1024 } as const;

/**
 * Builds `text` on disk on this machine (2 workers) and in shards run in `order` (their number): where the pyramids
 * differ (no file, when they are the same), and where the local one is.
 */
async function againstShards(name: string, text: string, opts: Record<string, unknown>, order: number[]): Promise<{ local: string; differences: string[] }> {
  const dir = tmpDir('mudm-qupath-shards');
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  const local = path.join(dir, 'local'), sharded = path.join(dir, 'sharded');
  await buildPyramid([{ source: fileSource(file) }], { ...opts, out: local, workers: 2 });
  await planShardedBuild([{ source: fileSource(file) }], { ...opts, out: sharded, shards: order.length, workers: 1 });
  for (const shard of order) await buildShard({ out: sharded, workers: 1 }, shard);
  await finalizeShardedBuild({ out: sharded, workers: 1 });
  return { local, differences: treeDifferences(local, sharded) };
}

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
    expect((await againstShards('cells.geojson', TEXT, OPTS, [0, 1])).differences).toEqual([]);
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


describe('QuPath objects on every channel (plane c -1, or none) among objects of channels 0, 1 and 2', () => {
  const plane = (c: number, z = 0) => ({ c, z, t: 0 });
  const features = [
    // An outline across most of the slide on every channel, written where QuPath writes it: in the geometry.
    { type: 'Feature', id: 'outline', properties: { objectType: 'annotation', classification: { name: 'Tumor', color: [200, 0, 0] } }, geometry: { type: 'Polygon', coordinates: [circleRing(1024, 1024, 700, 400)], plane: plane(-1) } },
    ...Array.from({ length: 30 }, (_, i) => ({
      type: 'Feature', id: `d${i}`, properties: { objectType: 'detection', channel: i % 3 },
      geometry: { type: 'Polygon', coordinates: squareCoords(100 + (i % 6) * 300, 150 + Math.floor(i / 6) * 350, 12), plane: plane(i % 3) },
    })),
    // No plane at all: QuPath's default plane, every channel; its nucleus goes with it.
    { type: 'Feature', id: 'cell', properties: { objectType: 'cell' }, geometry: { type: 'Polygon', coordinates: squareCoords(290, 290, 20) }, nucleusGeometry: { type: 'Polygon', coordinates: squareCoords(295, 295, 8) } },
    // On every channel of slice 1, where no object names a channel: each channel gets a plane at z 1 for it.
    { type: 'Feature', id: 'upper', properties: { objectType: 'annotation' }, geometry: { type: 'Point', coordinates: [1500, 400], plane: plane(-1, 1) } },
  ];
  const TEXT3 = JSON.stringify({ type: 'FeatureCollection', features });
  const OPTS3 = { imageSize: '2048,2048', unitSize: 256, maxZoom: 3, nucleusFeatures: true } as const;
  const build3 = async (opts: Record<string, unknown>) => {
    const sink = new MemorySink();
    const report = await buildPyramid([{ source: memorySource('channels.geojson', TEXT3, 1024) }], { ...OPTS3, ...opts }, { sink });
    return { sink, report };
  };
  /** The finest zoom's PBF tiles of plane (c, z) decoded: tile path → features. */
  const finest = (files: Map<string, Uint8Array>, c: number, z: number) => new Map([...files].flatMap(([p, b]): [string, DecodedFeature[]][] => {
    const m = new RegExp(`^3/${c}/${z}/(\\d+)/(\\d+)\\.pbf$`).exec(p);
    return m ? [[`${m[1]}/${m[2]}`, decodePbf(b, 2048, 3, Number(m[1]), Number(m[2]))]] : [];
  }));
  const ids = (tiles: Map<string, DecodedFeature[]>) => [...new Set([...tiles.values()].flat().map((f) => String(f.properties.id ?? f.properties.parentId)))].sort();

  it('puts each in the tiles of every channel at its own z, with the same id, properties and geometry', async () => {
    const { sink, report } = await build3({ workers: 1 });
    expect(report.world).toMatchObject({ dims: ['c', 'z'], planes: 6 });
    expect(report.features.everyChannel).toEqual({ features: 3, channels: [0, 1, 2] });
    const tileset = JSON.parse(Buffer.from(sink.files.get('tileset.json') as Uint8Array).toString('utf8')) as { bounds: number[] };
    expect(tileset.bounds).toEqual([0, 0, 0, 0, 0, 0, 2, 1, 2048, 2048]);
    const shared = (tiles: Map<string, DecodedFeature[]>) => new Map([...tiles].map(([at, fs]): [string, DecodedFeature[]] => [at, fs.filter((f) => f.properties.channel === undefined)]).filter(([, fs]) => fs.length > 0));
    const zero = finest(sink.files, 0, 0);
    for (const c of [0, 1, 2]) {
      const tiles = finest(sink.files, c, 0);
      expect(ids(tiles)).toEqual(['cell', 'outline', ...Array.from({ length: 10 }, (_, k) => `d${3 * k + c}`)].sort());
      // The objects on every channel: the same in the same tiles, to the last tag and vertex, as in channel 0.
      expect(shared(tiles)).toEqual(shared(zero));
      expect([...tiles.values()].flat().filter((f) => f.properties.channel !== undefined).every((f) => f.properties.channel === c)).toBe(true);
      const upper = [...finest(sink.files, c, 1).values()].flat();
      expect(upper.map((f) => [f.properties.id, f.rings])).toEqual([['upper', [[[1500, 400]]]]]);
    }
    // Where they are: the outline's disc in every tile of 256 px it meets (1024 ± 700: tiles 1 to 6, not the corners),
    // the cell and its nucleus in tile (1, 1).
    const where = (id: string) => [...zero].filter(([, fs]) => fs.some((f) => (f.properties.id ?? f.properties.parentId) === id)).map(([at]) => at).sort();
    const near = (i: number) => Math.max(i * 256, Math.min(1024, (i + 1) * 256)) - 1024;
    const disc = Array.from({ length: 64 }, (_, k) => [k % 8, Math.floor(k / 8)]).filter(([x, y]) => Math.hypot(near(x), near(y)) < 700).map(([x, y]) => `${x}/${y}`);
    expect(where('outline')).toEqual(disc.sort());
    expect(disc).toHaveLength(32);
    expect(where('cell')).toEqual(['1/1']);
    const cell = (zero.get('1/1') as DecodedFeature[]).filter((f) => f.properties.id === 'cell' || f.properties.parentId === 'cell');
    expect(cell.map((f) => [f.layer, f.properties.objectType, Math.min(...f.rings[0].map((p) => p[0])), Math.max(...f.rings[0].map((p) => p[0]))]))
      .toEqual([['channels', 'cell', 290, 310], ['nucleus', 'nucleus', 295, 303]]);
  });

  it('gives the same bytes with 1 or 2 workers, in memory or spilled, and sharded on disk', async () => {
    const one = withoutReport((await build3({ workers: 1 })).sink);
    expect(withoutReport((await build3({ workers: 2, memoryBudget: 1 })).sink)).toEqual(one);
    const { local, differences } = await againstShards('channels.geojson', TEXT3, OPTS3, [2, 0, 1]);
    expect(differences).toEqual([]);
    // Channel 2's plane at slice 1, which only an object on every channel made.
    expect(fs.existsSync(path.join(local, '3', '2', '1'))).toBe(true);
  });
});
