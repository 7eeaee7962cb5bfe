// PMTiles v3 encoding, pure: the 127-byte header, varint directories, Hilbert tile ids (spec: protomaps/PMTiles spec/v3).
import { InputError } from '../report/errors.js';

export const HEADER_BYTES = 127;
/** A client reads this many bytes first: the header and the whole root directory must lie within them. */
export const ROOT_WINDOW = 16_384;
/** Hilbert tile ids of zoom 27 and above pass 2^53 and cannot be held exactly in a number. */
export const MAX_ZOOM = 26;

export const Compression = { Unknown: 0, None: 1, Gzip: 2, Brotli: 3, Zstd: 4 } as const;
export type Compression = (typeof Compression)[keyof typeof Compression];

export const TileType = { Other: 0, Mvt: 1, Png: 2, Jpeg: 3, Webp: 4, Avif: 5, Mlt: 6 } as const;
export type TileType = (typeof TileType)[keyof typeof TileType];

/** The header's fields, in spec order; offsets are from the start of the archive, lon/lat in degrees. */
export interface PmtilesHeader {
  rootDirectoryOffset: number;
  rootDirectoryLength: number;
  metadataOffset: number;
  metadataLength: number;
  leafDirectoriesOffset: number;
  leafDirectoriesLength: number;
  tileDataOffset: number;
  tileDataLength: number;
  /** Tiles addressed (run lengths summed); 0 = unknown. */
  addressedTiles: number;
  /** Directory entries with a run length above 0; 0 = unknown. */
  tileEntries: number;
  /** Distinct tile blobs in the data section; 0 = unknown. */
  tileContents: number;
  clustered: boolean;
  internalCompression: Compression;
  tileCompression: Compression;
  tileType: TileType;
  minZoom: number;
  maxZoom: number;
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
  centerZoom: number;
  centerLon: number;
  centerLat: number;
}

/** The first bytes of every PMTiles v3 file. */
export const MAGIC = 'PMTiles';
const VERSION = 3;
const TWO_32 = 2 ** 32;

function setU64(view: DataView, at: number, value: number): void {
  view.setUint32(at, value % TWO_32, true);
  view.setUint32(at + 4, Math.floor(value / TWO_32), true);
}

function getU64(view: DataView, at: number, field: string): number {
  const value = view.getUint32(at + 4, true) * TWO_32 + view.getUint32(at, true);
  if (!Number.isSafeInteger(value)) throw new InputError(`PMTiles header field ${field} (${value}) is beyond 2^53`);
  return value;
}

function setPosition(view: DataView, at: number, lon: number, lat: number): void {
  view.setInt32(at, Math.round(lon * 1e7), true);
  view.setInt32(at + 4, Math.round(lat * 1e7), true);
}

export function encodeHeader(h: PmtilesHeader): Uint8Array {
  const bytes = new Uint8Array(HEADER_BYTES);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < MAGIC.length; i++) bytes[i] = MAGIC.charCodeAt(i);
  bytes[7] = VERSION;
  const u64 = [
    h.rootDirectoryOffset, h.rootDirectoryLength, h.metadataOffset, h.metadataLength,
    h.leafDirectoriesOffset, h.leafDirectoriesLength, h.tileDataOffset, h.tileDataLength,
    h.addressedTiles, h.tileEntries, h.tileContents,
  ];
  u64.forEach((v, i) => setU64(view, 8 + 8 * i, v));
  bytes[96] = h.clustered ? 1 : 0;
  bytes[97] = h.internalCompression;
  bytes[98] = h.tileCompression;
  bytes[99] = h.tileType;
  bytes[100] = h.minZoom;
  bytes[101] = h.maxZoom;
  setPosition(view, 102, h.minLon, h.minLat);
  setPosition(view, 110, h.maxLon, h.maxLat);
  bytes[118] = h.centerZoom;
  setPosition(view, 119, h.centerLon, h.centerLat);
  return bytes;
}

