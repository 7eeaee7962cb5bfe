// Streaming reader: every input format, chunk boundaries anywhere, exact syntax-error positions, flat memory.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  defaultLayerOf,
  fileSource,
  layerNameFor,
  memorySource,
  readDocuments,
  readEventBatches,
  stdinSource,
  streamSource,
  type ReadEvent,
  type Source,
} from '../../src/io/read.js';
import { locateJsonError } from '../../src/io/json-errors.js';
import { readError } from '../helpers/read.js';
import { makeTemp } from '../helpers/temps.js';
import { runProcess } from '../e2e/helpers.js';

async function collect(source: Source): Promise<ReadEvent[]> {
  const out: ReadEvent[] = [];
  for await (const ev of readDocuments(source)) out.push(ev);
  return out;
}

/** The same input cut into chunks of many sizes must always give the same events. */
async function everyChunking(name: string, text: string | Uint8Array): Promise<ReadEvent[]> {
  const whole = await collect(memorySource(name, text));
  for (const size of [1, 2, 3, 5, 7, 13, 64]) {
    expect(await collect(memorySource(name, text, size)), `chunk size ${size}`).toEqual(whole);
  }
  return whole;
}


const F1 = { type: 'Feature', id: 1, geometry: { type: 'Point', coordinates: [1.5, 2] }, properties: { s: 'a]}"\\[{' } };
const F2 = { type: 'Feature', id: 'b', geometry: null, properties: null };
const features = (evs: ReadEvent[]) => evs.filter((e) => e.kind === 'feature');

