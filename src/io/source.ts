// Byte sources for the reader: a file, a stream (stdin) or memory, each yielding decompressed bytes (gzip found by magic bytes).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import type { Feature } from '../model/feature.js';
import type { OutlineBudget } from '../raster/label-gather.js';
import type { Scattered } from '../raster/scattered.js';
import type { Recurring } from '../raster/strips.js';
import type { MaskFeatures } from '../options.js';
import type { FlatValue } from '../tiling/flat-value.js';
import { InterruptedError } from '../report/errors.js';

/**
 * A named producer of raw JSON bytes; `open()` may be called more than once for files and memory, once for streams.
 * Chunks are not written to after they are yielded (features are handed on as views into them), except those of a
 * file source made with `reuseChunks`, each valid only until the next is asked for.
 */
export interface Source {
  /** What messages, events and reports call it: the path, or `stdin` (STDIN_NAME) for standard input. */
  name: string;
  /**
   * The layer its features go into when none is given, for a source whose name is no file's (standard input: a file
   * named `stdin` is layer `stdin`); without it, the name less its extensions (`layerNameFor`).
   */
  defaultLayer?: string;
  open(): AsyncIterable<Uint8Array>;
  /**
   * Ends a read the operating system holds (a FIFO waiting for a writer or for data): it holds a thread, and a
   * process cannot exit while one of its threads is held.
   */
  unblock?(): void;
  /**
   * A stream's identity once read through: the SHA-256 of its bytes as read. Standard input has no size or time for a
   * --resume to compare, and other bytes of the same shape (a class renamed) plan alike.
   */
  digest?(): string | undefined;
}

/**
 * A named producer of features made in memory rather than read as JSON (a label mask traced to polygons): they go to
 * the build as values, never written out as text to be split and parsed again.
 */
export interface FeatureSource {
  name: string;
  /**
   * The features in order, in groups (one await per group, not per feature): values (flat or not), or text a source wrote; `made`
   * says how the build's options shape them.
   */
  features(made?: MadeOptions): AsyncIterable<(Feature | FeatureText | FlatValue)[]>;
  /** The size of the image the features come from, once `features()` has been read through: the world covers it. */
  imageSize?(): { width: number; height: number } | undefined;
  /**
   * Collection members of the features, once `features()` has been read through, as a FeatureCollection has them
   * beside its `features` (its `type` too; a mask's pixel size as `multiscale`): the build checks, keeps and compares
   * them as it does a JSON input's.
   */
  members?(): Record<string, unknown> | undefined;
  /**
   * What the file states of its pixel's size that is no size and was not taken (`72 dpi, a print default`), once
   * `features()` has been read through: the build says so when no input and no --image gives the pyramid a size.
   */
  pixelSizeIgnored?(): string | undefined;
  /** Whether a mask's features were its labels' pieces (`--mask-features piece`, or `auto` finding it numbered afresh). */
  readAsPieces?(): boolean;
  /** A mask's labels in pieces far apart, once `features()` has been read through (`ScatteredLabels`). */
  scattered?(): Scattered | undefined;
}

/** The options of a build that shape the features a source makes (BuildConfig has them too), and how it makes them. */
export interface MadeOptions {
  /**
   * What a label mask's features are (`--mask-features`): one per label value (the default here; the build passes its
   * option), per 4-connected piece, or `auto`: per piece where the mask is seen numbered afresh in each tile.
   */
  maskFeatures?: MaskFeatures;
  /**
   * Where a mask read in bands puts the outlines of labels still open past `bytes` (a share of --memory-budget): a
   * mask numbered afresh in each tile holds nearly every label's to its last band. Without it they stay in memory.
   */
  outlines?: OutlineBudget;
  /**
   * Told as soon as a mask read in bands is seen to have labels recurring far apart (`LabelRows.recurring`), before
   * its pieces are traced: the build warns then, not once the mask is read. `asPieces`: `auto` reads it by its pieces.
   */
  onRecurring?: (found: Recurring, asPieces: boolean) => void;
  /** Aborted (SIGINT, SIGTERM): a mask's reading stops at its next read of rows, with InterruptedError. */
  signal?: AbortSignal;
}

/**
 * One feature as GeoJSON text a source wrote (a traced mask's label), parsed in a worker as a file's features are;
 * `strings`: how many strings it holds, member names among them. Its bytes may be reused once the next group of
 * features is asked for.
 */
export class FeatureText {
  constructor(readonly bytes: Uint8Array, readonly strings: number) {}
}

/** 1 MiB reads: large enough that per-chunk overhead vanishes, small enough that a chunk never dominates memory. */
const CHUNK = 1 << 20;

/**
 * A file on disk; gzip is recognised by its first two bytes, never by the file name. With `reuseChunks` every read
 * goes into the same buffer (for a reader that copies what it keeps before asking for more, as a build does): a
 * fresh buffer per read cost a page fault per 4 KiB, a tenth of a build's system time.
 */