/** Decodes the first 127 bytes of an archive; throws InputError when they are not a PMTiles v3 header. */
export function decodeHeader(bytes: Uint8Array): PmtilesHeader {
  if (bytes.length < HEADER_BYTES) throw new InputError(`not a PMTiles archive: ${bytes.length} bytes, shorter than the ${HEADER_BYTES}-byte header`);
  const magic = String.fromCharCode(...bytes.subarray(0, 7));
  if (magic !== MAGIC) throw new InputError(`not a PMTiles archive: starts with ${JSON.stringify(magic)}, not "PMTiles"`);
  if (bytes[7] !== VERSION) throw new InputError(`PMTiles version ${bytes[7]} is not supported (only ${VERSION})`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  const pos = (at: number) => view.getInt32(at, true) / 1e7;
  return {
    rootDirectoryOffset: getU64(view, 8, 'root directory offset'),
    rootDirectoryLength: getU64(view, 16, 'root directory length'),
    metadataOffset: getU64(view, 24, 'metadata offset'),
    metadataLength: getU64(view, 32, 'metadata length'),
    leafDirectoriesOffset: getU64(view, 40, 'leaf directories offset'),
    leafDirectoriesLength: getU64(view, 48, 'leaf directories length'),
    tileDataOffset: getU64(view, 56, 'tile data offset'),
    tileDataLength: getU64(view, 64, 'tile data length'),
    addressedTiles: getU64(view, 72, 'number of addressed tiles'),
    tileEntries: getU64(view, 80, 'number of tile entries'),
    tileContents: getU64(view, 88, 'number of tile contents'),
    clustered: bytes[96] === 1,
    internalCompression: bytes[97] as Compression,
    tileCompression: bytes[98] as Compression,
    tileType: bytes[99] as TileType,
    minZoom: bytes[100],
    maxZoom: bytes[101],
    minLon: pos(102),
    minLat: pos(106),
    maxLon: pos(110),
    maxLat: pos(114),
    centerZoom: bytes[118],
    centerLon: pos(119),
    centerLat: pos(123),
  };
}

/** Directory entries as columns (one typed array per field), so a million entries cost 24 bytes each. */
export interface Directory {
  readonly count: number;
  readonly tileId: Float64Array;
  /** Byte offset of the tile in the tile data section, or of the leaf in the leaf directories section. */
  readonly offset: Float64Array;
  readonly length: Uint32Array;
  /** Tiles the entry addresses (consecutive ids sharing one blob); 0 marks a leaf directory. */
  readonly runLength: Uint32Array;
}

/** A growable byte buffer: the scratch space of one encoding. */
class ByteWriter {
  private buf = new Uint8Array(1024);
  private at = 0;

  varint(value: number): void {
    if (this.at + 10 > this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    let v = value;
    // Division, not shifts: values reach 2^53 (tile ids), past the 32 bits that bitwise operators keep.
    while (v >= 0x80) {
      this.buf[this.at++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.at++] = v;
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.at);
  }
}

/** Encodes entries [start, end) of a directory (uncompressed; the caller applies the internal compression). */
export function encodeDirectory(dir: Directory, start = 0, end = dir.count): Uint8Array {
  const w = new ByteWriter();
  w.varint(end - start);
  let lastId = 0;
  for (let i = start; i < end; i++) {
    w.varint(dir.tileId[i] - lastId);
    lastId = dir.tileId[i];
  }
  for (let i = start; i < end; i++) w.varint(dir.runLength[i]);
  for (let i = start; i < end; i++) w.varint(dir.length[i]);
  for (let i = start; i < end; i++) {
    // 0 says "right after the previous entry", so clustered tiles cost one byte each here.
    const contiguous = i > start && dir.offset[i] === dir.offset[i - 1] + dir.length[i - 1];
    w.varint(contiguous ? 0 : dir.offset[i] + 1);
  }
  return w.bytes();
}

/** Decodes an uncompressed directory (`what`, in messages); throws InputError when it is truncated or malformed. */
export function decodeDirectory(bytes: Uint8Array, what = 'PMTiles directory'): Directory {
  let at = 0;
  const read = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (at >= bytes.length) throw new InputError(`${what} is truncated`);
      const b = bytes[at++];
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 0x80;
      if (scale > 2 ** 56) throw new InputError(`${what} has a varint longer than 8 bytes`);
    }
  };
  const count = read();
  // Each entry takes at least 4 bytes, which bounds the arrays a corrupt count could ask for.
  if (count * 4 > bytes.length) throw new InputError(`${what} claims ${count} entries in ${bytes.length} bytes`);
  const dir = {
    count,
    tileId: new Float64Array(count),
    offset: new Float64Array(count),
    length: new Uint32Array(count),
    runLength: new Uint32Array(count),
  };
  let id = 0;
  for (let i = 0; i < count; i++) dir.tileId[i] = id += read();
  for (let i = 0; i < count; i++) dir.runLength[i] = read();
  for (let i = 0; i < count; i++) dir.length[i] = read();
  for (let i = 0; i < count; i++) {
    const v = read();
    dir.offset[i] = v === 0 && i > 0 ? dir.offset[i - 1] + dir.length[i - 1] : v - 1;
  }
  return dir;
}

