// Values tiles cannot carry: non-finite numbers (errors), lone surrogates and invalid UTF-8 (warnings), and their mending.
import { describe, expect, it } from 'vitest';
import { validateCollectionMembers, validateDocument, validateFeature } from '../../src/validate/index.js';
import { checkUtf8, replaceLoneSurrogates } from '../../src/validate/values.js';
import type { Issue } from '../../src/validate/issue.js';
import { codes, expectOne } from './helpers.js';

const feature = (members: string) => JSON.parse(`{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]}${members}}`) as unknown;

describe('value-not-finite', () => {
  it('reports a property that JSON text spells beyond float64 (1e400 reads as Infinity), once per feature', () => {
    const issues = validateFeature(feature(',"properties":{"a":1,"b":{"c":[2,-1e400]},"d":1e999}'));
    expectOne(issues, 'value-not-finite', '/properties/b/c/1', '-Infinity');
  });

  it('leaves geometry, bbox and ids to their own rules (one issue, not two)', () => {
    expect(codes(validateFeature(feature(',"properties":{},"id":1e400')))).toEqual(['id-type']);
    expect(codes(validateFeature(feature(',"properties":{},"bbox":[0,0,1e400,1]')))).toEqual(['bbox-not-number']);
  });

  it('covers foreign members and collection members, and validate rejects the document', () => {
    expectOne(validateFeature(feature(',"properties":null,"extra":{"x":1e400}')), 'value-not-finite', '/extra/x');
    expectOne(validateCollectionMembers(JSON.parse('{"type":"FeatureCollection","properties":{"scale":1e400}}') as Record<string, unknown>), 'value-not-finite', '/properties/scale');
    expect(codes(validateDocument(JSON.parse('{"type":"FeatureCollection","features":[],"provenance":{"n":1e400}}')))).toEqual(['value-not-finite']);
  });

  it('finds one deep inside, at any depth the nesting rule allows', () => {
    const deep = `${'{"a":'.repeat(120)}1e400${'}'.repeat(120)}`;
    const issues = validateFeature(feature(`,"properties":${deep}`));
    expect(codes(issues)).toEqual(['value-not-finite']);
  });
});

