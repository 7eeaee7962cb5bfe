// Values JSON can spell but tiles cannot carry (1e400, lone surrogates, invalid UTF-8, unsafe ids, flat polygons):
// each counted by rule, and the pyramid `build` writes is one its own `verify` accepts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePbf } from '../helpers/pyramid.js';
import { expectOk, removeTemps, runCli, tempDir, type RunResult } from '../e2e/helpers.js';

interface Report {
  features: { read: number; valid: number; invalid: number; invalidByCode: Record<string, number>; warningsByCode: Record<string, number>; notPlaced: Record<string, number>; notPlacedFirst?: Record<string, unknown>; samples: { code: string; file: string; feature: number | null; line: number | null; path: string; message: string }[] };
  world: { side: number; minZoom: number; maxZoom: number; outliers?: { features: number; of: number; side: number; bulkSide: number } };
}

interface JsonFeature { id?: unknown; layer: string; properties: Record<string, unknown>; geometry?: unknown }

const square = (x: number, y: number, s = 20) => [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]];
const polygon = (props: string, x: number, y: number, extra = '') =>
  `{"type":"Feature"${extra},"properties":${props},"geometry":{"type":"Polygon","coordinates":${JSON.stringify(square(x, y))}}}`;

/** The text with `@` replaced by raw bytes (a byte sequence no JS string can spell as UTF-8). */
const spliced = (text: string, raw: number[]) => {
  const [a, b] = text.split('@');
  return Buffer.concat([Buffer.from(a), Buffer.from(raw), Buffer.from(b)]);
};

function readReport(out: string): Report {
  return JSON.parse(fs.readFileSync(path.join(out, 'build-report.json'), 'utf8')) as Report;
}

/** Every feature of the finest zoom's JSON tiles, and the PBF features beside them (a feature may lie in several tiles). */
function finestFeatures(out: string): { json: JsonFeature[]; pbf: ReturnType<typeof decodePbf> } {
  const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as { maxzoom: number };
  const r = readReport(out);
  const z = d.maxzoom;
  const json: JsonFeature[] = [];
  const pbf: ReturnType<typeof decodePbf> = [];
  for (const x of fs.readdirSync(path.join(out, String(z)))) {
    for (const f of fs.readdirSync(path.join(out, String(z), x))) {
      const file = path.join(out, String(z), x, f);
      const y = Number(f.split('.')[0]);
      if (f.endsWith('.json')) json.push(...(JSON.parse(fs.readFileSync(file, 'utf8')) as { features: JsonFeature[] }).features);
      else pbf.push(...decodePbf(fs.readFileSync(file), r.world.side, z, Number(x), y));
    }
  }
  return { json, pbf };
}

async function verified(out: string): Promise<RunResult> {
  return runCli(['verify', out]);
}

afterAll(removeTemps);

