// A tile sink writing one PMTiles archive: tile paths become archive tiles, the descriptor its JSON metadata.
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzip, gzipSync } from 'node:zlib';
import { OutputError, describeFsError } from '../report/errors.js';
import type { TileSink, WriteOptions } from '../io/sink.js';
import { makeDirectory, removeFile } from '../io/dirs.js';
import { Compression, MAX_ZOOM, TileType } from './pmtiles-format.js';
import { PmtilesWriter, type ArchiveSummary } from './pmtiles-writer.js';
import { tilePathParts } from '../tiling/tile-names.js';
import type { TileCompression } from '../options.js';

const gunzipAsync = promisify(gunzip);

/**
 * How tiles of a type are stored, as `--tile-compression` chose. `auto` by measurement (README *Archives*): gzip
 * shrinks PBF tiles by a quarter to a third for a quarter more build time, so PBF is stored as encoded (and stays
 * byte-identical to a directory build's tiles); JSON tiles shrink by 74% at level 1; level 6 saves 4 points more
 * for four times the CPU.
 */
export function tileCompressionOf(tileType: TileType, chosen: TileCompression = 'auto'): Compression {
  if (chosen !== 'auto') return chosen === 'gzip' ? Compression.Gzip : Compression.None;
  return tileType === TileType.Mvt ? Compression.None : Compression.Gzip;
}
const TILE_GZIP_LEVEL = 1;

/**
 * A tile as an archive stores it gzipped: the same bytes whichever thread compresses it. In a buffer of its own: zlib
 * hands a small result back as a view of a 16 KiB chunk, which a worker cannot move and whose copy would carry the
 * whole chunk to the writing thread (three times the peak memory of a build into archives, before this).
 */
export function gzipTile(bytes: Uint8Array): Uint8Array {
  const z = gzipSync(bytes, { level: TILE_GZIP_LEVEL });
  return z.byteOffset === 0 && z.byteLength === z.buffer.byteLength ? z : new Uint8Array(z);
}

export interface PmtilesSinkOptions {
  tileType: TileType;
  /** Default: `tileCompressionOf(tileType)`. The sink compresses tiles as they are written. */
  tileCompression?: Compression;
  /** Extension of the tile paths this archive takes; default `pbf` for MVT, `json` otherwise. */
  extension?: string;
  /** Where tiles wait until `finish`; default `FILE.part`, a fixed name so that `--resume` finds it. */
  partPath?: string;
  /** The path whose JSON becomes the archive's metadata. */
  descriptor?: string;
  /** Leave the part after `finish`; the caller removes it once its whole output is complete (so that a resumed build finds it). */
  keepPart?: boolean;
  /** Finished parts of other writers (shards) merged into the archive at `finish`. */
  parts?: readonly string[];
}

/**
 * One archive of one plane and one tile format (the caller routes each tile path to its archive; the plane
 * dimensions in the path are checked to agree, then dropped). Tiles may come in any order; `finish` writes
 * the archive whole under its name. Other files (build report, previews) belong elsewhere: writing them here
 * is an error.
 */
export class PmtilesSink implements TileSink {
  private writer: PmtilesWriter | undefined;
  private metadata: string | undefined;
  /** The first tile path written: every other must be of its plane. */
  private first: { path: string; plane: string } | undefined;
  private readonly tileCompression: Compression;
  private readonly extension: string;
  private readonly partPath: string;
  private readonly descriptor: string;
  private epoch = 0;
  /** The archive written by `finish`. */
  result: ArchiveSummary | undefined;

  constructor(readonly file: string, private readonly options: PmtilesSinkOptions) {
    this.tileCompression = options.tileCompression ?? tileCompressionOf(options.tileType);
    this.extension = options.extension ?? (options.tileType === TileType.Mvt ? 'pbf' : 'json');
    this.partPath = options.partPath ?? `${file}.part`;
    this.descriptor = options.descriptor ?? 'tileset.json';
  }