export function fileSource(path: string, options: { reuseChunks?: boolean } = {}): Source {
  return {
    name: path,
    open: () => gunzipIfNeeded(fileChunks(path, options.reuseChunks === true)),
    unblock: () => unblockFifo(path),
  };
}

/**
 * A file's bytes, CHUNK at a time; with `reuse`, read into one buffer again and again. Gzip bytes get a buffer per
 * read all the same, as the decompressor reads ahead; so does a file whose first read is too short to tell (a FIFO).
 */
async function* fileChunks(path: string, reuseChunks: boolean): AsyncGenerator<Uint8Array> {
  const file = await fs.promises.open(path, 'r');
  try {
    let buf = new Uint8Array(CHUNK);
    let reuse: boolean | undefined;
    for (;;) {
      const { bytesRead } = await file.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) return;
      reuse ??= reuseChunks && bytesRead >= 2 && !(buf[0] === 0x1f && buf[1] === 0x8b);
      yield buf.subarray(0, bytesRead);
      if (!reuse) buf = new Uint8Array(CHUNK);
    }
  } finally {
    await file.close();
  }
}

/**
 * Opening a FIFO waits for a writer, and reading it for data, each in a thread of its own. Being that writer for a
 * moment (one byte, which nobody reads any more) lets both return.
 */
function unblockFifo(path: string): void {
  try {
    if (!fs.statSync(path).isFIFO()) return;
    // Non-blocking: with no reader waiting this fails (ENXIO), and then nothing is held.
    const fd = fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    try { fs.writeSync(fd, '\n'); } finally { fs.closeSync(fd); }
  } catch {
    // Nothing to release, or the FIFO is full: its reader is not waiting for data then.
  }
}

/**
 * An already open stream, such as standard input (the CLI passes `process.stdin`; library code never touches the
 * process). A stream can be read once.
 */
export function streamSource(name: string, readable: AsyncIterable<Uint8Array | string>): Source {
  let opened = false;
  let digest: string | undefined;
  return {
    name,
    open: () => {
      if (opened) throw new Error(`${name} can only be read once`);
      opened = true;
      return gunzipIfNeeded(hashed(asBytes(readable), (hex) => { digest = hex; }));
    },
    digest: () => digest,
  };
}

/** Passes the bytes through, and gives their SHA-256 once they have all passed. */
async function* hashed(chunks: AsyncIterable<Uint8Array>, done: (hex: string) => void): AsyncGenerator<Uint8Array> {
  const hash = createHash('sha256');
  for await (const chunk of chunks) {
    hash.update(chunk);
    yield chunk;
  }
  done(hash.digest('hex'));
}

/** What every command calls standard input (the argument `-`): `stdin:3:14: …` reads as a place, `-:3:14: …` does not. */
const STDIN_NAME = 'stdin';

/** Standard input, named STDIN_NAME; its layer is `features` unless one is given. */
export function stdinSource(stdin: AsyncIterable<Uint8Array | string>): Source {
  return { ...streamSource(STDIN_NAME, stdin), defaultLayer: 'features' };
}

/**
 * The in-memory twin of `fileSource`. `chunkSize` cuts the bytes into pieces of that size, so tests can put chunk
 * boundaries anywhere (1 puts one between every pair of bytes).
 */
export function memorySource(name: string, content: Uint8Array | string, chunkSize = CHUNK): Source {
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  const size = Math.max(1, Math.floor(chunkSize));
  return {
    name,
    open: () => {
      async function* chunks(): AsyncGenerator<Uint8Array> {
        for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, Math.min(bytes.length, i + size));
      }
      return gunzipIfNeeded(chunks());
    },
  };
}

/**
 * The same bytes, but reading ends with an InterruptedError as soon as `signal` aborts, even while a read is blocked
 * (standard input or a FIFO with no writer), where a check between chunks would never run.
 */
export function abortableSource(source: Source, signal: AbortSignal): Source {
  return { name: source.name, defaultLayer: source.defaultLayer, open: () => abortable(source, signal), unblock: source.unblock, digest: source.digest };
}

async function* abortable(source: Source, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const it = source.open()[Symbol.asyncIterator]();
  const interrupted = () => new InterruptedError(`reading ${source.name} interrupted`);
  // The read in progress, to be failed at once on abort. One promise per read: racing every read against one
  // long-lived promise kept a reaction per race on it, and with it every chunk read (memory grew with the input).
  let failRead: ((e: Error) => void) | undefined;
  const onAbort = (): void => {
    source.unblock?.();
    failRead?.(interrupted());
  };
  const step = async (call: () => Promise<IteratorResult<Uint8Array>>): Promise<IteratorResult<Uint8Array>> => {
    const r = await new Promise<IteratorResult<Uint8Array>>((resolve, reject) => {
      failRead = reject;
      call().then(resolve, reject);
    });
    failRead = undefined;
    return r;
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      if (signal.aborted) throw interrupted();
      const r = await step(() => it.next());
      if (r.done) return;
      try {
        yield r.value;
      } catch (e) {
        // The consumer found the bytes wrong: the source may know why (gzip read on to its end), interruptibly.
        const throwIn = it.throw?.bind(it);
        if (throwIn) await step(() => throwIn(e));
        throw e;
      }
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    // A read still blocked would hold up the return as long as it blocks: close the source without waiting for it.
    const closing = Promise.resolve(it.return?.()).catch(() => {});
    if (!signal.aborted) await closing;
  }
}