describe('FeatureCollection', () => {
  it('pretty-printed: features with positions, exact text, members after the last feature', async () => {
    const text = JSON.stringify({ type: 'FeatureCollection', properties: { a: 1 }, features: [F1, F2], bbox: [0, 0, 1, 1] }, null, 2);
    const evs = await everyChunking('fc.json', text);
    const fs = features(evs);
    expect(fs.map((e) => (e.kind === 'feature' ? JSON.parse(e.text) : null))).toEqual([F1, F2]);
    expect(fs.map((e) => [e.kind === 'feature' && e.index, e.kind === 'feature' && e.line, e.kind === 'feature' && e.column])).toEqual([
      [0, 7, 5],
      [1, 21, 5],
    ]);
    // The text is exactly the element's bytes, indentation and all.
    const first = fs[0];
    expect(first.kind === 'feature' && text.includes(first.text)).toBe(true);
    expect(evs[evs.length - 1]).toEqual({ kind: 'members', members: { type: 'FeatureCollection', properties: { a: 1 }, bbox: [0, 0, 1, 1] } });
  });

  it('deep indentation (skipped four bytes at a time where the chunk allows): the same events and positions at any chunking', async () => {
    const text = JSON.stringify({ type: 'FeatureCollection', features: [F1, F2, F1] }, null, 9);
    const whole = await everyChunking('fc.json', text);
    for (const size of [4, 8, 12, 16, 1 << 20]) expect(await collect(memorySource('fc.json', text, size)), `chunk size ${size}`).toEqual(whole);
    const starts = text.split('\n').flatMap((l, i) => (l === `${' '.repeat(18)}{` ? [i + 1] : []));
    expect(starts).toHaveLength(3);
    expect(features(whole).map((e) => e.kind === 'feature' && [e.line, e.column])).toEqual(starts.map((line) => [line, 19]));
    expect(features(whole).map((e) => e.kind === 'feature' && JSON.parse(e.text))).toEqual([F1, F2, F1]);
  });

  it('minified on one line', async () => {
    const text = JSON.stringify({ type: 'FeatureCollection', features: [F1, F2, F1] });
    const evs = await everyChunking('fc.json', text);
    const fs = features(evs);
    expect(fs).toHaveLength(3);
    expect(fs.map((e) => e.kind === 'feature' && e.line)).toEqual([1, 1, 1]);
    const cols = fs.map((e) => (e.kind === 'feature' ? e.column : 0));
    expect(cols[0]).toBe(text.indexOf('{"type":"Feature"') + 1);
    expect(cols[1]).toBe(cols[0] + JSON.stringify(F1).length + 1);
  });

  it('CRLF line ends and a byte order mark', async () => {
    const text = `\uFEFF{"type": "FeatureCollection",\r\n"features": [\r\n  ${JSON.stringify(F1)},\r\n  ${JSON.stringify(F2)}\r\n]\r\n}\r\n`;
    const evs = await everyChunking('crlf.json', text);
    expect(features(evs).map((e) => e.kind === 'feature' && [e.line, e.column, JSON.parse(e.text)])).toEqual([
      [3, 3, F1],
      [4, 3, F2],
    ]);
    expect(evs.at(-1)).toEqual({ kind: 'members', members: { type: 'FeatureCollection' } });
  });

  it('features first, type and other members after', async () => {
    const evs = await everyChunking('late.json', `{"features":[${JSON.stringify(F2)}],"type":"FeatureCollection","x":{"y":[1,{"z":"]"}]}}`);
    expect(features(evs)).toHaveLength(1);
    expect(evs.at(-1)).toEqual({ kind: 'members', members: { type: 'FeatureCollection', x: { y: [1, { z: ']' }] } } });
  });

  it('empty features; strings full of brackets, escaped quotes and backslashes; non-ASCII', async () => {
    const tricky = { type: 'Feature', geometry: null, properties: { a: '"}]{[', b: '\\', c: '\\"', d: 'µm ✓ 😀', e: '\u001e' } };
    const evs = await everyChunking('s.json', `{"type":"FeatureCollection","features":[${JSON.stringify(tricky)},[],"x",1e3,null,true]}`);
    expect(features(evs).map((e) => e.kind === 'feature' && JSON.parse(e.text))).toEqual([tricky, [], 'x', 1e3, null, true]);
    expect(await everyChunking('e.json', '{"type":"FeatureCollection","features":[]}')).toEqual([
      { kind: 'members', members: { type: 'FeatureCollection' } },
    ]);
  });

  it('a __proto__ member stays data', async () => {
    const evs = await collect(memorySource('p.json', '{"type":"FeatureCollection","__proto__":{"x":1},"features":[]}'));
    const m = evs[0].kind === 'members' ? evs[0].members : {};
    expect(Object.getPrototypeOf(m)).toBe(Object.prototype);
    expect(Object.keys(m)).toEqual(['type', '__proto__']);
  });

  it('columns count bytes: after non-ASCII text the column is the UTF-8 offset', async () => {
    const evs = await collect(memorySource('u.json', '{"name":"µ","type":"FeatureCollection","features":[{}]}'));
    expect(evs[0]).toMatchObject({ kind: 'feature', line: 1, column: 53 });
  });
});

