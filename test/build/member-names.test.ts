// Member names that tiles cannot carry as written (lone surrogates, invalid UTF-8): warned of as values are, at the
// member's path, and written with U+FFFD in JSON tiles, PBF tiles and the descriptor alike.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { validateSource } from '../../src/validate/files.js';
import type { BuildReport } from '../../src/report/types.js';
import { decodePbf, sinkJson } from '../helpers/pyramid.js';
import { removeTemps, runCli, tempDir } from '../e2e/helpers.js';

afterAll(removeTemps);

/** A Point feature's text with the given properties and foreign members (JSON text, escapes as written). */
const point = (x: number, properties: string, foreign = '') => `{"type":"Feature"${foreign},"properties":${properties},"geometry":{"type":"Point","coordinates":[${x},5]}}`;

interface Layer { id: string; fields: Record<string, string>; fieldenums?: Record<string, string[]>; vocabularies?: unknown }

/** The text with each `@` replaced by the next of `raw`, bytes that are no UTF-8 (which no JS string can spell). */
const spliced = (text: string, ...raw: number[]) => Buffer.concat(text.split('@').flatMap((part, i) => (i === 0 ? [Buffer.from(part)] : [Buffer.from([raw[i - 1]]), Buffer.from(part)])));

/** Builds `bytes` (features) to zoom 1; the report, the descriptor's layer, and per feature (by x) its properties in the JSON and PBF tiles of zoom 1. */
async function built(bytes: Uint8Array, name = 'cells.ndjson') {
  const sink = new MemorySink();
  const report: BuildReport = await buildPyramid([{ source: memorySource(name, bytes) }], { imageSize: '64,64', maxZoom: 1, workers: 1 }, { sink });
  const layer = (sinkJson(sink, 'tileset.json').vector_layers as Layer[])[0];
  const json = new Map<number, Record<string, unknown>>(), pbf = new Map<number, Record<string, unknown>>();
  /** The text of the JSON tiles of zoom 1: where an escape would be seen that parsing would hide. */
  let jsonText = '';
  for (const [file, b] of sink.files) {
    const [z, x, y] = file.split(/[/.]/).map(Number);
    if (z !== 1) continue;
    if (file.endsWith('.json')) {
      jsonText += Buffer.from(b).toString('utf8');
      const tile = JSON.parse(Buffer.from(b).toString('utf8')) as { features: { properties: Record<string, unknown>; geometry: { coordinates: number[] } }[] };
      for (const f of tile.features) json.set(f.geometry.coordinates[0], f.properties);
    } else {
      for (const f of decodePbf(b, report.world.side, z, x, y)) pbf.set(Math.round(f.rings[0][0][0]), f.properties);
    }
  }
  const samples = report.features.samples.map((s) => [s.code, s.feature, s.path, s.message]);
  return { report, layer, json, jsonText, pbf, samples };
}

describe('a lone surrogate escape in a member name', () => {
  it('is warned of at the first such name, or where U+FFFD makes names one, and every output keeps the last one\'s value', async () => {
    const text = [
      point(1, '{"c\\ud800":"first","c\\udc00":"second"}'),
      // Made U+FFFD, the name meets one the text spells so: the later member's value is kept, as for invalid UTF-8.
      point(2, '{"n\\ud800":"first","n\\ufffd":"second"}'),
      point(3, '{"classification":{"n\\ud800me":"Tumor"},"v":"\\ud800"}'),
      point(4, '{"k":1}', ',"fo\\udfffo":1'),
    ].join('\n');
    const { report, layer, json, pbf, samples } = await built(Buffer.from(text));
    expect(report.features.warningsByCode).toEqual({ 'string-lone-surrogate': 4 });
    expect(samples).toEqual([
      ['string-lone-surrogate', 0, '/properties/c\uFFFD', 'the member name "c\\ud800" holds a lone UTF-16 surrogate; tiles write U+FFFD for it; here 2 member names become "c\uFFFD", and tiles keep the last one\'s value'],
      ['string-lone-surrogate', 1, '/properties/n\uFFFD', 'the member name "n\\ud800" holds a lone UTF-16 surrogate; tiles write U+FFFD for it; here 2 member names become "n\uFFFD", and tiles keep the last one\'s value'],
      ['string-lone-surrogate', 2, '/properties/classification/n\ud800me', 'the member name "n\\ud800me" holds a lone UTF-16 surrogate; tiles write U+FFFD for it'],
      ['string-lone-surrogate', 3, '/fo\udfffo', 'the member name "fo\\udfffo" holds a lone UTF-16 surrogate; tiles write U+FFFD for it'],
    ]);
    for (const tiles of [json, pbf]) {
      expect(tiles.get(1)).toEqual({ 'c\uFFFD': 'second' });
      expect(tiles.get(2)).toEqual({ 'n\uFFFD': 'second' });
      expect(tiles.get(4)).toEqual({ k: 1 });
    }
    expect(json.get(3)).toEqual({ classification: { 'n\uFFFDme': 'Tumor' }, v: '\uFFFD' });
    expect(pbf.get(3)).toEqual({ 'classification.n\uFFFDme': 'Tumor', v: '\uFFFD' });
    expect(layer.fields).toEqual({ 'c\uFFFD': 'String', 'n\uFFFD': 'String', 'classification.n\uFFFDme': 'String', v: 'String', k: 'Number' });
    expect(layer.fieldenums).toEqual({ 'c\uFFFD': ['second'], 'n\uFFFD': ['second'], 'classification.n\uFFFDme': ['Tumor'], v: ['\uFFFD'] });
  });
});

