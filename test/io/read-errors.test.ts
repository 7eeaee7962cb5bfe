// Bad input as the reader words it: every JSON.parse message of Node 20 in its own words, lone CRs as line breaks, gzip that breaks off.
import { constants, gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { memorySource, readDocuments, readEventBatches, type ReadEvent, type Source } from '../../src/io/read.js';
import { jsonSyntaxError } from '../../src/io/json-errors.js';
import { ReadError, ValueTooLargeError } from '../../src/report/errors.js';
import { buildPyramid, MemorySink, validateSource } from '../../src/index.js';
import { BUILD_OPTIONS } from '../inspect/fixture.js';
import { readError } from '../helpers/read.js';


async function featurePlaces(source: Source): Promise<[number, number, number][]> {
  const out: [number, number, number][] = [];
  for await (const ev of readDocuments(source)) if (ev.kind === 'feature') out.push([ev.index, ev.line, ev.column]);
  return out;
}

const v8Message = (text: string): string => {
  try {
    JSON.parse(text);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${text} is valid JSON`);
};

describe("JSON.parse's messages (Node 20) in the reader's words, at the fault, with what was found", () => {
  // Feature 1 of a collection, on line 3 from column 1: the column is the fault's in the feature's text.
  const cases: [string, string, RegExp, number, string][] = [
    ['a Windows path', '{"properties":{"name":"C:\\data"}}', /^Bad escaped character in JSON at position 26\b/, 26,
      'invalid escape "\\d" in a string (JSON knows \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; write a backslash as \\\\) (JSON path /properties/name)'],
    ['a \\u short of hex digits', '{"properties":{"name":"\\u00G9"}}', /^Bad Unicode escape in JSON at position 27\b/, 24,
      'invalid escape "\\u00" in a string: \\u takes four hex digits, found \'G\' (JSON path /properties/name)'],
    ['a raw tab in a string', '{"properties":{"name":"a\tb"}}', /^Bad control character in string literal in JSON at position 24\b/, 25,
      'unescaped control character U+0009 (tab) in a string: write it as \\t (JSON path /properties/name)'],
    ['a raw line feed in a string', '{"properties":{"name":"a\nb"}}', /^Bad control character in string literal in JSON at position 24\b/, 25,
      'unescaped control character U+000A (line feed) in a string: write it as \\n (or is the string\'s closing quote missing?) (JSON path /properties/name)'],
    ['an exponent without digits', '{"properties":{"m":1e}}', /^Exponent part is missing a number in JSON at position 21\b/, 22,
      'invalid number "1e": a digit must follow the exponent\'s \'e\', found \'}\' (JSON path /properties/m)'],
    ['a minus sign alone', '{"properties":{"m":-}}', /^No number after minus sign in JSON at position 20\b/, 21,
      'invalid number "-": a digit must follow \'-\', found \'}\' (JSON path /properties/m)'],
    ['a decimal point without digits', '{"properties":{"m":1.}}', /^Unterminated fractional number in JSON at position 21\b/, 22,
      'invalid number "1.": a digit must follow the decimal point, found \'}\' (JSON path /properties/m)'],
    ['leading zeros', '{"properties":{"m":007}}', /^Unexpected number in JSON at position 20\b/, 21,
      'invalid number "007": JSON numbers have no leading zeros (JSON path /properties/m)'],
    ['"Expected": what V8 wanted, and what was found', '{"properties":{"m":1 "n":2}}', /^Expected ',' or '}' after property value in JSON at position 21\b/, 22,
      'Expected \',\' or \'}\' after property value, found \'"\' (JSON path /properties/m)'],
    // Hand-edited JSON: a trailing comma, quotes missing or single, said as such rather than in V8's words.
    ['a trailing comma in an object', '{"properties":{"m":1,}}', /^Expected double-quoted property name in JSON at position 21\b/, 22,
      "unexpected '}' after ',' (trailing comma) (JSON path /properties)"],
    ['a trailing comma in an array', '{"properties":{"m":[1,]}}', /^Unexpected token '\]'/, 23,
      "unexpected ']' after ',' (trailing comma) (JSON path /properties/m/1)"],
    ['a property name without quotes', '{"properties":{m:1}}', /^Expected property name or '}' in JSON at position 15\b/, 16,
      'property name m without quotes: JSON takes it in double quotes, "m" (JSON path /properties)'],
    ['a property name in single quotes', "{\"properties\":{'m':1}}", /^Expected property name or '}' in JSON at position 15\b/, 16,
      "unexpected \"'\": a property name takes double quotes, not single ones (JSON path /properties)"],
    ['a string in single quotes', "{\"properties\":{\"m\":'x'}}", /^Unexpected token '''/, 20,
      "unexpected \"'\": JSON strings take double quotes, not single ones (JSON path /properties/m)"],
  ];
  for (const [name, bad, v8, column, message] of cases) {
    it(name, async () => {
      // The message this maps: a Node whose V8 words it otherwise fails here, not in the mapping.
      expect(v8Message(bad)).toMatch(v8);
      const text = `{"type":"FeatureCollection","features":[\n{"type":"Feature"},\n${bad}\n]}`;
      for (const size of [1, 1 << 20]) {
        const e = await readError(memorySource('cells.json', text, size));
        expect([e.where, e.reason, e.exitCode]).toEqual([`cells.json:3:${column}`, message, 3]);
      }
    });
  }

  // Not from a feature (the splitter sees its strings and its end): a whole text, such as a manifest, parsed at once.
  it('a whole text: an unterminated string at its opening quote, a second value, and messages V8 may give', () => {
    const at = (text: string, e: unknown = new Error(v8Message(text))) => {
      const r = jsonSyntaxError('m.json', text, 1, 1, e);
      return r.message;
    };
    expect(v8Message('[{"path":"a.json}]')).toMatch(/^Unterminated string in JSON at position 18\b/);
    expect(at('[{"path":"a.json}]')).toBe('m.json:1:10: unterminated string: the string that opens here has no closing \'"\' (JSON path /0/path)');
    expect(v8Message('{"a":1}\n{"b":2}')).toMatch(/^Unexpected non-whitespace character after JSON at position 8\b/);
    expect(at('{"a":1}\n{"b":2}')).toBe("m.json:2:1: unexpected '{' after the JSON value");
    // Node 20 has the template but no input found to give it; and a message no Node gave yet: the scanner's words.
    expect(at('[1,"a" "b"]', new SyntaxError('Unexpected string in JSON at position 7'))).toBe("m.json:1:8: unexpected '\"', expected ',' or ']' (JSON path /1)");
    expect(at('{"a":[1,]}', new SyntaxError('Trailing comma in JSON at position 8 (line 1 column 9)'))).toBe("m.json:1:9: unexpected ']' after ',' (trailing comma) (JSON path /a/1)");
  });
});

describe('a line of NDJSON short of its closing bracket', () => {
  it('the fault, where the next line opens a feature, says where the value opens and which line may lack the bracket', async () => {
    const whole = '{"type":"Feature","geometry":null,"properties":{"a":{"b":1}}}';
    const text = `${whole}\n${whole.slice(0, -1)}\n${whole}\n`;
    for (const size of [1, 1 << 20]) {
      const e = await readError(memorySource('cells.ndjson', text, size));
      expect([e.where, e.reason, e.exitCode]).toEqual(['cells.ndjson:3:1', "feature 1: Expected ',' or '}' after property value, found '{' (JSON path /properties); the value opens at line 2: is a closing '}' or ']' missing at the end of line 2?", 3]);
    }
  });

  it('on the first line too (read as a document until a second value comes), and a bracket of the wrong kind there is named where it is', async () => {
    const whole = '{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}';
    for (const size of [1, 1 << 20]) {
      const short = await readError(memorySource('cells.ndjson', `${whole.slice(0, -1)}\n${whole}\n`, size));
      expect([short.where, short.reason, short.exitCode]).toEqual(['cells.ndjson:2:1', "unexpected '{', expected ',' or '}'; the value opens at line 1: is a closing '}' or ']' missing at the end of line 1?", 3]);
      // `[1,2]]`: counted as brackets, the feature closed at the '}' after it, and the ',' was blamed, two columns on.
      const wrong = await readError(memorySource('cells.ndjson', `${whole.replace('[1,2]', '[1,2]]')}\n${whole}\n`, size));
      expect([wrong.where, wrong.reason, wrong.exitCode]).toEqual(['cells.ndjson:1:65', "Expected ',' or '}' after property value, found ']' (JSON path /geometry/coordinates)", 3]);
    }
  });
});

describe('a string never closed: where it opens, or where the quoting goes wrong after it, not at the end of the input', () => {
  const feature = (i: number) => `{"type":"Feature","properties":{"name":"c${i}"},"geometry":{"type":"Point","coordinates":[${i},${i}]}}`;
  // Feature 1 of `n` loses the closing quote of its name, which then closes at the next opening quote: the rest of the
  // input reads inside out, and the feature never closes.
  const collection = (n: number) => {
    const features = Array.from({ length: n }, (_, i) => feature(i));
    features[1] = features[1].replace('"c1"', '"c1');
    return features;
  };
  const unterminated = 'unterminated string: the string that opens here has no closing \'"\'';
  const inverted = 'Expected \',\' or \'}\' after property value, found \'g\' (JSON path /properties/name)';

  it('at the end of a short input: the opening quote, with the feature and the JSON path', async () => {
    const cases: [string, string, string][] = [
      ['a bare Feature', '{"type":"Feature","properties":{"name":"abc}}\n', `f.json:1:40: ${unterminated} (JSON path /properties/name)`],
      ['an escaped quote is no closing one', '{"type":"Feature","properties":{"name":"ab\\"c}}', `f.json:1:40: ${unterminated} (JSON path /properties/name)`],
      ['the last feature of a collection', `{"type":"FeatureCollection","features":[\n${feature(0)},\n  {"type":"Feature","properties":{"name":"abc}}]}\n`,
        `f.json:3:42: feature 1: ${unterminated} (JSON path /properties/name)`],
      ['the last record of NDJSON', `${feature(0)}\n{"properties":{"name":"abc}}`, `f.json:2:23: feature 1: ${unterminated} (JSON path /properties/name)`],
      ['a collection member after the features', `{"type":"FeatureCollection","features":[${feature(0)}],\n"name":"abc}`, `f.json:2:8: ${unterminated} (JSON path /name)`],
      ['a member name', '{"type":"FeatureCollection","features":[],"name\n', `f.json:1:43: ${unterminated}`],
      ['the closing quote missing, more members after', '{"type":"Feature","properties":{"name":"abc},"geometry":null}', `f.json:1:47: ${inverted}`],
    ];
    for (const [name, text, message] of cases) {
      for (const size of [1, 7, 1 << 20]) expect((await readError(memorySource('f.json', text, size))).message, `${name} (chunk ${size})`).toBe(message);
    }
  });

  it('in a long input, the feature whose string lacks its quote (a collection, NDJSON, one line), and past the value limit', async () => {
    const features = collection(2000);
    const cases: [string, string, string][] = [
      ['a collection', `{"type":"FeatureCollection","features":[\n${features.join(',\n')}\n]}\n`, `l.json:3:46: feature 1: ${inverted}`],
      ['NDJSON', `${features.join('\n')}\n`, `l.json:2:46: feature 1: ${inverted}`],
      ['all on one line', `{"type":"FeatureCollection","features":[${features.join(',')}]}`, `l.json:1:${41 + features[0].length + 1 + 45}: feature 1: ${inverted}`],
    ];
    for (const [name, text, message] of cases) {
      for (const size of [4096, 1 << 20]) expect((await readError(memorySource('l.json', text, size))).message, `${name} (chunk ${size})`).toBe(message);
      // A value limit the rest of the input passes: the syntax error all the same, not a feature too large.
      let limited: unknown;
      try {
        for await (const batch of readEventBatches(memorySource('l.json', text, 4096), { bytes: 10_000, why: 'the test limit' })) void batch;
      } catch (e) {
        limited = e;
      }
      expect(limited, name).toBeInstanceOf(ReadError);
      expect((limited as ReadError).message, name).toBe(message);
    }
  });
});

