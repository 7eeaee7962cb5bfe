// The collection the CLI hands a build: it frees what the reading thread let go of, a build calls it once, after reading,
// and a worker collects its own after a batch the build marks heavy.
import { describe, expect, it } from 'vitest';
import { fullCollection } from '../../src/worker/collector.js';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { createPool } from '../../src/worker/pool.js';
import { COLLECT_HEAP, type TileBatch } from '../../src/worker/protocol.js';
import { resolveBuildConfig } from '../../src/options.js';

describe('fullCollection', () => {
  it('collects array buffers nothing refers to any more (a band of mask pixels)', async () => {
    const collect = fullCollection();
    if (collect === undefined) throw new Error('V8 gave no collector');
    let band: Uint8Array | undefined = new Uint8Array(256 << 20).fill(1);
    const ref = new WeakRef(band);
    band = undefined;
    // A WeakRef keeps its target to the end of the job that made it: collect in a later one.
    await new Promise((resolve) => setImmediate(resolve));
    collect();
    // Collected, not only counted: the bytes' own release runs on a background thread after the collection (in CI
    // `process.memoryUsage().arrayBuffers` still held them when checked right after), so the test asks the collector.
    expect(ref.deref()).toBeUndefined();
  });

  it('is called by a build once, when reading is done and before any tile is written', async () => {
    const features = Array.from({ length: 50 }, (_, i) => ({ type: 'Feature', id: i, properties: {}, geometry: { type: 'Point', coordinates: [i * 10, i * 5] } }));
    const sink = new MemorySink();
    const tilesAtCollect: number[] = [];
    await buildPyramid([{ source: memorySource('cells.json', JSON.stringify({ type: 'FeatureCollection', features })) }], { maxZoom: 2, workers: 1 }, {
      sink, collect: () => { tilesAtCollect.push(sink.files.size); },
    });
    expect(tilesAtCollect).toEqual([0]);
    expect(sink.files.size).toBeGreaterThan(0);
  });

  it('runs in a worker after a batch marked to collect where its heap in use reaches the mark, and only then', async () => {
    const pool = createPool(1);
    try {
      const o = resolveBuildConfig({}).options;
      const spec = { side: 4096, minZoom: 0, maxZoom: 2, finestZoom: 2, layers: [{ id: 'cells' }], formats: { json: false, pbf: true }, lod: 'auto', tileBudget: o.tileBudget, collection: {} };
      const batch = (collect?: number): TileBatch => ({ kind: 'tiles', spec: spec as TileBatch['spec'], dims: [], units: [], collect });
      expect((await pool.tile(batch(0))).collected).toBe(true);
      expect((await pool.tile(batch())).collected).toBeUndefined();
      // Not where the heap in use is under what the batch names (a thread that tiled nothing holds a few MB).
      expect((await pool.tile(batch(COLLECT_HEAP))).collected).toBeUndefined();
      // Found once, then called again from the thread's own.
      expect((await pool.tile(batch(0))).collected).toBe(true);
    } finally {
      await pool.close();
    }
  });
});
