// Uniform thinning end to end: a slide with a dense and a sparse half keeps the same share everywhere at each zoom,
// nested across zooms in both formats, every PBF tile within the budget, and the share stated in the descriptor.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, fileSource, finalizeShardedBuild, InterruptedError, memorySource, MemorySink, planShardedBuild } from '../../src/index.js';
import { PRIORITY_RANGE, thinningPriority } from '../../src/stages/thinning.js';
import { raiseRule } from '../../src/build/levels.js';
import { MemoryWorkDir } from '../../src/io/workdir-memory.js';
import { decodePbf, tmpDir, treeDifferences } from '../helpers/pyramid.js';

const W = 8192, H = 4096, MAX = 5, BUDGET = 20 * 1024;

/** Deterministic numbers in [0, 1). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Cell { id: number; x: number; y: number; text: string }

/** Small hexagonal cells: 3,000 in the left half, 300 in the right half (ten times sparser). */
function slide(): Cell[] {
  const r = rng(42);
  const cells: Cell[] = [];
  const classes = ['tumor', 'stroma', 'immune'];
  for (let i = 0; i < 3300; i++) {
    const dense = i % 11 !== 0;
    const x = dense ? 8 + r() * (W / 2 - 16) : W / 2 + 8 + r() * (W / 2 - 16), y = 8 + r() * (H - 16);
    const ring = Array.from({ length: 7 }, (_, k) => [Math.round((x + 6 * Math.cos((k % 6) * Math.PI / 3)) * 100) / 100, Math.round((y + 6 * Math.sin((k % 6) * Math.PI / 3)) * 100) / 100]);
    const feature = { type: 'Feature', id: i, featureClass: classes[i % 3], properties: { area: Math.round(r() * 1e6) / 1e4 }, geometry: { type: 'Polygon', coordinates: [ring] } };
    cells.push({ id: i, x, y, text: JSON.stringify(feature) });
  }
  return cells;
}

async function build(cells: Cell[], tileBudget: number) {
  const sink = new MemorySink();
  const text = cells.map((c) => c.text).join('\n');
  await buildPyramid([{ source: memorySource('cells.ndjson', text) }], { imageSize: `${W},${H}`, maxZoom: MAX, unitSize: 1024, workers: 2, tileBudget, layer: 'cells' }, { sink });
  return sink;
}