describe('sequences and single documents', () => {
  it('NDJSON: one feature per line, blank lines and CRLF allowed', async () => {
    const text = `${JSON.stringify(F1)}\n\n${JSON.stringify(F2)}\r\n  \n${JSON.stringify(F1)}\n`;
    const evs = await everyChunking('f.ndjson', text);
    expect(evs.map((e) => e.kind === 'feature' && [e.index, e.line, e.column, JSON.parse(e.text)])).toEqual([
      [0, 1, 1, F1],
      [1, 3, 1, F2],
      [2, 5, 1, F1],
    ]);
  });

  it('NDJSON without a final newline, and a last scalar line', async () => {
    const evs = await everyChunking('f.ndjson', `${JSON.stringify(F2)}\n42`);
    expect(evs.map((e) => e.kind === 'feature' && e.text)).toEqual([JSON.stringify(F2), '42']);
  });

  it('GeoJSON Text Sequence (RFC 8142): RS before each record', async () => {
    const text = `\x1e${JSON.stringify(F1)}\n\x1e${JSON.stringify(F2)}\n`;
    const evs = await everyChunking('f.geojsons', text);
    expect(evs.map((e) => e.kind === 'feature' && [e.index, e.line, e.column, JSON.parse(e.text)])).toEqual([
      [0, 1, 2, F1],
      [1, 2, 2, F2],
    ]);
    // One record is still a sequence, not a document.
    expect((await collect(memorySource('one', `\x1e${JSON.stringify(F2)}\n`)))[0].kind).toBe('feature');
  });

  it('a single bare Feature, geometry, descriptor or scalar is a document', async () => {
    for (const value of [F1, { type: 'Point', coordinates: [1, 2] }, { tilejson: '3.0.0', tiles: ['{z}/{x}/{y}.pbf'], vector_layers: [] }, 'x', 7]) {
      const evs = await everyChunking('doc.json', `\n  ${JSON.stringify(value, null, 1)}\n`);
      expect(evs).toEqual([{ kind: 'document', index: 0, line: 2, column: 3, value }]);
    }
  });

  it('a top-level array streams its elements as features, after an array event, whatever the chunking', async () => {
    const text = `\n [\n${JSON.stringify(F1)},\r\n  ${JSON.stringify(F2, null, 1)}, 7, [1]\n]\n`;
    const evs = await everyChunking('bare.json', text);
    expect(evs[0]).toEqual({ kind: 'array', line: 2, column: 2 });
    expect(evs.slice(1).map((e) => e.kind === 'feature' && [e.index, e.line, e.column, JSON.parse(e.text)])).toEqual([
      [0, 3, 1, F1],
      [1, 4, 3, F2],
      [2, 9, 4, 7],
      [3, 9, 7, [1]],
    ]);
    expect(await everyChunking('empty.json', '[ ]')).toEqual([{ kind: 'array', line: 1, column: 1 }]);
  });

  it('a top-level array keeps flat memory: its elements come out chunk by chunk, never the whole array at once', async () => {
    const element = JSON.stringify(F1);
    const n = 2000;
    async function* chunks() {
      yield new TextEncoder().encode('[');
      for (let i = 0; i < n; i++) yield new TextEncoder().encode(`${i ? ',' : ''}${element}`);
      yield new TextEncoder().encode(']');
    }
    let batches = 0, most = 0, count = 0;
    for await (const events of readEventBatches({ name: 'big.json', open: chunks })) {
      batches++;
      most = Math.max(most, events.length);
      count += events.filter((e) => e.kind === 'feature').length;
    }
    expect(count).toBe(n);
    expect(most).toBeLessThanOrEqual(2);
    expect(batches).toBeGreaterThan(n / 2);
  });

  it('a descriptor that has features is not streamed (tilejson first)', async () => {
    const value = { tilejson: '3.0.0', features: [1, 2] };
    expect(await collect(memorySource('d.json', JSON.stringify(value)))).toEqual([{ kind: 'document', index: 0, line: 1, column: 1, value }]);
  });

  it('a Feature whose type comes before a foreign `features` member stays one document', async () => {
    const value = { type: 'Feature', geometry: null, features: [1] };
    expect((await collect(memorySource('f.json', JSON.stringify(value))))[0]).toMatchObject({ kind: 'document', value });
  });
});

