// A member name given twice in one object (JSON.parse keeps the last value without a word): warned of by build and
// validate at the member's path, with both values, in features, collection members and whole-file documents.
import path from 'node:path';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPyramid } from '../../src/build/pipeline.js';
import { MemorySink } from '../../src/io/sink.js';
import { memorySource } from '../../src/io/read.js';
import { firstRepeated, namesAndStrings, repeatedName, stringsIn } from '../../src/io/json-names.js';
import { mulberry32 } from '../../src/random.js';
import type { BuildReport } from '../../src/report/types.js';
import { decodePbf } from '../helpers/pyramid.js';
import { removeTemps, runCli, tempDir } from '../e2e/helpers.js';

afterAll(removeTemps);

const point = (x: number, properties: string, members = '') => `{"type":"Feature"${members},"geometry":{"type":"Point","coordinates":[${x},5]},"properties":${properties}}`;

/** Builds `text` to zoom 1 in memory: the report, its samples, and per feature (by x) its PBF properties at zoom 1. */
async function built(text: string, name: string) {
  const sink = new MemorySink();
  const report: BuildReport = await buildPyramid([{ source: memorySource(name, Buffer.from(text)) }], { imageSize: '64,64', maxZoom: 1, workers: 1 }, { sink });
  const pbf = new Map<number, Record<string, unknown>>();
  for (const [file, b] of sink.files) {
    const [z, x, y] = file.split(/[/.]/).map(Number);
    if (z === 1 && file.endsWith('.pbf')) for (const f of decodePbf(b, report.world.side, z, x, y)) pbf.set(Math.round(f.rings[0][0][0]), f.properties);
  }
  const samples = report.features.samples.filter((s) => s.code === 'member-name-repeated').map((s) => [s.feature, s.path, s.message]);
  return { report, samples, pbf, sink };
}

