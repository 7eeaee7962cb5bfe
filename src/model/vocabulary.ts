// Ontology vocabularies (spec 2.4) and their resolution: feature-level entries override collection-level ones per name.

export interface OntologyTerm {
  uri: string;
  label?: string;
  description?: string;
  [foreign: string]: unknown;
}

export interface Vocabulary {
  namespace?: string;
  description?: string;
  terms: Record<string, OntologyTerm>;
  [foreign: string]: unknown;
}

/** A map from property name to vocabulary, or a URI of an externally hosted definition. */
export type Vocabularies = Record<string, Vocabulary> | string;

/**
 * The vocabularies that apply to a feature. Inline maps merge per property name, the feature winning;
 * a URI cannot be merged, so a feature-level URI replaces everything and a collection-level URI is
 * returned only when the feature defines nothing.
 */
export function resolveVocabularies(feature?: Vocabularies, collection?: Vocabularies): Vocabularies | undefined {
  if (feature === undefined) return collection;
  if (typeof feature === 'string' || collection === undefined || typeof collection === 'string') return feature;
  return { ...collection, ...feature };
}
