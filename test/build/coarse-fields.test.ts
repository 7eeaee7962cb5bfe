// --coarse-fields end to end: coarse zooms carry only the fields named (PBF and JSON), finer ones every field, the
// overview draws more within the budget, the descriptor and report say so, and the bytes are the same at any
// parallelism and sharded.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPyramid, buildShard, fileSource, finalizeShardedBuild, memorySource, MemorySink, planShardedBuild } from '../../src/index.js';
import { UsageError } from '../../src/report/errors.js';
import { verifyPyramid } from '../../src/inspect/index.js';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../../src/cli/io.js';
import { coarseFieldsWarning, thinOverviewNotices } from '../../src/build/option-fields.js';
import type { FieldStat } from '../../src/stages/assign.js';
import { MAX_FIELD_NAMES, parseBatch, type ParseTask } from '../../src/stages/parse.js';
import { decodePbf, sinkJson, tmpDir, treeDifferences } from '../helpers/pyramid.js';

const W = 8192, MAX = 5, BUDGET = 8 * 1024;
const MEASURES = ['Cell: Area', 'Cell: Perimeter', 'Nucleus: Area', 'Nucleus: Circularity', 'Hematoxylin OD mean', 'Eosin OD mean', 'DAB OD mean', 'Eccentricity'];

/** 1,000 QuPath-shaped cells: a UUID-like id, a nested classification, eight measurements. */
function cells(): string {
  let a = 7;
  const r = () => { a = (Math.imul(a, 1103515245) + 12345) >>> 0; return a / 4294967296; };
  const lines: string[] = [];
  for (let i = 0; i < 1000; i++) {
    const x = 16 + r() * (W - 32), y = 16 + r() * (W - 32);
    const ring = Array.from({ length: 7 }, (_, k) => [Math.round((x + 5 * Math.cos((k % 6) * Math.PI / 3)) * 100) / 100, Math.round((y + 5 * Math.sin((k % 6) * Math.PI / 3)) * 100) / 100]);
    const measurements = Object.fromEntries(MEASURES.map((m) => [m, Math.round(r() * 1e6) / 1e3]));
    const properties = { objectType: 'cell', classification: { name: ['Tumor', 'Stroma', 'Immune'][i % 3], color: [i % 255, 0, 0] }, measurements };
    lines.push(JSON.stringify({ type: 'Feature', id: `c${i.toString(16).padStart(8, '0')}-cell`, properties, geometry: { type: 'Polygon', coordinates: [ring] } }));
  }
  return lines.join('\n') + '\n';
}

const text = cells();
const OPTS = { imageSize: `${W},${W}`, maxZoom: MAX, tileBudget: BUDGET, unitSize: 1024, memoryBudget: 256 * 1024 * 1024, workers: 1 };

async function build(opts: Record<string, unknown>) {
  const sink = new MemorySink();
  const notices: Array<[string, unknown]> = [];
  const report = await buildPyramid([{ source: memorySource('cells.ndjson', text) }], { ...OPTS, ...opts }, { sink, onInfo: (m, d) => notices.push([m, d]) });
  return { sink, report, notices, descriptor: sinkJson(sink, 'tileset.json') as { vector_layers: Array<Record<string, unknown>> } };
}

/** Every tile of a zoom in the sink, by format. */
function tilesOf(sink: MemorySink, z: number, ext: 'pbf' | 'json'): Array<[string, Uint8Array]> {
  return [...sink.files].filter(([p]) => p.startsWith(`${z}/`) && p.endsWith(`.${ext}`) && p !== '0/0/0.json');
}

