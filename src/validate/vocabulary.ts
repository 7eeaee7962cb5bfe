// Ontology vocabulary validation (spec 2.4, 7.9): a map of Vocabulary objects (or a URI), terms with a uri each.
import { pointerToken, shown, type Issue } from './issue.js';
import { report } from './rules.js';
import { checkOptionalString, hasOwn, isObject, type JsonObject } from './util.js';

function checkTerm(term: unknown, path: string, out: Issue[]): void {
  if (!isObject(term)) {
    report(out, 'term-not-object', path, `OntologyTerm must be an object with a uri, found ${shown(term)}`);
    return;
  }
  const uri = term.uri;
  if (uri === undefined) report(out, 'term-uri-missing', path, `OntologyTerm must have a uri (the full URI of the term), found none in ${shown(term)}`);
  else if (typeof uri !== 'string') report(out, 'term-uri-not-string', `${path}/uri`, `OntologyTerm uri must be a string, found ${shown(uri)}`);
  checkOptionalString(term, 'label', path, out);
  checkOptionalString(term, 'description', path, out);
}

function checkVocabulary(v: unknown, path: string, out: Issue[]): void {
  if (!isObject(v)) {
    report(out, 'vocabulary-not-object', path, `Vocabulary must be an object with terms, found ${shown(v)}`);
    return;
  }
  checkOptionalString(v, 'namespace', path, out);
  checkOptionalString(v, 'description', path, out);
  const terms = v.terms;
  if (terms === undefined) {
    report(out, 'vocabulary-terms-missing', path, `Vocabulary must have terms (a map of property value to OntologyTerm), found none in ${shown(v)}`);
    return;
  }
  if (!isObject(terms)) {
    report(out, 'vocabulary-terms-not-object', `${path}/terms`, `Vocabulary terms must be a map of property value to OntologyTerm, found ${shown(terms)}`);
    return;
  }
  eachOwn(terms, `${path}/terms`, out, checkTerm);
}

function eachOwn(obj: JsonObject, path: string, out: Issue[], check: (v: unknown, path: string, out: Issue[]) => void): void {
  for (const key in obj) {
    if (hasOwn(obj, key)) check(obj[key], `${path}/${pointerToken(key)}`, out);
  }
}

/** Internal entry. `allowUri`: features and collections may point to an external definition; layers may not. */
export function checkVocabularies(value: unknown, path: string, out: Issue[], allowUri = true): void {
  if (typeof value === 'string' && allowUri) return;
  if (!isObject(value)) {
    report(out, 'vocabularies-type', path, allowUri
      ? `vocabularies must be a map of property name to Vocabulary, or a URI string, found ${shown(value)}`
      : `vocabularies must be a map of property name to Vocabulary, found ${shown(value)}`);
    return;
  }
  eachOwn(value, path, out, checkVocabulary);
}

/** Validates a `vocabularies` member; `allowUri` is false for vector layers, whose vocabularies are always a map. */
export function validateVocabularies(value: unknown, path = '', allowUri = true): Issue[] {
  const out: Issue[] = [];
  checkVocabularies(value, path, out, allowUri);
  return out;
}