describe('a string never closed far into one value (past the MiB parsed): where it opens, whatever the distance', () => {
  const unterminated = 'unterminated string: the string that opens here has no closing \'"\'';
  const blob = (n: number) => 'x'.repeat(n);
  // One value of over 2 MiB: its first MiB, parsed, holds no fault.
  const FAR = (2 << 20) + 12_345;
  const coords = (n: number) => Array.from({ length: n }, (_, i) => `[${i},${i}]`).join(',');
  const errorOf = async (text: string, size = 1 << 20) => (await readError(memorySource('f.json', text, size))).message;

  it('a string never closed, opened after a long property value, or early with a long coordinate array in it', async () => {
    const after = (b: string) => `{"type":"Feature","properties":{"blob":"${b}","name":"abc}}\n`;
    const lost = (n: number) => `{"type":"FeatureCollection","features":[\n{"type":"Feature","properties":{}},\n{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates:[[${coords(n)}]]}}]}\n`;
    expect(lost(160_000).length).toBeGreaterThan(2 << 20);
    const column = '{"type":"Feature","properties":{},"geometry":{"type":"Polygon",'.length + 1;
    for (const size of [4096, 1 << 20]) {
      expect(await errorOf(after(blob(FAR)), size)).toBe(`f.json:1:${FAR + 50}: ${unterminated} (JSON path /properties/name)`);
      expect(await errorOf(lost(160_000), size)).toBe(`f.json:3:${column}: feature 1: ${unterminated} (JSON path /geometry)`);
    }
    // As near the start, where JSON.parse finds it.
    expect(await errorOf(after(blob(10)))).toBe(`f.json:1:60: ${unterminated} (JSON path /properties/name)`);
    expect(await errorOf(lost(10))).toBe(`f.json:3:${column}: feature 1: ${unterminated} (JSON path /geometry)`);
  });

  it('a line end in a string that a quote follows, on lines broken by LF or CR LF (a CR LF across two chunks too)', async () => {
    for (const eol of ['\n', '\r\n']) {
      const text = (n: number) => `{"type":"Feature","properties":{"blob":"${blob(n)}",${eol}"name":"abc,${eol}"n":1}}`;
      const near = await errorOf(text(10));
      expect(near).toMatch(/^f\.json:2:13: unescaped control character U\+000[AD] .*\(or is the string's closing quote missing\?\) \(JSON path \/properties\/name\)$/);
      const far = text(FAR);
      // A chunk that ends between the CR and the LF of the line end in the string.
      for (const size of [1 << 20, far.indexOf(`abc,${eol}`) + 5]) expect(await errorOf(far, size), JSON.stringify([eol, size])).toBe(near);
    }
  });

  it('a string the next string\'s quote closes megabytes on: where the quoting goes wrong, naming where it opens', async () => {
    const text = `{"type":"Feature","geometry":{"type":"Polygon","coordinates:[[${coords(160_000)}]]},"properties":{}}`;
    const at = text.indexOf('properties') + 1;
    const key = `coordinates:[[${coords(10)}`.slice(0, 64);
    for (const size of [4096, 1 << 20]) {
      expect(await errorOf(text, size)).toBe(`f.json:1:${at}: unexpected 'p', expected ':' after a property name: the string before it opens at line 1, column 48; is its closing quote missing? (JSON path /geometry/${key}…)`);
    }
  });

  it('past the value limit: a fault in what was read is said; a string open where the limit cuts is only too large', async () => {
    const read = async (text: string) => {
      try {
        for await (const batch of readEventBatches(memorySource('f.json', text, 1 << 16), { bytes: FAR + (1 << 19), why: 'the test limit' })) void batch;
      } catch (e) {
        return e;
      }
      throw new Error('expected an error');
    };
    const faulty = `{"type":"Feature","properties":{"blob":"${blob(FAR)}",\n"name":"abc,\n"n":1}} ${blob(1 << 20)}`;
    expect(((await read(faulty)) as Error).message).toMatch(/^f\.json:2:13: unescaped control character U\+000A/);
    const open = `{"type":"Feature","properties":{"blob":"${blob(FAR)}","name":"abc ${blob(1 << 20)}`;
    expect(await read(open)).toBeInstanceOf(ValueTooLargeError);
  });
});

describe('lines break at LF, at CRLF, and at a lone CR (old Mac OS)', () => {
  const sizes = [1, 2, 3, 1 << 20];
  it('feature positions, whatever the chunks', async () => {
    const f = '{"type":"Feature","geometry":null,"properties":{}}';
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = `{"type":"FeatureCollection",${eol}"features":[${eol}  ${f},${eol}${eol}  ${f}${eol}]}${eol}`;
      for (const size of sizes) expect(await featurePlaces(memorySource('x.json', text, size)), JSON.stringify([eol, size])).toEqual([[0, 3, 3], [1, 5, 3]]);
    }
    // NDJSON with CR only: a record per line.
    const nd = `${f}\r${f}\r\r${f}\r`;
    for (const size of sizes) expect(await featurePlaces(memorySource('x.ndjson', nd, size))).toEqual([[0, 1, 1], [1, 2, 1], [2, 4, 1]]);
  });

  it('errors from the splitter, from JSON.parse of a feature and inside its string, on CR-only and mixed line ends', async () => {
    const cases: [string, string, number, number, RegExp][] = [
      ['between features (splitter)', '{"type":"FeatureCollection",\r"features":[\r{"a":1},\r\r  x\r]}', 5, 3, /^unexpected 'x', expected feature 1$/],
      ['inside a feature (JSON.parse)', '{"features":[\r{"a":1},\r  {"b":\r    1 "c":2}\r]}', 4, 7, /^Expected ',' or '\}' after property value, found '"' \(JSON path \/b\)$/],
      ['a CR in a string counts as the break it is', '{"features":[\r{"name":"a\rb"}]}', 2, 11, /^unescaped control character U\+000D \(carriage return\) in a string: write it as \\r/],
      ['mixed: CRLF is one break, a CR alone one more', '[\r\n{"a":1},\r{"b":2}\r\n\r,]', 5, 2, /trailing comma after feature 1/],
      ['inside a feature over CRLF and lone CRs', '[{"a":\r\n\r  [1,\r2}]', 4, 2, /^Expected ',' or '\]' after array element, found '\}'/],
    ];
    for (const [name, text, line, column, message] of cases) {
      for (const size of sizes) {
        const e = await readError(memorySource('x.json', text, size));
        expect([e.line, e.column], `${name} (chunk ${size}): ${e.message}`).toEqual([line, column]);
        expect(e.reason).toMatch(message);
      }
    }
  });
});

describe('gzip that breaks off: the file, what is wrong, and how far its JSON was read (exit 3)', () => {
  const record = (i: number) => JSON.stringify({ type: 'Feature', id: i, geometry: { type: 'Point', coordinates: [i, i * 7 % 13] }, properties: { n: `cell ${i}` } });
  const text = Array.from({ length: 2000 }, (_, i) => `${record(i)}\n`).join('');
  const zipped = gzipSync(text);
  const events = async (source: Source) => {
    const seen: ReadEvent[] = [];
    try {
      for await (const ev of readDocuments(source)) seen.push(ev);
    } catch (e) {
      return { seen, error: e as ReadError };
    }
    throw new Error('expected a ReadError');
  };

  it('a truncated stream: where its JSON breaks off, after how many bytes, and the last complete feature', async () => {
    const cut = zipped.subarray(0, zipped.length >> 1);
    // What the cut holds: zlib made to stop where the input does, without an error.
    const held = gunzipSync(cut, { finishFlush: constants.Z_SYNC_FLUSH }).toString('latin1');
    const lines = held.split('\n');
    const complete = lines.length - 1;
    for (const size of [1000, 1 << 20]) {
      const { seen, error } = await events(memorySource('cells.ndjson.gz', cut, size));
      expect(seen).toHaveLength(complete);
      expect([error.where, error.reason, error.exitCode]).toEqual([
        `cells.ndjson.gz:${lines.length}:${lines[lines.length - 1].length + 1}`,
        `the gzip stream ends early (truncated file?): the JSON in it breaks off here, after ${held.length.toLocaleString('en-US')} bytes; the last complete feature read is feature ${complete - 1} (line ${complete})`,
        3,
      ]);
    }
    // Cut inside its header: nothing was read, so there is no place to name.
    const header = await readError(memorySource('h.json.gz', zipped.subarray(0, 5)));
    expect([header.where, header.reason]).toEqual(['h.json.gz', 'the gzip stream ends early (truncated file?), before any JSON was read from it']);
  });

  it('bytes appended after the stream, and a corrupt checksum', async () => {
    // zlib drops what it made in the step that failed: here, all of this small stream, so no place is named.
    const appended = await readError(memorySource('a.json.gz', Buffer.concat([zipped, Buffer.from('garbage\n')])));
    expect([appended.where, appended.reason]).toEqual(['a.json.gz', 'bytes that are not gzip follow the end of the gzip stream (appended to the file?)']);
    const crc = Buffer.from(zipped);
    crc[crc.length - 6] ^= 0xff;
    const corrupt = await readError(memorySource('c.json.gz', crc));
    expect([corrupt.where, corrupt.reason]).toEqual(['c.json.gz', 'the gzip data is corrupt (its CRC-32 checksum does not match the data)']);
  });

  it('a corrupt checksum after JSON was read: where that ends, and that none of it can be trusted', async () => {
    const long = Array.from({ length: 6000 }, (_, i) => `${record(i)}\n`).join('');
    const crc = gzipSync(long);
    crc[crc.length - 7] ^= 0x01;
    for (const size of [1000, 1 << 20]) {
      const { seen, error } = await events(memorySource('c.ndjson.gz', crc, size));
      const m = /^the gzip data is corrupt \(its CRC-32 checksum does not match the data\), found after ([\d,]+) bytes of JSON, which end here: nothing read from it can be trusted$/.exec(error.reason);
      expect(m, error.reason).not.toBeNull();
      const bytes = Number(m?.[1].replaceAll(',', ''));
      const before = long.slice(0, bytes).split('\n');
      expect([error.line, error.column]).toEqual([before.length, before[before.length - 1].length + 1]);
      expect(seen).toHaveLength(before.length - 1);
    }
  });

  // Stored (level 0) deflate blocks hold the text as it is: a byte changed in them is that byte of the JSON changed,
  // as a bit flipped on a disk changes it, and the checksum at the end no longer matches. The same bad JSON in an
  // intact stream is the syntax error alone.
  const storedWith = (text: string, marker: string, replacement: string, intact = false) => {
    const zipped = gzipSync(intact ? text.replace(marker, replacement) : text, { level: 0 });
    if (intact) return zipped;
    const at = zipped.indexOf(marker);
    expect(at).toBeGreaterThan(0);
    zipped.write(replacement, at, 'latin1');
    return zipped;
  };
  const damage = 'the gzip data is corrupt (its CRC-32 checksum does not match the data), and the JSON decompressed from it goes wrong here, so nothing read from it can be trusted: ';

  it('corrupt data that decompresses to bad JSON: the damage, where the JSON goes wrong (the splitter, validate, a build)', async () => {
    const records = Array.from({ length: 10_000 }, (_, i) => record(i));
    // The splitter: the comma after feature 699 (line 701) turned into an x.
    const collection = `{"type":"FeatureCollection","features":[\n${records.join(',\n')}\n]}\n`;
    const split = `unexpected 'x' after feature 699, expected ',' or ']'`;
    for (const [intact, message] of [[false, damage + split], [true, split]] as const) {
      const e = await readError(memorySource('fc.json.gz', storedWith(collection, ',\n{"type":"Feature","id":700,', 'x\n{"type":"Feature","id":700,', intact)));
      expect([e.where, e.reason], `intact ${intact}`).toEqual([`fc.json.gz:701:${records[699].length + 1}`, message]);
    }
    // JSON.parse of a feature, in validate and in a build's worker: feature 700 (line 701) loses a comma. It lies in
    // the build's first batch, found while the reader waits with the rest of the stream unread.
    const ndjson = `${records.join('\n')}\n`;
    const parse = `feature 700: Expected ',' or '}' after property value, found '"' (JSON path /id)`;
    const column = records[700].indexOf('"geometry"') + 1;
    for (const [intact, message] of [[false, damage + parse], [true, parse]] as const) {
      const zipped = storedWith(ndjson, '"id":700,', '"id":700 ', intact);
      expect((await validateSource(memorySource('n.ndjson.gz', zipped))).unreadable, `intact ${intact}`).toEqual({ message, line: 701, column });
      const built = await buildPyramid([{ source: memorySource('n.ndjson.gz', zipped) }], BUILD_OPTIONS, { sink: new MemorySink() }).catch((e: unknown) => e);
      expect(built).toBeInstanceOf(ReadError);
      expect((built as ReadError).message, `intact ${intact}`).toBe(`n.ndjson.gz:701:${column}: ${message}`);
    }
  });
});
