// QuPath input through buildPyramid in memory: the same bytes whatever the workers, spilling and sharding, nuclei included.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { fileSource, memorySource } from '../../src/io/read.js';
import { readTree, tmpDir } from '../helpers/pyramid.js';

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
    const a = readTree(local), b = readTree(sharded);
    a.delete('build-report.json'); b.delete('build-report.json');
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [p, bytes] of a) expect(b.get(p)?.equals(bytes), p).toBe(true);
  });
});
