// A shard still running when finalize ends (a duplicate an engine started, a late retry): the finished output stays as it is.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildShard, finalizeShardedBuild, planShardedBuild } from '../../src/build/pipeline.js';
import { fileSource } from '../../src/io/read.js';
import { squareCoords, tmpDir, treeDifferences } from '../helpers/pyramid.js';

const OPTS = { imageSize: '2048,2048', unitSize: 256, workers: 1 } as const;

describe('a shard whose work directory finalize removed while it ran', () => {
  it('ends as a shard run after finalize does (nothing to do), and makes no work directory again in the finished output', async () => {
    const dir = tmpDir('mudm-shard-late');
    const file = path.join(dir, 'cells.json');
    // Squares spread over the world: each shard has many units.
    fs.writeFileSync(file, JSON.stringify({
      type: 'FeatureCollection',
      features: Array.from({ length: 64 }, (_, i) => ({
        type: 'Feature', id: i + 1, properties: {}, geometry: { type: 'Polygon', coordinates: squareCoords((i % 8) * 256 + 40, Math.floor(i / 8) * 256 + 40, 60) },
      })),
    }));
    // What the other attempt's finalize leaves: a sharded build's output, whose report names its shards.
    const one = path.join(dir, 'one');
    await planShardedBuild([{ source: fileSource(file) }], { ...OPTS, out: one, shards: 2 });
    for (const shard of [0, 1]) await buildShard({ out: one, workers: 1 }, shard);
    await finalizeShardedBuild({ out: one, workers: 1 });
    const out = path.join(dir, 'out');
    await planShardedBuild([{ source: fileSource(file) }], { ...OPTS, out, shards: 2 });
    await buildShard({ out, workers: 1 }, 0);
    const warnings: string[] = [];
    let done = false;
    // Once its first unit is tiled, another attempt's finalize ends: the output whole, its work directory gone.
    const finalizeEnds = (): void => {
      if (done) return;
      done = true;
      fs.cpSync(one, out, { recursive: true });
      fs.rmSync(path.join(out, '.mudm-work'), { recursive: true });
    };
    const r = await buildShard({ out, workers: 1 }, 1, { onWarning: (m) => warnings.push(m), onProgress: (e) => { if (e.phase === 'tile') finalizeEnds(); } });
    expect(done).toBe(true);
    expect(r.finalized).toBe(true);
    expect(warnings).toEqual([`${out} is finalized already (a complete output, its work directory gone): nothing for shard 1 to do`]);
    expect(fs.readdirSync(out).filter((n) => n.startsWith('.mudm-work')), 'a work directory made again, or left aside').toEqual([]);
    // The tiles and descriptor as finalize left them (the record of what was written has this shard's journal too).
    expect(treeDifferences(one, out).filter((f) => !f.startsWith('.mudm-written/'))).toEqual([]);
  });
});