describe('string-lone-surrogate', () => {
  it('warns on a lone surrogate in a string or a member name, not on a well-formed pair', () => {
    expectOne(validateFeature(feature(',"properties":{"name":"a\\ud800b"}')), 'string-lone-surrogate', '/properties/name', '"a\\ud800b"');
    expectOne(validateFeature(feature(',"properties":{"x\\udc00":1}')), 'string-lone-surrogate', '/properties/x\udc00');
    expectOne(validateFeature(feature(',"properties":{},"featureClass":"\\udfff"')), 'string-lone-surrogate', '/featureClass');
    expect(validateFeature(feature(',"properties":{"emoji":"\\ud83d\\ude00"}'))).toEqual([]);
  });

  it('names the first lone surrogate in the order of the text, a member name before its value and before later members', () => {
    expectOne(validateFeature(feature(',"properties":{"v":"\\ud800","n\\ud800":1}')), 'string-lone-surrogate', '/properties/v', 'the string "\\ud800"');
    expectOne(validateFeature(feature(',"properties":{"a\\ud800":"x","b\\ud800":1}')), 'string-lone-surrogate', '/properties/a\ud800', 'the member name "a\\ud800"');
    expectOne(validateFeature(feature(',"properties":{"c":{"n\\udc00":"\\ud800"}}')), 'string-lone-surrogate', '/properties/c/n\udc00', 'the member name "n\\udc00"');
  });

  it('says which member names U+FFFD makes one, and the tiles keep the last one\'s value, as JSON readers keep a name written twice', () => {
    const merging = ',"properties":{"a":{"\\ud800x":"first","\\udc00x":"second"},"b":1}';
    // The issue is where the names are made one (a value lost), the message naming the first surrogate.
    const issue = expectOne(validateFeature(feature(merging)), 'string-lone-surrogate', '/properties/a/\uFFFDx');
    expect(issue.message).toBe('the member name "\\ud800x" holds a lone UTF-16 surrogate; tiles write U+FFFD for it; here 2 member names become "\uFFFDx", and tiles keep the last one\'s value');
    const f = feature(merging) as Record<string, unknown>;
    replaceLoneSurrogates(f, new Set(['geometry']));
    expect(f.properties).toEqual({ a: { '\uFFFDx': 'second' }, b: 1 });
    // A name made U+FFFD meets one that was U+FFFD in the text: the later member's value is kept there too.
    const after = feature(',"properties":{"\\ud800":1,"\\ufffd":2}') as Record<string, unknown>;
    expectOne(validateFeature(feature(',"properties":{"v":"\\ud800","w":{"\\ud800":1,"\\ufffd":2}}')), 'string-lone-surrogate', '/properties/w/\uFFFD', 'the string "\\ud800" holds', '; here 2 member names become "\uFFFD"');
    replaceLoneSurrogates(after, new Set(['geometry']));
    expect(after.properties).toEqual({ '\uFFFD': 2 });
    const before = feature(',"properties":{"\\ufffd":1,"\\ud800":2}') as Record<string, unknown>;
    replaceLoneSurrogates(before, new Set(['geometry']));
    expect(before.properties).toEqual({ '\uFFFD': 2 });
  });

  it('replaceLoneSurrogates writes U+FFFD in place of each, in values and names, keeping member order and __proto__ as data', () => {
    const f = JSON.parse('{"type":"Feature","properties":{"a":"x\\ud800","b\\udc00":["\\udbff",1],"__proto__":"p","c":"\\ud83d\\ude00"},"geometry":null}') as Record<string, unknown>;
    replaceLoneSurrogates(f, new Set(['geometry']));
    const props = f.properties as Record<string, unknown>;
    expect(Object.keys(props)).toEqual(['a', 'b\uFFFD', '__proto__', 'c']);
    expect(props.a).toBe('x\uFFFD');
    expect(props['b\uFFFD']).toEqual(['\uFFFD', 1]);
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype);
    expect(props.c).toBe('\ud83d\ude00');
  });
});