/** Index of the entry holding tile id `id` (a tile entry whose run covers it, or the leaf that may), or -1. */
export function findEntry(dir: Directory, id: number): number {
  let lo = 0;
  let hi = dir.count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (dir.tileId[mid] < id) lo = mid + 1;
    else if (dir.tileId[mid] > id) hi = mid - 1;
    else return mid;
  }
  // No exact match: the entry just before may be a run reaching `id`, or a leaf whose range starts before it.
  if (hi < 0) return -1;
  const run = dir.runLength[hi];
  return run === 0 || id < dir.tileId[hi] + run ? hi : -1;
}

/** First tile id of each zoom 0..MAX_ZOOM + 1: the tiles of all coarser zooms, 1 + 4 + … + 4^(z-1) = (4^z − 1) / 3. */
const FIRST_IDS: readonly number[] = Object.freeze(Array.from({ length: MAX_ZOOM + 2 }, (_, z) => (4 ** z - 1) / 3));

export function firstId(z: number): number {
  return FIRST_IDS[z];
}

/** Position of tile (z, x, y) on the Hilbert curves of zooms 0, 1, …, z laid end to end (y counts rows down). */
export function zxyToTileId(z: number, x: number, y: number): number {
  if (!Number.isInteger(z) || z < 0 || z > MAX_ZOOM) throw new RangeError(`tile zoom ${z} is outside 0..${MAX_ZOOM}`);
  const n = 2 ** z;
  if (!Number.isInteger(x) || !Number.isInteger(y) || x < 0 || y < 0 || x >= n || y >= n) {
    throw new RangeError(`tile ${z}/${x}/${y} is outside zoom ${z}`);
  }
  let d = 0;
  let tx = x;
  let ty = y;
  // From the coarsest quadrant down: add the cells of the quadrants visited before this one, then map the
  // quadrant onto the curve's base orientation (flip and transpose) so the next bit reads the same way.
  for (let s = n / 2; s >= 1; s /= 2) {
    const rx = tx & s ? 1 : 0;
    const ry = ty & s ? 1 : 0;
    d += s * s * ((3 * rx) ^ ry);
    tx &= s - 1;
    ty &= s - 1;
    // The quadrants of row 0 hold the curve transposed (across the other diagonal on the right): undo that.
    // Written out here and in tileIdToZxy rather than shared: a helper returning the pair was 4× slower.
    if (ry === 0) {
      if (rx === 1) {
        tx = s - 1 - tx;
        ty = s - 1 - ty;
      }
      const t = tx;
      tx = ty;
      ty = t;
    }
  }
  return firstId(z) + d;
}

/** Inverse of zxyToTileId. */
export function tileIdToZxy(id: number): [number, number, number] {
  if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`tile id ${id} is not a non-negative integer`);
  // 3·id + 1 lies in [4^z, 4^(z+1)): the estimate from its logarithm is off by one at most, near powers of 4.
  let z = Math.floor(Math.log2(3 * id + 1) / 2);
  if (firstId(z) > id) z--;
  else if (firstId(z + 1) <= id) z++;
  if (z > MAX_ZOOM) throw new RangeError(`tile id ${id} is beyond zoom ${MAX_ZOOM}`);
  let d = id - firstId(z);
  let x = 0;
  let y = 0;
  const n = 2 ** z;
  // From the finest quadrant up: undo the base-orientation mapping of each level, then add the quadrant's offset.
  for (let s = 1; s < n; s *= 2) {
    const q = d % 4;
    const rx = q >> 1;
    const ry = (q & 1) ^ rx;
    if (ry === 0) {
      if (rx === 1) {
        x = s - 1 - x;
        y = s - 1 - y;
      }
      const t = x;
      x = y;
      y = t;
    }
    x += s * rx;
    y += s * ry;
    d = Math.floor(d / 4);
  }
  return [z, x, y];
}

/** Longitude and latitude of a tile corner on the Web Mercator grid: how generic map clients place our pixel tiles. */
export function tileCornerLonLat(z: number, x: number, y: number): [number, number] {
  const n = 2 ** z;
  const lon = (x / n) * 360 - 180;
  const lat = (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / n))) * 180) / Math.PI;
  return [lon, lat];
}