async function* asBytes(readable: AsyncIterable<Uint8Array | string>): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  for await (const chunk of readable) yield typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
}

/**
 * Passes bytes through, or through gunzip when they start with the gzip magic 1f 8b (concatenated members too). A
 * consumer that finds the bytes wrong says so by `throw(error)`: gzip data is then read on to its end, to see whether
 * it is damaged (corrupt deflate data decompresses to bad JSON long before the checksum at the end tells), and its
 * error is thrown instead; bytes passed through hand the error on to where they come from, which may be gzip too.
 */
export async function* gunzipIfNeeded(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const it = chunks[Symbol.asyncIterator]();
  const rest = async function* (): AsyncGenerator<Uint8Array> {
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield* handOn(r.value, it);
    }
  };
  try {
    // The magic needs two bytes, and a stream may deliver them in separate chunks.
    const head: Uint8Array[] = [];
    let headLength = 0;
    let done = false;
    while (headLength < 2) {
      const r = await it.next();
      if (r.done) {
        done = true;
        break;
      }
      if (r.value.length === 0) continue;
      head.push(r.value);
      headLength += r.value.length;
    }
    const first = head.length === 1 ? head[0] : concatBytes(head, headLength);
    if (!(first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b)) {
      if (first.length > 0) yield* handOn(first, it);
      if (!done) yield* rest();
      return;
    }
    const compressed = async function* (): AsyncGenerator<Uint8Array> {
      yield first;
      if (!done) yield* rest();
    };
    const gunzip = createGunzip({ chunkSize: 256 * 1024 });
    void feed(compressed(), gunzip);
    yield* heldToo(gunzip);
  } finally {
    // A consumer that stops early must not leave the file (or stream) open.
    await it.return?.();
  }
}

/**
 * Writes the chunks into `gunzip`, each once the one before is decompressed (so the consumer's pace holds back the
 * reads), and ends it after the last: ended before, Node decompresses the last chunk with Z_FINISH, and a stream cut
 * short fails in that step, dropping what it decompressed. An error reading the chunks becomes the stream's.
 */
async function feed(chunks: AsyncIterable<Uint8Array>, gunzip: Gunzip): Promise<void> {
  try {
    for await (const chunk of chunks) {
      if (gunzip.destroyed) return;
      const taken = await new Promise<boolean>((resolve) => {
        // Destroyed (an error, or a consumer that stopped): no callback may come, but 'close' does.
        const closed = (): void => resolve(false);
        gunzip.once('close', closed);
        gunzip.write(chunk, (e) => {
          gunzip.off('close', closed);
          resolve(!e);
        });
      });
      if (!taken) return;
    }
    gunzip.end();
  } catch (e) {
    gunzip.destroy(e instanceof Error ? e : new Error(String(e)));
  }
}

/** Yields `chunk`; an error the consumer throws in there goes on to `it`, the iterator the chunk came from. */
async function* handOn(chunk: Uint8Array, it: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield chunk;
  } catch (e) {
    if (it.throw) await it.throw(e);
    throw e;
  }
}

/**
 * A stream's chunks, and when it fails, the chunks it still holds before the error: a Readable's own iterator drops
 * them, and for a gzip stream cut short they are the end of its data, which the error then says how far it got. An
 * error the consumer throws in at a chunk has the rest read (and dropped) first: the stream's own error, if it ends
 * in one, is thrown instead.
 */
async function* heldToo(stream: Readable): AsyncGenerator<Uint8Array> {
  let failure: unknown;
  let ended = false;
  let wake = (): void => {};
  const onReadable = (): void => wake();
  const onError = (e: unknown): void => { failure = e; wake(); };
  const onEnd = (): void => { ended = true; wake(); };
  stream.on('readable', onReadable).on('error', onError).on('end', onEnd);
  let thrown: { error: unknown } | undefined;
  try {
    for (;;) {
      const chunk = stream.read() as Uint8Array | null;
      if (chunk !== null) {
        if (thrown !== undefined) continue;
        try {
          yield chunk;
        } catch (e) {
          thrown = { error: e };
        }
      } else if (failure !== undefined) throw failure;
      else if (ended) {
        if (thrown !== undefined) throw thrown.error;
        return;
      } else await new Promise<void>((resolve) => { wake = resolve; });
    }
  } finally {
    stream.off('readable', onReadable).off('error', onError).off('end', onEnd);
    // A consumer that stops early: the source behind the stream is closed with it.
    stream.destroy();
  }
}

export function concatBytes(parts: readonly Uint8Array[], length?: number): Uint8Array {
  const total = length ?? parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
