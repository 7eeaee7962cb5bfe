// PMTiles archive layout, pure: from an index of stored tiles to the archive's head bytes and the order of its tile data.
import { hash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { DataError, OutputError } from '../report/errors.js';
import {
  Compression, HEADER_BYTES, ROOT_WINDOW, TileType, encodeDirectory, encodeHeader, tileCornerLonLat, tileIdToZxy,
  zxyToTileId, type Directory, type PmtilesHeader,
} from './pmtiles-format.js';

/** Bytes of a tile's content key: the first 128 bits of its SHA-256, enough that two different tiles never share one. */
export const HASH_BYTES = 16;

/** Content key of tile bytes, for storing identical tiles once. */
export function tileHash(bytes: Uint8Array): Uint8Array {
  return hash('sha256', bytes, 'buffer').subarray(0, HASH_BYTES);
}

/**
 * Where tiles are stored before assembly, as columns: record i is tile `tileId[i]`, `length[i]` bytes at
 * `offset[i]` of part `part[i]`'s data. A length of 0 records a removed tile. Within a part, a later record of
 * the same tile replaces an earlier one (records are in part order, then write order).
 */
export interface TileIndex {
  readonly count: number;
  readonly tileId: Float64Array;
  readonly offset: Float64Array;
  readonly length: Uint32Array;
  /** HASH_BYTES per record. */
  readonly hash: Uint8Array;
  readonly part: Uint16Array;
  /**
   * The build's epoch when the record was written (`TilePart.add`): what a correction of the thinning rule removed
   * and what was tiled again after it are told apart, whichever part holds them (a finalize, or a shard run again).
   */
  readonly epoch: Uint32Array;
}

/** Grows the TileIndex of one part (part 0) one record at a time, doubling its columns. */
export class TileIndexBuilder {
  private cap = 1024;
  private n = 0;
  private cols = allocate(this.cap);

  get count(): number {
    return this.n;
  }

  add(tileId: number, offset: number, length: number, contentHash: Uint8Array, epoch = 0): void {
    if (this.n === this.cap) {
      this.cap *= 2;
      const next = allocate(this.cap);
      next.tileId.set(this.cols.tileId);
      next.offset.set(this.cols.offset);
      next.length.set(this.cols.length);
      next.hash.set(this.cols.hash);
      next.epoch.set(this.cols.epoch);
      this.cols = next;
    }
    const i = this.n++;
    this.cols.tileId[i] = tileId;
    this.cols.offset[i] = offset;
    this.cols.length[i] = length;
    this.cols.hash.set(contentHash, i * HASH_BYTES);
    this.cols.epoch[i] = epoch;
  }

  /** The records so far (views: valid until the next add). */
  view(): TileIndex {
    const n = this.n;
    const c = this.cols;
    return {
      count: n, tileId: c.tileId.subarray(0, n), offset: c.offset.subarray(0, n), length: c.length.subarray(0, n),
      hash: c.hash.subarray(0, n * HASH_BYTES), part: c.part.subarray(0, n), epoch: c.epoch.subarray(0, n),
    };
  }
}

function allocate(n: number) {
  return {
    tileId: new Float64Array(n), offset: new Float64Array(n), length: new Uint32Array(n),
    hash: new Uint8Array(n * HASH_BYTES), part: new Uint16Array(n), epoch: new Uint32Array(n),
  };
}

/** One index over several parts: the records of `indexes[k]` become part k. */
export function concatIndexes(indexes: readonly TileIndex[]): TileIndex {
  if (indexes.length === 1 && indexes[0].part.every((p) => p === 0)) return indexes[0];
  const cols = allocate(indexes.reduce((n, ix) => n + ix.count, 0));
  let at = 0;
  indexes.forEach((ix, k) => {
    cols.tileId.set(ix.tileId, at);
    cols.offset.set(ix.offset, at);
    cols.length.set(ix.length, at);
    cols.hash.set(ix.hash, at * HASH_BYTES);
    cols.part.fill(k, at, at + ix.count);
    cols.epoch.set(ix.epoch, at);
    at += ix.count;
  });
  return { count: at, ...cols };
}

export interface ArchiveOptions {
  tileType: TileType;
  /** How the stored tile bytes are compressed (the writer stores them as given). */
  tileCompression: Compression;
}

export interface ArchiveLayout {
  header: PmtilesHeader;
  /** Header, root directory, metadata and leaf directories: every byte before the tile data. */
  head: Uint8Array;
  /** Index records whose bytes, in this order, make up the tile data section. */
  data: Uint32Array;
}

/**
 * Lays out an archive: the tiles in tile-id order (clustered), each distinct content once (a repeat points back
 * to the first copy; consecutive ids with one content share a run-length entry), gzip-compressed directories and
 * metadata, the root within the first 16 KiB. Depends only on the set of (tile, content), never on the order
 * records were added or how they were split into parts. Throws OutputError when two parts hold one tile with
 * different bytes, or an MVT archive's metadata has no vector_layers.
 */
export function layoutArchive(index: TileIndex, metadata: object, options: ArchiveOptions): ArchiveLayout {
  if (options.tileType === TileType.Mvt && !Array.isArray((metadata as { vector_layers?: unknown }).vector_layers)) {
    throw new OutputError('the metadata of an MVT archive needs vector_layers (PMTiles spec, section 5)');
  }
  const winners = latestRecords(index);
  // PMTiles has no empty archive: a directory's entry count "MUST be greater than 0" (spec section 4.1).
  if (winners.length === 0) throw new DataError('there is no tile to store (every feature left out: outside the world, too small to draw at these zooms, or a mesh, which PBF tiles do not carry), and a PMTiles archive holds at least one');
  const entries = {
    count: 0, tileId: new Float64Array(winners.length), offset: new Float64Array(winners.length),
    length: new Uint32Array(winners.length), runLength: new Uint32Array(winners.length),
  };
  const data = new Uint32Array(winners.length);
  let contents = 0;
  let dataLength = 0;
  const seen = new ContentTable(index.hash, winners.length);
  let prev = -1;
  for (const r of winners) {
    const id = index.tileId[r];
    const e = entries.count - 1;
    if (prev >= 0 && id === entries.tileId[e] + entries.runLength[e] && sameContent(index, r, prev)) {
      entries.runLength[e]++;
    } else {
      const first = seen.firstOf(r);
      let offset: number;
      if (first === r) {
        offset = dataLength;
        dataLength += index.length[r];
        data[contents++] = r;
        seen.setOffset(r, offset);
      } else {
        offset = seen.offsetOf(first);
      }
      entries.tileId[entries.count] = id;
      entries.offset[entries.count] = offset;
      entries.length[entries.count] = index.length[r];
      entries.runLength[entries.count] = 1;
      entries.count++;
    }
    prev = r;
  }
  const { root, leaves } = directories(entries);
  const meta = gzipSync(JSON.stringify(metadata));
  const header: PmtilesHeader = {
    rootDirectoryOffset: HEADER_BYTES,
    rootDirectoryLength: root.length,
    metadataOffset: HEADER_BYTES + root.length,
    metadataLength: meta.length,
    leafDirectoriesOffset: HEADER_BYTES + root.length + meta.length,
    leafDirectoriesLength: leaves.length,
    tileDataOffset: HEADER_BYTES + root.length + meta.length + leaves.length,
    tileDataLength: dataLength,
    addressedTiles: winners.length,
    tileEntries: entries.count,
    tileContents: contents,
    clustered: true,
    internalCompression: Compression.Gzip,
    tileCompression: options.tileCompression,
    tileType: options.tileType,
    ...extent(index, winners),
  };
  const head = new Uint8Array(header.tileDataOffset);
  head.set(encodeHeader(header), 0);
  head.set(root, header.rootDirectoryOffset);
  head.set(meta, header.metadataOffset);
  head.set(leaves, header.leafDirectoriesOffset);
  return { header, head, data: data.slice(0, contents) };
}

/** In-memory twin of the file writer: the whole archive of tiles given as values, in any order. */
export function encodeArchive(
  tiles: Iterable<{ z: number; x: number; y: number; bytes: Uint8Array }>, metadata: object, options: ArchiveOptions,
): Uint8Array {
  const b = new TileIndexBuilder();
  const blobs: Uint8Array[] = [];
  for (const t of tiles) {
    b.add(zxyToTileId(t.z, t.x, t.y), blobs.length, t.bytes.length, tileHash(t.bytes));
    blobs.push(t.bytes);
  }
  const { header, head, data } = layoutArchive(b.view(), metadata, options);
  const out = new Uint8Array(header.tileDataOffset + header.tileDataLength);
  out.set(head);
  let at = head.length;
  for (const r of data) {
    out.set(blobs[r], at);
    at += blobs[r].length;
  }
  return out;
}

/**
 * The record that stands for each tile, in tile-id order; removed tiles left out. Within a part the last record
 * wins; across parts the one of the latest epoch (a correction's removal over the tile it removes, a tile made
 * after it over the removal); parts must agree on a tile they both hold at one epoch, or the archive would depend
 * on the order of the parts.
 */
function latestRecords(index: TileIndex): Uint32Array {
  const order = new Uint32Array(index.count);
  for (let i = 0; i < order.length; i++) order[i] = i;
  order.sort((a, b) => index.tileId[a] - index.tileId[b] || index.part[a] - index.part[b] || a - b);
  const out = new Uint32Array(index.count);
  let n = 0;
  for (let i = 0; i < order.length;) {
    const id = index.tileId[order[i]];
    let end = i;
    while (end < order.length && index.tileId[order[end]] === id) end++;
    // Each part's last record of the tile (a later one replaces an earlier one in its part), and the latest epoch.
    const lastInPart = (k: number) => k + 1 >= end || index.part[order[k + 1]] !== index.part[order[k]];
    let latest = 0;
    for (let k = i; k < end; k++) if (lastInPart(k)) latest = Math.max(latest, index.epoch[order[k]]);
    let final = -1;
    for (; i < end; i++) {
      const r = order[i];
      if (!lastInPart(i) || index.epoch[r] !== latest) continue;
      if (final >= 0 && !sameContent(index, final, r)) {
        const [z, x, y] = tileIdToZxy(id);
        throw new OutputError(`tile ${z}/${x}/${y} is in parts ${index.part[final]} and ${index.part[r]} with different bytes`);
      }
      final = r;
    }
    if (final >= 0 && index.length[final] > 0) out[n++] = final;
  }
  return out.slice(0, n);
}

function sameContent(index: TileIndex, a: number, b: number): boolean {
  if (index.length[a] !== index.length[b]) return false;
  for (let k = 0; k < HASH_BYTES; k++) if (index.hash[a * HASH_BYTES + k] !== index.hash[b * HASH_BYTES + k]) return false;
  return true;
}

/**
 * Open-addressing table from content to the first record holding it, in typed arrays (8 bytes a slot, two slots
 * a record) rather than a Map of string keys (about 80 bytes an entry at a million tiles).
 */
class ContentTable {
  private readonly slots: Int32Array;
  private readonly offsets: Float64Array;
  private readonly mask: number;

  constructor(private readonly hashes: Uint8Array, records: number) {
    let size = 16;
    while (size < records * 2) size *= 2;
    this.slots = new Int32Array(size).fill(-1);
    this.offsets = new Float64Array(hashes.length / HASH_BYTES);
    this.mask = size - 1;
  }

  /** The first record with r's content, registering r when it is the first. */
  firstOf(r: number): number {
    const h = this.hashes;
    // The hash is uniform already: its first 4 bytes are a good slot number.
    let s = (h[r * HASH_BYTES] | (h[r * HASH_BYTES + 1] << 8) | (h[r * HASH_BYTES + 2] << 16) | (h[r * HASH_BYTES + 3] << 24)) & this.mask;
    for (;;) {
      const q = this.slots[s];
      if (q === -1) {
        this.slots[s] = r;
        return r;
      }
      if (equalHash(h, q, r)) return q;
      s = (s + 1) & this.mask;
    }
  }

  setOffset(r: number, offset: number): void {
    this.offsets[r] = offset;
  }

  offsetOf(r: number): number {
    return this.offsets[r];
  }
}

function equalHash(h: Uint8Array, a: number, b: number): boolean {
  for (let k = 0; k < HASH_BYTES; k++) if (h[a * HASH_BYTES + k] !== h[b * HASH_BYTES + k]) return false;
  return true;
}

/** Entries per leaf directory to start from; doubled until the root fits. */
const LEAF_ENTRIES = 4096;

/** The root directory and leaf directories (gzip-compressed), with leaves only when the root alone would not fit. */
function directories(entries: Directory): { root: Uint8Array; leaves: Uint8Array } {
  const fits = (root: Uint8Array) => HEADER_BYTES + root.length <= ROOT_WINDOW;
  const whole = gzipSync(encodeDirectory(entries));
  if (fits(whole)) return { root: whole, leaves: new Uint8Array(0) };
  for (let perLeaf = LEAF_ENTRIES; ; perLeaf *= 2) {
    const n = Math.ceil(entries.count / perLeaf);
    const rootDir = {
      count: n, tileId: new Float64Array(n), offset: new Float64Array(n), length: new Uint32Array(n), runLength: new Uint32Array(n),
    };
    const parts: Uint8Array[] = [];
    let at = 0;
    for (let k = 0; k < n; k++) {
      const start = k * perLeaf;
      const leaf = gzipSync(encodeDirectory(entries, start, Math.min(entries.count, start + perLeaf)));
      rootDir.tileId[k] = entries.tileId[start];
      rootDir.offset[k] = at;
      rootDir.length[k] = leaf.length;
      parts.push(leaf);
      at += leaf.length;
    }
    const root = gzipSync(encodeDirectory(rootDir));
    if (fits(root)) return { root, leaves: Buffer.concat(parts) };
  }
}

/**
 * Header zooms and positions. Zooms: the coarsest and finest tiles present. Our world is pixel space, but
 * generic PMTiles clients read the lon/lat fields on the Web Mercator tile grid, where our tile z/x/y sits at
 * the same z/x/y: bounds are the corners of the envelope of the finest zoom's tiles mapped that way, the
 * centre is its middle at the coarsest zoom. The pixel bounds stay in the metadata (the tileset descriptor).
 */
function extent(index: TileIndex, records: Uint32Array) {
  const n = records.length;
  const minZoom = n ? tileIdToZxy(index.tileId[records[0]])[0] : 0;
  const maxZoom = n ? tileIdToZxy(index.tileId[records[n - 1]])[0] : 0;
  let x0 = 0;
  let y0 = 0;
  let x1 = 0;
  let y1 = 0;
  let first = true;
  // Tile ids run zoom by zoom, so the finest zoom's tiles are the tail of the list.
  for (let i = n - 1; i >= 0; i--) {
    const [z, x, y] = tileIdToZxy(index.tileId[records[i]]);
    if (z !== maxZoom) break;
    if (first || x < x0) x0 = x;
    if (first || y < y0) y0 = y;
    if (first || x > x1) x1 = x;
    if (first || y > y1) y1 = y;
    first = false;
  }
  const [minLon, maxLat] = tileCornerLonLat(maxZoom, x0, y0);
  const [maxLon, minLat] = tileCornerLonLat(maxZoom, x1 + 1, y1 + 1);
  // The middle of the tiles on the map, which in latitude is not the mean of the bounds' (Mercator stretches north).
  const [centerLon, centerLat] = tileCornerLonLat(maxZoom, (x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2);
  return { minZoom, maxZoom, minLon, minLat, maxLon, maxLat, centerZoom: minZoom, centerLon, centerLat };
}
