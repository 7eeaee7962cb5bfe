// Streaming reader: splits FeatureCollections, NDJSON and GeoJSON Text Sequences of any size into one feature at a time.
import { basename } from 'node:path';
import { gunzipIfNeeded, type Source } from './source.js';
import { InterruptedError, ReadError } from '../report/errors.js';
import { jsonSyntaxError } from './json-errors.js';
import type { FeatureEvent, ReadEvent, ValueLimit } from './json-events.js';
import { Splitter } from './json-splitter.js';
import type { Cursor } from './json-value.js';

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
  // The last feature handed on, for a gzip stream that breaks off to say how far it got.
  let last: { index: number; line: number } | undefined;
  // A syntax error, the splitter's or one the consumer throws in at a yield (a feature that does not parse), or the
  // damage behind it: corrupt gzip data decompresses to bad JSON well before its checksum, at the end, tells. The
  // source reads a gzip stream on to its end to see (only there: bytes that are no gzip are not read further).
  const blame = async (e: unknown): Promise<unknown> => {
    if (!(e instanceof ReadError)) return e;
    try {
      await it.throw?.(e);
    } catch (z) {
      if (z instanceof InterruptedError) return z;
      if (z !== e) return damagedGzip(e, z) ?? e;
    }
    return e;
  };
  try {
    for (;;) {
      let r: IteratorResult<Uint8Array>;
      try {
        r = await it.next();
      } catch (e) {
        throw ioError(source.name, e, splitter.at, last);
      }
      if (r.done) break;
      let failure: unknown;
      try {
        splitter.push(r.value);
      } catch (e) {
        failure = e;
      }
      for (let k = events.length - 1; k >= 0; k--) {
        const ev = events[k];
        if (ev.kind === 'feature') {
          last = { index: ev.index, line: ev.line };
          break;
        }
      }
      // Handing over a chunk's events before reading the next chunk keeps memory at one chunk's worth of features.
      // Events before a syntax error go out first, so what the consumer sees never depends on where chunks end.
      if (events.length > 0) {
        try {
          yield events;
        } catch (e) {
          throw await blame(e);
        }
      }
      events.length = 0;
      if (failure !== undefined) throw await blame(failure);
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

/** The layer of a source's features when none is given: its own default (standard input's), else its name's. */
export function defaultLayerOf(source: { name: string; defaultLayer?: string }): string {
  return source.defaultLayer ?? layerNameFor(source.name);
}

/**
 * Default vector layer id of an input: its file name without data extensions (`cells.geojson.gz` → `cells`, a label
 * mask `nuclei.tif` or OME-TIFF `nuclei.ome.tif` → `nuclei`, as the CLI names it); stdin → `features`.
 */
export function layerNameFor(path: string): string {
  if (path === '-' || path === '') return 'features';
  let name = basename(path);
  for (;;) {
    const dot = name.lastIndexOf('.');
    if (dot <= 0 || !LAYER_EXTENSIONS.has(name.slice(dot).toLowerCase())) break;
    name = name.slice(0, dot);
  }
  // OME-TIFF's extension is `.ome.tif` as a whole (Bio-Formats, QuPath's label export, tifffile).
  if (name !== basename(path) && /\.tiff?$/i.test(path) && /.\.ome$/i.test(name)) name = name.slice(0, -4);
  return name || 'features';
}

function ioError(file: string, e: unknown, at?: Cursor, last?: { index: number; line: number }): ReadError | InterruptedError {
  // A read a signal ended (abortableSource) is an interruption, not an unreadable input.
  if (e instanceof ReadError || e instanceof InterruptedError) return e;
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err?.code === 'string' ? err.code : undefined;
  const text = typeof err?.message === 'string' ? err.message : String(e);
  if (code?.startsWith('Z_') && at !== undefined) return gzipError(file, code, text, at, last, e);
  const message =
    code === 'ENOENT' ? 'no such file'
    : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
    : code === 'EISDIR' ? 'is a directory, not a file'
    : code?.startsWith('Z_') ? `not a valid gzip stream (${text})`
    : `cannot read: ${text}`;
  return new ReadError(file, 0, 0, message, { cause: e });
}

/** What zlib found wrong with a gzip input, in words of our own. */
function gzipFault(code: string, zlib: string): string {
  // zlib's words for the faults it tells apart; "incorrect header check" is only ever the next member's, as the
  // first one's magic bytes were checked before zlib saw the input.
  return code === 'Z_BUF_ERROR' ? 'the gzip stream ends early (truncated file?)'
    : zlib === 'incorrect header check' ? 'bytes that are not gzip follow the end of the gzip stream (appended to the file?)'
    : zlib === 'incorrect data check' ? 'the gzip data is corrupt (its CRC-32 checksum does not match the data)'
    : zlib === 'incorrect length check' ? 'the gzip data is corrupt (its recorded length does not match the data)'
    : code === 'Z_DATA_ERROR' ? `the gzip data is corrupt (${zlib})`
    : `the gzip stream cannot be decompressed (${zlib})`;
}

/** Corrupt data, as zlib's `Z_DATA_ERROR` says of anything but bytes after the stream (whose data is whole). */
const isCorrupt = (code: string, zlib: string): boolean => code === 'Z_DATA_ERROR' && zlib !== 'incorrect header check';

/**
 * What zlib found wrong with a gzip input, and how far its JSON was read before: the place where the bytes read
 * end (none when there are none), and for a stream cut short, the last feature read whole, which is as far as a cut
 * download can be used. Of corrupt data nothing can be trusted: the damage may lie anywhere before (a checksum is
 * only checked at the end).
 */
function gzipError(file: string, code: string, zlib: string, at: Cursor, last: { index: number; line: number } | undefined, cause: unknown): ReadError {
  const why = gzipFault(code, zlib);
  const bytes = at.abs;
  const truncated = code === 'Z_BUF_ERROR';
  // Output zlib made in the step that failed is dropped with it (only a truncated stream fails after its last step):
  // what was read is then less than what the stream holds, so it is said to be what was read.
  if (bytes === 0) return new ReadError(file, 0, 0, truncated ? `${why}, before any JSON was read from it` : why, { cause });
  const read = `${bytes.toLocaleString('en-US')} bytes`;
  if (isCorrupt(code, zlib)) return new ReadError(file, at.line, at.column(0), `${why}, found after ${read} of JSON, which end here: nothing read from it can be trusted`, { cause });
  const feature = last === undefined ? '' : `; the last complete feature read is feature ${last.index} (line ${last.line})`;
  return new ReadError(file, at.line, at.column(0), `${why}: ${truncated ? 'the JSON in it breaks off here' : 'the JSON read before the error ends here'}, after ${read}${feature}`, { cause });
}

/**
 * A syntax error `e` in JSON decompressed from gzip data that reading on found corrupt (`z`, zlib's error), as that
 * damage, shown where the JSON goes wrong; undefined for any other error.
 */
function damagedGzip(e: ReadError, z: unknown): ReadError | undefined {
  const { code, message } = z as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string' || !isCorrupt(code, message)) return undefined;
  return new ReadError(e.file, e.line, e.column, `${gzipFault(code, message)}, and the JSON decompressed from it goes wrong here, so nothing read from it can be trusted: ${e.reason}`, { cause: z });
}
