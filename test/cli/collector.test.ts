// The collection the CLI hands a build: it frees what the reading thread let go of, and a build calls it once, after reading.
import { describe, expect, it } from 'vitest';
import { fullCollection } from '../../src/cli/collector.js';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';

describe('fullCollection', () => {
  it('frees array buffers nothing refers to any more (a band of mask pixels)', () => {
    const collect = fullCollection();
    if (collect === undefined) throw new Error('V8 gave no collector');
    let band: Uint8Array | undefined = new Uint8Array(256 << 20).fill(1);
    const held = process.memoryUsage().arrayBuffers;
    expect(held).toBeGreaterThanOrEqual(256 << 20);
    band = undefined;
    collect();
    expect(band).toBeUndefined();
    // What else the process holds may come and go meanwhile: the band's 256 MiB, give or take a few, are gone.
    expect(held - process.memoryUsage().arrayBuffers).toBeGreaterThan(240 << 20);
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
});