describe('values tiles cannot carry, one build', () => {
  let dir = '';
  let out = '';
  let build: RunResult;
  beforeAll(async () => {
    dir = tempDir('values');
    out = path.join(dir, 'out');
    // Byte-level faults are written as bytes: \xff is not UTF-8; \ud800 is a JSON escape JSON.parse accepts.
    const collection = Buffer.concat([
      Buffer.from(`{"type":"FeatureCollection","features":[\n${polygon('{"label":1}', 10, 10, ',"id":7')},\n`),
      Buffer.from(polygon('{"label":2,"huge":1e400}', 100, 10)), Buffer.from(',\n'),
      spliced(polygon('{"label":3,"name":"a@b"}', 200, 10), [0xff]), Buffer.from(',\n'),
      Buffer.from(polygon('{"label":4,"name":"x\\ud800y"}', 300, 10)), Buffer.from(',\n'),
      Buffer.from(polygon('{"label":5}', 400, 10, ',"id":120000000000000000000000000000')), Buffer.from(',\n'),
      Buffer.from(polygon('{"label":6}', 500, 10, ',"id":-3')), Buffer.from(',\n'),
      Buffer.from('{"type":"Feature","properties":{"label":7},"geometry":{"type":"Polygon","coordinates":[[[10,300],[40,300],[70,300],[10,300]]]}}'),
      Buffer.from('\n]}\n'),
    ]);
    fs.writeFileSync(path.join(dir, 'cells.json'), collection);
    // The same invalid UTF-8 in a newline-delimited file, whose records the reader decodes on its own path.
    fs.writeFileSync(path.join(dir, 'more.ndjson'), Buffer.concat([
      Buffer.from(`${polygon('{"label":8}', 600, 10)}\n`),
      spliced(`${polygon('{"label":9,"name":"c@d"}', 700, 10)}\n`, [0xfe, 0xff]),
    ]));
    build = await runCli(['build', path.join(dir, 'cells.json'), path.join(dir, 'more.ndjson'), '-o', out, '--workers', '2']);
  });

  it('exits 0 with a pyramid its own verify accepts', async () => {
    expectOk(build, 'build');
    const v = await verified(out);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it('a property 1e400 is an invalid feature counted by rule value-not-finite, naming file, feature and path', () => {
    const r = readReport(out);
    expect(r.features.invalidByCode).toEqual({ 'value-not-finite': 1 });
    const s = r.features.samples.find((x) => x.code === 'value-not-finite');
    expect(s).toMatchObject({ file: path.join(dir, 'cells.json'), feature: 1, line: 3, path: '/properties/huge' });
    expect(s?.message).toMatch(/Infinity/);
    expect(build.stdout).toMatch(/invalid value-not-finite: 1/);
    const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as { vector_layers: { id: string; fields: Record<string, string>; fieldranges?: Record<string, unknown[]> }[] };
    const cells = d.vector_layers.find((l) => l.id === 'cells');
    expect(cells?.fields.huge).toBeUndefined();
    for (const range of Object.values(cells?.fieldranges ?? {})) for (const v of range) expect(v).not.toBeNull();
  });

  it('validate warns of invalid UTF-8 as the build does, naming the value', async () => {
    const v = await runCli(['validate', path.join(dir, 'more.ndjson')]);
    expect(v.stdout).toMatch(/more\.ndjson:\d+:\d+: feature 1: \/properties\/name: warning: 2 invalid UTF-8 byte sequence\(s\) in the text, each read as U\+FFFD, the first \(byte FE\) in "c\uFFFD\uFFFDd" \(a file saved in another encoding, such as Latin-1\?\) \[text-invalid-utf8\]/);
  });

  it('validate rejects a property 1e400 (exit 1) with the rule and the path', async () => {
    const v = await runCli(['validate', path.join(dir, 'cells.json')]);
    expect(v.code, v.stdout + v.stderr).toBe(1);
    expect(v.stdout).toMatch(/cells\.json:\d+:\d+: feature 1: \/properties\/huge: .*\[value-not-finite\]/);
  });

  it('invalid UTF-8 becomes U+FFFD with a warning counted by rule text-invalid-utf8 (a collection and a sequence)', () => {
    const r = readReport(out);
    expect(r.features.warningsByCode['text-invalid-utf8']).toBe(2);
    const samples = r.features.samples.filter((x) => x.code === 'text-invalid-utf8').map((x) => [path.basename(x.file), x.feature, x.line, x.path]);
    expect(samples).toEqual([['cells.json', 2, 4, '/properties/name'], ['more.ndjson', 1, 2, '/properties/name']]);
    const { json, pbf } = finestFeatures(out);
    expect(json.find((f) => f.properties.label === 3)?.properties.name).toBe('a\uFFFDb');
    expect(pbf.find((f) => f.properties.label === 9)?.properties.name).toBe('c\uFFFD\uFFFDd');
  });

  it('invalid UTF-8 in the first record of a sequence and in a file of one Feature is reported too (read whole, not streamed)', async () => {
    const first = path.join(dir, 'first.ndjson'), one = path.join(dir, 'one.geojson');
    fs.writeFileSync(first, Buffer.concat([spliced(`${polygon('{"label":10,"name":"e@f"}', 800, 10)}\n`, [0xe9]), Buffer.from(`${polygon('{"label":11}', 900, 10)}\n`)]));
    fs.writeFileSync(one, spliced(polygon('{"label":12,"name":"g@h"}', 10, 100), [0xe9]));
    const b = await runCli(['build', first, one, '-o', path.join(dir, 'out-first'), '--workers', '1']);
    expectOk(b, 'build');
    const r = readReport(path.join(dir, 'out-first'));
    expect(r.features.warningsByCode['text-invalid-utf8']).toBe(2);
    const samples = r.features.samples.filter((x) => x.code === 'text-invalid-utf8').map((x) => [path.basename(x.file), x.feature, x.path]);
    expect(samples).toEqual([['first.ndjson', 0, '/properties/name'], ['one.geojson', 0, '/properties/name']]);
    const v = await runCli(['validate', first, one]);
    expect(v.stdout).toMatch(/first\.ndjson:\d+:\d+: feature 0: \/properties\/name: warning: 1 invalid UTF-8 byte sequence\(s\) .* the first \(byte E9\) in "e\uFFFDf" .*\[text-invalid-utf8\]/);
    expect(v.stdout).toMatch(/one\.geojson: \/properties\/name: warning: 1 invalid UTF-8 byte sequence\(s\) .* the first \(byte E9\) in "g\uFFFDh" .*\[text-invalid-utf8\]/);
  });

  it('invalid UTF-8 in a collection member (the slide\'s properties) is reported by build and validate, a genuine U+FFFD is not', async () => {
    const file = path.join(dir, 'members.json');
    fs.writeFileSync(file, Buffer.concat([
      Buffer.from('{"type":"FeatureCollection","name":"genuine \uFFFD",\n"properties":'),
      spliced('{"stain":"H@E"}', [0xe9]),
      Buffer.from(`,\n"features":[${polygon('{"label":13}', 10, 200)}]}`),
    ]));
    const b = await runCli(['build', file, '-o', path.join(dir, 'out-members'), '--workers', '1']);
    expectOk(b, 'build');
    const r = readReport(path.join(dir, 'out-members'));
    const samples = r.features.samples.filter((x) => x.code === 'text-invalid-utf8').map((x) => [path.basename(x.file), x.feature, x.path, x.message]);
    expect(samples).toEqual([['members.json', null, '/properties/stain', '1 invalid UTF-8 byte sequence(s) in the text, each read as U+FFFD, the first (byte E9) in "H\uFFFDE" (a file saved in another encoding, such as Latin-1?)']]);
    const v = await runCli(['validate', file]);
    expect(v.stdout).toMatch(/members\.json:collection: \/properties\/stain: warning: 1 invalid UTF-8 byte sequence\(s\) .* the first \(byte E9\) in "H\uFFFDE" .*\[text-invalid-utf8\]/);
    expect(v.stdout).not.toMatch(/\/name: warning/);
  });

  it('a lone surrogate becomes U+FFFD in JSON and PBF tiles alike, with a warning string-lone-surrogate', () => {
    const r = readReport(out);
    expect(r.features.warningsByCode['string-lone-surrogate']).toBe(1);
    expect(r.features.samples.find((x) => x.code === 'string-lone-surrogate')).toMatchObject({ feature: 3, line: 5, path: '/properties/name' });
    // The summary shows the first sample under a warning's count.
    expect(build.stdout).toContain(`  warning string-lone-surrogate: 1\n    the first: ${path.join(dir, 'cells.json')}:5:1: feature 3: /properties/name: warning: `);
    const { json, pbf } = finestFeatures(out);
    expect(json.find((f) => f.properties.label === 4)?.properties.name).toBe('x\uFFFDy');
    expect(pbf.find((f) => f.properties.label === 4)?.properties.name).toBe('x\uFFFDy');
  });

  it('a zero-area polygon is counted as not placed (zero-area)', () => {
    const r = readReport(out);
    expect(r.features.notPlaced).toEqual({ 'zero-area': 1 });
    expect(r.features.valid).toBe(8);
    // Where it is, not only how many: the report and the summary name the first such feature.
    expect(r.features.notPlacedFirst).toEqual({ 'zero-area': { file: path.join(dir, 'cells.json'), feature: 6, line: 8, column: 1 } });
    expect(build.stdout).toContain(`  not placed (zero-area): 1, the first: ${path.join(dir, 'cells.json')}:8:1: feature 6\n`);
  });

  it('an empty GeometryCollection is counted as not placed (empty-geometry), a mesh given only by its tiles as no-inline-position', async () => {
    const dir = tempDir('empty-geometry');
    const out = path.join(dir, 'out');
    fs.writeFileSync(path.join(dir, 'cells.ndjson'), `${[
      polygon('{"label":1}', 10, 10),
      '{"type":"Feature","properties":{"kind":"emptygc"},"geometry":{"type":"GeometryCollection","geometries":[]}}',
      '{"type":"Feature","properties":{"kind":"tiled"},"geometry":{"type":"TIN","tiles":["mesh/{z}/{x}/{y}.json"]}}',
    ].join('\n')}\n`);
    expectOk(await runCli(['build', path.join(dir, 'cells.ndjson'), '-o', out]), 'build');
    expect(readReport(out).features.notPlaced).toEqual({ 'empty-geometry': 1, 'no-inline-position': 1 });
    // Nor does the descriptor describe them.
    const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as { vector_layers: { fields: Record<string, string> }[] };
    expect(d.vector_layers[0].fields.kind).toBeUndefined();
  });

  it('an empty GeometryCollection, or one of empty ones, is empty-geometry in a PBF-only archive too: it is no mesh', async () => {
    const dir = tempDir('empty-geometry-pbf');
    const file = path.join(dir, 'cells.ndjson');
    fs.writeFileSync(file, `${[
      polygon('{"label":1}', 10, 10),
      '{"type":"Feature","properties":{"kind":"emptygc"},"geometry":{"type":"GeometryCollection","geometries":[]}}',
      '{"type":"Feature","properties":{"kind":"nested"},"geometry":{"type":"GeometryCollection","geometries":[{"type":"GeometryCollection","geometries":[]}]}}',
      '{"type":"Feature","properties":{"kind":"mesh"},"geometry":{"type":"GeometryCollection","geometries":[{"type":"TIN","coordinates":[[[[0,0,0],[50,0,0],[0,50,1],[0,0,0]]]]},{"type":"GeometryCollection","geometries":[]}]}}',
    ].join('\n')}\n`);
    const r = await runCli(['build', file, '-o', path.join(dir, 'cells.pmtiles'), '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('3 of 4 features are not in the pyramid: 3 not placed (empty-geometry: 2, mesh-without-json-tiles: 1)');
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'cells.build-report.json'), 'utf8')) as Report;
    expect(report.features.notPlaced).toEqual({ 'empty-geometry': 2, 'mesh-without-json-tiles': 1 });
    expect(report.features.notPlacedFirst).toEqual({
      'empty-geometry': { file, feature: 1, line: 2, column: 1 },
      'mesh-without-json-tiles': { file, feature: 3, line: 4, column: 1 },
    });
  });

  it('an id that is no PBF id (1.2e29, -3) gives the PBF feature its sequence number and travels as property id', () => {
    const { json, pbf } = finestFeatures(out);
    expect(json.find((f) => f.properties.label === 5)?.id).toBe(1.2e29);
    const unsafe = pbf.find((f) => f.properties.label === 5);
    expect(unsafe?.id).toBe(4);
    expect(unsafe?.properties.id).toBe(1.2e29);
    const negative = pbf.find((f) => f.properties.label === 6);
    expect(negative?.id).toBe(5);
    expect(negative?.properties.id).toBe(-3);
    expect(pbf.find((f) => f.properties.label === 1)?.id).toBe(7);
    expect(pbf.find((f) => f.properties.label === 1)?.properties.id).toBeUndefined();
  });
});

describe('worlds made huge by outliers', () => {
  const cells = (n: number) => Array.from({ length: n }, (_, i) => polygon(`{"label":${i}}`, (i % 10) * 50, Math.floor(i / 10) * 50));

  it('a stray Point at (1e12, 1e12) lies beyond the largest world: not placed, zooms stay within 0-30, verify accepts', async () => {
    const dir = tempDir('outlier-far');
    const out = path.join(dir, 'out');
    fs.writeFileSync(path.join(dir, 'cells.ndjson'), `${[...cells(50), '{"type":"Feature","properties":{"label":99},"geometry":{"type":"Point","coordinates":[1e12,1e12]}}'].join('\n')}\n`);
    const r = await runCli(['build', path.join(dir, 'cells.ndjson'), '-o', out]);
    expectOk(r, 'build');
    const d = JSON.parse(fs.readFileSync(path.join(out, 'tileset.json'), 'utf8')) as { minzoom: number; maxzoom: number; vector_layers: { fieldranges: Record<string, number[]> }[] };
    expect(d.maxzoom).toBeLessThanOrEqual(30);
    // The descriptor describes what the tiles hold: not the label of the feature no tile has.
    expect(d.vector_layers[0].fieldranges.label).toEqual([0, 49]);
    const rep = readReport(out);
    expect(rep.features.notPlaced).toEqual({ 'outside-world': 1 });
    expect(rep.world.side).toBe(512);
    const v = await verified(out);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });

  it('with --image-size, features are cut to the image and one wholly beyond it is not placed: every tile meets the bounds', async () => {
    const dir = tempDir('outside-image');
    const out = path.join(dir, 'out');
    fs.writeFileSync(path.join(dir, 'cells.ndjson'), `${[
      '{"type":"Feature","properties":{"label":1},"geometry":{"type":"Point","coordinates":[10,10]}}',
      '{"type":"Feature","properties":{"label":2},"geometry":{"type":"Point","coordinates":[900,10]}}',
      '{"type":"Feature","properties":{"label":3},"geometry":{"type":"Polygon","coordinates":[[[500,500],[800,500],[800,550],[500,550],[500,500]]]}}',
    ].join('\n')}\n`);
    const b = await runCli(['build', path.join(dir, 'cells.ndjson'), '-o', out, '--image-size', '600,600', '--max-zoom', '2']);
    expectOk(b, 'build');
    expect(readReport(out).features.notPlaced).toEqual({ 'outside-image': 1 });
    // One of three is more than stray: the build asks whether the coordinates are this image's pixels.
    expect(b.stderr).toContain('warning: 1 of 3 valid feature(s) lie wholly beyond the image (600 × 600 px, --image or --image-size) and are not placed: are their coordinates in this image\'s pixels?');
    const v = await verified(out);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const { json } = finestFeatures(out);
    const xs = json.filter((f) => f.properties.label === 3).flatMap((f) => (f.geometry as { coordinates: number[][][] }).coordinates[0].map((p) => p[0]));
    expect(Math.max(...xs)).toBe(600);
    expect(json.some((f) => f.properties.label === 2)).toBe(false);
  });

  it('a stray Point at (1e9, 1e9) makes the world 2^30 px: reported with counts in the report and the log', async () => {
    const dir = tempDir('outlier-near');
    const out = path.join(dir, 'out');
    fs.writeFileSync(path.join(dir, 'cells.ndjson'), `${[...cells(50), '{"type":"Feature","properties":{"label":99},"geometry":{"type":"Point","coordinates":[1e9,1e9]}}'].join('\n')}\n`);
    const r = await runCli(['build', path.join(dir, 'cells.ndjson'), '-o', out]);
    expectOk(r, 'build');
    const rep = readReport(out);
    expect(rep.world.side).toBe(2 ** 30);
    expect(rep.world.maxZoom).toBe(21);
    expect(rep.world.outliers).toEqual({ features: 1, of: 51, side: 2 ** 30, bulkSide: 512 });
    expect(r.stderr).toMatch(/1 of 51 features .*beyond 512 px.*--image-size/);
    const v = await verified(out);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  });
});

describe('names and types as users spell them', () => {
  it('fields named like members of every object (toString, __proto__) are described by inspect; a feature of type "feature" is reported at /type', async () => {
    const dir = tempDir('names');
    const input = path.join(dir, 'in.ndjson');
    fs.writeFileSync(input, [
      '{"type":"Feature","properties":{"toString":1,"__proto__":"x","constructor":"y"},"geometry":{"type":"Point","coordinates":[5,5]}}',
      '{"type":"feature","properties":{},"geometry":{"type":"Point","coordinates":[6,6]}}',
    ].join('\n'));
    const out = path.join(dir, 'out');
    const b = await runCli(['build', input, '-o', out]);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toContain(`${input}:2:1: feature 1: /type: Feature type must be "Feature", found "feature" [feature-type-invalid]`);
    const i = await runCli(['inspect', out]);
    expect(i.code, i.stderr).toBe(0);
    expect(i.stdout).toMatch(/__proto__: String \{x\}\n\s+constructor: String \{y\}\n\s+toString: Number \[1, 1\]/);
  });
});

describe('a collection without its type', () => {
  it('is a warning for the build, which reads its features (exit 0); --strict stops (exit 1)', async () => {
    const dir = tempDir('no-type');
    const input = path.join(dir, 'in.json');
    fs.writeFileSync(input, '{"features":[{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[5,5]}}]}');
    const b = await runCli(['build', input, '-o', path.join(dir, 'out')]);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toContain(`features: 1 read, 1 valid, 0 invalid\n  warning collection-type-invalid: 1\n  ${input}:collection: (top level): warning: FeatureCollection type must be "FeatureCollection", found no type; its features are read, its collection members left out [collection-type-invalid]\n`);
    const s = await runCli(['build', input, '-o', path.join(dir, 'strict'), '--strict']);
    expect(s.code).toBe(1);
    expect(s.stderr).toBe(`error: ${input}: (top level): FeatureCollection type must be "FeatureCollection", found no type [collection-type-invalid]\n`);
  });
});
