// verifyPyramid: a fresh build passes; tampered, mismatched, misplaced, oversized and stray tiles are each caught, and
// so are zooms, bounds, overviews and a report's world that differ from what the descriptor declares.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, beforeAll } from 'vitest';
import { PbfWriter } from 'pbf';
import { openPmtiles } from '../../src/archive/pmtiles-reader.js';
import { PmtilesWriter } from '../../src/archive/pmtiles-writer.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { memoryReader, openPyramidReader, verifyPyramid, type ProblemCode, type VerifyResult } from '../../src/inspect/index.js';
import { tmpDir } from '../helpers/pyramid.js';
import { buildSquares, collection } from './fixture.js';

let pristine: Map<string, Uint8Array>;
beforeAll(async () => {
  pristine = ((await buildSquares()) as MemorySink).files;
});

/** A copy of the built files to tamper with. */
function files(): Map<string, Uint8Array> {
  return new Map([...pristine].map(([k, v]) => [k, new Uint8Array(v)]));
}

function verify(f: Map<string, Uint8Array>, opts = {}): VerifyResult {
  return verifyPyramid(memoryReader(f), opts);
}

function codes(r: VerifyResult): ProblemCode[] {
  return [...new Set(r.problems.map((p) => p.code))].sort();
}

function editJson(f: Map<string, Uint8Array>, path: string, edit: (doc: { features: Array<Record<string, unknown>> }) => void): void {
  const doc = JSON.parse(Buffer.from(f.get(path) as Uint8Array).toString()) as { features: Array<Record<string, unknown>> };
  edit(doc);
  f.set(path, new TextEncoder().encode(JSON.stringify(doc)));
}