describe('finding repeated names in a text', () => {
  it('names the first repeat by its pointer, with both values and the others', () => {
    const text = '{"a":{"b":[{"c":1,"d":"x\\"y","c":{"e":2}}],"f":3},"g":"h","f":1,"g":[1,"s"],"g":null}';
    const r = firstRepeated(text);
    expect(r).toEqual({ pointer: '/a/b/0/c', name: 'c', count: 2, first: '1', last: '{"e":2}', others: ['/g'] });
    expect(repeatedName(text, JSON.parse(text))).toEqual(r);
    // "f" is given once in each of two objects: no repeat.
    expect(firstRepeated('{"f":1,"a":{"f":2}}')).toBeUndefined();
    expect(firstRepeated('{"a~b/c":1,"a~b/c":2}')?.pointer).toBe('/a~0b~1c');
  });

  it('counts strings as the text holds them, and names and strings as a parse holds them', () => {
    for (const text of ['"x"', '{"k":"v\\\\","\\"":["a","b",{"c":"d"}]}', '[1,2,"3"]', '{"coordinates":[[1,2]],"x":"\\u0022"}']) {
      const value: unknown = JSON.parse(text);
      expect(namesAndStrings(value), text).toBeLessThanOrEqual(stringsIn(text));
      expect(repeatedName(text, value), text).toBeUndefined();
    }
    expect(stringsIn('{"k":"v\\\\","\\"":["a","b",{"c":"d"}]}')).toBe(7);
    expect(namesAndStrings(JSON.parse('{"k":"v\\\\","\\"":["a","b",{"c":"d"}]}'))).toBe(7);
  });

  it('finds every repeat injected into random objects, and none where there is none', () => {
    const rnd = mulberry32(7);
    const names = ['a', 'b', 'c"d', 'é', 'e\\f', 'coordinates', 'x y'];
    const value = (depth: number): string => {
      const k = Math.floor(rnd() * (depth > 2 ? 3 : 6));
      if (k === 0) return String(Math.round(rnd() * 100) / 4);
      if (k === 1) return JSON.stringify(names[Math.floor(rnd() * names.length)]);
      if (k === 2) return 'null';
      if (k === 3) return `[${Array.from({ length: Math.floor(rnd() * 3) }, () => value(depth + 1)).join(',')}]`;
      return object(depth + 1, false);
    };
    const object = (depth: number, repeat: boolean): string => {
      const keys = names.filter(() => rnd() < 0.5);
      const members = keys.map((n) => `${JSON.stringify(n)}:${value(depth)}`);
      if (repeat) members.push(`${JSON.stringify(keys[0] ?? 'a')}:${value(depth)}`);
      if (repeat && keys.length === 0) members.unshift('"a":0');
      return `{${members.join(',')}}`;
    };
    for (let i = 0; i < 300; i++) {
      const clean = object(0, false);
      expect(repeatedName(clean, JSON.parse(clean)), clean).toBeUndefined();
      const twice = `{"p":${object(1, true)},"q":${clean}}`;
      expect(repeatedName(twice, JSON.parse(twice))?.pointer, twice).toMatch(/^\/p\//);
    }
  });
});

describe('a build of features that repeat a name', () => {
  it('warns at the member, feature by feature, and the tiles keep the last value', async () => {
    const text = `{"type":"FeatureCollection","features":[
${point(10, '{"area":10.1,"class":"a","area":12.5}')},
${point(20, '{"k":"x\\"y"}')},
${point(30, '{"q":{"r":1,"r":2},"t":1,"t":2}', ',"id":3,"id":4')}
]}`;
    const { report, samples, pbf } = await built(text, 'cells.json');
    expect(report.features).toMatchObject({ read: 3, valid: 3, invalid: 0 });
    expect(report.features.warningsByCode).toEqual({ 'member-name-repeated': 2 });
    expect(samples).toEqual([
      [0, '/properties/area', 'member name "area" is given 2 times in one object: tiles keep the last value, 12.5, not the first, 10.1'],
      [2, '/id', 'member name "id" is given 2 times in one object: tiles keep the last value, 4, not the first, 3; repeated too: /properties/q/r, /properties/t'],
    ]);
    expect(pbf.get(10)).toEqual({ area: 12.5, class: 'a' });
    expect(pbf.get(30)).toMatchObject({ 'q.r': 2, t: 2 });
  });

  it('warns in a sequence, its first record read whole too, and in a file of one Feature', async () => {
    const seq = await built(`${point(10, '{"a":1,"a":2}')}\n${point(20, '{"b":1}')}\n${point(30, '{"c":[{"d":1,"d":2}]}')}\n`, 'cells.ndjson');
    expect(seq.samples.map((s) => s.slice(0, 2))).toEqual([[0, '/properties/a'], [2, '/properties/c/0/d']]);
    const one = await built(point(10, '{"a":"x","a":"y"}'), 'one.geojson');
    expect(one.samples).toEqual([[0, '/properties/a', 'member name "a" is given 2 times in one object: tiles keep the last value, "y", not the first, "x"']]);
    expect(one.pbf.get(10)).toEqual({ a: 'y' });
  });

  it('warns of a collection member given twice, or repeating a name inside, and keeps the last', async () => {
    const text = `{"type":"FeatureCollection","properties":{"slide":"a"},
"multiscale":{"axes":[{"name":"x","type":"space","unit":"micrometer","unit":"nanometer"},{"name":"y","type":"space","unit":"nanometer"}]},
"features":[${point(10, '{}')}],"properties":{"slide":"b"}}`;
    const { report, sink } = await built(text, 'cells.json');
    const collection = report.features.samples.filter((s) => s.code === 'member-name-repeated').map((s) => [s.feature, s.path, s.message]);
    expect(collection).toEqual([
      [null, '/properties', 'member name "properties" is given 2 times in one object: tiles keep the last value, {"slide":"b"}, not the first, {"slide":"a"}'],
      [null, '/multiscale/axes/0/unit', 'member name "unit" is given 2 times in one object: tiles keep the last value, "nanometer", not the first, "micrometer"'],
    ]);
    const d = JSON.parse(Buffer.from(sink.files.get('tileset.json') as Uint8Array).toString('utf8')) as { multiscale: { axes: { unit: string }[] } };
    expect(d.multiscale.axes[0].unit).toBe('nanometer');
  });
});

describe('the command line', () => {
  it('validate and build print the warning with file, line, feature and path, and exit 0', async () => {
    const dir = tempDir('repeated');
    const file = path.join(dir, 'cells.json');
    fs.writeFileSync(file, `{"type":"FeatureCollection","features":[\n${point(10, '{"a":1}')},\n${point(20, '{"a":1,"a":2}')}\n]}`);
    const v = await runCli(['validate', file]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toContain('cells.json:3:1: feature 1: /properties/a: warning: member name "a" is given 2 times in one object: tiles keep the last value, 2, not the first, 1 [member-name-repeated]');
    expect(v.stdout).toContain('0 errors, 1 warning');
    const b = await runCli(['build', file, '-o', path.join(dir, 'out'), '--workers', '2']);
    expect(b.code, b.stdout + b.stderr).toBe(0);
    expect(b.stdout).toMatch(/warning member-name-repeated: 1/);
  });
});