describe('a lone surrogate in a collection member the pyramid keeps', () => {
  it('is U+FFFD in the JSON tiles\' collection properties and in the descriptor\'s vocabularies of a field, names and values alike', async () => {
    const text = `{"type":"FeatureCollection","properties":{"st\\ud800":"H\\udc00E"},"vocabularies":{"k":{"terms":{"T\\ud800":{"uri":"https://example.org/t"}}}},"features":[${point(1, '{"k":1}')}]}`;
    const { report, layer, jsonText, samples } = await built(Buffer.from(text), 'cells.json');
    expect(report.features.warningsByCode).toEqual({ 'string-lone-surrogate': 1 });
    expect(samples).toEqual([['string-lone-surrogate', null, '/properties/st\ud800', 'the member name "st\\ud800" holds a lone UTF-16 surrogate; tiles write U+FFFD for it']]);
    expect(jsonText).toContain('{"type":"FeatureCollection","properties":{"st\uFFFD":"H\uFFFDE"},"features":[');
    expect(jsonText).not.toMatch(/\\ud[89a-f]/i);
    expect(layer.vocabularies).toEqual({ k: { terms: { 'T\uFFFD': { uri: 'https://example.org/t' } } } });
  });
});

describe('invalid UTF-8 in a member name', () => {
  /** Read as U+FFFD: `fore\xffign` is read `fore\uFFFDign`. */
  const collection = spliced(`{"type":"FeatureCollection","features":[${[
    point(1, '{"cla@ss":"Tumor"}'),
    point(2, '{"classification":{"n@me":"Tumor"}}'),
    point(3, '{"k":1}', ',"fore@ign":1'),
    // Names that differ only in such bytes are read as one name, which JSON readers give the last one's value.
    point(4, '{"a@b":"one","a@b":"two"}'),
  ].join(',\n')}]}`, 0xff, 0xe9, 0xff, 0xff, 0xfe);
  const warning = (n: number, rest: string) => `${n} invalid UTF-8 byte sequence(s) in the text, each read as U+FFFD, the first ${rest} (a file saved in another encoding, such as Latin-1?)`;

  it('is warned of as a value is, naming the bytes and the member name, at its path; tiles and descriptor hold the name read', async () => {
    const { report, layer, json, pbf, samples } = await built(collection, 'cells.json');
    expect(report.features).toMatchObject({ read: 4, valid: 4, invalid: 0, warningsByCode: { 'text-invalid-utf8': 4 } });
    expect(samples).toEqual([
      ['text-invalid-utf8', 0, '/properties/cla\uFFFDss', warning(1, '(byte FF) in the member name "cla\uFFFDss"')],
      ['text-invalid-utf8', 1, '/properties/classification/n\uFFFDme', warning(1, '(byte E9) in the member name "n\uFFFDme"')],
      ['text-invalid-utf8', 2, '/fore\uFFFDign', warning(1, '(byte FF) in the member name "fore\uFFFDign"')],
      ['text-invalid-utf8', 3, '/properties/a\uFFFDb', warning(2, '(byte FF) in the member name "a\uFFFDb"; here 2 member names become "a\uFFFDb", and tiles keep the last one\'s value')],
    ]);
    for (const tiles of [json, pbf]) {
      expect(tiles.get(1)).toEqual({ 'cla\uFFFDss': 'Tumor' });
      expect(tiles.get(3)).toEqual({ k: 1 });
      expect(tiles.get(4)).toEqual({ 'a\uFFFDb': 'two' });
    }
    expect(json.get(2)).toEqual({ classification: { 'n\uFFFDme': 'Tumor' } });
    expect(pbf.get(2)).toEqual({ 'classification.n\uFFFDme': 'Tumor' });
    expect(layer.fields).toEqual({ 'cla\uFFFDss': 'String', 'classification.n\uFFFDme': 'String', k: 'Number', 'a\uFFFDb': 'String' });
    expect(layer.fieldenums).toEqual({ 'cla\uFFFDss': ['Tumor'], 'classification.n\uFFFDme': ['Tumor'], 'a\uFFFDb': ['two'] });
  });

  it('validate says the same of a collection and of a file of one Feature, and passes them (exit 0)', async () => {
    const dir = tempDir('member-names-utf8');
    const cells = path.join(dir, 'cells.json'), one = path.join(dir, 'one.geojson');
    fs.writeFileSync(cells, collection);
    fs.writeFileSync(one, spliced(point(4, '{"a@b":"one","a@b":"two"}'), 0xff, 0xfe));
    const v = await runCli(['validate', cells, one]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toContain(`${cells}:2:1: feature 1: /properties/classification/n\uFFFDme: warning: ${warning(1, '(byte E9) in the member name "n\uFFFDme"')} [text-invalid-utf8]\n`);
    expect(v.stdout).toContain(`${cells}:3:1: feature 2: /fore\uFFFDign: warning: ${warning(1, '(byte FF) in the member name "fore\uFFFDign"')} [text-invalid-utf8]\n`);
    expect(v.stdout).toContain(`${one}: /properties/a\uFFFDb: warning: ${warning(2, '(byte FF) in the member name "a\uFFFDb"; here 2 member names become "a\uFFFDb", and tiles keep the last one\'s value')} [text-invalid-utf8]\n`);
    expect(v.stdout).toContain('total: 2 files (0 invalid, 0 unreadable), 5 features, 0 errors, 5 warnings, 0 invalid features');
  });
});

describe('invalid UTF-8 in the name of a collection member', () => {
  it('is warned of by build and validate at the member\'s path, before the features and after them', async () => {
    const text = spliced(`{"type":"FeatureCollection","sli@de":"a.tif",\n"features":[${point(1, '{"k":1}')}],\n"vocabularie@":{}}`, 0xe9, 0xff);
    const expected = [
      ['text-invalid-utf8', null, '/sli\uFFFDde', '1 invalid UTF-8 byte sequence(s) in the text, each read as U+FFFD, the first (byte E9) in the member name "sli\uFFFDde" (a file saved in another encoding, such as Latin-1?)'],
      ['text-invalid-utf8', null, '/vocabularie\uFFFD', '1 invalid UTF-8 byte sequence(s) in the text, each read as U+FFFD, the first (byte FF) in the member name "vocabularie\uFFFD" (a file saved in another encoding, such as Latin-1?)'],
    ];
    const { report, json, samples } = await built(text, 'cells.json');
    expect(report.features).toMatchObject({ read: 1, valid: 1, warningsByCode: { 'text-invalid-utf8': 2 } });
    expect(samples).toEqual(expected);
    expect(json.get(1)).toEqual({ k: 1 });
    const v = await validateSource(memorySource('cells.json', text));
    expect(v).toMatchObject({ valid: true, features: 1, warnings: 2 });
    expect(v.samples.map((s) => [s.code, s.feature, s.path, s.message])).toEqual(expected);
  });
});

describe('validate, on names that a line cannot show as they are', () => {
  it('prints a path through a lone surrogate or a control character with its JSON escape (exit 0 for the warning, 1 for the error)', async () => {
    const dir = tempDir('member-names');
    const warned = path.join(dir, 'warned.ndjson'), invalid = path.join(dir, 'invalid.ndjson');
    fs.writeFileSync(warned, `${point(1, '{"classification":{"n\\ud800me":"Tumor"}}')}\n`);
    fs.writeFileSync(invalid, `${point(1, '{"a\\nb":1e400}')}\n`);
    const w = await runCli(['validate', warned]);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toContain(`${warned}: /properties/classification/n\\ud800me: warning: the member name "n\\ud800me" holds a lone UTF-16 surrogate; tiles write U+FFFD for it [string-lone-surrogate]\n`);
    const i = await runCli(['validate', invalid]);
    expect(i.code, i.stderr).toBe(1);
    expect(i.stdout).toContain(`${invalid}: /properties/a\\u000ab: a number beyond what JSON numbers hold (±1.8e308) reads as Infinity; tiles cannot carry it [value-not-finite]\n`);
  });
});