describe('text-invalid-utf8', () => {
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

  it('warns when decoding replaced bytes, not for a U+FFFD the text spells itself', () => {
    const bad = Uint8Array.from([0x22, 0x61, 0xff, 0x62, 0xc3, 0x22]);
    const out: Issue[] = [];
    checkUtf8(decode(bad), bad, 0, bad.length, '', out);
    expectOne(out, 'text-invalid-utf8', '', '2 invalid');
    const honest = new TextEncoder().encode('"a\uFFFDb"');
    const none: Issue[] = [];
    checkUtf8(decode(honest), honest, 0, honest.length, '', none);
    expect(none).toEqual([]);
  });

  it('names the first member name or string read with U+FFFD when given the parsed value', () => {
    const bad = Buffer.concat([Buffer.from('{"properties":{"ok":"x","na'), Buffer.from([0xef]), Buffer.from('me":"y"}}')]);
    const text = decode(bad);
    const out: Issue[] = [];
    checkUtf8(text, bad, 0, bad.length, '', out, JSON.parse(text));
    expectOne(out, 'text-invalid-utf8', '/properties/na\uFFFDme', '1 invalid UTF-8 byte sequence(s) in the text, each read as U+FFFD, the first (byte EF) in the member name "na\uFFFDme"');
  });

  it('names where the first invalid byte lies and its bytes, past genuine U+FFFD and valid sequences of every length before it', () => {
    const cases: [Buffer, string, string, string][] = [
      // A genuine U+FFFD (EF BF BD) in an earlier string is not the one replaced.
      [Buffer.concat([Buffer.from('{"properties":{"a":"x\uFFFD","b":["ok","c'), Buffer.from([0xe9]), Buffer.from('d"]}}')]), '/properties/b/1', 'byte E9', '"c\uFFFDd"'],
      // Two-, three- and four-byte sequences (é, €, 🙂) before an overlong NUL (C0 80, two invalid bytes).
      [Buffer.concat([Buffer.from('{"s":"é€🙂","t":"u'), Buffer.from([0xc0, 0x80]), Buffer.from('v"}')]), '/t', 'byte C0', '"u\uFFFD\uFFFDv"'],
      // A surrogate spelled in UTF-8 (ED A0 80) and a truncated sequence at the end of a string.
      [Buffer.concat([Buffer.from('{"w":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), '/w', 'byte ED', '"\uFFFD\uFFFD\uFFFD"'],
      [Buffer.concat([Buffer.from('["a","b'), Buffer.from([0xe2, 0x82]), Buffer.from('"]')]), '/1', 'bytes E2 82', '"b\uFFFD"'],
      // In a member name, past a genuine U+FFFD in the member before it.
      [Buffer.concat([Buffer.from('{"properties":{"a":"gen\uFFFDu","b'), Buffer.from([0xff]), Buffer.from('x":1}}')]), '/properties/b\uFFFDx', 'byte FF', 'the member name "b\uFFFDx"'],
      // A truncated four-byte sequence (F0 9F of 🙂) is one U+FFFD: its bytes are named together.
      [Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xf0, 0x9f]), Buffer.from('!"}')]), '/a', 'bytes F0 9F', '"\uFFFD!"'],
    ];
    for (const [bytes, path, sequence, where] of cases) {
      const text = decode(bytes);
      const out: Issue[] = [];
      checkUtf8(text, bytes, 0, bytes.length, '', out, JSON.parse(text));
      expectOne(out, 'text-invalid-utf8', path, `the first (${sequence}) in ${where} (`);
    }
  });

  it('where names that differ only in invalid bytes read as one name, is there and says so: the last one\'s value is what was read', () => {
    const cases: [Buffer, string, string, unknown][] = [
      // Two bytes that are no UTF-8 (FF, FE) where the names differ.
      [Buffer.concat([Buffer.from('{"properties":{"ok":1,"a'), Buffer.from([0xff]), Buffer.from('b":"one","a'), Buffer.from([0xfe]), Buffer.from('b":"two"}}')]),
        '/properties/a\uFFFDb', '2 invalid UTF-8 byte sequence(s) in the text, each read as U+FFFD, the first (byte FF) in the member name "a\uFFFDb"; here 2 member names become "a\uFFFDb", and tiles keep the last one\'s value (', { ok: 1, 'a\uFFFDb': 'two' }],
      // A genuine U+FFFD in the first name, the byte in the second, in an object nested in an array: the first
      // invalid byte lies in a value before them, and the issue is where the names are made one.
      [Buffer.concat([Buffer.from('{"properties":{"v":"x'), Buffer.from([0xe9]), Buffer.from('","l":[{"n\uFFFD":1,"n'), Buffer.from([0xe9]), Buffer.from('":2}]}}')]),
        '/properties/l/0/n\uFFFD', 'the first (byte E9) in "x\uFFFD"; here 2 member names become "n\uFFFD", and tiles keep', { v: 'x\uFFFD', l: [{ 'n\uFFFD': 2 }] }],
    ];
    for (const [bytes, path, message, properties] of cases) {
      const text = decode(bytes);
      const value = JSON.parse(text) as { properties: unknown };
      expect(value.properties).toEqual(properties);
      const out: Issue[] = [];
      checkUtf8(text, bytes, 0, bytes.length, '', out, value);
      expectOne(out, 'text-invalid-utf8', path, message);
    }
    // Names that stay apart (the bytes differ where U+FFFD is not the only difference) are no such names.
    const apart = Buffer.concat([Buffer.from('{"a'), Buffer.from([0xff]), Buffer.from('":1,"b'), Buffer.from([0xff]), Buffer.from('":2}')]);
    const out: Issue[] = [];
    checkUtf8(decode(apart), apart, 0, apart.length, '', out, JSON.parse(decode(apart)));
    expect(out.map((i) => [i.path, i.message.includes('member names become')])).toEqual([['/a\uFFFD', false]]);
  });
});