  async initialize({ force, resume }: { force: boolean; resume: boolean }): Promise<void> {
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(this.file);
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT') throw describeFsError(err, this.file);
    }
    if (st?.isDirectory()) throw new OutputError(`output ${this.file} is a directory, not an archive file`, this.file);
    // A build writes no links: one there is a user's, whatever it points to.
    if (st?.isSymbolicLink()) throw new OutputError(`output ${this.file} is a symbolic link, which a build never writes: move it away or choose another output`, this.file);
    if (st && !force && !resume) throw new OutputError(`output ${this.file} exists; use --force to replace it`, this.file);
    try {
      makeDirectory(path.dirname(this.file));
      // Asked, not tried with a file: a probe file a kill left stayed beside the archive for good.
      fs.accessSync(path.dirname(this.file), fs.constants.W_OK);
    } catch (err) {
      throw describeFsError(err, this.file);
    }
  }

  async begin({ force, resume }: { force: boolean; resume: boolean }): Promise<void> {
    // The old archive `initialize` was told to replace is whole but not this build's: gone now, so a failed rebuild
    // never looks complete. Without --force nothing is removed: a file there when the archive is named stays, and
    // `finish` fails naming it.
    try {
      if (force) removeFile(this.file);
    } catch (err) {
      throw describeFsError(err, this.file);
    }
    const { tileType, keepPart, parts } = this.options;
    this.writer = new PmtilesWriter(this.file, { tileType, tileCompression: this.tileCompression, partPath: this.partPath, resume, keepPart, parts });
  }

  /** Tiles `gzipped` already (by `gzipTile`, in a worker) are stored as they come; the others are compressed here when the archive says so. */
  async write(relPath: string, bytes: Uint8Array | string, opts?: WriteOptions): Promise<void> {
    const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
    if (relPath === this.descriptor) {
      this.metadata = Buffer.from(data).toString('utf8');
      return;
    }
    const writer = this.open();
    const [z, x, y] = this.tile(relPath);
    const gzip = this.tileCompression === Compression.Gzip;
    if (opts?.gzipped && !gzip) throw new Error(`${this.file}: tile ${relPath} came gzipped to an archive that stores tiles as encoded`);
    writer.add(z, x, y, gzip && !opts?.gzipped ? gzipTile(data) : data, this.epoch);
  }

  async read(relPath: string): Promise<Uint8Array | undefined> {
    if (relPath === this.descriptor) return this.metadata === undefined ? undefined : Buffer.from(this.metadata);
    const stored = this.open().read(...this.tile(relPath));
    return stored && this.tileCompression === Compression.Gzip ? gunzipAsync(stored) : stored;
  }

  async remove(relPath: string): Promise<void> {
    if (relPath === this.descriptor) this.metadata = undefined;
    else this.open().remove(...this.tile(relPath), this.epoch);
  }

  /** The epoch tiles and removals are written at from here on (`TileSink.setEpoch`). */
  setEpoch(epoch: number): void {
    this.epoch = epoch;
  }

  /** Tiles wait in a buffer: this makes those written so far survive a kill, for `--resume` (call it before marking work done). */
  async flush(): Promise<void> {
    this.writer?.flush();
  }

  /** Writes the archive; the descriptor must have been written (it is the metadata). */
  async finish(): Promise<void> {
    const writer = this.open();
    if (this.metadata === undefined) throw new OutputError(`${this.file}: no ${this.descriptor} was written, and it is the archive's metadata`, this.file);
    let metadata: object;
    try {
      metadata = JSON.parse(this.metadata) as object;
    } catch (err) {
      throw new OutputError(`${this.file}: ${this.descriptor} is not JSON (${(err as Error).message})`, this.file);
    }
    this.writer = undefined;
    this.result = writer.finish(metadata);
  }

  /** Closes the part without writing the archive: another process assembles it (a shard's part). */
  async close(): Promise<void> {
    this.writer?.close();
    this.writer = undefined;
  }

  /** Gives up on the archive: removes its part; an archive already finished stays. */
  abort(): void {
    this.writer?.abort();
    this.writer = undefined;
  }

  private open(): PmtilesWriter {
    if (!this.writer) throw new OutputError(`${this.file}: the archive is not open for writing (begin() first, finish() once)`, this.file);
    return this.writer;
  }

  private tile(relPath: string): [number, number, number] {
    const tile = tilePathParts(relPath);
    if (!tile) throw new OutputError(`${this.file}: an archive holds tiles and ${this.descriptor} only, not ${relPath}`, this.file);
    if (tile.ext !== this.extension) throw new OutputError(`${this.file}: holds .${this.extension} tiles, not ${relPath}`, this.file);
    const plane = tile.planes.join('/');
    this.first ??= { path: relPath, plane };
    if (plane !== this.first.plane) throw new OutputError(`${this.file}: holds the tiles of one plane (as ${this.first.path}), not ${relPath}`, this.file);
    const { z, x, y } = tile;
    if (z > MAX_ZOOM || x >= 2 ** z || y >= 2 ** z) throw new OutputError(`${this.file}: ${relPath} is not a tile of zoom 0..${MAX_ZOOM}`, this.file);
    return [z, x, y];
  }
}