/** Per zoom: for each tile written, the ids its PBF and JSON files hold. */
function tilesByZoom(sink: MemorySink) {
  const pbf = new Map<number, Map<string, number[]>>(), json = new Map<number, Map<string, number[]>>();
  for (const [p, bytes] of sink.files) {
    const m = /^(\d+)\/(\d+)\/(\d+)\.(pbf|json)$/.exec(p);
    if (!m) continue;
    const [z, x, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const ids = m[4] === 'pbf'
      ? decodePbf(bytes, 8192, z, x, y).map((f) => f.id as number)
      : (JSON.parse(Buffer.from(bytes).toString('utf8')) as { features?: { id: number }[] }).features?.map((f) => f.id);
    if (ids === undefined) continue; // the zoom-0 JSON file is the overview descriptor
    const into = m[4] === 'pbf' ? pbf : json;
    if (!into.has(z)) into.set(z, new Map());
    (into.get(z) as Map<string, number[]>).set(`${x}/${y}`, ids);
  }
  return { pbf, json };
}

const drawn = (tiles: Map<string, number[]> | undefined) => new Set([...(tiles ?? new Map<string, number[]>()).values()].flat());

describe('uniform thinning of a slide with a dense and a sparse half', async () => {
  const cells = slide();
  const sink = await build(cells, BUDGET);
  const { pbf, json } = tilesByZoom(sink);
  const descriptor = JSON.parse(Buffer.from(sink.files.get('tileset.json') as Uint8Array).toString('utf8'));
  // Zooms that draw fewer than all features, and the share each draws, as counted in the tiles.
  const share = (z: number) => drawn(pbf.get(z)).size / cells.length;
  const thinnedZooms = Array.from({ length: MAX + 1 }, (_, z) => z).filter((z) => share(z) < 1);

  it('thins the coarse zooms and says by how much in the descriptor: the share drawn, per zoom', () => {
    expect(thinnedZooms).toEqual([0, 1, 2]);
    const kept: Record<string, number> = descriptor.vector_layers[0].kept_fraction;
    expect(Object.keys(kept).map(Number)).toEqual(thinnedZooms);
    for (const z of thinnedZooms) expect(kept[z]).toBeCloseTo(share(z), 3);
  });

  it('draws the same share in every tile at each thinned zoom, dense or sparse (features counted by the tile of their centre)', () => {
    for (const z of thinnedZooms) {
      const ts = 8192 / 2 ** z, f = share(z);
      const shown = drawn(pbf.get(z));
      const n = new Map<string, number>(), k = new Map<string, number>();
      for (const c of cells) {
        const t = `${Math.floor(c.x / ts)}/${Math.floor(c.y / ts)}`;
        n.set(t, (n.get(t) ?? 0) + 1);
        if (shown.has(c.id)) k.set(t, (k.get(t) ?? 0) + 1);
      }
      const shares: number[] = [];
      for (const [t, count] of n) {
        if (count < 40) continue;
        const share = (k.get(t) ?? 0) / count;
        shares.push(share);
        // Within four standard deviations of a binomial draw of the zoom's share.
        expect(Math.abs(share - f), `zoom ${z} tile ${t}: ${k.get(t) ?? 0} of ${count}, the zoom draws ${f}`).toBeLessThanOrEqual(4 * Math.sqrt((f * (1 - f)) / count) + 0.01);
      }
      // Zoom 0 is one tile; from zoom 1 on, dense and sparse tiles are compared.
      expect(shares.length).toBeGreaterThanOrEqual(z === 0 ? 1 : 2);
    }
  });

  it('keeps every PBF tile below the finest zoom within the budget', () => {
    let checked = 0;
    for (const [p, bytes] of sink.files) {
      const m = /^(\d+)\/\d+\/\d+\.pbf$/.exec(p);
      if (!m || Number(m[1]) >= MAX) continue;
      expect(bytes.length, p).toBeLessThanOrEqual(BUDGET);
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('nests: what a zoom draws, every finer zoom draws, in PBF and in JSON tiles alike', () => {
    // The zoom-0 JSON file is the overview descriptor: JSON tiles start at zoom 1.
    for (let z = 0; z < MAX; z++) {
      for (const format of z === 0 ? [pbf] : [pbf, json]) {
        const finer = drawn(format.get(z + 1));
        const missing = [...drawn(format.get(z))].filter((id) => !finer.has(id));
        expect(missing, `zoom ${z} draws features zoom ${z + 1} does not`).toEqual([]);
      }
      if (z > 0) expect([...drawn(json.get(z))].sort()).toEqual([...drawn(pbf.get(z))].sort());
    }
  });

  it('gives a feature the same fate in every tile it reaches, buffers included', async () => {
    // Unthinned, each feature lies in some tiles at each zoom; thinned, it lies in all of them or none.
    const all = tilesByZoom(await build(cells, 1 << 30)).pbf;
    for (const z of thinnedZooms) {
      const shown = drawn(pbf.get(z));
      const where = (tiles: Map<string, number[]> | undefined) => {
        const m = new Map<number, string[]>();
        for (const [t, ids] of tiles ?? []) for (const id of ids) m.set(id, [...(m.get(id) ?? []), t]);
        return m;
      };
      const thin = where(pbf.get(z)), full = where(all.get(z));
      let split = 0;
      // Tiles in path order: a memory sink lists files in the order they were written, which follows the order units finish.
      const key = (tiles: string[] | undefined) => [...(tiles ?? [])].sort().join();
      for (const [id, tiles] of full) if (shown.has(id) && key(thin.get(id)) !== key(tiles)) split++;
      expect(split).toBe(0);
      if (z > 0) expect([...full.values()].some((t) => t.length > 1)).toBe(true);
    }
  });
});

describe('a zoom the estimate gets wrong', () => {
  // 2,000 points, each named from 300 long names in no order: the estimate counts a name once per read batch, but
  // each 4096-px tile stores its own copy of each name, so the plan's thresholds leave tiles over the budget.
  const r = rng(7);
  const names = Array.from({ length: 300 }, (_, i) => `name-${i}-${'x'.repeat(56)}`);
  const text = Array.from({ length: 2000 }, () => JSON.stringify({
    type: 'Feature', properties: { name: names[Math.floor(r() * names.length)] }, geometry: { type: 'Point', coordinates: [8 + Math.floor(r() * 8000), 8 + Math.floor(r() * 8000)] },
  })).join('\n');
  const opts = { imageSize: '8192,8192', maxZoom: 3, unitSize: 2048, tileBudget: 16 * 1024, layer: 'points' };

  it('raises the threshold of the whole zoom, tiles again, and keeps every tile within the budget, nested', async () => {
    const sink = new MemorySink();
    const report = await buildPyramid([{ source: memorySource('points.ndjson', text) }], { ...opts, workers: 2 }, { sink });
    expect(report.tiles.thinning.raised).toEqual([0, 1]);
    const { pbf } = tilesByZoom(sink);
    for (const [p, bytes] of sink.files) if (/^[0-2]\/\d+\/\d+\.pbf$/.test(p)) expect(bytes.length, p).toBeLessThanOrEqual(opts.tileBudget);
    // Every feature drawn at a zoom passes that zoom's final threshold (no tile of the first pass is left), and nests.
    for (let z = 0; z < 3; z++) {
      const t = report.tiles.thinning.thresholds[z];
      for (const id of drawn(pbf.get(z))) expect(thinningPriority(id) >= t, `zoom ${z} feature ${id}`).toBe(true);
      const finer = drawn(pbf.get(z + 1));
      expect([...drawn(pbf.get(z))].every((id) => finer.has(id))).toBe(true);
    }
    expect(drawn(pbf.get(1)).size).toBeLessThan(2000);
  });

  it('undoing units after the correction, the tiles they wrote are removed for good (a buffering sink flushed) before their markers go', async () => {
    const events: string[] = [];
    // A sink that keeps removals until flushed, as an archive part does, and a work directory that says when
    // markers are removed.
    class Recording extends MemorySink {
      override async remove(rel: string): Promise<void> { events.push('remove'); await super.remove(rel); }
      async flush(): Promise<void> { events.push('flush'); }
    }
    class Work extends MemoryWorkDir {
      override append(rel: string, parts: readonly Uint8Array[]): void {
        if (parts.some((p) => Buffer.from(p).includes('"op":"remove"'))) events.push('markers removed');
        super.append(rel, parts);
      }
    }
    await buildPyramid([{ source: memorySource('points.ndjson', text) }], { ...opts, workers: 1 }, { sink: new Recording(), work: new Work() });
    const undone = events.flatMap((e, i) => (e === 'markers removed' ? [i] : []));
    expect(undone.length, 'a correction happened').toBeGreaterThan(0);
    for (const i of undone) {
      const lastRemove = events.lastIndexOf('remove', i);
      expect(lastRemove, 'tiles were removed').toBeGreaterThanOrEqual(0);
      expect(events.slice(lastRemove, i), 'flushed between the last removal and the markers').toContain('flush');
    }
  });

  it('resumes a build interrupted after a correction: the same bytes as one run through', async () => {
    const whole = new MemorySink();
    await buildPyramid([{ source: memorySource('points.ndjson', text) }], { ...opts, workers: 1 }, { sink: whole });
    const stop = new AbortController();
    // Stopped as soon as the raised plan is saved.
    class Work extends MemoryWorkDir {
      override writeJson(rel: string, value: unknown): void {
        super.writeJson(rel, value);
        if (rel === 'plan.json' && ((value as { plan: { corrections?: number } }).plan.corrections ?? 0) > 0) stop.abort();
      }
    }
    const work = new Work(), sink = new MemorySink();
    await expect(buildPyramid([{ source: memorySource('points.ndjson', text) }], { ...opts, workers: 1 }, { sink, work, signal: stop.signal })).rejects.toThrow(InterruptedError);
    const report = await buildPyramid([{ source: memorySource('points.ndjson', text) }], { ...opts, workers: 1, resume: true }, { sink, work });
    expect(report.tiles.thinning.raised).toEqual([0, 1]);
    expect([...sink.files.keys()].sort()).toEqual([...whole.files.keys()].sort());
    for (const [k, v] of whole.files) if (k !== 'build-report.json') expect(Buffer.from(sink.files.get(k) as Uint8Array).equals(Buffer.from(v)), k).toBe(true);
  });

  it('gives the same bytes on one machine (one worker, two: levels overlap, a correction restarts) and sharded (finalize with two)', async () => {
    const dir = tmpDir('mudm-thin');
    const input = path.join(dir, 'points.ndjson');
    fs.writeFileSync(input, text);
    const one = path.join(dir, 'one'), two = path.join(dir, 'two'), sharded = path.join(dir, 'sharded');
    await buildPyramid([{ source: fileSource(input) }], { ...opts, out: one, workers: 1 });
    await buildPyramid([{ source: fileSource(input) }], { ...opts, out: two, workers: 2 });
    await planShardedBuild([{ source: fileSource(input) }], { ...opts, out: sharded, shards: 3, workers: 1 });
    for (const i of [1, 2, 0]) await buildShard({ out: sharded, workers: 1 }, i);
    await finalizeShardedBuild({ out: sharded, workers: 2 });
    for (const d of [two, sharded]) expect(treeDifferences(one, d), d).toEqual([]);
    const report = JSON.parse(fs.readFileSync(path.join(sharded, 'build-report.json'), 'utf8'));
    expect(report.tiles.thinning.raised).toEqual([0, 1]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('raising the rule after tiling', () => {
  const marker = (needs: number[], unspare: number) => ({ key: 'k', byZoom: {}, largest: null, pointified: [], kept: [], offered: [], needs, unspare, coarse: [], notInPbf: 0, next: [] });
  const T = PRIORITY_RANGE / 4;

  it('raises thresholds from needs, coarser zooms following, and leaves sparing where no tile asked', () => {
    const rule = { thresholds: [[0], [0], [0], [0]], spareFrom: 0, minZoom: 0, maxZoom: 3 };
    expect(raiseRule(rule, [marker([0, 0, T, 0], -1), marker([0, T / 2, 0, 0], -1)])).toEqual([0, 1, 2]);
    expect(rule).toEqual({ thresholds: [[T], [T], [T], [0]], spareFrom: 0, minZoom: 0, maxZoom: 3 });
  });

  it('ends sparing above the zoom a tile asked at, and takes no need of the zooms that stop sparing: they are measured again', () => {
    const rule = { thresholds: [[0], [0], [0], [0]], spareFrom: 0, minZoom: 0, maxZoom: 3 };
    // Zoom 1's need was worked out with the outlines whole; zoom 2's tile asked to stop sparing.
    expect(raiseRule(rule, [marker([0, 3 * T, T, 0], 1), marker([0, 0, T, 0], -1)])).toEqual([0, 1, 2]);
    expect(rule).toEqual({ thresholds: [[T], [T], [T], [0]], spareFrom: 2, minZoom: 0, maxZoom: 3 });
    // Sparing only rises.
    expect(raiseRule(rule, [marker([0, 0, 0, 0], 0)])).toEqual([]);
    expect(rule.spareFrom).toBe(2);
  });
});

describe('thinning and the input\'s formatting', () => {
  it('thins a slide written pretty-printed as the same slide minified: the same archive, byte for byte', async () => {
    // Parse batches close at a number of bytes, which formatting changes (7.7 MB pretty, 2.2 MB minified here); the
    // sketch's shared values went by batch, so the thresholds, and the tiles, followed the formatting.
    const dir = tmpDir('thin-format');
    const archives = await Promise.all(['fc-pretty', 'fc-minified'].map(async (format) => {
      const file = path.join(dir, `${format}.json`);
      const r = spawnSync(process.execPath, [path.join('bench', 'generate.js'), '--cells', '4000', '--seed', '2', '--format', format, '-q', '-o', file], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const out = path.join(dir, `${format}.pmtiles`);
      await buildPyramid([{ source: fileSource(file), layer: 'cells' }], { out, tileBudget: 100 * 1024, workers: 2 });
      return fs.readFileSync(out);
    }));
    expect(archives[0].length).toBeGreaterThan(0);
    expect(archives[0].equals(archives[1])).toBe(true);
  });
});
