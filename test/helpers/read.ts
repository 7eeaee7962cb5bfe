// The ReadError that reading a source (and parsing its features) ends with, for tests of the reader's messages.
import { expect } from 'vitest';
import { parseFeature, readDocuments, type Source } from '../../src/io/read.js';
import { ReadError } from '../../src/report/errors.js';

export async function readError(source: Source): Promise<ReadError> {
  try {
    for await (const ev of readDocuments(source)) if (ev.kind === 'feature') parseFeature(ev);
  } catch (e) {
    expect(e).toBeInstanceOf(ReadError);
    return e as ReadError;
  }
  throw new Error('expected a ReadError');
}
