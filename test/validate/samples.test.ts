// The sample data is the rule book's proof: one invalid file per error code, and valid files that raise no error.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RULES, validateDocument } from '../../src/validate/index.js';
import { errors } from './helpers.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../sample-data');
const jsonFiles = (dir: string) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.json')).sort();
const load = (dir: string, file: string): unknown => JSON.parse(readFileSync(join(root, dir, file), 'utf8'));

const invalid = jsonFiles('invalid');
const valid = jsonFiles('valid');

describe('sample-data/invalid', () => {
  it.each(invalid)('%s yields exactly one error, whose code is the file name', (file) => {
    const code = file.replace(/\.json$/, '');
    const found = errors(validateDocument(load('invalid', file)));
    expect(found.map((i) => i.code)).toEqual([code]);
  });

  it('holds a file for every error code in RULES, and no file for an unknown code', () => {
    const names = new Set(invalid.map((f) => f.replace(/\.json$/, '')));
    const errorCodes = Object.entries(RULES).filter(([, r]) => r.severity === 'error').map(([c]) => c);
    expect(errorCodes.filter((c) => !names.has(c))).toEqual([]);
    expect([...names].filter((n) => !(n in RULES) || RULES[n as keyof typeof RULES].severity !== 'error')).toEqual([]);
  });
});

describe('sample-data/valid', () => {
  it.each(valid)('%s yields no error', (file) => {
    expect(errors(validateDocument(load('valid', file)))).toEqual([]);
  });

  it('covers every kind of object', () => {
    const text = valid.map((f) => readFileSync(join(root, 'valid', f), 'utf8')).join('\n');
    for (const needle of [
      '"Point"', '"MultiPoint"', '"LineString"', '"MultiLineString"', '"Polygon"', '"MultiPolygon"', '"PolyhedralSurface"', '"TIN"',
      '"GeometryCollection"', '"tiles"', '"ref"', '"parentId"', '"featureClass"', '"vocabularies"', '"Image"', '"provenance"',
      '"StitchingVector"', '"coordinateTransformations"', '"transformationMatrix"', '"tilejson": "3.0.0"', '"scale_factor"',
      '"fieldranges"', '"fieldenums"', '"fielddescriptions"', '"assets"', '"multiscale"',
    ]) expect(text, needle).toContain(needle);
  });
});

describe('RULES', () => {
  it('codes are kebab-case and every rule has a summary', () => {
    for (const [code, rule] of Object.entries(RULES)) {
      expect(code).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(['error', 'warning']).toContain(rule.severity);
      expect(rule.summary.length).toBeGreaterThan(10);
    }
  });

  it('every code is reported somewhere in the validator source', () => {
    const dir = join(dirname(fileURLToPath(import.meta.url)), '../../src/validate');
    const source = readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'rules.ts').map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
    expect(Object.keys(RULES).filter((c) => !source.includes(`'${c}'`))).toEqual([]);
  });
});
