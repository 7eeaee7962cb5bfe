// Each layer's `feature_ids`: whether its PBF ids are the input's ids, the build's sequence numbers, or both, as the tiles hold them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, finalizeShardedBuild, planShardedBuild, type InputSpec } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { fileSource, memorySource } from '../../src/io/read.js';
import { decodePbf, sinkJson, squareCoords, tmpDir } from '../helpers/pyramid.js';

const OPTS = { imageSize: '1024,1024', maxZoom: 1, unitSize: 256, workers: 1, memoryBudget: 64 * 1024 * 1024, nucleusFeatures: true } as const;

/** A square feature at (x, y) with `id` when given: nothing else of the feature matters here. */
const at = (x: number, y: number, id?: number | string): object => ({ type: 'Feature', ...(id === undefined ? {} : { id }), properties: { x }, geometry: { type: 'Polygon', coordinates: squareCoords(x, y, 20) } });

/** Per input (its layer): features in input order; the sequence numbers run on from one input to the next. */
const INPUTS: Record<string, object[]> = {
  given: [at(100, 100, 10), at(200, 100, 11)],
  none: [at(100, 300), at(200, 300)],
  // A string id is kept as property `id`: the PBF id is the feature's sequence number all the same.
  named: [at(100, 500, 'a'), at(200, 500, 'b')],
  mixed: [at(100, 700, 70), at(200, 700)],
  // A QuPath 0.2 cell: no id; its nucleus is made a feature of layer `nucleus`, numbered 2^52 + the cell's number.
  qupath: [{
    type: 'Feature', id: 'PathCellObject', geometry: { type: 'Polygon', coordinates: squareCoords(600, 100, 40) },
    nucleusGeometry: { type: 'Polygon', coordinates: squareCoords(610, 110, 10) }, properties: { object_type: 'cell' },
  }],
  // Integer and string ids: the string one's PBF id is its sequence number, but a reader shows its property `id`.
  both: [at(100, 900, 90), at(200, 900, 'z')],
};
const WANT = { given: 'input', none: 'sequence', named: 'sequence', mixed: 'mixed', qupath: 'sequence', both: 'input', nucleus: 'sequence' };
/** The PBF ids each layer's features must have: the input's, else their sequence numbers (0 to 10 in input order). */
const WANT_IDS = { given: [10, 11], none: [2, 3], named: [4, 5], mixed: [7, 70], qupath: [8], both: [10, 90], nucleus: [2 ** 52 + 8] };

const inputs = (): InputSpec[] => Object.entries(INPUTS).map(([name, features]) => ({ source: memorySource(`${name}.json`, JSON.stringify({ type: 'FeatureCollection', features })) }));
const idsFrom = (d: Record<string, unknown>) => Object.fromEntries((d.vector_layers as Array<{ id: string; feature_ids?: unknown }>).map((l) => [l.id, l.feature_ids]));

describe('feature_ids', () => {
  it('says per layer whose numbers its PBF ids are, in tileset.json and the overview, as its tiles hold them', async () => {
    const sink = new MemorySink();
    const warnings: string[] = [];
    await buildPyramid(inputs(), OPTS, { sink, onWarning: (m, f) => warnings.push(String(f?.event)) });
    expect(idsFrom(sinkJson(sink, 'tileset.json'))).toEqual(WANT);
    expect(idsFrom(sinkJson(sink, '0/0/0.json'))).toEqual(WANT);
    // The layers of integer ids and others are those the build warns of: two features may share a PBF id in each.
    expect(warnings.filter((w) => w === 'mixed-ids')).toHaveLength(2);
    const ids: Record<string, number[]> = {};
    for (const [p, bytes] of sink.files) {
      const m = /^1\/(\d+)\/(\d+)\.pbf$/.exec(p);
      if (!m) continue;
      for (const f of decodePbf(bytes, 1024, 1, Number(m[1]), Number(m[2]))) (ids[f.layer] ??= []).push(f.id as number);
    }
    expect(Object.fromEntries(Object.entries(ids).map(([l, v]) => [l, [...new Set(v)].sort((a, b) => a - b)]))).toEqual(WANT_IDS);
  });

  it('says the same after a sharded build, whose finalize reads the counts from the plan', async () => {
    const dir = tmpDir('mudm-feature-ids');
    const files = Object.entries(INPUTS).map(([name, features]) => {
      const file = path.join(dir, `${name}.json`);
      fs.writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features }));
      return { source: fileSource(file) };
    });
    const out = path.join(dir, 'out');
    await planShardedBuild(files, { ...OPTS, out, shards: 2 });
    for (const i of [0, 1]) await buildShard({ out, workers: 1 }, i);
    await finalizeShardedBuild({ out, workers: 1 });
    expect(idsFrom(JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as Record<string, unknown>)).toEqual(WANT);
  });
});
