// Reads PMTiles archives through byte ranges (a file, or bytes in memory): header, metadata, tiles by z/x/y, every tile in order.
import { constants as fsConstants } from 'node:fs';
import * as fs from 'node:fs/promises';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip } from 'node:zlib';
import { InputError } from '../report/errors.js';
import {
  Compression, HEADER_BYTES, MAX_ZOOM, decodeDirectory, decodeHeader, findEntry, firstId, tileIdToZxy, zxyToTileId, type Directory,
  type PmtilesHeader,
} from './pmtiles-format.js';

/** Tiles `tiles()` lists at most (2^25; a reader indexing them holds about 100 bytes each). */
export const MAX_LISTED = 33_554_432;

const gunzipAsync = promisify(gunzip);
const brotliAsync = promisify(brotliDecompress);

/** Random access to the bytes of an archive: what a file, an HTTP server with Range, or memory offers. */
export interface RangeSource {
  /** Names the archive in error messages. */
  readonly name: string;
  readonly size: number;
  /** Exactly `length` bytes from `offset`; throws InputError past the end. */
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

export async function fileRangeSource(file: string): Promise<RangeSource> {
  let handle: fs.FileHandle;
  let size: number;
  try {
    // Without blocking: a FIFO named like an archive would wait for a writer for ever.
    handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const st = await handle.stat();
    size = st.size;
    if (!st.isFile()) {
      await handle.close();
      throw new InputError(`${file} is not a regular file (a FIFO or a device?): no archive`, file);
    }
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError(`cannot read ${file}: ${(err as Error).message}`, file);
  }
  return handleRangeSource(file, handle, size);
}

/** The bytes of a file already open (`size` bytes when opened), named `name`; closing the source closes the handle. */
export function handleRangeSource(name: string, handle: fs.FileHandle, size: number): RangeSource {
  return {
    name,
    size,
    async read(offset, length) {
      checkRange(name, size, offset, length);
      const buf = Buffer.alloc(length);
      for (let done = 0; done < length;) {
        const { bytesRead } = await handle.read(buf, done, length - done, offset + done);
        if (bytesRead === 0) throw new InputError(`${name} was cut short while being read (byte ${offset + done})`, name);
        done += bytesRead;
      }
      return buf;
    },
    close: () => handle.close(),
  };
}

/** In-memory twin of fileRangeSource. */
export function memoryRangeSource(name: string, bytes: Uint8Array): RangeSource {
  return {
    name,
    size: bytes.length,
    async read(offset, length) {
      checkRange(name, bytes.length, offset, length);
      return bytes.subarray(offset, offset + length);
    },
    async close() {},
  };
}

function checkRange(name: string, size: number, offset: number, length: number): void {
  if (offset < 0 || length < 0 || offset + length > size) {
    throw new InputError(`${name}: bytes ${offset}..${offset + length} are past the end of the archive (${size} bytes)`, name);
  }
}

/** One addressed tile: where its stored bytes lie in the archive (offset from the start of the file). */
export interface ArchiveTile {
  z: number;
  x: number;
  y: number;
  tileId: number;
  offset: number;
  length: number;
}

/** The spec discourages more than one level of leaves; a deeper chain means a corrupt archive (or a loop). */
const MAX_DEPTH = 4;
/** Leaf directories kept decoded; a client moving over a slide reuses a few. */
const LEAF_CACHE = 64;

export class PmtilesArchive {
  private readonly leaves = new Map<number, Directory>();

  private constructor(readonly source: RangeSource, readonly header: PmtilesHeader, private readonly root: Directory) {}

  static async open(source: RangeSource): Promise<PmtilesArchive> {
    return named(source, async () => {
      const header = decodeHeader(await source.read(0, Math.min(source.size, HEADER_BYTES)));
      const root = await directoryAt(source, header, header.rootDirectoryOffset, header.rootDirectoryLength, 'the root directory');
      return new PmtilesArchive(source, header, root);
    });
  }

  get name(): string {
    return this.source.name;
  }

  /** The JSON metadata, parsed. */
  async metadata(): Promise<unknown> {
    return named(this.source, async () => {
      const h = this.header;
      const text = Buffer.from(await decompress(await partAt(this.source, h.metadataOffset, h.metadataLength, 'the metadata'), h.internalCompression, `the metadata (bytes ${h.metadataOffset}–${h.metadataOffset + h.metadataLength - 1})`)).toString('utf8');
      try {
        return JSON.parse(text) as unknown;
      } catch (err) {
        throw new InputError(`the metadata is not JSON: ${(err as Error).message}`);
      }
    });
  }

