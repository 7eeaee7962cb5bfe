// Unit tests of validateVocabularies: map or URI, Vocabulary terms, OntologyTerm uri (spec 2.4, 7.9).
import { describe, expect, it } from 'vitest';
import { validateVocabularies } from '../../src/validate/index.js';
import { expectOne } from './helpers.js';

const term = { uri: 'http://purl.obolibrary.org/obo/CL_0000084', label: 'T cell', description: 'a lymphocyte' };

describe('validateVocabularies', () => {
  it('accepts a map of vocabularies, an empty map, and a URI string', () => {
    expect(validateVocabularies({ cellType: { namespace: 'http://purl.obolibrary.org/obo/', description: 'CL', terms: { 'T cell': term } } })).toEqual([]);
    expect(validateVocabularies({})).toEqual([]);
    expect(validateVocabularies({ cellType: { terms: {} } })).toEqual([]);
    expect(validateVocabularies('https://example.org/vocab.json', '/vocabularies')).toEqual([]);
  });
  it('vocabularies-type, and a URI where only a map is allowed (vector layers)', () => {
    expectOne(validateVocabularies(5, '/vocabularies'), 'vocabularies-type', '/vocabularies',
      'vocabularies must be a map of property name to Vocabulary, or a URI string, found 5');
    expectOne(validateVocabularies(['http://x'], ''), 'vocabularies-type', '', 'found ["http://x"]');
    expectOne(validateVocabularies('http://x', '/vector_layers/0/vocabularies', false), 'vocabularies-type', '/vector_layers/0/vocabularies',
      'vocabularies must be a map of property name to Vocabulary, found "http://x"');
  });
  it('vocabulary-not-object', () => {
    expectOne(validateVocabularies({ cellType: 'http://x' }, '/v'), 'vocabulary-not-object', '/v/cellType',
      'Vocabulary must be an object with terms, found "http://x"');
  });
  it('vocabulary-terms-missing and vocabulary-terms-not-object (spec 7.9)', () => {
    expectOne(validateVocabularies({ cellType: { namespace: 'http://x/' } }, '/v'), 'vocabulary-terms-missing', '/v/cellType',
      'Vocabulary must have terms (a map of property value to OntologyTerm), found none in {"namespace":"http://x/"}');
    expectOne(validateVocabularies({ cellType: { terms: [term] } }, '/v'), 'vocabulary-terms-not-object', '/v/cellType/terms',
      'Vocabulary terms must be a map of property value to OntologyTerm, found [{"uri"');
  });
  it('term-not-object, term-uri-missing, term-uri-not-string (spec 7.9)', () => {
    expectOne(validateVocabularies({ c: { terms: { T: 'http://x' } } }), 'term-not-object', '/c/terms/T',
      'OntologyTerm must be an object with a uri, found "http://x"');
    expectOne(validateVocabularies({ c: { terms: { T: { label: 'T' } } } }), 'term-uri-missing', '/c/terms/T',
      'OntologyTerm must have a uri (the full URI of the term), found none in {"label":"T"}');
    expectOne(validateVocabularies({ c: { terms: { T: { uri: 84 } } } }), 'term-uri-not-string', '/c/terms/T/uri',
      'OntologyTerm uri must be a string, found 84');
  });
  it('member-not-string for the optional string members', () => {
    expectOne(validateVocabularies({ c: { namespace: 1, terms: {} } }), 'member-not-string', '/c/namespace', 'namespace must be a string, found 1');
    expectOne(validateVocabularies({ c: { description: [], terms: {} } }), 'member-not-string', '/c/description');
    expectOne(validateVocabularies({ c: { terms: { T: { ...term, label: 2 } } } }), 'member-not-string', '/c/terms/T/label');
  });
  it('escapes property names and term values in paths (RFC 6901)', () => {
    expectOne(validateVocabularies({ 'a/b~c': { terms: { 'x/y': {} } } }), 'term-uri-missing', '/a~1b~0c/terms/x~1y');
  });
  it('treats a "__proto__" property name as data', () => {
    const v = JSON.parse('{"__proto__": {"terms": {"T": {}}}, "constructor": {"terms": {}}}');
    expectOne(validateVocabularies(v), 'term-uri-missing', '/__proto__/terms/T');
  });
});