describe('sources', () => {
  // Removed when the file ends whichever tests ran: an afterAll here ran only with one of its own, so a run filtered
  // to other tests (-t) left the folder, made when the describe is collected, in the system's temporary folder.
  const dir = makeTemp('mudm-read');
  const fc = JSON.stringify({ type: 'FeatureCollection', features: [F1, F2] });

  it('files, gzip found by magic bytes whatever the name, concatenated gzip members', async () => {
    writeFileSync(join(dir, 'plain.json'), fc);
    writeFileSync(join(dir, 'zipped.json'), gzipSync(fc));
    const nd = [JSON.stringify(F1), JSON.stringify(F2)];
    writeFileSync(join(dir, 'multi.ndjson.gz'), Buffer.concat([gzipSync(`${nd[0]}\n`), gzipSync(`${nd[1]}\n`)]));
    const plain = await collect(fileSource(join(dir, 'plain.json')));
    expect(plain).toHaveLength(3);
    expect(await collect(fileSource(join(dir, 'zipped.json')))).toEqual(plain.map((e) => (e.kind === 'feature' ? { ...e, file: join(dir, 'zipped.json') } : e)));
    expect(features(await collect(fileSource(join(dir, 'multi.ndjson.gz')))).map((e) => e.kind === 'feature' && e.text)).toEqual(nd);
    // Gzip in memory, one byte at a time (the magic split across chunks).
    expect(features(await collect(memorySource('m.gz', gzipSync(fc), 1)))).toHaveLength(2);
  });

  it('a file read into one reused buffer gives the events of the same bytes in memory, across many chunks, plain or gzip', async () => {
    // Features of every size, one longer than a 1 MiB chunk, so values span chunk ends and a chunk holds many values.
    const big = { ...F1, properties: { s: 'x'.repeat(1_500_000) } };
    const many = Array.from({ length: 40_000 }, (_, i) => ({ ...F1, id: i, properties: { s: 'é'.repeat(i % 97) } }));
    const text = JSON.stringify({ type: 'FeatureCollection', features: [...many.slice(0, 20_000), big, ...many.slice(20_000)] });
    expect(text.length).toBeGreaterThan(4 << 20);
    writeFileSync(join(dir, 'many.json'), text);
    writeFileSync(join(dir, 'many.json.gz'), gzipSync(text));
    // What a build keeps: each chunk's feature texts, taken before the next chunk is asked for.
    const texts = async (source: Source) => {
      const out: string[] = [];
      for await (const evs of readEventBatches(source)) for (const ev of evs) if (ev.kind === 'feature') out.push(ev.text);
      return out;
    };
    const expected = await texts(memorySource('m', text));
    expect(expected).toHaveLength(40_001);
    expect(await texts(fileSource(join(dir, 'many.json'), { reuseChunks: true }))).toEqual(expected);
    expect(await texts(fileSource(join(dir, 'many.json.gz'), { reuseChunks: true }))).toEqual(expected);
    // Without reuseChunks, events may be kept past the next chunk (the library default).
    expect(features(await collect(fileSource(join(dir, 'many.json')))).map((e) => e.kind === 'feature' && e.text)).toEqual(expected);
  });

  it('streams (stdin), strings or bytes', async () => {
    const evs = await collect(streamSource('-', Readable.from([fc.slice(0, 10), Buffer.from(fc.slice(10))])));
    expect(features(evs)).toHaveLength(2);
  });

  it('missing files, directories and broken gzip are ReadErrors without a position', async () => {
    const missing = await readError(fileSource(join(dir, 'nope.json')));
    expect([missing.file, missing.line, missing.column, missing.reason]).toEqual([join(dir, 'nope.json'), 0, 0, 'no such file']);
    expect(missing.where).toBe(join(dir, 'nope.json'));
    expect((await readError(fileSource(dir))).message).toMatch(/directory/);
    writeFileSync(join(dir, 'broken.gz'), gzipSync(fc).subarray(0, 30));
    expect((await readError(fileSource(join(dir, 'broken.gz')))).message).toMatch(/gzip|end of file|unexpected end/i);
  });

  it('a consumer that stops early closes the source', async () => {
    let closed = false;
    const source: Source = {
      name: 's',
      open: () =>
        (async function* () {
          try {
            for (let i = 0; i < 100; i++) yield new TextEncoder().encode(`${JSON.stringify(F2)}\n`);
          } finally {
            closed = true;
          }
        })(),
    };
    for await (const ev of readDocuments(source)) if (ev.kind === 'feature' && ev.index === 3) break;
    expect(closed).toBe(true);
  });

  it('a consumer that stops early closes a gzip source too', async () => {
    let closed = false;
    const zipped = gzipSync(`${JSON.stringify(F2)}\n`.repeat(20_000));
    const source: Source = {
      name: 'z',
      open: () =>
        (async function* () {
          try {
            for (let i = 0; i < zipped.length; i += 100) yield zipped.subarray(i, i + 100);
          } finally {
            closed = true;
          }
        })(),
    };
    for await (const ev of readDocuments(source)) if (ev.kind === 'feature' && ev.index === 3) break;
    expect(closed).toBe(true);
  });
});