  /** Where tile z/x/y's stored bytes lie in the archive (serve sends them as they are), or undefined. */
  async tileLocation(z: number, x: number, y: number): Promise<{ offset: number; length: number } | undefined> {
    const id = zxyToTileId(z, x, y);
    return named(this.source, async () => {
      let dir = this.root;
      for (let depth = 0; depth < MAX_DEPTH; depth++) {
        const i = findEntry(dir, id);
        if (i < 0) return undefined;
        if (dir.runLength[i] > 0) return { offset: this.header.tileDataOffset + dir.offset[i], length: dir.length[i] };
        dir = await this.leaf(dir.offset[i], dir.length[i]);
      }
      throw new InputError(`leaf directories nest deeper than ${MAX_DEPTH} levels`);
    });
  }

  /** Tile z/x/y as stored (in the header's tile compression), or undefined when the archive does not hold it. */
  async storedTile(z: number, x: number, y: number): Promise<Uint8Array | undefined> {
    const at = await this.tileLocation(z, x, y);
    return at && this.source.read(at.offset, at.length);
  }

  /** Tile z/x/y as a client sees it (decompressed), or undefined. */
  async tile(z: number, x: number, y: number): Promise<Uint8Array | undefined> {
    const stored = await this.storedTile(z, x, y);
    return stored && named(this.source, () => decompress(stored, this.header.tileCompression, `tile ${z}/${x}/${y}`, MAX_TILE));
  }

  /** Every addressed tile in tile-id order, a run-length entry giving one tile per id it covers. */
  async *tiles(): AsyncIterable<ArchiveTile> {
    // Depth first with an explicit stack: nested generators would add a hop per level to every tile. Each directory
    // holds the ids [lo, hi) its parent's entry covers: up to the parent's next entry, where a search goes instead.
    const stack: { dir: Directory; i: number; lo: number; hi: number }[] = [{ dir: this.root, i: 0, lo: 0, hi: Infinity }];
    // Entries are bounded before a run is walked tile by tile: a run of 2^31 in a damaged or hostile archive would
    // otherwise be listed until memory runs out. Up to twice the addressed tiles the header declares are walked, so
    // that a reader can still say how many the directories hold where that count is a little off, and never more
    // than MAX_LISTED.
    const h = this.header;
    const endId = firstId(Math.min(h.maxZoom, MAX_ZOOM) + 1);
    const limit = Math.min(MAX_LISTED, h.addressedTiles > 0 ? 2 * h.addressedTiles : Infinity);
    let left = limit;
    const invalid = (why: string) => new InputError(`${this.name}: ${why}`, this.name);
    // The last tile id listed: ids come in order, so one addressed again by an overlapping run shows here.
    let prev = -1;
    const ids = (lo: number, hi: number) => (hi === Infinity ? `ids from ${lo}` : `ids ${lo}–${hi - 1}`);
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top.i >= top.dir.count) {
        stack.pop();
        continue;
      }
      const { dir, lo, hi } = top;
      const i = top.i++;
      const first = dir.tileId[i];
      // A search for an id goes to the entry holding the largest id not above it: entries outside their parent's
      // range are never reached that way, so a reader (the viewer, OpenLayers) would not find their tiles.
      if (first < lo || first >= hi) {
        throw invalid(`a leaf directory's entry addresses tile id ${first}, outside the ${ids(lo, hi)} of the entry pointing to it: readers searching the directories never find it`);
      }
      if (dir.runLength[i] === 0) {
        if (stack.length >= MAX_DEPTH) throw invalid(`leaf directories nest deeper than ${MAX_DEPTH} levels`);
        const leaf = await named(this.source, () => directoryAt(this.source, this.header, this.header.leafDirectoriesOffset + dir.offset[i], dir.length[i], 'a leaf directory'));
        stack.push({ dir: leaf, i: 0, lo: first, hi: i + 1 < dir.count ? dir.tileId[i + 1] : hi });
        continue;
      }
      const offset = this.header.tileDataOffset + dir.offset[i];
      const last = first + dir.runLength[i] - 1;
      if (last >= endId) throw invalid(`a directory entry addresses tile ids up to ${last}, past the last of zoom ${Math.min(h.maxZoom, MAX_ZOOM)} (${endId - 1}), the header's maximum`);
      if (last >= hi) {
        throw invalid(`a leaf directory's entry addresses tile ids ${first}–${last}, past the ${ids(lo, hi)} of the entry pointing to it: readers searching the directories never find those beyond`);
      }
      // The same id again (a repeated entry) is listed for the reader to name; a run reaching back over ids listed before is refused.
      if (first < prev) throw invalid(`a directory entry addresses tile ids ${first}–${last}, though the entries before it reach ${prev}: runs overlap`);
      prev = last;
      left -= dir.runLength[i];
      if (left < 0) {
        throw invalid(limit === MAX_LISTED ? `the directories address more than ${MAX_LISTED} tiles, more than a build writes` : `the directories address more than twice the ${h.addressedTiles} tiles the header says`);
      }
      for (let k = 0; k < dir.runLength[i]; k++) {
        const tileId = first + k;
        const [z, x, y] = tileIdToZxy(tileId);
        yield { z, x, y, tileId, offset, length: dir.length[i] };
      }
    }
  }

  private async leaf(offset: number, length: number): Promise<Directory> {
    const cached = this.leaves.get(offset);
    if (cached) return cached;
    const dir = await directoryAt(this.source, this.header, this.header.leafDirectoriesOffset + offset, length, 'a leaf directory');
    if (this.leaves.size >= LEAF_CACHE) this.leaves.delete(this.leaves.keys().next().value as number);
    this.leaves.set(offset, dir);
    return dir;
  }

  close(): Promise<void> {
    return this.source.close();
  }
}

