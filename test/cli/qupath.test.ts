// QuPath exports, bare arrays, directories and dotted fields through the real binary: layers, PBF tags, descriptor, errors.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodePbf, readTree, tmpDir, type DecodedFeature } from '../helpers/pyramid.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/mudm-tiles.js');
const QUPATH = path.join(ROOT, 'sample-data/qupath');

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('node', [BIN, ...args], { cwd: ROOT, maxBuffer: 1 << 26 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

interface Layer { id: string; fields: Record<string, string>; fieldranges?: Record<string, number[]>; fieldenums?: Record<string, string[]>; fieldcolors?: Record<string, Record<string, string>> }
interface Descriptor { vector_layers: Layer[]; bounds: number[]; maxzoom: number; tiles: string[] }

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;
const layer = (d: Descriptor, id: string) => d.vector_layers.find((l) => l.id === id) as Layer;

/** Every feature of every PBF tile of zoom `z`. */
function pbfAtZoom(out: string, d: Descriptor, z: number): DecodedFeature[] {
  const side = 2 ** Math.ceil(Math.log2(Math.max(d.bounds[2], d.bounds[3])));
  const found: DecodedFeature[] = [];
  for (const [p, bytes] of readTree(out)) {
    const m = /^(\d+)\/(\d+)\/(\d+)\.pbf$/.exec(p);
    if (m && Number(m[1]) === z) found.push(...decodePbf(bytes, side, z, Number(m[2]), Number(m[3])));
  }
  return found;
}

/** Every feature of every JSON tile of zoom `z` (the overview at zoom 0 is a descriptor: pass z > 0). */
function jsonAtZoom(out: string, z: number): { layer: string; id: string; properties: Record<string, unknown> }[] {
  const found: { layer: string; id: string; properties: Record<string, unknown> }[] = [];
  for (const [p, bytes] of readTree(out)) {
    if (new RegExp(`^${z}/\\d+/\\d+\\.json$`).test(p)) found.push(...(JSON.parse(bytes.toString('utf8')) as { features: typeof found }).features);
  }
  return found;
}

/** The source features of the 0.4+ sample. */
const modern = readJson<{ features: { id: string; properties: Record<string, unknown>; nucleusGeometry?: unknown }[] }>(path.join(QUPATH, 'qupath-0.4.geojson')).features;

describe('QuPath 0.4+ export', () => {
  const out = path.join(tmpDir('mudm-qupath'), 'out');
  let d: Descriptor;

  // The tests below read the pyramid this one builds.
  it('builds layers by objectType, with nuclei as features of their own', async () => {
    const built = await run(['build', path.join(QUPATH, 'qupath-0.4.geojson'), '-o', out, '--layer-by', 'objectType', '--nucleus-features', '--workers', '2']);
    expect(built.stderr).toBe('');
    expect(built.code).toBe(0);
    expect(built.stdout).toMatch(/features: 139 read, 139 valid, 0 invalid/);
    d = readJson<Descriptor>(path.join(out, 'tileset.json'));
    expect(d.vector_layers.map((l) => l.id)).toEqual(['annotation', 'cell', 'detection', 'nucleus']);
    // verify's own reading of the rules (dotted tags from the JSON tiles' objects) agrees with the encoder.
    const v = await run(['verify', out]);
    expect(v.stdout + v.stderr).toMatch(/ok, \d+ tiles and \d+ features checked/);
    expect(v.code).toBe(0);
  });

  it('declares dotted fields with enums, ranges and the class colours', () => {
    const cell = layer(d, 'cell');
    expect(cell.fields).toMatchObject({
      id: 'String', objectType: 'String', 'classification.name': 'String', 'classification.names': 'String', 'classification.color': 'String',
      'measurements.Cell: Area': 'Number', 'measurements.Nucleus: Area': 'Number', 'measurements.Nucleus: Circularity': 'Number',
    });
    expect(Object.keys(cell.fields).some((f) => f === 'classification' || f === 'measurements')).toBe(false);
    const areas = modern.filter((f) => f.properties.objectType === 'cell').map((f) => (f.properties.measurements as Record<string, number>)['Cell: Area']);
    expect(cell.fieldranges?.['measurements.Cell: Area']).toEqual([Math.min(...areas), Math.max(...areas)]);
    expect(cell.fieldenums?.['classification.name']).toEqual(['Immune cells', 'Stroma', 'Tumor', 'Tumor: Negative', 'Tumor: Positive']);
    expect(cell.fieldcolors).toEqual({
      'classification.name': { 'Immune cells': '#a05aa0', Stroma: '#96c896', Tumor: '#c80000', 'Tumor: Negative': '#6e6edc', 'Tumor: Positive': '#dc3c28' },
    });
    expect(layer(d, 'annotation').fieldcolors).toEqual({ 'classification.name': { Necrosis: '#323232', Tumor: '#c80000' } });
    // The overview (the JSON pyramid's descriptor) carries the same layers.
    const overview = readJson<Descriptor>(path.join(out, '0/0/0.json'));
    expect(overview.vector_layers).toEqual(d.vector_layers);
  });

  it('writes dotted scalar tags in PBF tiles and the original objects in JSON tiles', () => {
    const cells = pbfAtZoom(out, d, d.maxzoom).filter((f) => f.layer === 'cell');
    const byId = new Map(cells.map((f) => [f.properties.id, f]));
    expect(byId.size).toBe(120);
    for (const src of modern.filter((f) => f.properties.objectType === 'cell')) {
      const tags = (byId.get(src.id) as DecodedFeature).properties;
      const m = src.properties.measurements as Record<string, unknown>;
      expect(tags['measurements.Cell: Area']).toBe(m['Cell: Area']);
      expect(tags['measurements.Nucleus: Circularity']).toBe(m['Nucleus: Circularity'] === 'NaN' ? undefined : m['Nucleus: Circularity']);
      const c = src.properties.classification as { name?: string; names?: string[] } | undefined;
      expect(tags['classification.name']).toBe(c ? c.name ?? c.names?.join(': ') : undefined);
      expect(Object.values(tags).some((v) => typeof v === 'string' && v.startsWith('{'))).toBe(false);
    }
    // JSON tiles: the objects as read (a derived class gains its full name; "NaN" measurements are null).
    const json = jsonAtZoom(out, d.maxzoom).filter((f) => f.layer === 'cell');
    expect(new Set(json.map((f) => f.id)).size).toBe(120);
    for (const f of json) {
      const src = modern.find((m) => m.id === f.id) as (typeof modern)[number];
      const c = src.properties.classification as { names?: string[] } | undefined;
      const measurements = Object.fromEntries(Object.entries(src.properties.measurements as object).map(([k, v]) => [k, v === 'NaN' ? null : v]));
      expect(f.properties).toEqual({ ...src.properties, measurements, ...(c ? { classification: c.names ? { name: c.names.join(': '), ...c } : c } : {}) });
    }
  });

  it('nuclei: layer nucleus, parentId the cell id, the cell class and its nucleus measurements, one per cell', () => {
    const nuclei = pbfAtZoom(out, d, d.maxzoom).filter((f) => f.layer === 'nucleus');
    const parents = new Map(modern.filter((f) => f.nucleusGeometry).map((f) => [f.id, f]));
    const seen = new Set(nuclei.map((n) => n.properties.parentId));
    expect(seen).toEqual(new Set(parents.keys()));
    for (const n of nuclei) {
      const cell = parents.get(n.properties.parentId as string) as (typeof modern)[number];
      const c = cell.properties.classification as { name?: string; names?: string[] } | undefined;
      expect(n.properties).toMatchObject({ objectType: 'nucleus' });
      expect(n.properties['classification.name']).toBe(c ? c.name ?? c.names?.join(': ') : undefined);
      // "Nucleus: …" measurements, not the cell's own nor "Nucleus/Cell area ratio" ("NaN" is null, which tiles leave out).
      const own = Object.entries(cell.properties.measurements as Record<string, unknown>).filter(([k, v]) => k.startsWith('Nucleus:') && typeof v === 'number');
      expect(own.length).toBeGreaterThan(0);
      expect(Object.entries(n.properties).filter(([k]) => k.startsWith('measurements.'))).toEqual(own.map(([k, v]) => [`measurements.${k}`, v]));
    }
    expect(layer(d, 'nucleus').fields).toMatchObject({ parentId: 'String', objectType: 'String', 'classification.name': 'String', 'measurements.Nucleus: Circularity': 'Number' });
  });
});

describe('QuPath 0.2-style export (a bare array)', () => {
  it('reads the array as features, normalising object_type, type ids, colorRGB, parentClass and measurement lists', async () => {
    const out = path.join(tmpDir('mudm-qupath'), 'out');
    const r = await run(['build', path.join(QUPATH, 'qupath-0.2.json'), '-o', out, '--layer-by', 'objectType', '--workers', '1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/features: 47 read, 47 valid, 0 invalid/);
    const d = readJson<Descriptor>(path.join(out, 'tileset.json'));
    expect(d.vector_layers.map((l) => l.id)).toEqual(['annotation', 'cell', 'detection']);
    const cell = layer(d, 'cell');
    expect(cell.fields).toMatchObject({ 'measurements.Cell: Area': 'Number', 'classification.name': 'String', 'classification.colorRGB': 'Number', 'classification.parentClass.name': 'String' });
    expect(cell.fieldcolors?.['classification.name']).toMatchObject({ 'Tumor: Positive': '#dc3c28', 'Tumor: Negative': '#6e6edc', Stroma: '#96c896' });
    expect(layer(d, 'annotation').fields).toMatchObject({ objectType: 'String', 'classification.name': 'String' });
    expect(layer(d, 'annotation').fields.id).toBeUndefined();
    // 0.2's type ids are no ids: detections are numbered by their input order (one crossing a tile border is in two tiles).
    const detections = new Map(pbfAtZoom(out, d, d.maxzoom).filter((f) => f.layer === 'detection').map((f) => [f.id, f.properties]));
    expect([...detections.keys()].sort((a, b) => (a as number) - (b as number))).toEqual([41, 42, 43, 44, 45, 46]);
    for (const t of detections.values()) expect(t).toMatchObject({ objectType: 'detection', 'classification.name': 'Immune cells', 'measurements.Area': expect.any(Number) });
  });
});

describe('directories of bare arrays', () => {
  const dir = path.join(QUPATH, 'patches');

  it('make one layer named after the directory, in whole-slide coordinates', async () => {
    const out = path.join(tmpDir('mudm-qupath'), 'out');
    const r = await run(['build', dir, '-o', out, '--workers', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/features: 36 read, 36 valid/);
    const d = readJson<Descriptor>(path.join(out, 'tileset.json'));
    expect(d.vector_layers.map((l) => l.id)).toEqual(['patches']);
    expect(d.bounds[2]).toBeGreaterThan(42000);
    expect(d.bounds[3]).toBeGreaterThan(87000);
  });

  it('make one layer per file with --layer-per-file', async () => {
    const out = path.join(tmpDir('mudm-qupath'), 'out');
    const r = await run(['build', dir, '-o', out, '--layer-per-file', '--format', 'json', '--workers', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(readJson<Descriptor>(path.join(out, 'tileset.json')).vector_layers.map((l) => l.id)).toEqual(['patch-0-0', 'patch-0-1', 'patch-1-0']);
  });
});

describe('fields named by options', () => {
  it('exit 2 when no feature has the --layer-by field, naming it and the fields there are, before any tile', async () => {
    const out = path.join(tmpDir('mudm-qupath'), 'out');
    const r = await run(['build', path.join(QUPATH, 'qupath-0.2.json'), '-o', out, '--layer-by', 'classification.nme']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--layer-by classification\.nme: no feature has a field "classification\.nme" \(classification\.name\?\); the fields are: .*classification\.name, .*measurements\.Cell: Area/);
    expect(fs.existsSync(out) ? fs.readdirSync(out) : []).toEqual([]);
  });

  it('exit 2 when --layer-by names an object (QuPath\'s classification), naming the fields under it', async () => {
    const out = path.join(tmpDir('mudm-qupath'), 'out');
    const r = await run(['build', path.join(QUPATH, 'qupath-0.4.geojson'), '-o', out, '--layer-by', 'classification']);
    expect([r.code, r.stderr]).toEqual([2, 'error: --layer-by classification: "classification" is an object in the features, not a field of one value: name a field under it, classification.color, classification.name, classification.names\nRun \'mudm-tiles build --help\' for usage.\n']);
    expect(fs.existsSync(out) ? fs.readdirSync(out) : []).toEqual([]);
  });

  it('exit 2 when no feature has a --plane-field field', async () => {
    const out = path.join(tmpDir('mudm-qupath'), 'out');
    const r = await run(['build', path.join(QUPATH, 'patches'), '-o', out, '--plane-field', 'c=chan']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--plane-field c=chan: no feature has a field "chan"; the fields are: classification\.color, classification\.name, id, measurements\.Area, objectType/);
  });
});

describe('validate', () => {
  it('says a bare array is not a document but build reads it, and checks each feature', async () => {
    const dir = tmpDir('mudm-qupath');
    const file = path.join(dir, 'cells.json');
    fs.writeFileSync(file, '[\n{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}},\n{"type":"Feature","geometry":{"type":"Point","coordinates":[1]},"properties":{}}\n]\n');
    const r = await run(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${file}: (top level): warning: a top-level JSON array is not a muDM document (wrap the features in a FeatureCollection); build accepts it and reads its elements as a sequence of features, like NDJSON [document-array]`);
    expect(r.stdout).toContain(`${file}:3:1: feature 1: /geometry/coordinates:`);
    expect(r.stdout).toContain(`${file}: invalid, 2 features (1 invalid), 1 error, 1 warning`);
    // Its features all valid: a warning, exit 0, as the same features one per line are valid.
    fs.writeFileSync(file, '[\n{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}\n]\n');
    const ok = await run(['validate', file]);
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toContain('[document-array]');
  });
});

describe('label masks', () => {
  it('the world is the mask size, not the extent of its labels', async () => {
    const dir = tmpDir('mudm-qupath');
    const w = 200, h = 150, data = new Uint8Array(w * h);
    for (let y = 20; y < 60; y++) for (let x = 30; x < 90; x++) data[y * w + x] = 5;
    await sharp(data, { raw: { width: w, height: h, channels: 1 } }).toColourspace('b-w').png().toFile(path.join(dir, 'labels.png'));
    const out = path.join(dir, 'out');
    const r = await run(['build', path.join(dir, 'labels.png'), '-o', out, '--workers', '1']);
    expect(r.code, r.stderr).toBe(0);
    const d = readJson<Descriptor>(path.join(out, 'tileset.json'));
    expect(d.bounds).toEqual([0, 0, 200, 150]);
  });
});

describe('QuPath export with --coarse-fields', () => {
  it('keeps the classification alone below --fields-from-zoom, every measurement from it; inspect says from which zoom', async () => {
    const out = path.join(tmpDir('mudm-qupath-few'), 'out');
    const built = await run(['build', path.join(QUPATH, 'qupath-0.4.geojson'), '-o', out, '--layer-by', 'objectType', '--nucleus-features', '--coarse-fields', 'classification', '--fields-from-zoom', '2']);
    expect(built.stderr).toBe('');
    expect(built.code).toBe(0);
    const d = readJson<Descriptor>(path.join(out, 'tileset.json'));
    const coarse = pbfAtZoom(out, d, 1);
    expect(coarse.length).toBeGreaterThan(100);
    for (const f of coarse) expect(Object.keys(f.properties).every((k) => k.startsWith('classification.')), JSON.stringify(f.properties)).toBe(true);
    const fine = pbfAtZoom(out, d, 2).filter((f) => f.layer === 'cell');
    expect(fine.every((f) => typeof f.properties['measurements.Nucleus: Area'] === 'number' && typeof f.properties.id === 'string')).toBe(true);
    for (const f of jsonAtZoom(out, 1)) expect(Object.keys(f.properties).filter((k) => k !== 'classification')).toEqual([]);
    const shown = await run(['inspect', out]);
    expect(shown.stdout).toMatch(/ {4}measurements\.Nucleus: Area: Number \[[\d., ]+\] \(from zoom 2\)\n/);
    expect(shown.stdout).toMatch(/ {4}classification\.name: String \{[^\n]*\}\n/);
  });

  it('--fields classification.name,objectType: only those at every zoom, the legend still in QuPath\'s class colours', async () => {
    const out = path.join(tmpDir('mudm-qupath-few'), 'out');
    const built = await run(['build', path.join(QUPATH, 'qupath-0.4.geojson'), '-o', out, '--layer-by', 'objectType', '--nucleus-features', '--fields', 'classification.name,objectType']);
    expect([built.code, built.stderr]).toEqual([0, '']);
    const d = readJson<Descriptor>(path.join(out, 'tileset.json'));
    for (const l of d.vector_layers) expect(Object.keys(l.fields), l.id).toEqual(['classification.name', 'objectType']);
    expect(layer(d, 'cell').fieldcolors?.['classification.name']).toMatchObject({ Tumor: '#c80000', Stroma: '#96c896' });
    expect(layer(d, 'nucleus').fieldcolors?.['classification.name']).toMatchObject({ Tumor: '#c80000' });
    const finest = pbfAtZoom(out, d, d.maxzoom);
    // Unclassified objects have no class to keep.
    for (const f of finest) expect(Object.keys(f.properties).filter((k) => k !== 'classification.name')).toEqual(['objectType']);
    expect(finest.filter((f) => f.properties['classification.name'] !== undefined).length).toBeGreaterThan(finest.length / 2);
  });

  it('refuses --fields-from-zoom without --coarse-fields (exit 2), writing nothing', async () => {
    const out = path.join(tmpDir('mudm-qupath-few'), 'out');
    const r = await run(['build', path.join(QUPATH, 'qupath-0.4.geojson'), '-o', out, '--fields-from-zoom', '2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--fields-from-zoom 2 says from which zoom tiles carry every field, which they do at all zooms without --coarse-fields: give --coarse-fields LIST too, or drop it');
    expect(fs.existsSync(out)).toBe(false);
  });
});