describe('syntax errors: exact line and column', () => {
  const cases: [string, string, number, number, RegExp][] = [
    ['trailing comma in features', '{"type":"FeatureCollection","features":[\n  {"a":1},\n]}', 3, 1, /trailing comma after feature 0/],
    ['missing comma between features', '{"features":[{"a":1} {"b":2}]}', 1, 22, /expected ',' or '\]'/],
    ['garbage at the top level', '\n\n   @', 3, 4, /'@'/],
    ['missing colon', '{"type" "FeatureCollection"}', 1, 9, /expected ':'/],
    // Two files joined (`cat a.geojson b.geojson`), or a collection per line: said so, and what to do instead.
    ['data after the collection', '{"type":"FeatureCollection","features":[]}\n{"a":1}', 2, 1, /^a second JSON value starts here, after the end of the FeatureCollection: a file holds one \(files joined, as cat a.json b.json does\?\); give each file as an input of its own, or write one feature per line \(NDJSON\)$/],
    ['data after a top-level array', '[{"a":1}]\n[{"a":1}]', 2, 1, /^a second JSON value starts here, after the end of the top-level array: a file holds one/],
    ['other bytes after the collection', '{"type":"FeatureCollection","features":[]}\n@', 2, 1, /^unexpected '@' after the end of the FeatureCollection$/],
    ['a second features member', '{"type":"FeatureCollection","features":[{"a":1}],\n"features":[]}', 2, 12, /^a second member "features" in the FeatureCollection: JSON readers keep one of the two, not the same one; keep one$/],
    ['unclosed top-level array', '[\n{"a":1},\n', 3, 1, /end of input inside the top-level array that starts at line 1, column 1/],
    ['trailing comma in a top-level array', '[{"a":1},]', 1, 10, /trailing comma/],
    ['unclosed collection', '{"type":"FeatureCollection","features":[{"a":1}', 1, 48, /end of input/],
    ['unclosed feature', '{"features":[\n{"a":[1,2', 2, 10, /line 2, column 1 \(feature 0\) is not closed/],
    ['unclosed second feature', '{"features":[{"a":1},\n{"a":[1,2', 2, 10, /line 2, column 1 \(feature 1\) is not closed/],
    ['junk after a feature names it', '{"features":[{"a":1},{"b":2} x]}', 1, 30, /^unexpected 'x' after feature 1, expected ',' or '\]'/],
    ['junk where a feature goes names its index', '{"features":[{"a":1},x]}', 1, 22, /^unexpected 'x', expected feature 1/],
    ['empty input', '  \n', 2, 1, /empty/],
    ['bad byte order mark', '\xEF\xBB{}', 1, 3, /byte order mark/],
    // Windows files joined (cat a.ndjson b.ndjson, or two collections): each starts with a byte order mark, read only at
    // offset 0. Before, 'unexpected byte 0xEF, expected a JSON value', which did not say what the bytes were.
    ['a byte order mark inside a sequence', '\uFEFF{"a":1}\r\n\uFEFF{"b":2}\r\n', 2, 1, /^a UTF-8 byte order mark \(EF BB BF\) inside the input, which only its first bytes may hold: files joined \(cat a\.ndjson b\.ndjson\) that each start with one\? give each file as an input of its own, or remove the marks$/],
    ['a byte order mark after the collection', '{"type":"FeatureCollection","features":[]}\n\uFEFF{"type":"FeatureCollection","features":[]}', 2, 1, /^a UTF-8 byte order mark \(EF BB BF\) inside the input/],
    ['UTF-16 (little-endian, with its byte order mark)', '\xFF\xFE{\x00}\x00', 1, 1, /^the input starts with a UTF-16 byte order mark \(FF FE\): JSON is read as UTF-8; save the file as UTF-8/],
    ['UTF-16 without a byte order mark', '{\x00"\x00a\x00', 1, 2, /U\+0000.*\(the input looks like UTF-16: save it as UTF-8\)$/],
    ['bad member value (tru)', '{"type":"FeatureCollection",\r\n"x": tru,"features":[]}', 2, 6, /literal/],
    // Inside features: found by JSON.parse, mapped back by parseFeature.
    ['inside a feature, V8 gives the position', '{"features":[\n  {"a": [1,2}\n]}', 2, 13, /Expected ',' or '\]'/],
    ['inside a feature, "Unexpected token" (no position from V8)', '{"features":[\n  {"a":\n     }\n]}', 3, 6, /expected a value/],
    ['inside a feature, after a long indentation', `{"features":[\n  {"a":\n${' '.repeat(21)}}\n]}`, 3, 22, /expected a value/],
    ['inside a feature after a line break', '{"features":[{"a":1,\n  "b": 01}]}', 2, 9, /./],
    ['inside an NDJSON line', '{"a":1}\n{"b":nul}\n', 2, 6, /literal/],
    ['raw newline in a string', '{"features":[{"a":"x\ny"}]}', 1, 21, /control character|Bad control/i],
    ['RS inside a record (truncated)', '\x1e{"a":[1,\x1e{"b":2}\n', 1, 10, /^feature 0: unexpected record separator \(0x1E\) inside the value that starts at line 1, column 2: a record cut short, the next begun here \(truncated record\?\) \(JSON path \/a\/1\)$/],
    // A record cut short inside a string: the next record's RS, not a control character to escape (RFC 7464 2.3).
    ['RS inside a string of a record (truncated there)', '\x1e{"a":1}\n\x1e{"b":"xy\x1e{"c":2}\n', 2, 10, /^feature 1: unexpected record separator \(0x1E\) inside the value that starts at line 2, column 2: a record cut short, the next begun here \(truncated record\?\) \(JSON path \/b\)$/],
    ['RS after a line end inside a string of a record', '\x1e{"b":"xy\n\x1e{"c":2}\n', 2, 1, /^feature 0: unexpected record separator \(0x1E\) inside the value that starts at line 1, column 2: a record cut short/],
    // In a collection it is a control character, which an escape mends.
    ['RS inside a string of a collection', '{"features":[{"b":"x\x1ey"}]}', 1, 21, /^unescaped control character U\+001E in a string: write it as \\u001E \(JSON path \/b\)$/],
    ['non-ASCII before the error counts in bytes', '{"features":[{"µ":}]}', 1, 20, /expected a value/],
    // QuPath before 0.5: the message says where the value comes from and what to do.
    ['NaN inside a feature', '{"features":[\n{"properties":{"m":NaN}}]}', 2, 20, /^NaN is not JSON, expected a value \(QuPath before 0\.5 writes it for a missing measurement: export again from QuPath 0\.5 or later/],
    ['-Infinity inside a feature', '{"features":[\n{"properties":{"m":-Infinity}}]}', 2, 20, /^-Infinity is not JSON, expected a value \(QuPath before 0\.5/],
    // Pretty-printed: what follows the value on its line (and a CR before the newline) is not in the message.
    ['NaN at the end of a pretty-printed line', '{"features":[\n  {"properties": {\n    "m": NaN,\r\n    "n": 1}}]}', 3, 10, /^NaN is not JSON, expected a value \(QuPath/],
    // Every message inside a feature names the JSON path reached, from the feature, and V8's "Expected" what it found.
    ['the path of an element', '{"features":[\n  {"a": [1,2}\n]}', 2, 13, /^Expected ',' or '\]' after array element, found '\}' \(JSON path \/a\/1\)$/],
    ['the path of a member', '{"features":[{"properties":{"a":1,"b" 2}}]}', 1, 39, /\(JSON path \/properties\/b\)$/],
    ['the path of an object due a member name', '{"features":[{"properties":{"a/~":{"x":1,}}}]}', 1, 42, /^unexpected '\}' after ',' \(trailing comma\) \(JSON path \/properties\/a~1~0\)$/],
    ['the path past strings holding brackets and escaped quotes', '{"features":[{"p":{"s":"[{\\"}", "t":[0,{"u": }]}}]}', 1, 46, /^unexpected '\}', expected a value \(JSON path \/p\/t\/1\/u\)$/],
    // A collection member is parsed apart from the features: its path is the document's, not the member's own.
    ['the path inside a collection member', '{"type":"FeatureCollection","multiscale":{"axes":[{"name":"x"},{"name":"y"},]},"features":[]}', 1, 77, /^unexpected '\]' after ',' \(trailing comma\) \(JSON path \/multiscale\/axes\/2\)$/],
    ['the path of a scalar member', '{"type":"FeatureCollection","name":nul,"features":[]}', 1, 36, /\(JSON path \/name\)$/],
    ['a string "Infinity" does not change V8\'s message elsewhere', '{"features":[\n  {"name":"Infinity", "a": [1,2}\n]}', 2, 32, /^Expected ',' or '\]' after array element/],
  ];
  for (const [name, text, line, column, message] of cases) {
    it(name, async () => {
      const bytes = Buffer.from(text, name.startsWith('bad byte') || name.startsWith('UTF-16') ? 'latin1' : 'utf8');
      for (const size of [1, 3, 1 << 20]) {
        const e = await readError(memorySource('x.json', bytes, size));
        expect([e.file, e.line, e.column], `${e.message} (chunk ${size})`).toEqual(['x.json', line, column]);
        expect(e.reason).toMatch(message);
      }
    });
  }
});

describe('binary input', () => {
  it('a JPEG image is named for what it is, not taken for UTF-16 (both start with FF)', async () => {
    const e = await readError(memorySource('photo.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0x00, 0x43])));
    expect([e.file, e.line, e.column, e.reason]).toEqual(['photo.jpg', 1, 1, 'the input is a JPEG image (FF D8), not JSON: a label mask is read from a lossless TIFF or PNG, whose JPEG artefacts would not be labels']);
  });

  it('an archive, a compressed file other than gzip, a web page, a Git LFS pointer, QuPath\'s .qpdata or a tile pyramid is named for what it is', async () => {
    const cases: [string, Uint8Array | string, string][] = [
      ['export.zip', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00]), 'the input is a ZIP archive (PK), not JSON: unzip it and give the files it holds'],
      ['cells.json.bz2', 'BZh91AY&SY', 'the input is bzip2-compressed (BZh), not JSON: decompress it (gzip is read as it is)'],
      ['cells.json.zst', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x00]), 'the input is zstd-compressed (28 B5 2F FD), not JSON: decompress it (gzip is read as it is)'],
      ['cells.json.xz', Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00]), 'the input is xz-compressed (FD 37 7A 58 5A), not JSON: decompress it (gzip is read as it is)'],
      ['cells.json', '<!DOCTYPE html>\n<html><body>Sign in</body></html>', "the input starts with '<': it is an HTML or XML page, not JSON (a web page saved in place of a download?)"],
      ['cells.json', 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n', 'the input is a Git LFS pointer, not the file it stands for: fetch the file (git lfs pull)'],
      ['data.qpdata', Buffer.from([0xac, 0xed, 0x00, 0x05, 0x73, 0x72]), "the input is Java serialised data (AC ED), such as QuPath's .qpdata, not JSON: export the objects from QuPath as GeoJSON (File > Export objects as GeoJSON)"],
      // A pyramid given where annotations go (validate slide.pmtiles to check a build): before, "unexpected 'P'".
      ['slide.pmtiles', Buffer.concat([Buffer.from('PMTiles'), Buffer.from([3, 0x7f, 0, 0])]), 'the input is a PMTiles archive (a tile pyramid, such as build -o slide.pmtiles writes), not annotations: check it with verify, read it with inspect'],
      ['slide.mbtiles', 'SQLite format 3\0\x10\0', 'the input is an SQLite database (such as an MBTiles pyramid), not JSON: export its annotations as GeoJSON'],
    ];
    for (const [name, bytes, reason] of cases) {
      const e = await readError(memorySource(name, bytes));
      expect([e.file, e.line, e.column, e.reason], name).toEqual([name, 1, 1, reason]);
    }
  });
});

