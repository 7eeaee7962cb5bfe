// Who wrote a file at a single archive's names (the archive, its report beside it): no record folder says so there, so the files do.
import fs from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { OutputError } from '../report/errors.js';
import { Compression, HEADER_BYTES, decodeHeader } from './pmtiles-format.js';

/**
 * Beside a single archive there is no record folder: the files say who wrote them. An archive must hold a tileset
 * descriptor as its metadata, a report be one; anything else is refused.
 */
export function refuseForeign(file: string, kind: 'archive' | 'report', link: boolean): void {
  const why = link ? 'a symbolic link' : kind === 'archive' ? (holdsDescriptor(file) ? undefined : 'not a PMTiles archive with a tileset descriptor as metadata')
    : isBuildReport(file) ? undefined : 'not a build report';
  if (why !== undefined) {
    throw new OutputError(`${file} was not written by a mudm-tiles build (${why}): --force and --resume only replace what a build wrote; move it away or choose another output`, file);
  }
}

/** A PMTiles v3 archive whose metadata is a tileset descriptor (tilejson, vector_layers, scale_factor 2, format): what every build writes. */
export function holdsDescriptor(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(HEADER_BYTES);
    fs.readSync(fd, head, 0, HEADER_BYTES, 0);
    const h = decodeHeader(head);
    if (h.metadataLength > 64 << 20) return false;
    const stored = Buffer.alloc(h.metadataLength);
    fs.readSync(fd, stored, 0, stored.length, h.metadataOffset);
    const meta = JSON.parse((h.internalCompression === Compression.Gzip ? gunzipSync(stored) : stored).toString('utf8')) as Record<string, unknown>;
    // TileJSON, and what only a mudm-tiles descriptor has beside it: another tiler's TileJSON metadata is not ours.
    return typeof meta.tilejson === 'string' && Array.isArray(meta.vector_layers) && meta.scale_factor === 2 && (meta.format === 'pbf' || meta.format === 'json');
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function isBuildReport(file: string): boolean {
  try {
    const r = JSON.parse(fs.readFileSync(file, 'utf8')) as { features?: unknown; tiles?: unknown };
    return typeof r.features === 'object' && typeof r.tiles === 'object';
  } catch {
    return false;
  }
}