describe('--coarse-fields', () => {
  it('keeps only the named fields below --fields-from-zoom, every field from it, in PBF and JSON tiles', async () => {
    const { sink, report, descriptor } = await build({ coarseFields: 'classification.name', fieldsFromZoom: 3 });
    for (let z = 0; z <= MAX; z++) {
      const tiles = tilesOf(sink, z, 'pbf');
      expect(tiles.length, `zoom ${z}`).toBeGreaterThan(0);
      for (const [p, bytes] of tiles) {
        const [, x, y] = p.replace('.pbf', '').split('/').map(Number);
        for (const f of decodePbf(bytes, W, z, x, y)) {
          const keys = Object.keys(f.properties).sort();
          if (z < 3) {
            expect(keys, p).toEqual(['classification.name']);
            // The PBF id stays: the build's number of the feature.
            expect(typeof f.id, p).toBe('number');
          } else {
            expect(keys, p).toEqual(expect.arrayContaining(['id', 'objectType', 'classification.name', 'classification.color', ...MEASURES.map((m) => `measurements.${m}`)]));
          }
        }
      }
    }
    for (let z = 1; z <= MAX; z++) {
      for (const [p] of tilesOf(sink, z, 'json')) {
        for (const f of (sinkJson(sink, p) as { features: Array<Record<string, unknown>> }).features) {
          if (z < 3) {
            expect(f.properties, p).toEqual({ classification: { name: expect.any(String) } });
            expect(f.id, p).toBeUndefined();
          } else {
            expect(f.id, p).toMatch(/-cell$/);
            expect(Object.keys((f.properties as { measurements: object }).measurements), p).toEqual(MEASURES);
          }
        }
      }
    }
    const layer = descriptor.vector_layers[0];
    expect(layer.field_minzoom).toEqual(Object.fromEntries(['classification.color', 'id', ...MEASURES.map((m) => `measurements.${m}`), 'objectType'].sort().map((f) => [f, 3])));
    expect(report.tiles.thinning.fewFields).toEqual({ keep: ['classification.name'], below: 3 });
  });

  it('draws more of a thinned zoom within the same budget, each tile within it', async () => {
    const all = await build({});
    const few = await build({ coarseFields: 'classification.name' });
    const kept = (d: typeof all.descriptor) => d.vector_layers[0].kept_fraction as Record<string, number>;
    // Zoom 0 is thinned in both; with few fields it draws several times the share.
    expect(kept(all.descriptor)['0']).toBeLessThan(0.5);
    expect(kept(few.descriptor)['0'] ?? 1).toBeGreaterThan(2 * kept(all.descriptor)['0']);
    // The default boundary: the finest zoom less one carries every field.
    expect(few.report.tiles.thinning.fewFields).toEqual({ keep: ['classification.name'], below: MAX - 1 });
    for (let z = 0; z < MAX; z++) for (const [p, b] of tilesOf(few.sink, z, 'pbf')) expect(b.byteLength, p).toBeLessThanOrEqual(BUDGET);
    expect(all.descriptor.vector_layers[0].field_minzoom).toBeUndefined();
    // Without the option, the build says why the overview is thin and what to give; with it, nothing.
    expect(all.notices.filter(([, d]) => (d as { event: string }).event === 'overview-thin')).toEqual([[
      `layer cells: zoom 0 draws ${Number((kept(all.descriptor)['0'] * 100).toPrecision(2))}% of its features, which carry up to 12 fields each; --coarse-fields LIST (what the overview needs: classification.name) keeps only those below zoom 4, so the coarse zooms draw more of the layer within the tile budget`,
      { event: 'overview-thin', layer: 'cells', zoom: 0, share: kept(all.descriptor)['0'], fields: 12 },
    ]]);
    expect(few.notices.filter(([, d]) => (d as { event: string }).event === 'overview-thin')).toEqual([]);
  });

  it('a sharded build tells of a thin overview at finalize, as build does', async () => {
    const dir = tmpDir('mudm-few-thin');
    const input = path.join(dir, 'cells.ndjson');
    fs.writeFileSync(input, text);
    const flags = ['--image-size', `${W},${W}`, '--max-zoom', String(MAX), '--tile-budget', String(BUDGET), '--unit-size', '1024', '--workers', '1'];
    const finalized = async (name: string, more: string[]) => {
      const out = path.join(dir, name);
      for (const args of [['plan', input, '-o', out, ...flags, ...more], ['build-shard', out, '--shard', '0', '--workers', '1']]) {
        const io = memoryIO();
        expect([await main([...args, '-q'], io), io.err()], args[0]).toEqual([0, '']);
      }
      const io = memoryIO();
      expect(await main(['finalize', out, '--workers', '1', '--log', 'json'], io)).toBe(0);
      return io.err().split('\n').filter((l) => l.includes('"overview-thin"')).map((l) => (JSON.parse(l) as { layer: string; zoom: number }));
    };
    // finalize said nothing of it (no notice reached its log).
    expect(await finalized('plain', [])).toEqual([expect.objectContaining({ layer: 'cells', zoom: 0 })]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('tells of a thin overview only at a zoom --coarse-fields thins by default (a JSON-only pyramid of zooms 0-2: zoom 1 keeps every field)', () => {
    const layer = { id: 'cells', fields: Object.fromEntries(MEASURES.map((m) => [m, 'Number' as const])), kept_fraction: { 1: 0.01, 2: 0.5 } };
    const plan = { minZoom: 0, maxZoom: 2, lod: 'auto' as const, formats: { json: true, pbf: false } };
    expect(thinOverviewNotices({}, plan, [layer])).toEqual([]);
    expect(thinOverviewNotices({}, { ...plan, maxZoom: 3 }, [layer]).map(([, d]) => d)).toEqual([{ event: 'overview-thin', layer: 'cells', zoom: 1, share: 0.01, fields: 8 }]);
    // finalize is given none of the build's options: the plan's say --coarse-fields or --fields was given.
    expect(thinOverviewNotices({}, { ...plan, maxZoom: 3, fewFields: { keep: ['id'], below: 2 } }, [layer])).toEqual([]);
    expect(thinOverviewNotices({}, { ...plan, maxZoom: 3, keptFields: MEASURES }, [layer])).toEqual([]);
  });

  it('gives the same bytes with one worker, two, and sharded; verify holds the tiles to field_minzoom', async () => {
    const dir = tmpDir('mudm-few');
    const input = path.join(dir, 'cells.ndjson');
    fs.writeFileSync(input, text);
    const opts = { ...OPTS, coarseFields: 'classification', format: 'json,pbf' };
    const one = path.join(dir, 'one'), two = path.join(dir, 'two'), sharded = path.join(dir, 'sharded');
    await buildPyramid([{ source: fileSource(input) }], { ...opts, out: one, workers: 1 });
    await buildPyramid([{ source: fileSource(input) }], { ...opts, out: two, workers: 2 });
    await planShardedBuild([{ source: fileSource(input) }], { ...opts, out: sharded, shards: 2, workers: 1 });
    for (const i of [1, 0]) await buildShard({ out: sharded, workers: 1 }, i);
    await finalizeShardedBuild({ out: sharded, workers: 2 });
    for (const d of [two, sharded]) expect(treeDifferences(one, d), d).toEqual([]);
    expect(verifyPyramid(one).problems).toEqual([]);
    // A descriptor that says the measurements start a zoom later than the tiles have them is caught.
    const d = JSON.parse(fs.readFileSync(path.join(one, 'tileset.json'), 'utf8'));
    d.vector_layers[0].field_minzoom['measurements.Cell: Area'] = MAX + 1;
    fs.writeFileSync(path.join(one, 'tileset.json'), JSON.stringify(d));
    const problems = verifyPyramid(one).problems.filter((p) => p.code === 'field-mismatch');
    expect(problems.map((p) => p.message)).toEqual([`layer cells: field "measurements.Cell: Area" is in a tile of zoom ${MAX - 1}, where its field_minzoom says tiles carry it from zoom ${MAX + 1}`]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('verify holds the JSON tiles of a pyramid without PBF tiles to field_minzoom', async () => {
    const dir = tmpDir('mudm-few-json');
    const out = path.join(dir, 'out');
    await buildPyramid([{ source: memorySource('cells.ndjson', text) }], { ...OPTS, coarseFields: 'classification.name', format: 'json', out });
    expect(verifyPyramid(out).problems).toEqual([]);
    const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8'));
    d.vector_layers[0].field_minzoom.objectType = MAX + 1;
    fs.writeFileSync(path.join(out, 'tileset.json'), JSON.stringify(d));
    const problems = verifyPyramid(out).problems.filter((p) => p.code === 'field-mismatch');
    expect(problems.map((p) => p.message)).toEqual([`layer cells: field "objectType" is in a tile of zoom ${MAX - 1}, where its field_minzoom says tiles carry it from zoom ${MAX + 1}`]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('warns of a name no feature has, with the field it may mean', async () => {
    const warnings: Array<[string, unknown]> = [];
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.ndjson', text) }], { ...OPTS, coarseFields: 'clasification.name, objectType' }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings.filter(([, d]) => (d as { event: string }).event === 'coarse-fields-unknown')).toEqual([[
      '--coarse-fields names "clasification.name" (classification.name?), which no feature has: the coarse zooms carry only the other fields named; the fields are those inspect lists, dotted for nested objects (classification.name)',
      { event: 'coarse-fields-unknown', fields: ['clasification.name'] },
    ]]);
    const zoom0 = decodePbf(sink.files.get('0/0/0.pbf') as Uint8Array, W, 0, 0, 0);
    expect(new Set(zoom0.flatMap((f) => Object.keys(f.properties)))).toEqual(new Set(['objectType']));
  });

  it('--fields keeps only the fields named at every zoom, the descriptor lists those alone; a name none has is warned of', async () => {
    const warnings: Array<[string, unknown]> = [];
    const sink = new MemorySink();
    await buildPyramid([{ source: memorySource('cells.ndjson', text) }], { ...OPTS, format: 'json,pbf', fields: 'classification, measurements.Cell: Area, mesurements', coarseFields: 'classification.name' }, { sink, onWarning: (m, d) => warnings.push([m, d]) });
    const expected = ['classification.color', 'classification.name', 'measurements.Cell: Area'];
    for (let z = 0; z <= MAX; z++) {
      for (const [p, bytes] of tilesOf(sink, z, 'pbf')) {
        const [, x, y] = p.replace('.pbf', '').split('/').map(Number);
        for (const f of decodePbf(bytes, W, z, x, y)) expect(Object.keys(f.properties).sort(), p).toEqual(z < MAX - 1 ? ['classification.name'] : expected);
      }
    }
    for (const [p] of tilesOf(sink, MAX, 'json')) {
      for (const f of (sinkJson(sink, p) as { features: Array<Record<string, unknown>> }).features) {
        expect([f.id, Object.keys(f.properties as object), Object.keys((f.properties as { measurements: object }).measurements)], p).toEqual([undefined, ['classification', 'measurements'], ['Cell: Area']]);
      }
    }
    const layer = (sinkJson(sink, 'tileset.json') as { vector_layers: Array<Record<string, unknown>> }).vector_layers[0];
    expect(Object.keys(layer.fields as object)).toEqual(expected);
    expect(layer.field_minzoom).toEqual({ 'classification.color': MAX - 1, 'measurements.Cell: Area': MAX - 1 });
    expect(warnings.filter(([, d]) => (d as { event: string }).event === 'fields-unknown')).toEqual([[
      '--fields names "mesurements" (measurements?), which no valid feature has: tiles carry no such field; the fields are those inspect lists of a build without --fields, dotted for nested objects (classification.name)',
      { event: 'fields-unknown', fields: ['mesurements'] },
    ]]);
  });

  it('--fields: a name none has is warned of with the field the features had that it may mean, as --coarse-fields does', async () => {
    const warnings: Array<[string, unknown]> = [];
    // Nothing kept is what the warning is read against: it names fields the tiles lack, from the features as read.
    await buildPyramid([{ source: memorySource('cells.ndjson', text) }], { ...OPTS, workers: 2, fields: 'clasification.name, ObjectType, measurement, nosuch' }, { sink: new MemorySink(), onWarning: (m, d) => warnings.push([m, d]) });
    expect(warnings.filter(([, d]) => (d as { event: string }).event === 'fields-unknown')).toEqual([[
      '--fields names "clasification.name" (classification.name?), "ObjectType" (objectType?), "measurement" (measurements?), "nosuch", which no valid feature has: tiles carry no such field; the fields are those inspect lists of a build without --fields, dotted for nested objects (classification.name)',
      { event: 'fields-unknown', fields: ['clasification.name', 'ObjectType', 'measurement', 'nosuch'] },
    ]]);
  });

  it('--fields: a batch reports the fields its features had only while a name is unmet, and at most MAX_FIELD_NAMES of them', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_FIELD_NAMES + 5 }, (_, i) => [`m${i}`, i]));
    const features = [0, 1, 2].map((i) => ({ type: 'Feature', id: i, featureClass: 'cell', properties: i === 0 ? { label: 1 } : { label: i, ...many }, geometry: { type: 'Point', coordinates: [10 + i, 10] } }));
    const task = (fields: string[]): ParseTask => ({
      kind: 'parse', file: 'cells.json', layer: 'cells', rule: { fixed: {}, fields: {} }, cellSize: 256, seq0: 0, side: 1024,
      raw: { values: features, meta: new Float64Array(6 * features.length) }, sampleCap: 5, json: false, fields,
    });
    // Met by the first feature: no feature's fields are gathered.
    expect(parseBatch(task(['label'])).fieldNamesRead).toEqual([]);
    const read = parseBatch(task(['label', 'lable'])).fieldNamesRead;
    expect([read.length, read.slice(0, 3)]).toEqual([MAX_FIELD_NAMES, ['label', 'featureClass', 'm0']]);
  });

  it('a --coarse-fields name that --fields leaves out is said so, not called a field no feature has', () => {
    const stat: FieldStat = { number: 0, bool: 0, string: 1, other: 0, min: Infinity, max: -Infinity, strings: [] };
    const stats = { cells: { 'classification.name': stat, 'measurements.Cell: Area': stat } };
    const warned = coarseFieldsWarning({ coarseFields: { keep: ['objectType', 'classification.name', 'classification.nme'] }, fields: ['classification.name', 'measurements'] }, stats);
    expect(warned).toEqual([
      '--coarse-fields names "classification.nme" (classification.name?), which no feature has, and "objectType", which --fields leaves out of every tile: the coarse zooms carry only the other fields named; the fields are those inspect lists, dotted for nested objects (classification.name)',
      { event: 'coarse-fields-unknown', fields: ['objectType', 'classification.nme'] },
    ]);
  });

  it('a --coarse-fields name near an object the fields lie in names that object, which keeps the fields under it', () => {
    const stat: FieldStat = { number: 0, bool: 0, string: 1, other: 0, min: Infinity, max: -Infinity, strings: [] };
    const stats = { cells: { 'classification.name': stat, 'measurements.Cell: Area': stat } };
    expect(coarseFieldsWarning({ coarseFields: { keep: ['clasification'] } }, stats)?.[0]).toMatch(/^--coarse-fields names "clasification" \(classification\?\), which no feature has:/);
  });

  it('warns when no zoom is coarse enough to carry fewer fields, naming the --fields-from-zoom that would', async () => {
    const warned = async (opts: Record<string, unknown>) => {
      const warnings: unknown[] = [];
      const sink = new MemorySink();
      await buildPyramid([{ source: memorySource('cells.ndjson', text) }], { ...OPTS, coarseFields: 'objectType', ...opts }, { sink, onWarning: (m, d) => { if ((d as { event: string }).event === 'coarse-fields-no-zoom') warnings.push(m); } });
      expect((sinkJson(sink, 'tileset.json') as { vector_layers: Array<Record<string, unknown>> }).vector_layers[0].field_minzoom).toBeUndefined();
      return warnings;
    };
    expect(await warned({ maxZoom: 1 })).toEqual(['--coarse-fields leaves every field in every tile: the pyramid\'s zooms are 0–1, and by default the finest two carry every field; give --fields-from-zoom 1 for zoom 0 to carry only the fields named']);
    expect(await warned({ minZoom: 1, maxZoom: 1 })).toEqual(['--coarse-fields leaves every field in every tile: the pyramid\'s zooms are 1–1, and by default the finest two carry every field; a pyramid of one zoom has no coarser one: give a --max-zoom above --min-zoom']);
    // Asked for: every field from the coarsest zoom on.
    expect(await warned({ maxZoom: 1, fieldsFromZoom: 0 })).toEqual([]);
  });

  it('keeps a point\'s radius in every tile, named or not: the tiles place it by its circle', async () => {
    const dir = tmpDir('mudm-few-radius');
    const out = path.join(dir, 'out');
    // Points of radius 40 to 300 px with a class and a measurement, over 4,096 px in units of 256: the levels above
    // place each in every tile its circle reaches.
    const points = Array.from({ length: 400 }, (_, i) => JSON.stringify({ type: 'Feature', id: i + 1, geometry: { type: 'Point', coordinates: [(i * 733) % 4096, (i * 1187) % 4096] }, properties: { radius: 40 + (i * 37) % 260, cls: `c${i % 3}`, m: i } })).join('\n');
    await buildPyramid([{ source: memorySource('pts.ndjson', points) }], { imageSize: '4096,4096', maxZoom: 5, unitSize: 256, workers: 2, coarseFields: 'cls', format: 'json,pbf', out });
    expect(verifyPyramid(out).problems).toEqual([]);
    const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8'));
    expect(d.vector_layers[0].field_minzoom).toEqual({ m: 4 });
    // Zoom 1, below --fields-from-zoom: class and radius, not the measurement.
    const tile = JSON.parse(fs.readFileSync(path.join(out, '1', '0', '0.json'), 'utf8')) as { features: Array<{ properties: Record<string, unknown> }> };
    expect(tile.features.length).toBeGreaterThan(50);
    expect(new Set(tile.features.map((f) => Object.keys(f.properties).sort().join()))).toEqual(new Set(['cls,radius']));
    // --fields too: every zoom's points keep their size.
    const kept = path.join(dir, 'kept');
    await buildPyramid([{ source: memorySource('pts.ndjson', points) }], { imageSize: '4096,4096', maxZoom: 5, unitSize: 256, workers: 1, fields: 'cls', format: 'json', out: kept });
    const finest = JSON.parse(fs.readFileSync(path.join(kept, '5', '3', '3.json'), 'utf8')) as { features: Array<{ properties: Record<string, unknown> }> };
    expect(new Set(finest.features.map((f) => Object.keys(f.properties).sort().join()))).toEqual(new Set(['cls,radius']));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses --fields-from-zoom without --coarse-fields, or outside the zooms, naming the value', async () => {
    await expect(build({ fieldsFromZoom: 2 })).rejects.toThrow(new UsageError('--fields-from-zoom 2 says from which zoom tiles carry every field, which they do at all zooms without --coarse-fields: give --coarse-fields LIST too, or drop it'));
    await expect(build({ coarseFields: 'id', fieldsFromZoom: 9 })).rejects.toThrow(new UsageError('--fields-from-zoom must be 0..5 (from --min-zoom to --max-zoom), found 9'));
  });
});