describe('helpers', () => {
  it('layerNameFor strips data extensions only', () => {
    expect(layerNameFor('/data/cells.json')).toBe('cells');
    expect(layerNameFor('a/nuclei.geojson.gz')).toBe('nuclei');
    expect(layerNameFor('x.ndjson')).toBe('x');
    expect(layerNameFor('x.geojsonl')).toBe('x');
    expect(layerNameFor('x.geojsons')).toBe('x');
    expect(layerNameFor('slide.v2.JSON')).toBe('slide.v2');
    expect(layerNameFor('notes.txt')).toBe('notes.txt');
    // Label masks, as the CLI names their layers.
    expect(layerNameFor('masks/nuclei.tif')).toBe('nuclei');
    expect(layerNameFor('labels.PNG')).toBe('labels');
    expect(layerNameFor('qupath/slide-labels.ome.tif')).toBe('slide-labels');
    expect(layerNameFor('cells.OME.TIFF')).toBe('cells');
    expect(layerNameFor('cells.ome.json')).toBe('cells.ome');
    expect(layerNameFor('-')).toBe('features');
  });

  it('standard input is named stdin, its layer features; a file named stdin is layer stdin', () => {
    const stdin = stdinSource(Readable.from([]));
    expect(stdin.name).toBe('stdin');
    expect(defaultLayerOf(stdin)).toBe('features');
    expect(defaultLayerOf(fileSource('stdin'))).toBe('stdin');
  });

  it('locateJsonError agrees with JSON.parse on what is valid', () => {
    for (const ok of ['{}', '[]', ' 1 ', '"a\\u00e9\\n"', '{"a":[1,-2.5e-3,true,false,null,{"b":{}}]}']) {
      expect(locateJsonError(ok), ok).toBeNull();
      expect(() => JSON.parse(ok)).not.toThrow();
    }
    for (const [bad, at] of [['{"a":}', 5], ['[1,]', 3], ['[1 2]', 3], ['{"a" 1}', 5], ['"\\x"', 1], ['[', 1], ['01', 1], ['-', 1], ['{,}', 1]] as const) {
      expect(locateJsonError(bad)?.position, bad).toBe(at);
      expect(() => JSON.parse(bad)).toThrow();
    }
  });

  it('locateJsonError names the literal it found where true, false or null was due', () => {
    expect(locateJsonError('{"a":tru}')).toEqual({ position: 5, message: 'invalid literal "tru", expected true, false or null' });
    expect(locateJsonError('[nul ]')).toEqual({ position: 1, message: 'invalid literal "nul", expected true, false or null' });
  });

  it('memory stays flat: a long single-line collection is read one chunk at a time (resident set of a child process)', async () => {
    // 96 MiB on one line. Heap statistics miss the input's bytes (typed arrays live outside the heap), so the resident
    // set is measured: it may grow by three quarters of the input at most, so a reader holding it whole fails, as
    // the control run that keeps every feature's bytes shows.
    const mb = 96, limit = 0.75 * mb * 2 ** 20;
    const run = async (...args: string[]) => {
      const r = await runProcess(process.execPath, [fileURLToPath(new URL('./read-rss.mjs', import.meta.url)), String(mb), ...args]);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { features: number; expected: number; members: unknown; grown: number };
    };
    const streamed = await run();
    expect(streamed.features).toBe(streamed.expected);
    expect(streamed.members).toEqual({ type: 'FeatureCollection', id: 'z' });
    expect(streamed.grown).toBeLessThan(limit);
    const held = await run('--hold');
    expect(held.features).toBe(held.expected);
    expect(held.grown).toBeGreaterThan(limit);
  });
});
