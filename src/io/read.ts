// Streaming reader: splits FeatureCollections, NDJSON and GeoJSON Text Sequences of any size into one feature at a time.
import { basename } from 'node:path';
import { gunzipIfNeeded, type Source } from './source.js';
import { InterruptedError, ReadError } from '../report/errors.js';
import { jsonSyntaxError } from './json-errors.js';
import type { FeatureEvent, ReadEvent, ValueLimit } from './json-events.js';
import { Splitter } from './json-splitter.js';

export { fileSource, memorySource, stdinSource, streamSource, type Source } from './source.js';
export type { MembersEvent, ReadEvent, ValueLimit } from './json-events.js';

/** Events of one source, in input order. Throws `ReadError` on syntax errors the splitter sees and on I/O errors. */
export async function* readDocuments(source: Source): AsyncGenerator<ReadEvent> {
  for await (const events of readEventBatches(source)) yield* events;
}

/**
 * The events of `readDocuments`, a chunk's worth at a time (one await per chunk rather than per feature, for a
 * consumer that handles events synchronously). Each array is valid until the next is asked for. A value larger than
 * `limit` ends the read with a `ValueTooLargeError` before it is held whole.
 */
export async function* readEventBatches(source: Source, limit?: ValueLimit): AsyncGenerator<readonly ReadEvent[]> {
  const events: ReadEvent[] = [];
  const splitter = new Splitter(source.name, events, limit);
  let chunks: AsyncIterable<Uint8Array>;
  try {
    // Built-in sources already decompress; this catches gzip from any other Source (a no-op on JSON bytes).
    chunks = gunzipIfNeeded(source.open());
  } catch (e) {
    throw ioError(source.name, e);
  }
  const it = chunks[Symbol.asyncIterator]();
  try {
    for (;;) {
      let r: IteratorResult<Uint8Array>;
      try {
        r = await it.next();
      } catch (e) {
        throw ioError(source.name, e);
      }
      if (r.done) break;
      let failure: unknown;
      try {
        splitter.push(r.value);
      } catch (e) {
        failure = e;
      }
      // Handing over a chunk's events before reading the next chunk keeps memory at one chunk's worth of features.
      // Events before a syntax error go out first, so what the consumer sees never depends on where chunks end.
      if (events.length > 0) yield events;
      events.length = 0;
      if (failure !== undefined) throw failure;
    }
    let failure: unknown;
    try {
      splitter.end();
    } catch (e) {
      failure = e;
    }
    if (events.length > 0) yield events;
    if (failure !== undefined) throw failure;
  } finally {
    // A consumer that stops early must not leave the file open.
    try {
      await it.return?.();
    } catch {
      // The source already failed; its error is the one being thrown.
    }
  }
}

/** JSON.parse of a feature event; a syntax error becomes a `ReadError` at its absolute line and column in the input. */
export function parseFeature(ev: FeatureEvent): unknown {
  try {
    return JSON.parse(ev.text);
  } catch (e) {
    throw jsonSyntaxError(ev.file, ev.text, ev.line, ev.column, e);
  }
}

const LAYER_EXTENSIONS = new Set(['.json', '.geojson', '.ndjson', '.geojsonl', '.geojsons', '.jsonl', '.gz', '.png', '.tif', '.tiff']);

/**
 * Default vector layer id of an input: its file name without data extensions (`cells.geojson.gz` → `cells`, a label
 * mask `nuclei.tif` → `nuclei`, as the CLI names it); stdin → `features`.
 */
export function layerNameFor(path: string): string {
  if (path === '-' || path === '') return 'features';
  let name = basename(path);
  for (;;) {
    const dot = name.lastIndexOf('.');
    if (dot <= 0 || !LAYER_EXTENSIONS.has(name.slice(dot).toLowerCase())) break;
    name = name.slice(0, dot);
  }
  return name || 'features';
}

function ioError(file: string, e: unknown): ReadError | InterruptedError {
  // A read a signal ended (abortableSource) is an interruption, not an unreadable input.
  if (e instanceof ReadError || e instanceof InterruptedError) return e;
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err?.code === 'string' ? err.code : undefined;
  const text = typeof err?.message === 'string' ? err.message : String(e);
  const message =
    code === 'ENOENT' ? 'no such file'
    : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
    : code === 'EISDIR' ? 'is a directory, not a file'
    : code?.startsWith('Z_') ? `not a valid gzip stream (${text})`
    : `cannot read: ${text}`;
  return new ReadError(file, 0, 0, message, { cause: e });
}
