// Byte sources for the reader: a file, a stream (stdin) or memory, each yielding decompressed bytes (gzip found by magic bytes).
import { createReadStream } from 'node:fs';
import { Readable, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Feature } from '../model/feature.js';

/**
 * A named producer of raw JSON bytes; `open()` may be called more than once for files and memory, once for streams.
 * Chunks are not written to after they are yielded: features are handed on as views into them.
 */
export interface Source {
  /** What messages call it: the path, or `-` for standard input. */
  name: string;
  open(): AsyncIterable<Uint8Array>;
}

/**
 * A named producer of features made in memory rather than read as JSON (a label mask traced to polygons): they go to
 * the build as values, never written out as text to be split and parsed again.
 */
export interface FeatureSource {
  name: string;
  /** The features in order, in groups (one await per group, not per feature). */
  features(): AsyncIterable<Feature[]>;
}

/** 1 MiB reads: large enough that per-chunk overhead vanishes, small enough that a chunk never dominates memory. */
const CHUNK = 1 << 20;

/** A file on disk; gzip is recognised by its first two bytes, never by the file name. */
export function fileSource(path: string): Source {
  return {
    name: path,
    open: () => gunzipIfNeeded(createReadStream(path, { highWaterMark: CHUNK })),
  };
}

/**
 * An already open stream, such as standard input (the CLI passes `process.stdin`; library code never touches the
 * process). A stream can be read once.
 */
export function streamSource(name: string, readable: AsyncIterable<Uint8Array | string>): Source {
  let opened = false;
  return {
    name,
    open: () => {
      if (opened) throw new Error(`${name} can only be read once`);
      opened = true;
      return gunzipIfNeeded(asBytes(readable));
    },
  };
}

/** Standard input under its conventional name `-`. */
export function stdinSource(stdin: AsyncIterable<Uint8Array | string>): Source {
  return streamSource('-', stdin);
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

async function* asBytes(readable: AsyncIterable<Uint8Array | string>): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  for await (const chunk of readable) yield typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
}

/** Passes bytes through, or through gunzip when they start with the gzip magic 1f 8b (concatenated members too). */
export async function* gunzipIfNeeded(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const it = chunks[Symbol.asyncIterator]();
  const rest = async function* (): AsyncGenerator<Uint8Array> {
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield r.value;
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
      if (first.length > 0) yield first;
      if (!done) yield* rest();
      return;
    }
    const compressed = async function* (): AsyncGenerator<Uint8Array> {
      yield first;
      if (!done) yield* rest();
    };
    // pipeline() carries errors from either side into the gunzip stream, which the loop below then throws.
    const gunzip = pipeline(Readable.from(compressed(), { objectMode: false }), createGunzip({ chunkSize: 256 * 1024 }), () => {});
    for await (const chunk of gunzip as AsyncIterable<Uint8Array>) yield chunk;
  } finally {
    // A consumer that stops early must not leave the file (or stream) open.
    await it.return?.();
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