/** Sets one member of a JSON file as a hand edit would (undefined removes it); `at` is its path of keys and indexes. */
function setMember(f: Map<string, Uint8Array>, file: string, at: (string | number)[], value: unknown): void {
  const doc = JSON.parse(Buffer.from(f.get(file) as Uint8Array).toString()) as Record<string | number, unknown>;
  let o = doc;
  for (const k of at.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  o[at[at.length - 1]] = value;
  f.set(file, new TextEncoder().encode(JSON.stringify(doc, null, 2)));
}

const listed = (r: VerifyResult) => r.problems.map((p) => [p.code, p.path, p.message]);

/** Changes a tile's report bytes too, so the report check does not mask the problem under test. */
function fixReport(f: Map<string, Uint8Array>): void {
  const report = JSON.parse(Buffer.from(f.get('build-report.json') as Uint8Array).toString()) as { tiles: { byZoom: Record<string, Record<'json' | 'pbf', { tiles: number; bytes: number }>> } };
  for (const [z, zr] of Object.entries(report.tiles.byZoom)) {
    for (const ext of ['json', 'pbf'] as const) {
      const files = [...f.entries()].filter(([k]) => k.startsWith(`${z}/`) && k.endsWith(`.${ext}`));
      zr[ext] = { tiles: files.length, bytes: files.reduce((n, [, v]) => n + v.length, 0) };
    }
  }
  f.set('build-report.json', new TextEncoder().encode(JSON.stringify(report)));
}

describe('verifyPyramid', () => {
  it('passes a fresh build, in 2D and with planes', async () => {
    const r = verify(files());
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.checked.tiles).toBeGreaterThan(10);
    const planes = new MemorySink();
    await buildSquares({ sink: planes }, [
      { source: memorySource('a.json', collection()), layer: 'cells', plane: { t: 1, z: 0 } },
      { source: memorySource('b.json', collection()), layer: 'cells', plane: { t: 3, z: 2 } },
    ]);
    expect(verifyPyramid(memoryReader(planes.files)).problems).toEqual([]);
    const pbfOnly = new MemorySink();
    await buildSquares({ sink: pbfOnly, format: 'pbf' });
    expect(verifyPyramid(memoryReader(pbfOnly.files)).problems).toEqual([]);
    const jsonOnly = new MemorySink();
    await buildSquares({ sink: jsonOnly, format: 'json' });
    expect(verifyPyramid(memoryReader(jsonOnly.files)).problems).toEqual([]);
  });

  it('catches a tampered tile that no longer decodes', () => {
    const f = files();
    f.set('2/1/1.pbf', new Uint8Array([0x1a, 0xff, 0xff, 0x03, 0x42]));
    f.set('1/0/0.json', new TextEncoder().encode('{"type":"FeatureCollection","features":[{'));
    fixReport(f);
    const r = verify(f);
    expect(r.ok).toBe(false);
    expect(r.problems.filter((p) => p.code === 'tile-undecodable').map((p) => p.path).sort()).toEqual(['1/0/0.json', '2/1/1.pbf']);
  });

  it('reports a JSON tile whose feature lost its coordinates (one flipped bit: "aoordinates") as invalid, not a crash', () => {
    const f = files();
    editJson(f, '1/0/0.json', (doc) => {
      const g = doc.features[0].geometry as Record<string, unknown>;
      g.aoordinates = g.coordinates;
      delete g.coordinates;
    });
    fixReport(f);
    const r = verify(f);
    expect(r.problems.map((p) => [p.code, p.path, p.message])).toEqual([['tile-invalid', '1/0/0.json', expect.stringMatching(/^\/features\/0\/geometry: \w+ must have coordinates, found none \[coordinates-missing\]/)]]);
  });

  it('catches JSON and PBF tiles that disagree: geometry, properties, order, a missing twin', () => {
    const moved = files();
    editJson(moved, '2/0/0.json', (doc) => {
      const ring = ((doc.features[0].geometry as { coordinates: number[][][] }).coordinates)[0];
      ring[1][0] += 0.5;
    });
    fixReport(moved);
    expect(codes(verify(moved))).toEqual(['feature-mismatch']);
    expect(verify(moved).problems[0].message).toMatch(/position 1/);

    const relabelled = files();
    editJson(relabelled, '2/0/0.json', (doc) => { (doc.features[0].properties as Record<string, unknown>).label = 99; });
    fixReport(relabelled);
    expect(verify(relabelled).problems).toMatchObject([{ code: 'feature-mismatch', path: '2/0/0.json', message: expect.stringMatching(/tag "label"/) }]);

    const reordered = files();
    editJson(reordered, '2/0/0.json', (doc) => doc.features.reverse());
    fixReport(reordered);
    expect(codes(verify(reordered))).toEqual(['feature-mismatch']);

    const orphan = files();
    orphan.delete('2/1/1.json');
    fixReport(orphan);
    expect(verify(orphan).problems).toMatchObject([{ code: 'format-mismatch', path: '2/1/1.pbf' }]);
  });

  it('catches tiles out of the bounds: outside the grid, beyond the image, features beyond the buffered tile', () => {
    const f = files();
    f.set('2/4/0.pbf', f.get('2/0/0.pbf') as Uint8Array);
    // The image is 1000 × 600 in a 1024 world: row 3 of zoom 2 starts at y = 768.
    f.set('2/0/3.pbf', f.get('2/0/0.pbf') as Uint8Array);
    f.set('2/0/3.json', f.get('2/0/0.json') as Uint8Array);
    fixReport(f);
    const r = verify(f);
    expect(r.problems.filter((p) => p.code === 'tile-outside-grid').map((p) => p.path)).toEqual(['2/4/0.pbf']);
    expect(r.problems.filter((p) => p.code === 'tile-outside-bounds').map((p) => p.path)).toEqual(['2/0/3.pbf']);

    const far = files();
    editJson(far, '2/0/0.json', (doc) => {
      const ring = ((doc.features[0].geometry as { coordinates: number[][][] }).coordinates)[0];
      ring[1][0] = 300; // beyond 256 + 4 px of buffer
    });
    fixReport(far);
    expect(codes(verify(far))).toEqual(['feature-mismatch', 'feature-outside-tile']);

    // A point drawn as its circle may lie up to its radius from the tile, and the message says so when it lies farther.
    const circle = (x: number) => {
      const c = files();
      editJson(c, '2/0/0.json', (doc) => {
        doc.features[0].geometry = { type: 'Point', coordinates: [x, 100] };
        doc.features[0].properties = { ...(doc.features[0].properties as Record<string, unknown>), radius: 10 };
      });
      fixReport(c);
      return verify(c).problems.filter((p) => p.code === 'feature-outside-tile').map((p) => p.message);
    };
    expect(circle(265)).toEqual([]);
    expect(circle(300)).toEqual(['1 position(s) outside the buffered tile [-4, -4, 260, 260]: feature 0 has [300, 100], farther from the tile than its radius (10 px)']);
  });

  it('holds tiles to the budget the build report says the build held: its bytes, none with --lod none, the default without the field', () => {
    const withBudget = (budget: unknown) => {
      const f = files();
      const report = JSON.parse(Buffer.from(f.get('build-report.json') as Uint8Array).toString()) as { tiles: { thinning: Record<string, unknown> } };
      expect(report.tiles.thinning.budget).toBe(500 * 1024);
      if (budget === undefined) delete report.tiles.thinning.budget;
      else report.tiles.thinning.budget = budget;
      f.set('build-report.json', new TextEncoder().encode(JSON.stringify(report)));
      return f;
    };
    const over = (r: VerifyResult) => r.problems.filter((p) => p.code === 'tile-over-budget').length;
    expect(over(verify(withBudget(64)))).toBeGreaterThan(0);
    expect(verify(withBudget(64)).problems.find((p) => p.code === 'tile-over-budget')?.message).toMatch(/over the tile budget of 64 bytes/);
    const none = verify(withBudget(null));
    expect([none.ok, none.notes]).toEqual([true, ['tile sizes were not held to a budget: the build used --lod none (give --tile-budget to check them)']]);
    // Given, a budget is checked whatever the build held.
    expect(over(verify(withBudget(null), { tileBudget: 64 }))).toBeGreaterThan(0);
    expect(verify(withBudget(undefined)).ok).toBe(true);
    expect(verify(withBudget('big')).ok).toBe(true);
  });

  it('checks the budget below the finest zoom only, and flags zooms outside minzoom–maxzoom', () => {
    const f = files();
    const r = verify(f, { tileBudget: 64 });
    const over = r.problems.filter((p) => p.code === 'tile-over-budget');
    expect(over.length).toBeGreaterThan(0);
    expect(over.every((p) => !p.path.startsWith('2/'))).toBe(true);
    // The budget holds PBF tiles; JSON tiles beside them may be larger.
    expect(over.every((p) => p.path.endsWith('.pbf'))).toBe(true);
    expect(codes(r)).toEqual(['tile-over-budget']);

    f.set('5/0/0.pbf', f.get('0/0/0.pbf') as Uint8Array);
    fixReport(f);
    expect(verify(f).problems).toContainEqual(expect.objectContaining({ code: 'zoom-outside-range', path: '5' }));
    // The overview alone in zoom 0 is no zoom out of range when minzoom is above 0 (the overview and report say so too).
    setMember(f, 'tileset.json', ['minzoom'], 1);
    setMember(f, '0/0/0.json', ['minzoom'], 1);
    setMember(f, 'build-report.json', ['world', 'minZoom'], 1);
    f.delete('0/0/0.pbf');
    f.delete('5/0/0.pbf');
    fixReport(f);
    expect(verify(f).problems).toEqual([]);
  });

  it('checks the descriptor, the overview, the report, and stray files', () => {
    expect(verify(new Map())).toMatchObject({ ok: false, problems: [{ code: 'descriptor-unusable' }] });

    const f = files();
    const d = JSON.parse(Buffer.from(f.get('tileset.json') as Uint8Array).toString()) as Record<string, unknown>;
    d.tiles = ['{zlvl}/{y}/{x}.pbf'];
    d.scale_factor = 'two';
    f.set('tileset.json', new TextEncoder().encode(JSON.stringify(d)));
    // The overview, written with the descriptor, differs from it now (its scale_factor).
    expect(codes(verify(f))).toEqual(['descriptor-invalid', 'descriptor-layout', 'overview-invalid']);
    // Absent, scale_factor means 2 (spec 2.3): no problem.
    const e = files();
    const without = JSON.parse(Buffer.from(e.get('tileset.json') as Uint8Array).toString()) as Record<string, unknown>;
    delete without.scale_factor;
    e.set('tileset.json', new TextEncoder().encode(JSON.stringify(without)));
    expect(verify(e)).toMatchObject({ ok: true, problems: [] });

    const g = files();
    g.delete('0/0/0.json');
    expect(verify(g).problems).toMatchObject([{ code: 'overview-missing', path: '0/0/0.json' }]);

    const h = files();
    h.set('1/0/0.pbf.tmp-abcd-0', new Uint8Array(3));
    const report = JSON.parse(Buffer.from(h.get('build-report.json') as Uint8Array).toString()) as { tiles: { byZoom: Record<string, { pbf: { tiles: number } }> } };
    report.tiles.byZoom['1'].pbf.tiles += 1;
    h.set('build-report.json', new TextEncoder().encode(JSON.stringify(report)));
    const r = verify(h);
    expect(codes(r)).toEqual(['report-mismatch', 'stray-file']);
    expect(r.problems.find((p) => p.code === 'stray-file')?.message).toMatch(/interrupted/);

    // A user's files in the zoom folders, named as no tile: noted, no fault; one named as a tile out of place is one.
    const u = files();
    u.set('0/data.csv', new TextEncoder().encode('a,b\n'));
    u.set('1/notes/readme', new TextEncoder().encode('mine'));
    u.set('2024/holiday/img.jpg', new TextEncoder().encode('jpeg'));
    const noted = verify(u);
    expect(noted).toMatchObject({ ok: true, problems: [] });
    expect(noted.notes).toContain('3 entries in the zoom folders not named as tiles, not part of the pyramid (a viewer never asks for them): 0/data.csv, 1/notes, 2024/holiday');
    u.set('1/notes.pbf', new Uint8Array(3));
    expect(verify(u).problems).toMatchObject([{ code: 'stray-file', path: '1/notes.pbf', message: 'not a tile of this layout' }]);
    // A tile in a folder outside the zooms is one.
    u.set('2024/0/0.pbf', new Uint8Array(3));
    expect(verify(u).problems.map((p) => p.code)).toContain('zoom-outside-range');
  });

  it('names one stray JSON tile in a PBF pyramid once, not every PBF tile as lacking its twin', async () => {
    const pbfOnly = ((await buildSquares({ format: 'pbf' })) as MemorySink).files;
    expect(verifyPyramid(memoryReader(pbfOnly))).toMatchObject({ ok: true });
    const f = new Map(pbfOnly);
    f.set('2/1/1.json', pristine.get('2/1/1.json') as Uint8Array);
    f.set('0/0/0.json', pristine.get('0/0/0.json') as Uint8Array);
    const r = verifyPyramid(memoryReader(f));
    expect(r.problems.map((x) => [x.code, x.path, x.message])).toEqual([
      ['stray-file', '0/0/0.json', 'a JSON tile in a pyramid built without JSON tiles (its report counts none)'],
      ['stray-file', '2/1/1.json', 'a JSON tile in a pyramid built without JSON tiles (its report counts none)'],
    ]);
  });

  it('holds the tiles\' fields against the descriptor: a field it lacks, a value its fieldenums lack or outside its fieldranges, each said once', () => {
    const f = files();
    const d = JSON.parse(Buffer.from(f.get('tileset.json') as Uint8Array).toString()) as { vector_layers: { fields: Record<string, string>; fieldenums?: Record<string, string[]> }[] };
    delete d.vector_layers[0].fields.score;
    d.vector_layers[0].fieldenums = { ...d.vector_layers[0].fieldenums, featureClass: ['alpha', 'beta'] };
    (d.vector_layers[0] as { fieldranges?: Record<string, number[]> }).fieldranges = { label: [1, 5] };
    f.set('tileset.json', new TextEncoder().encode(JSON.stringify(d)));
    const r = verify(f);
    expect(r.problems.filter((x) => x.code === 'field-mismatch').map((x) => x.message).sort()).toEqual([
      'layer cells: field "score" is in the tiles, not among the descriptor\'s fields',
      'layer cells: value "gamma" of field "featureClass" is in the tiles, not among its fieldenums',
      'layer cells: value 6 of field "label" is in the tiles, outside its fieldranges [1, 5]',
    ]);
  });

  it('names a layer the descriptor lacks once per tile and format, with how many features name it', () => {
    const f = files();
    const d = JSON.parse(Buffer.from(f.get('tileset.json') as Uint8Array).toString()) as { vector_layers: { id: string }[] };
    d.vector_layers[0].id = 'renamed';
    f.set('tileset.json', new TextEncoder().encode(JSON.stringify(d)));
    const unknown = verify(f, { maxPerCode: 1000 }).problems.filter((x) => x.code === 'unknown-layer');
    expect(unknown.length).toBeGreaterThan(0);
    expect(new Set(unknown.map((x) => x.path)).size).toBe(unknown.length);
    const json = unknown.find((x) => x.path === '2/1/1.json');
    expect(json?.message).toMatch(/^\d+ features \(the first 0\): layer "cells" is not one of the descriptor's vector_layers$/);
    expect(unknown.find((x) => x.path === '2/1/1.pbf')?.message).toBe('layer "cells" is not one of the descriptor\'s vector_layers');
  });

  it('rejects a PBF tile with the wrong layer version or extent', () => {
    const f = files();
    const w = new PbfWriter();
    w.writeMessage(3, (_: unknown, pbf: PbfWriter) => {
      pbf.writeVarintField(15, 1);
      pbf.writeStringField(1, 'cells');
      pbf.writeVarintField(5, 512);
      pbf.writeMessage(2, (__: unknown, p: PbfWriter) => {
        p.writeVarintField(1, 1);
        p.writeVarintField(3, 1);
        p.writeMessage(4, (___: unknown, g: PbfWriter) => { g.writeVarint((1 << 3) | 1); g.writeSVarint(10); g.writeSVarint(10); }, null);
      }, null);
    }, null);
    f.set('2/0/0.pbf', w.finish());
    fixReport(f);
    const msgs = verify(f).problems.filter((p) => p.code === 'pbf-layer').map((p) => p.message);
    expect(msgs).toEqual([expect.stringMatching(/version 1/), expect.stringMatching(/extent 512/)]);
  });

  it('names declared zooms that hold no tile, a run of them once, and not a zoom the budget thinned to nothing', async () => {
    const f = files();
    for (const k of [...f.keys()]) if (k.startsWith('1/')) f.delete(k);
    expect(listed(verify(f))).toEqual([['zoom-missing', '1', 'zoom 1 holds no tile, but tileset.json declares minzoom–maxzoom 0–2 and build-report.json counts 8 tile(s) there (4 PBF, 4 JSON)']]);
    // Without a report, the descriptor's layers say what each zoom draws.
    for (const k of [...f.keys()]) if (k.startsWith('2/')) f.delete(k);
    f.delete('build-report.json');
    expect(listed(verify(f))).toEqual([
      ['zoom-missing', '1', 'zooms 1–2 hold no tile, but tileset.json declares minzoom–maxzoom 0–2 and its layer "cells" draws features there (no kept_fraction of 0)'],
      ['report-missing', 'build-report.json', 'no build-report.json: the pyramid was not finished by a build'],
    ]);
    // A budget of 100 bytes leaves zoom 0 without a tile: the report counts none there, the layer keeps none.
    const thin = ((await buildSquares({ tileBudget: 100, format: 'pbf' })) as MemorySink).files;
    expect([...thin.keys()].filter((k) => k.startsWith('0/'))).toEqual([]);
    expect(verifyPyramid(memoryReader(thin)).problems).toEqual([]);
    thin.delete('build-report.json');
    expect(codes(verifyPyramid(memoryReader(thin)))).toEqual(['report-missing']);
  });

  it('names a zoom an archive lacks, with its report beside and alone', async () => {
    const dir = tmpDir('mudm-verify-zooms');
    try {
      const whole = path.join(dir, 'whole.pmtiles'), short = path.join(dir, 'short.pmtiles');
      await buildSquares({ out: whole });
      const a = await openPmtiles(whole);
      const w = new PmtilesWriter(short, { tileType: a.header.tileType, tileCompression: a.header.tileCompression });
      for await (const t of a.tiles()) if (t.z !== 1) w.add(t.z, t.x, t.y, (await a.storedTile(t.z, t.x, t.y)) as Uint8Array);
      w.finish(await a.metadata() as object);
      await a.close();
      const check = async () => {
        const reader = await openPyramidReader(short);
        const r = verifyPyramid(reader);
        reader.close();
        return listed(r);
      };
      expect(await check()).toEqual([['zoom-missing', '1', `zoom 1 is not in ${short}, but tileset.json declares minzoom–maxzoom 0–2 and its layer "cells" draws features there (no kept_fraction of 0)`]]);
      fs.copyFileSync(path.join(dir, 'whole.build-report.json'), path.join(dir, 'short.build-report.json'));
      expect(await check()).toEqual([['zoom-missing', '1', `zoom 1 is not in ${short}, but tileset.json declares minzoom–maxzoom 0–2 and build-report.json counts 4 tile(s) there (4 PBF, 0 JSON)`]]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds the bounds against the features in the tiles, and the report\'s world against tileset.json', () => {
    const f = files();
    setMember(f, 'tileset.json', ['bounds'], [0, 0, 900, 600]);
    expect(listed(verify(f))).toEqual([
      ['bounds-mismatch', 'tileset.json', 'bounds [0, 0, 900, 600] do not cover the features in the tiles: 3 position(s) in 3 tile(s) lie beyond them by more than a tile\'s buffer, the first [980, 20] in 0/0/0.pbf; the features reach [20, 20, 980, 580]'],
      ['overview-invalid', '0/0/0.json', 'bounds: x and y [0,0,1000,600] here, [0,0,900,600] in tileset.json'],
      ['report-mismatch', 'build-report.json', 'world differs from tileset.json: width 1000 here, 900 in tileset.json\'s bounds [0, 0, 900, 600]'],
    ]);
    const g = files();
    setMember(g, 'build-report.json', ['world', 'side'], 2048);
    setMember(g, 'build-report.json', ['world', 'layers'], ['cells', 'nuclei']);
    expect(listed(verify(g))).toEqual([['report-mismatch', 'build-report.json', 'world differs from tileset.json: side 2048 here, 1024 from tileset.json\'s bounds; layers ["cells","nuclei"] here, ["cells"] in tileset.json\'s vector_layers']]);
  });

  it('holds each overview against tileset.json: a difference said once, however many planes\' overviews share it', async () => {
    const f = files();
    setMember(f, '0/0/0.json', ['vector_layers', 0, 'fieldranges', 'label'], [1, 10]);
    setMember(f, '0/0/0.json', ['maxzoom'], 5);
    expect(listed(verify(f))).toEqual([
      ['overview-invalid', '0/0/0.json', 'vector_layers: layer "cells" fieldranges: {"label":[1,10],"parentId":[1,1],"score":[0.1,0.4]} here, {"label":[1,7],"parentId":[1,1],"score":[0.1,0.4]} in tileset.json'],
      ['overview-invalid', '0/0/0.json', 'maxzoom: 5 here, 2 in tileset.json'],
    ]);
    const planes = new MemorySink();
    await buildSquares({ sink: planes }, [
      { source: memorySource('a.json', collection()), layer: 'cells', plane: { t: 1, z: 0 } },
      { source: memorySource('b.json', collection()), layer: 'cells', plane: { t: 3, z: 2 } },
    ]);
    setMember(planes.files, 'tileset.json', ['vector_layers', 0, 'complete_zooms'], [2]);
    setMember(planes.files, '0/3/2/0/0.json', ['bounds', 0], 1);
    expect(listed(verifyPyramid(memoryReader(planes.files)))).toEqual([
      ['overview-invalid', '0/1/0/0/0.json', 'vector_layers: layer "cells" complete_zooms: [0,1,2] here, [2] in tileset.json (the same in 1 other overview(s))'],
      ['overview-invalid', '0/3/2/0/0.json', 'bounds: planes [1,0,2]–[3,0,2] (t, c, z) here, where the overview at this path is plane [3,0,2] alone'],
    ]);
  });
});