/** Opens the archive file `file`; throws InputError naming it when it cannot be read or is not PMTiles v3. */
export async function openPmtiles(file: string): Promise<PmtilesArchive> {
  const source = await fileRangeSource(file);
  try {
    return await PmtilesArchive.open(source);
  } catch (err) {
    await source.close();
    throw err;
  }
}

/** The bytes of a part of the archive (`what`: the metadata, a directory), which must lie inside it. */
async function partAt(source: RangeSource, offset: number, length: number, what: string): Promise<Uint8Array> {
  if (offset + length > source.size) throw new InputError(`${what} (bytes ${offset}–${offset + length - 1}) lies past the end of the archive (${source.size} bytes): it was cut short or is damaged`);
  return source.read(offset, length);
}

/** `what` names the directory in messages (the root, a leaf); the bytes it lies at are added. */
async function directoryAt(source: RangeSource, header: PmtilesHeader, offset: number, length: number, what: string): Promise<Directory> {
  return decodeDirectory(await decompress(await partAt(source, offset, length, what), header.internalCompression, `${what} (bytes ${offset}–${offset + length - 1})`), what);
}

/**
 * The most bytes a part of an archive may decompress to: a damaged or hostile archive (a gzip bomb as its metadata)
 * must not take the reader's memory. The metadata and directories (a few MB for a million tiles) get less than tiles
 * (a JSON tile of a whole-slide outline is tens of MB).
 */
export const MAX_TILE = 256 * 1024 * 1024;
const MAX_INTERNAL = 64 * 1024 * 1024;

/** `what` names the part decompressed (the metadata, a directory, a tile) in the message of a failure. */
async function decompress(bytes: Uint8Array, compression: Compression, what: string, limit = MAX_INTERNAL): Promise<Uint8Array> {
  const options = { maxOutputLength: limit };
  try {
    if (compression === Compression.None) return bytes;
    if (compression === Compression.Gzip) return await gunzipAsync(bytes, options);
    if (compression === Compression.Brotli) return await brotliAsync(bytes, options);
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new InputError(`${what} decompresses to more than ${limit / 1024 / 1024} MiB: the archive is damaged`);
    throw new InputError(`${what} does not decompress: ${(err as Error).message}`);
  }
  throw new InputError(`compression ${compression} is not supported (none, gzip and brotli are)`);
}

/** Runs `f`, naming the archive in the message of an InputError it throws that does not name it yet. */
async function named<T>(source: RangeSource, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof InputError && err.file === undefined) throw new InputError(`${source.name}: ${err.message}`, source.name);
    throw err;
  }
}
